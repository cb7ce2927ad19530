#include "analysis/results.hpp"

#include "sim/units.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <sstream>
#include <stdexcept>

namespace ibn::analysis {

Percentiles percentiles(std::vector<double> v) {
  if (v.empty()) throw std::invalid_argument("percentiles of an empty sample set");
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  auto rank = [&](double p) {
    auto k = static_cast<std::size_t>(std::ceil(p * static_cast<double>(n)));
    k = std::clamp<std::size_t>(k, 1, n);
    return v[k - 1];
  };
  Percentiles p;
  p.n = n;
  p.min = v.front();
  p.max = v.back();
  p.p50 = rank(0.50);
  p.p90 = rank(0.90);
  p.p99 = rank(0.99);
  p.p999 = rank(0.999);
  p.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(n);
  return p;
}

namespace {
/// Rounds to 4 significant decimals after the point in microseconds/Gb/s, so documents are stable and short.
double r4(double x) { return std::round(x * 1e4) / 1e4; }
} // namespace

nlohmann::json to_json(const Percentiles& p) {
  return {{"p50", r4(p.p50)}, {"p90", r4(p.p90)}, {"p99", r4(p.p99)}, {"p999", r4(p.p999)},
          {"max", r4(p.max)}, {"mean", r4(p.mean)}, {"min", r4(p.min)}};
}

std::string tier_name(int tier) {
  switch (tier) {
  case 0: return "hca";
  case 1: return "leaf";
  case 2: return "spine";
  case 3: return "core";
  default: return "tier" + std::to_string(tier);
  }
}

std::vector<TierStats> link_stats_by_tier(const std::vector<eng::LinkRecord>& links, Time duration) {
  std::map<std::pair<int, int>, TierStats> by;
  std::map<std::pair<int, int>, double> util_sum;
  const double d = duration.to_us();
  for (const auto& l : links) {
    const auto key = std::make_pair(l.from_tier, l.to_tier);
    auto& t = by[key];
    t.tier = tier_name(l.from_tier) + "->" + tier_name(l.to_tier);
    ++t.links;
    const double u = d > 0 ? l.busy.to_us() / d : 0.0;
    util_sum[key] += u;
    t.util_max = std::max(t.util_max, u);
    t.queue_max_bytes = std::max(t.queue_max_bytes, l.peak_queue_bytes);
    t.ecn_marks += l.ecn_marks;
    t.fecn_marks += l.fecn_marks;
    t.stall_us += l.credit_stall.to_us();
    t.pause_us += l.pause_time.to_us();
    t.bytes += static_cast<double>(l.bytes);
    t.wire_bytes += static_cast<double>(l.wire_bytes);
    t.payload_bytes += static_cast<double>(l.payload_bytes);
  }
  std::vector<TierStats> out;
  for (auto& [k, t] : by) {
    t.util_mean = util_sum[k] / static_cast<double>(t.links);
    out.push_back(t);
  }
  // Up the tree first, then down: hca->leaf, leaf->spine, spine->core, core->spine, spine->leaf, leaf->hca.
  std::stable_sort(out.begin(), out.end(), [](const TierStats& a, const TierStats& b) {
    auto key = [](const TierStats& t) {
      const auto arrow = t.tier.find("->");
      const auto from = t.tier.substr(0, arrow), to = t.tier.substr(arrow + 2);
      static constexpr const char* order[] = {"hca", "leaf", "spine", "core"};
      int f = 9, g = 9;
      for (int i = 0; i < 4; ++i) {
        if (from == order[i]) f = i;
        if (to == order[i]) g = i;
      }
      return g > f ? f : 100 - f; // upward links by source tier, then downward by decreasing source tier
    };
    return key(a) < key(b);
  });
  return out;
}

nlohmann::json results_json(const scen::RunResult& r) {
  nlohmann::json colls = nlohmann::json::array();
  for (const auto& c : r.collectives) {
    nlohmann::json j = {{"name", c.job + "/" + c.op + "/" + std::to_string(c.size_bytes)},
                        {"job", c.job},
                        {"op", c.op},
                        {"algorithm", c.algorithm},
                        {"protocol", c.protocol},
                        {"channels", c.channels},
                        {"size_bytes", c.size_bytes},
                        {"ranks", c.ranks},
                        {"nodes", c.nodes},
                        {"background", c.looping},
                        {"iterations", c.samples_us.size()},
                        {"transfers_per_iteration", {{"network", c.network_transfers}, {"nvlink", c.nvlink_transfers}}},
                        {"busbw_factor", r4(c.busbw_factor)}};
    if (!c.samples_us.empty()) {
      const auto p = percentiles(c.samples_us);
      j["completion_us"] = to_json(p);
      // Bandwidth percentiles: the p-th fastest iteration's bandwidth is size / (completion at p).
      auto bw = [&](double t_us) { return t_us > 0 ? static_cast<double>(c.size_bytes) * 8.0 / (t_us * 1e3) : 0.0; };
      j["algbw_gbps"] = {{"p50", r4(bw(p.p50))}, {"p99", r4(bw(p.p99))}, {"p999", r4(bw(p.p999))},
                         {"mean", r4(bw(p.mean))}, {"min", r4(bw(p.max))}, {"max", r4(bw(p.min))}};
      j["busbw_gbps"] = {{"p50", r4(bw(p.p50) * c.busbw_factor)},   {"p99", r4(bw(p.p99) * c.busbw_factor)},
                         {"p999", r4(bw(p.p999) * c.busbw_factor)}, {"mean", r4(bw(p.mean) * c.busbw_factor)},
                         {"min", r4(bw(p.max) * c.busbw_factor)},   {"max", r4(bw(p.min) * c.busbw_factor)}};
    }
    nlohmann::json samples = nlohmann::json::array();
    for (const double s : c.samples_us) samples.push_back(r4(s));
    j["samples_us"] = samples;
    colls.push_back(j);
  }
  nlohmann::json tiers = nlohmann::json::array();
  for (const auto& t : link_stats_by_tier(r.engine.links, r.sim_time)) {
    tiers.push_back({{"tier", t.tier},
                     {"links", t.links},
                     {"util_mean", r4(t.util_mean)},
                     {"util_max", r4(t.util_max)},
                     {"queue_max_bytes", t.queue_max_bytes},
                     {"ecn_marks", t.ecn_marks},
                     {"fecn_marks", t.fecn_marks},
                     {"stall_us", r4(t.stall_us)},
                     {"pause_us", r4(t.pause_us)},
                     {"bytes", t.bytes},
                     {"wire_bytes", t.wire_bytes},
                     {"payload_bytes", t.payload_bytes}});
  }
  const double eps = r.wall_s > 0 ? static_cast<double>(r.engine.events) / r.wall_s : 0.0;
  return {{"manifest", r.manifest},
          {"collectives", colls},
          {"links", {{"by_tier", tiers}}},
          {"placement", r.placement},
          {"background", r.background},
          {"engine", {{"name", r.engine.engine},
                      {"events", r.engine.events},
                      {"transfers", r.engine.transfers},
                      {"simulated_us", r4(r.sim_time.to_us())},
                      {"wall_s", std::round(r.wall_s * 1e3) / 1e3},
                      {"events_per_s", std::round(eps)},
                      {"counters", r.engine.extra}}},
          {"warnings", r.warnings}};
}

std::string results_csv(const scen::RunResult& r) {
  std::ostringstream s;
  s << "job,op,algorithm,protocol,size_bytes,ranks,iterations,p50_us,p90_us,p99_us,p999_us,max_us,mean_us,"
       "algbw_p50_gbps,busbw_p50_gbps\n";
  for (const auto& c : r.collectives) {
    if (c.samples_us.empty()) continue;
    const auto p = percentiles(c.samples_us);
    const double alg = static_cast<double>(c.size_bytes) * 8.0 / (p.p50 * 1e3);
    char line[512];
    std::snprintf(line, sizeof line, "%s,%s,%s,%s,%llu,%u,%zu,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f\n",
                  c.job.c_str(), c.op.c_str(), c.algorithm.c_str(), c.protocol.c_str(),
                  static_cast<unsigned long long>(c.size_bytes), c.ranks, c.samples_us.size(), p.p50, p.p90, p.p99,
                  p.p999, p.max, p.mean, alg, alg * c.busbw_factor);
    s << line;
  }
  return s.str();
}

std::string results_table(const scen::RunResult& r) {
  std::ostringstream s;
  char line[512];
  std::snprintf(line, sizeof line, "%-12s %-10s %-9s %10s %6s %6s %11s %11s %11s %12s\n", "job", "op", "algorithm",
                "size", "ranks", "iters", "p50 us", "p99 us", "p99.9 us", "busbw Gb/s");
  s << line;
  for (const auto& c : r.collectives) {
    if (c.samples_us.empty()) continue;
    const auto p = percentiles(c.samples_us);
    const double bus = static_cast<double>(c.size_bytes) * 8.0 / (p.p50 * 1e3) * c.busbw_factor;
    std::snprintf(line, sizeof line, "%-12s %-10s %-9s %10s %6u %6zu %11.2f %11.2f %11.2f %12.2f\n", c.job.c_str(),
                  c.op.c_str(), c.algorithm.c_str(), format_size(c.size_bytes).c_str(), c.ranks,
                  c.samples_us.size(), p.p50, p.p99, p.p999, bus);
    s << line;
  }
  return s.str();
}

} // namespace ibn::analysis
