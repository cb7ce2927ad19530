#include "scenarios/executor.hpp"

#include "sim/error.hpp"

#include <algorithm>
#include <stdexcept>

namespace ibn::scen {

DagExecutor::DagExecutor(eng::Engine& engine, const TransferDag& dag, const JobLayout& layout,
                         ExecOptions opt)
    : engine_(engine), dag_(dag), layout_(layout), opt_(std::move(opt)) {
  if (dag.ranks() > layout.ranks())
    throw InputError("a " + dag.op + " over " + std::to_string(dag.ranks()) +
                     " ranks does not fit a job of " + std::to_string(layout.ranks()) + " ranks");
  if (layout.gpus_per_node == 0) throw InputError("gpus_per_node must be at least 1");
  for (const auto& n : layout.nodes)
    if (n.empty()) throw InputError("a job node has no HCA");
  if (!(opt_.nvlink_gbps > 0)) throw InputError("NVLink bandwidth must be positive");
  const auto n = dag.size();
  std::vector<std::uint32_t> count(n + 1, 0);
  for (TransferId t = 0; t < n; ++t) {
    const auto deps = dag.deps_of(t);
    if (deps.empty()) roots_.push_back(t);
    for (const auto d : deps) ++count[d + 1];
    const auto& tr = dag[t];
    if (tr.src / layout.gpus_per_node != tr.dst / layout.gpus_per_node) ++network_transfers_;
  }
  for (std::size_t i = 1; i <= n; ++i) count[i] += count[i - 1];
  succ_begin_ = count;
  succ_.resize(count[n]);
  std::vector<std::uint32_t> fill(count.begin(), count.end() - 1);
  for (TransferId t = 0; t < n; ++t)
    for (const auto d : dag.deps_of(t)) succ_[fill[d]++] = t;
  waiting_.resize(n);
  // Per-transfer noise, paced NICs and traces do not repeat (or would miss the skipped transfers).
  if (opt_.fast_forward && !opt_.noise && !opt_.node_paced_gbps && !opt_.on_transfer) find_skip_regions();
}

void DagExecutor::start(std::vector<Time> ready, std::function<void(Time end)> done) {
  if (running_) throw std::logic_error("DagExecutor::start while an execution is running");
  const auto ranks = dag_.ranks();
  ready_ = ready.empty() ? std::vector<Time>(ranks, engine_.now()) : std::move(ready);
  if (ready_.size() < ranks) throw std::logic_error("DagExecutor::start: ready times for too few ranks");
  if (dag_.launch_latency > Time::zero() && dag_.size() > 0)
    for (auto& r : ready_) r = std::max(r, engine_.now()) + dag_.launch_latency;
  nvlink_free_.assign(ranks, Time::zero());
  if (dag_.channel_gbps > 0 || dag_.channel_gbps_nvlink.value_or(0) > 0) {
    const std::size_t lanes = dag_.channel_stage_overlaps ? 2 : 1;
    channel_free_.assign(std::size_t{ranks} * dag_.channels * lanes, Time::zero());
    if (dag_.channel_stage_overlaps) channel_start_.assign(channel_free_.size(), Time::zero());
  }
  if (opt_.on_transfer) posted_.assign(dag_.size(), Time::zero());
  for (TransferId t = 0; t < dag_.size(); ++t)
    waiting_[t] = static_cast<std::uint32_t>(dag_.deps_of(t).size());
  remaining_ = dag_.size();
  running_ = true;
  done_ = std::move(done);
  if (!regions_.empty()) skip_start();
  if (remaining_ == 0) {
    const Time at = std::max(engine_.now(), *std::max_element(ready_.begin(), ready_.end()));
    engine_.call_at(at, [this] {
      running_ = false;
      auto fn = std::move(done_); // done may start the next execution, which sets done_ again
      fn(engine_.now());
    });
    return;
  }
  for (const auto t : roots_) release(t);
}

void DagExecutor::release(TransferId t) {
  const auto& tr = dag_[t];
  Time at = engine_.now() + tr.local_delay;
  at = std::max(at, ready_[tr.src]);
  const bool network = tr.src / layout_.gpus_per_node != tr.dst / layout_.gpus_per_node;
  if (network && opt_.noise) at += opt_.noise(tr.bytes);
  if (network && opt_.node_paced_gbps) {
    const auto sn = tr.src / layout_.gpus_per_node;
    if (const double paced = opt_.node_paced_gbps(sn); paced > 0 && paced < opt_.line_gbps) {
      const auto rail = rail_of(tr, sn, tr.dst / layout_.gpus_per_node);
      if (nic_free_.size() <= sn) nic_free_.resize(sn + 1);
      if (nic_free_[sn].size() <= rail) nic_free_[sn].resize(rail + 1, Time::zero());
      auto& free = nic_free_[sn][rail];
      const double bits = static_cast<double>(tr.bytes) * 8.0;
      const Time end = std::max(at, free) + Time::from_s(bits / (paced * 1e9));
      free = end;
      at = std::max(at, end - Time::from_s(bits / (opt_.line_gbps * 1e9)));
    }
  }
  const double gbps = network                   ? dag_.channel_gbps
                      : !dag_.channel_stage_all ? 0.0
                                                : dag_.channel_gbps_nvlink.value_or(dag_.channel_gbps);
  if (gbps > 0) {
    // The channel's stage takes chunks one after another (in release order) at its rate; a chunk is
    // posted once its pass is over, or (channel_stage_overlaps) once its pass has begun, the pass beginning
    // at the release, not after the transfer's own delays (the data is there; the delays are latency).
    std::size_t ch = std::size_t{tr.src} * dag_.channels + tr.channel % dag_.channels;
    if (dag_.channel_stage_overlaps) {
      ch = 2 * ch + (tr.stage_lane & 1U);
      auto& start = channel_start_[ch];
      if (!tr.stage_shared) {
        auto& free = channel_free_[ch];
        start = std::max({engine_.now(), ready_[tr.src], free});
        free = start + channel_stage_pass(tr.bytes, gbps);
      }
      at = std::max(at, start);
    } else {
      auto& free = channel_free_[ch];
      at = std::max(at, free) + channel_stage_pass(tr.bytes, gbps);
      free = at;
    }
  }
  if (at == engine_.now()) {
    post(t);
  } else {
    engine_.call_at(at, [this, t, base = shift_] { post(current(t, base)); });
  }
}

std::uint32_t DagExecutor::rail_of(const Transfer& tr, std::uint32_t sn, std::uint32_t dn) const {
  const auto nics = static_cast<std::uint32_t>(std::min(layout_.nodes[sn].size(), layout_.nodes[dn].size()));
  return (tr.rail >= 0 ? static_cast<std::uint32_t>(tr.rail) : tr.channel) % nics;
}

void DagExecutor::post(TransferId t) {
  const auto& tr = dag_[t];
  if (opt_.on_transfer) posted_[t] = engine_.now();
  const auto gpn = layout_.gpus_per_node;
  const auto sn = tr.src / gpn, dn = tr.dst / gpn;
  if (sn != dn) {
    const auto& src_node = layout_.nodes[sn];
    const auto& dst_node = layout_.nodes[dn];
    const auto rail = rail_of(tr, sn, dn);
    eng::TransferSpec spec;
    spec.src = src_node[rail];
    spec.dst = dst_node[rail];
    spec.bytes = tr.bytes;
    spec.qp_slot = tr.channel;
    spec.sl = layout_.sl;
    engine_.send(spec, [this, t, base = shift_](Time) { delivered(current(t, base)); });
    return;
  }
  // NVLink copy: the source GPU's egress serves copies one after the other.
  const Time now = engine_.now();
  const Time start = std::max(now, nvlink_free_[tr.src]);
  const Time wire = Time::from_s(static_cast<double>(tr.bytes) * 8.0 / (opt_.nvlink_gbps * 1e9));
  nvlink_free_[tr.src] = start + wire;
  engine_.call_at(start + wire + opt_.nvlink_latency,
                  [this, t, base = shift_] { delivered(current(t, base)); });
}

void DagExecutor::delivered(TransferId t) {
  if (skip_on_) t = skip_delivered(t);
  if (opt_.on_transfer) opt_.on_transfer(t, posted_[t], engine_.now());
  if (opt_.delivered) // one writer: a relaxed load and store, no read-modify-write
    opt_.delivered->store(opt_.delivered->load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  if (skip_on_ && succ_begin_[t] < succ_begin_[t + 1]) hi_ = std::max(hi_, succ_[succ_begin_[t + 1] - 1] + 1);
  for (auto i = succ_begin_[t]; i < succ_begin_[t + 1]; ++i) {
    const auto s = succ_[i];
    if (--waiting_[s] == 0) release(s);
  }
  if (--remaining_ == 0) {
    running_ = false;
    auto fn = std::move(done_); // done may start the next execution, which sets done_ again
    fn(engine_.now());
  }
}

} // namespace ibn::scen
