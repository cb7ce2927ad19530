#include "analysis/segments.hpp"

#include "analysis/tail_stats.hpp"
#include "scenarios/runner.hpp"
#include "sim/atomic_file.hpp"
#include "sim/build_id.hpp"
#include "sim/child_processes.hpp"
#include "sim/error.hpp"
#include "sim/progress.hpp"
#include "sim/rng.hpp"
#include "sim/version.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>

namespace ibn::analysis {

namespace {

double r4(double x) {
  return std::round(x * 1e4) / 1e4;
}

/// One run of the scenario (a segment, or the whole point) in this process.
PointResult run_once(const scen::Scenario& s, std::uint32_t segment,
                     const std::vector<std::uint32_t>& iterations, ProgressSlot* slot) {
  scen::RunOptions ro;
  ro.segment = segment;
  ro.iterations = iterations;
  ro.progress_slot = slot;
  const auto w = scen::build_world(s);
  auto r = scen::run_scenario(s, w, ro);
  r.warnings.insert(r.warnings.begin(), w.warnings.begin(), w.warnings.end());
  return point_result(r);
}

/// Sums the numbers of two JSON values of the same shape (counters); anything else keeps `a`.
nlohmann::json add_numbers(const nlohmann::json& a, const nlohmann::json& b) {
  if (a.is_number_unsigned() && b.is_number_unsigned())
    return a.get<std::uint64_t>() + b.get<std::uint64_t>();
  if (a.is_number_integer() && b.is_number_integer()) return a.get<std::int64_t>() + b.get<std::int64_t>();
  if (a.is_number() && b.is_number()) return a.get<double>() + b.get<double>();
  if (a.is_object() && b.is_object()) {
    nlohmann::json o = a;
    for (auto it = b.begin(); it != b.end(); ++it)
      o[it.key()] = a.contains(it.key()) ? add_numbers(a.at(it.key()), it.value()) : it.value();
    return o;
  }
  return a;
}

double num(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j.at(key).is_number() ? j.at(key).get<double>() : 0.0;
}

nlohmann::json merge_background(const std::vector<PointResult>& segs) {
  nlohmann::json out = segs[0].background;
  for (std::size_t b = 0; b < out.size(); ++b) {
    if (!out[b].contains("stats")) continue;
    double gbps_weighted = 0, time = 0, lat_weighted = 0, msgs = 0, p50 = 0, p99 = 0, max = 0;
    std::uint64_t mp = 0, bp = 0, md = 0, bd = 0;
    for (const auto& s : segs) {
      if (b >= s.background.size() || !s.background[b].contains("stats")) continue;
      const auto& st = s.background[b].at("stats");
      mp += st.value("messages_posted", std::uint64_t{0});
      bp += st.value("bytes_posted", std::uint64_t{0});
      md += st.value("messages_delivered", std::uint64_t{0});
      bd += st.value("bytes_delivered", std::uint64_t{0});
      gbps_weighted += num(st, "delivered_gbps") * s.engine.simulated_us;
      time += s.engine.simulated_us;
      const auto lat = st.value("latency_us", nlohmann::json::object());
      const double m = static_cast<double>(st.value("messages_delivered", std::uint64_t{0}));
      lat_weighted += num(lat, "mean") * m;
      msgs += m;
      p50 = std::max(p50, num(lat, "p50"));
      p99 = std::max(p99, num(lat, "p99"));
      max = std::max(max, num(lat, "max"));
    }
    out[b]["stats"] = {
        {"messages_posted", mp},
        {"bytes_posted", bp},
        {"messages_delivered", md},
        {"bytes_delivered", bd},
        {"delivered_gbps", time > 0 ? gbps_weighted / time : 0.0},
        {"latency_us",
         {{"p50", p50}, {"p99", p99}, {"max", max}, {"mean", msgs > 0 ? lat_weighted / msgs : 0.0}}},
        {"merged_from_segments", segs.size()}};
  }
  return out;
}

std::string segment_path(const std::string& dir, std::uint32_t s) {
  char name[64];
  std::snprintf(name, sizeof name, "/segment-%06u.json", s);
  return dir + name;
}

} // namespace

double parse_tail_precision(const std::string& text, const std::string& flag) {
  std::string t = text;
  if (!t.empty() && t.back() == '%') t.pop_back();
  double v = 0;
  std::size_t used = 0;
  try {
    v = std::stod(t, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (t.empty() || used != t.size() || !std::isfinite(v) || v <= 0 || v >= 100)
    throw InputError(flag + " " + text + ": expected a percentage above 0 and below 100, e.g. 5%");
  return v / 100;
}

std::string checkpoint_hash(const scen::Scenario& s, std::uint32_t k) {
  auto cfg = s.effective;
  if (cfg.contains("jobs") && cfg.at("jobs").is_array())
    for (auto& j : cfg["jobs"])
      if (j.contains("workload") && j["workload"].is_object()) j["workload"].erase("iterations");
  cfg["run"]["segment_iterations"] = k;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(
                    fnv1a64(std::string(kVersion) + "\n" + build_id() + "\n" + cfg.dump())));
  return hex;
}

PointResult merge_segments(const std::vector<PointResult>& segs) {
  if (segs.empty()) throw std::logic_error("merge_segments: no segment");
  PointResult m = segs[0];
  for (std::size_t c = 0; c < m.collectives.size(); ++c) {
    scen::CollectiveSamples cs;
    const auto& first = segs[0].collectives[c];
    cs.job = first.job;
    cs.op = first.op;
    cs.algorithm = first.algorithm;
    cs.protocol = first.protocol;
    cs.size_bytes = first.size_bytes;
    cs.ranks = first.ranks;
    cs.nodes = first.nodes;
    cs.channels = first.channels;
    cs.looping = first.background;
    cs.network_transfers = first.network_transfers;
    cs.nvlink_transfers = first.nvlink_transfers;
    cs.launch_us = first.launch_us;
    cs.busbw_factor = first.busbw_factor;
    for (const auto& s : segs) {
      if (c >= s.collectives.size() || s.collectives[c].job != first.job ||
          s.collectives[c].size_bytes != first.size_bytes)
        throw std::runtime_error("merge_segments: the segments ran different collectives");
      cs.samples_us.insert(cs.samples_us.end(), s.collectives[c].samples_us.begin(),
                           s.collectives[c].samples_us.end());
    }
    m.collectives[c] = collective_result(cs);
  }
  // Links by tier.
  double total_us = 0;
  for (const auto& s : segs) total_us += s.engine.simulated_us;
  for (auto& t : m.links_by_tier) {
    double util_w = 0;
    TierStats sum;
    sum.tier = t.tier;
    sum.links = t.links;
    for (const auto& s : segs)
      for (const auto& u : s.links_by_tier) {
        if (u.tier != t.tier) continue;
        util_w += u.util_mean * s.engine.simulated_us;
        sum.util_max = std::max(sum.util_max, u.util_max);
        sum.queue_max_bytes = std::max(sum.queue_max_bytes, u.queue_max_bytes);
        sum.ecn_marks += u.ecn_marks;
        sum.fecn_marks += u.fecn_marks;
        sum.stall_us += u.stall_us;
        sum.pause_us += u.pause_us;
        sum.bytes += u.bytes;
        sum.wire_bytes += u.wire_bytes;
        sum.payload_bytes += u.payload_bytes;
      }
    sum.util_mean = r4(total_us > 0 ? util_w / total_us : 0.0);
    sum.util_max = r4(sum.util_max);
    sum.stall_us = r4(sum.stall_us);
    sum.pause_us = r4(sum.pause_us);
    t = sum;
  }
  m.background = merge_background(segs);
  m.engine.events = 0;
  m.engine.transfers = 0;
  m.engine.wall_s = 0;
  for (std::size_t i = 0; i < segs.size(); ++i) {
    const auto& e = segs[i].engine;
    m.engine.events += e.events;
    m.engine.transfers += e.transfers;
    m.engine.wall_s += e.wall_s;
    if (i > 0) m.engine.counters = add_numbers(m.engine.counters, e.counters);
  }
  m.engine.simulated_us = r4(total_us);
  m.engine.wall_s = std::round(m.engine.wall_s * 1e3) / 1e3;
  m.engine.events_per_s =
      std::round(m.engine.wall_s > 0 ? static_cast<double>(m.engine.events) / m.engine.wall_s : 0.0);
  m.warnings.clear();
  for (const auto& s : segs)
    for (const auto& w : s.warnings)
      if (std::find(m.warnings.begin(), m.warnings.end(), w) == m.warnings.end()) m.warnings.push_back(w);
  return m;
}

double worst_p99_half_width(const PointResult& r) {
  double worst = -1;
  for (const auto& c : r.collectives) {
    if (!c.measured()) continue;
    auto sorted = c.samples_us;
    std::sort(sorted.begin(), sorted.end());
    const auto k = std::clamp<std::size_t>(
        static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(sorted.size()))), 1, sorted.size());
    worst = std::max(worst, relative_half_width(quantile_ci(sorted, 0.99), sorted[k - 1]));
  }
  return worst < 0 ? std::numeric_limits<double>::infinity() : worst;
}

