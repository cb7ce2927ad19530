// Period skips of the DagExecutor (ExecOptions::fast_forward; docs/engine.md "Fast-forward").
//
// A ring collective's DAG repeats step after step: transfer t + d (d = transfers per step) has the same
// ranks, size, channel and delays as t, and depends on t's dependencies + d (find_skip_regions). Once the
// run is steady, its state at time T + P, with every transfer relabelled t -> t + 64 d, is (for an exactly
// periodic run: is exactly) its state at T, where P is the time the frontier (the smallest undelivered
// transfer) takes to move 64 steps. The executor times the frontier over windows of 16 steps; when four in a
// row took their mean within 1 %, it has marked the engine at the first and asks it to skip n - 1 periods
// (eng::Engine::skip_periods: the engine moves its clock by (n - 1) P and scales its counters) and relabels
// its own state: transfers at or above the frontier take the state of the one (n - 1) 64 d below, those below
// it are delivered, pending callbacks resolve their transfer through the shift (current()), stored times
// move by (n - 1) P. Where the DAG has no such region or the progress is not steady, nothing is skipped and
// the run is exactly the run without skips.
#include "scenarios/executor.hpp"

#include <algorithm>
#include <cmath>

namespace ibn::scen {

namespace {

/// The frontier's progress is timed per window of this many steps...
constexpr std::uint32_t kWindowSteps = 16;
/// ... and is steady when this many consecutive windows each took their mean within kSteadyTolerance; a
/// period (what a skip repeats) is that many windows.
constexpr std::uint64_t kConfirmWindows = 4;
constexpr double kSteadyTolerance = 0.01;
/// A region shorter than this many steps is not worth watching.
constexpr std::uint32_t kMinRegionSteps = 3 * kWindowSteps * kConfirmWindows;

bool same_shape(const TransferDag& dag, TransferId t, TransferId u) {
  const Transfer& x = dag[t];
  const Transfer& y = dag[u];
  if (x.src != y.src || x.dst != y.dst || x.bytes != y.bytes || x.channel != y.channel || x.rail != y.rail ||
      x.local_delay != y.local_delay || x.stage_shared != y.stage_shared || x.stage_lane != y.stage_lane)
    return false;
  const auto dx = dag.deps_of(t), dy = dag.deps_of(u);
  if (dx.empty() || dx.size() != dy.size()) return false;
  for (std::size_t i = 0; i < dx.size(); ++i)
    if (dy[i] != dx[i] + (u - t)) return false;
  return true;
}

} // namespace

void DagExecutor::find_skip_regions() {
  const auto n = static_cast<TransferId>(dag_.size());
  // Steps as the builder labelled them: maximal runs of one `step` value.
  std::vector<std::pair<TransferId, TransferId>> runs; // [begin, end)
  for (TransferId i = 0; i < n;) {
    TransferId j = i + 1;
    while (j < n && dag_[j].step == dag_[i].step) ++j;
    runs.emplace_back(i, j);
    i = j;
  }
  // A region: consecutive runs of one length d where every transfer of a run repeats in the next.
  for (std::size_t k = 0; k < runs.size();) {
    const std::uint32_t d = runs[k].second - runs[k].first;
    std::size_t m = k;
    while (m + 1 < runs.size() && runs[m + 1].second - runs[m + 1].first == d) {
      bool same = true;
      for (TransferId t = runs[m].first; same && t < runs[m].second; ++t) same = same_shape(dag_, t, t + d);
      if (!same) break;
      ++m;
    }
    if (m - k + 1 >= kMinRegionSteps) {
      SkipRegion r{runs[k].first, runs[m].second, d, 0};
      for (TransferId t = r.a; t < r.b; ++t)
        for (const auto dep : dag_.deps_of(t)) r.reach = std::max(r.reach, t - dep);
      regions_.push_back(r);
    }
    k = m + 1;
  }
  if (!regions_.empty()) done_flag_.assign(n, 0);
}

void DagExecutor::skip_start() {
  skip_on_ = true;
  shift_ = 0;
  std::fill(done_flag_.begin(), done_flag_.end(), std::uint8_t{0});
  lo_ = 0;
  hi_ = roots_.empty() ? 0 : roots_.back() + 1;
  skip_enter_region();
}

void DagExecutor::skip_enter_region() {
  edges_.clear();
  region_ =
      static_cast<std::size_t>(std::find_if(regions_.begin(), regions_.end(),
                                            [this](const SkipRegion& r) { return lo_ >= r.a && lo_ < r.b; }) -
                               regions_.begin());
  if (region_ == regions_.size()) return;
  const SkipRegion& r = regions_[region_];
  const std::uint64_t w = std::uint64_t{kWindowSteps} * r.d;
  next_edge_ = static_cast<TransferId>(r.a + ((lo_ - r.a) / w + 1) * w);
}

TransferId DagExecutor::skip_delivered(TransferId t) {
  done_flag_[t] = 1;
  if (t != lo_) return t; // the frontier moves only when its smallest undelivered transfer arrives
  while (lo_ < done_flag_.size() && done_flag_[lo_] != 0) ++lo_;
  if (region_ == regions_.size() || lo_ >= regions_[region_].b) skip_enter_region();
  if (region_ == regions_.size()) return t;
  const SkipRegion& r = regions_[region_];
  const Time now = engine_.now();
  const std::uint64_t window = std::uint64_t{kWindowSteps} * r.d;
  while (lo_ >= next_edge_) {
    next_edge_ = static_cast<TransferId>(next_edge_ + window);
    edges_.push_back(now);
    if (edges_.size() == 1) {
      if (!engine_.mark_period()) {
        skip_on_ = false; // this engine (or its features) cannot skip: stop watching
        return t;
      }
      continue;
    }
    if (edges_.size() < kConfirmWindows + 1) continue;
    // kConfirmWindows windows since the mark: steady when each took the mean within kSteadyTolerance.
    const Time span = edges_.back() - edges_.front();
    const double mean = static_cast<double>(span.count_ps()) / kConfirmWindows;
    bool steady = mean > 0;
    for (std::size_t i = 1; steady && i < edges_.size(); ++i)
      steady = std::abs(static_cast<double>((edges_[i] - edges_[i - 1]).count_ps()) - mean) <=
               kSteadyTolerance * mean;
    const std::uint64_t period = kConfirmWindows * window;
    const std::uint64_t end = std::uint64_t{hi_} + r.reach;
    const std::uint64_t n =
        end < r.b ? (r.b - end) / period : 0; // periods that keep the frontier in the region
    if (steady && lo_ >= r.a && n >= 2 && engine_.skip_periods(n - 1)) {
      skip_relabel((n - 1) * period, Time::ps(static_cast<std::int64_t>(n - 1) * span.count_ps()));
      return static_cast<TransferId>(t + (n - 1) * period);
    }
    edges_.assign(1, now); // not steady (or no room): watch again from here
    if (!engine_.mark_period()) {
      skip_on_ = false;
      return t;
    }
  }
  return t;
}

void DagExecutor::skip_relabel(std::uint64_t s, Time dt) {
  // Every transfer at or above the frontier takes the state of the one s below; those below it are
  // delivered. (Descending: the ranges overlap when the frontier is wider than s.)
  for (TransferId v = hi_; v-- > lo_;) {
    waiting_[v + s] = waiting_[v];
    done_flag_[v + s] = done_flag_[v];
  }
  const auto first_kept = static_cast<TransferId>(lo_ + s);
  for (TransferId v = lo_; v < first_kept; ++v) {
    waiting_[v] = 0;
    done_flag_[v] = 1;
  }
  remaining_ -= s;
  if (opt_.delivered)
    opt_.delivered->store(opt_.delivered->load(std::memory_order_relaxed) + s, std::memory_order_relaxed);
  lo_ = first_kept;
  while (lo_ < done_flag_.size() && done_flag_[lo_] != 0) ++lo_;
  hi_ = static_cast<TransferId>(hi_ + s);
  next_edge_ = static_cast<TransferId>(next_edge_ + s);
  edges_.clear();
  shift_ += s;
  for (auto* times : {&ready_, &nvlink_free_, &channel_free_, &channel_start_})
    for (auto& x : *times) x += dt;
  for (auto& node : nic_free_)
    for (auto& x : node) x += dt;
}

} // namespace ibn::scen