namespace {

/// How a point runs in segments: K, their count and each one's iterations, where their checkpoints go.
struct SegmentPlan {
  std::uint32_t k = 0, count = 0;
  bool tail = false;
  std::uint64_t cap = 0;
  std::string dir; ///< checkpoint folder; empty: none
  std::vector<std::uint32_t> iterations_of(const scen::Scenario& s, std::uint32_t seg) const {
    std::vector<std::uint32_t> it;
    for (const auto& j : s.jobs) {
      const std::uint64_t n = tail ? cap : j.workload.iterations;
      const std::uint64_t done = static_cast<std::uint64_t>(seg) * k;
      it.push_back(j.workload.loop
                       ? 0
                       : static_cast<std::uint32_t>(n > done ? std::min<std::uint64_t>(k, n - done) : 0));
    }
    return it;
  }
  std::string path(std::uint32_t seg) const { return dir.empty() ? std::string() : segment_path(dir, seg); }
};

/// The plan of a point that runs in segments (run.segment_iterations > 0 or a tail target).
SegmentPlan plan_segments(const scen::Scenario& s, const SegmentOptions& opt) {
  SegmentPlan p;
  p.tail = opt.tail_precision > 0;
  // Finite jobs and their iteration counts.
  std::uint32_t most = 0;
  for (const auto& j : s.jobs)
    if (!j.workload.loop) most = std::max(most, j.workload.iterations);
  if (most == 0) throw InputError(s.file + ": run in segments needs a job that is not looping");
  p.k = s.segment_iterations ? s.segment_iterations : most;
  if (p.tail && opt.max_iterations < 1) throw InputError("--max-iters must be at least 1");
  p.cap = p.tail ? opt.max_iterations : 0;
  // Segments: without a target, enough for the largest job; with one, as many as the cap allows.
  const std::uint64_t iters = p.tail ? p.cap : most;
  p.count = static_cast<std::uint32_t>((iters + p.k - 1) / p.k);
  if (!opt.checkpoint_dir.empty()) p.dir = opt.checkpoint_dir + "/checkpoints/" + checkpoint_hash(s, p.k);
  return p;
}

/// The checkpoint of segment `seg` if one exists, is readable and ran the same iterations.
std::optional<PointResult> read_checkpoint(const SegmentPlan& p, const scen::Scenario& s, std::uint32_t seg) {
  const auto path = p.path(seg);
  if (path.empty() || !std::filesystem::exists(path)) return std::nullopt;
  try {
    const auto j = nlohmann::json::parse(read_file(path));
    if (j.at("iterations").get<std::vector<std::uint32_t>>() == p.iterations_of(s, seg))
      return point_result_from_json(j.at("result"), path);
  } catch (const std::exception&) {
    // unreadable or from another run: run the segment again
  }
  return std::nullopt;
}

void write_checkpoint(const SegmentPlan& p, const scen::Scenario& s, std::uint32_t seg,
                      const PointResult& r) {
  if (const auto path = p.path(seg); !path.empty())
    write_file_atomic(
        path, nlohmann::json{{"iterations", p.iterations_of(s, seg)}, {"result", to_json(r)}}.dump() + "\n");
}

} // namespace

std::uint32_t independent_segments(const scen::Scenario& s, const SegmentOptions& opt) {
  if (s.segment_iterations == 0 || opt.tail_precision > 0 || opt.checkpoint_dir.empty()) return 0;
  return plan_segments(s, opt).count;
}

bool segment_checkpointed(const scen::Scenario& s, const SegmentOptions& opt, std::uint32_t seg) {
  return read_checkpoint(plan_segments(s, opt), s, seg).has_value();
}

void run_segment_to_checkpoint(const scen::Scenario& s, const SegmentOptions& opt, std::uint32_t seg) {
  const auto p = plan_segments(s, opt);
  if (p.dir.empty() || seg >= p.count) throw std::logic_error("run_segment_to_checkpoint: no such segment");
  write_checkpoint(p, s, seg, run_once(s, seg, p.iterations_of(s, seg), opt.progress));
}

PointResult run_point_segmented(const scen::Scenario& s, const SegmentOptions& opt) {
  auto* slot = opt.progress;
  const bool tail = opt.tail_precision > 0;
  if (s.segment_iterations == 0 && !tail) {
    // Today's behaviour: one run.
    if (slot) slot->runs_total.store(1);
    if (!opt.segments_in_child_processes) return run_once(s, 0, {}, slot);
    const auto text =
        run_in_child_process([&] { return to_json(run_once(s, 0, {}, slot)).dump(); }, opt.on_wait);
    return point_result_from_json(nlohmann::json::parse(text), "a point run in a child process");
  }
  const auto plan = plan_segments(s, opt);
  const std::uint32_t k = plan.k, n_max = plan.count;
  const std::uint64_t cap = plan.cap;
  const std::string& dir = plan.dir;
  if (slot) {
    slot->runs_total.store(n_max);
    slot->open_ended.store(tail);
  }
  std::vector<PointResult> segs;
  std::uint32_t resumed = 0;
  double half = std::numeric_limits<double>::infinity();
  for (std::uint32_t seg = 0; seg < n_max; ++seg) {
    const auto its = plan.iterations_of(s, seg);
    std::optional<PointResult> r = read_checkpoint(plan, s, seg);
    if (r) {
      ++resumed;
      if (slot) slot->runs_resumed.store(resumed);
    }
    if (!r) {
      if (opt.segments_in_child_processes) {
        const auto text =
            run_in_child_process([&] { return to_json(run_once(s, seg, its, slot)).dump(); }, opt.on_wait);
        r = point_result_from_json(nlohmann::json::parse(text), "segment " + std::to_string(seg));
      } else {
        r = run_once(s, seg, its, slot);
      }
      write_checkpoint(plan, s, seg, *r);
    }
    segs.push_back(std::move(*r));
    if (slot) {
      slot->runs_done.store(seg + 1);
      slot->run_done.store(0);
    }
    if (tail) {
      half = worst_p99_half_width(merge_segments(segs));
      if (half <= opt.tail_precision) break;
    }
  }
  if (resumed > 0 && opt.log)
    opt.log("resumed " + std::to_string(resumed) + " finished segment(s) from " + dir);
  // Through the checkpointed (rounded) form always, so a resumed point equals an uninterrupted one.
  auto m = merge_segments(segs);
  std::uint64_t iterations = 0;
  for (const auto& c : m.collectives)
    if (c.measured()) iterations = std::max<std::uint64_t>(iterations, c.samples_us.size());
  m.manifest.segments = {{"iterations_per_segment", k}, {"count", segs.size()}};
  if (tail) {
    half = worst_p99_half_width(m);
    m.manifest.tail_precision = {
        {"target_pct", r4(opt.tail_precision * 100)},
        {"max_iterations", cap},
        {"iterations", iterations},
        {"half_width_pct", std::isfinite(half) ? nlohmann::json(r4(half * 100)) : nlohmann::json()},
        {"reached", half <= opt.tail_precision}};
  }
  return m;
}

} // namespace ibn::analysis
