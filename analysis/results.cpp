#include "analysis/results.hpp"

#include "analysis/tail_stats.hpp"
#include "sim/error.hpp"
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
double r4(double x) {
  return std::round(x * 1e4) / 1e4;
}
} // namespace

nlohmann::json to_json(const Percentiles& p) {
  return {{"p50", r4(p.p50)}, {"p90", r4(p.p90)},   {"p99", r4(p.p99)}, {"p999", r4(p.p999)},
          {"max", r4(p.max)}, {"mean", r4(p.mean)}, {"min", r4(p.min)}};
}

std::string tier_name(int tier) {
  switch (tier) {
  case 0:
    return "hca";
  case 1:
    return "leaf";
  case 2:
    return "spine";
  case 3:
    return "core";
  default:
    return "tier" + std::to_string(tier);
  }
}

std::vector<TierStats> link_stats_by_tier(const std::vector<eng::LinkRecord>& links, Time duration,
                                          const std::vector<eng::IdleLinks>& idle) {
  std::map<std::pair<int, int>, TierStats> by;
  std::map<std::pair<int, int>, double> util_sum;
  const double d = duration.to_us();
  // An idle link adds one to the count and zero to every sum and maximum (x + 0.0 == x exactly): the table
  // is the same as with a LinkRecord of zeros for each.
  for (const auto& g : idle) {
    const auto key = std::make_pair(g.from_tier, g.to_tier);
    auto& t = by[key];
    t.tier = tier_name(g.from_tier) + "->" + tier_name(g.to_tier);
    t.links += g.count;
    util_sum[key] += 0.0;
  }
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

namespace {

// ---- link tiers: one JSON object per TierStats (results.json links.by_tier[]) ----------------------------
TierStats rounded(TierStats t) {
  t.util_mean = r4(t.util_mean);
  t.util_max = r4(t.util_max);
  t.stall_us = r4(t.stall_us);
  t.pause_us = r4(t.pause_us);
  return t;
}

nlohmann::json tier_json(const TierStats& t) {
  return {{"tier", t.tier},
          {"links", t.links},
          {"util_mean", t.util_mean},
          {"util_max", t.util_max},
          {"queue_max_bytes", t.queue_max_bytes},
          {"ecn_marks", t.ecn_marks},
          {"fecn_marks", t.fecn_marks},
          {"stall_us", t.stall_us},
          {"pause_us", t.pause_us},
          {"bytes", t.bytes},
          {"wire_bytes", t.wire_bytes},
          {"payload_bytes", t.payload_bytes}};
}

TierStats tier_from_json(const nlohmann::json& j) {
  TierStats t;
  t.tier = j.at("tier").get<std::string>();
  t.links = j.at("links");
  t.util_mean = j.at("util_mean");
  t.util_max = j.at("util_max");
  t.queue_max_bytes = j.at("queue_max_bytes");
  t.ecn_marks = j.at("ecn_marks");
  t.fecn_marks = j.at("fecn_marks");
  t.stall_us = j.at("stall_us");
  t.pause_us = j.at("pause_us");
  t.bytes = j.at("bytes");
  t.wire_bytes = j.at("wire_bytes");
  t.payload_bytes = j.at("payload_bytes");
  return t;
}

// ---- collectives -----------------------------------------------------------------------------------------
BandwidthStats bw_from_json(const nlohmann::json& j) {
  return {j.at("p50"), j.at("p99"), j.at("p999"), j.at("mean"), j.at("min"), j.at("max")};
}

nlohmann::json percentiles_json(const Percentiles& p) {
  return {{"p50", p.p50}, {"p90", p.p90},   {"p99", p.p99}, {"p999", p.p999},
          {"max", p.max}, {"mean", p.mean}, {"min", p.min}};
}

} // namespace

nlohmann::json completion_json(const CollectiveResult& c) {
  nlohmann::json j = percentiles_json(*c.completion_us);
  // Derived from the samples (analysis/tail_stats.hpp), so a result read back writes the same document.
  std::vector<double> sorted = c.samples_us;
  std::sort(sorted.begin(), sorted.end());
  auto ci = [&](double q) {
    const auto [lo, hi] = quantile_ci(sorted, q);
    auto side = [](double v) { return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(r4(v)); };
    return nlohmann::json::array({side(lo), side(hi)});
  };
  j["n"] = sorted.size();
  j["ci"] = {{"level", 0.95}, {"p50", ci(0.5)}, {"p99", ci(0.99)}};
  j["unsupported"] = unsupported_percentiles(sorted.size());
  return j;
}

CollectiveResult collective_result(const scen::CollectiveSamples& c) {
  CollectiveResult o;
  o.job = c.job;
  o.op = c.op;
  o.algorithm = c.algorithm;
  o.protocol = c.protocol;
  o.channels = c.channels;
  o.size_bytes = c.size_bytes;
  o.ranks = c.ranks;
  o.nodes = c.nodes;
  o.background = c.looping;
  o.network_transfers = c.network_transfers;
  o.nvlink_transfers = c.nvlink_transfers;
  o.launch_us = r4(c.launch_us);
  o.busbw_factor = r4(c.busbw_factor);
  for (const double s : c.samples_us) o.samples_us.push_back(r4(s));
  if (!c.samples_us.empty()) {
    const auto p = percentiles(c.samples_us);
    o.completion_us =
        Percentiles{p.n, r4(p.min), r4(p.p50), r4(p.p90), r4(p.p99), r4(p.p999), r4(p.max), r4(p.mean)};
    // Bandwidth percentiles: the p-th fastest iteration's bandwidth is size / (completion at p).
    auto bw = [&](double t_us) {
      return t_us > 0 ? static_cast<double>(c.size_bytes) * 8.0 / (t_us * 1e3) : 0.0;
    };
    const double f = c.busbw_factor;
    o.algbw_gbps = {r4(bw(p.p50)),  r4(bw(p.p99)), r4(bw(p.p999)),
                    r4(bw(p.mean)), r4(bw(p.max)), r4(bw(p.min))};
    o.busbw_gbps = {r4(bw(p.p50) * f),  r4(bw(p.p99) * f), r4(bw(p.p999) * f),
                    r4(bw(p.mean) * f), r4(bw(p.max) * f), r4(bw(p.min) * f)};
  }
  return o;
}

namespace {

nlohmann::json collective_json(const CollectiveResult& c) {
  nlohmann::json j = {
      {"name", c.job + "/" + c.op + "/" + std::to_string(c.size_bytes)},
      {"job", c.job},
      {"op", c.op},
      {"algorithm", c.algorithm},
      {"protocol", c.protocol},
      {"channels", c.channels},
      {"size_bytes", c.size_bytes},
      {"ranks", c.ranks},
      {"nodes", c.nodes},
      {"background", c.background},
      {"iterations", c.samples_us.size()},
      {"transfers_per_iteration", {{"network", c.network_transfers}, {"nvlink", c.nvlink_transfers}}},
      {"launch_us", c.launch_us},
      {"busbw_factor", c.busbw_factor}};
  if (c.completion_us) {
    j["completion_us"] = completion_json(c);
    j["algbw_gbps"] = bandwidth_json(c.algbw_gbps);
    j["busbw_gbps"] = bandwidth_json(c.busbw_gbps);
  }
  j["samples_us"] = c.samples_us;
  return j;
}

CollectiveResult collective_from_json(const nlohmann::json& j) {
  CollectiveResult c;
  c.job = j.at("job").get<std::string>();
  c.op = j.at("op").get<std::string>();
  c.algorithm = j.at("algorithm").get<std::string>();
  c.protocol = j.at("protocol").get<std::string>();
  c.channels = j.at("channels");
  c.size_bytes = j.at("size_bytes");
  c.ranks = j.at("ranks");
  c.nodes = j.at("nodes");
  c.background = j.at("background");
  c.network_transfers = j.at("transfers_per_iteration").at("network");
  c.nvlink_transfers = j.at("transfers_per_iteration").at("nvlink");
  c.launch_us = j.value("launch_us", 0.0); // absent in results written before 2026-12-06
  c.busbw_factor = j.at("busbw_factor");
  c.samples_us = j.at("samples_us").get<std::vector<double>>();
  if (j.contains("completion_us")) {
    const auto& p = j.at("completion_us");
    c.completion_us = Percentiles{c.samples_us.size(), p.at("min"),  p.at("p50"), p.at("p90"),
                                  p.at("p99"),         p.at("p999"), p.at("max"), p.at("mean")};
    c.algbw_gbps = bw_from_json(j.at("algbw_gbps"));
    c.busbw_gbps = bw_from_json(j.at("busbw_gbps"));
  }
  return c;
}

// ---- manifest and fabric ---------------------------------------------------------------------------------
nlohmann::json manifest_json(const scen::RunManifest& m) {
  nlohmann::json j = {{"version", m.version},         {"build", m.build},
                      {"engine", m.engine},           {"seed", m.seed},
                      {"scenario", m.scenario},       {"source", m.source},
                      {"config", m.config},           {"fabric_source", m.fabric_source},
                      {"routing", m.routing},         {"packet", m.packet},
                      {"calibration", m.calibration}, {"warnings", m.warnings}};
  if (!m.flow.is_null()) j["flow"] = m.flow;
  if (!m.variability.is_null()) j["variability"] = m.variability;
  if (!m.segments.is_null()) j["segments"] = m.segments;
  if (!m.tail_precision.is_null()) j["tail_precision"] = m.tail_precision;
  return j;
}

scen::RunManifest manifest_from_json(const nlohmann::json& j) {
  scen::RunManifest m;
  m.version = j.at("version").get<std::string>();
  m.build = j.value("build", std::string());
  m.engine = j.at("engine").get<std::string>();
  m.seed = j.at("seed");
  m.scenario = j.at("scenario").get<std::string>();
  m.source = j.at("source").get<std::string>();
  m.config = j.at("config");
  m.flow = j.value("flow", nlohmann::json());
  m.variability = j.value("variability", nlohmann::json());
  m.fabric_source = j.at("fabric_source").get<std::string>();
  m.routing = j.at("routing").get<std::string>();
  m.packet = j.at("packet");
  m.calibration = j.at("calibration");
  m.warnings = j.value("warnings", std::vector<std::string>{});
  if (j.contains("segments")) m.segments = j.at("segments");
  if (j.contains("tail_precision")) m.tail_precision = j.at("tail_precision");
  return m;
}

nlohmann::json fabric_json(const scen::FabricFacts& f) {
  nlohmann::json over = nlohmann::json::array();
  for (const auto& o : f.oversubscription) over.push_back(o ? nlohmann::json(*o) : nlohmann::json());
  return {{"hcas", f.hcas},   {"switches", f.switches},   {"links", f.links},
          {"tiers", f.tiers}, {"oversubscription", over}, {"bisection_gbps", f.bisection_gbps}};
}

scen::FabricFacts fabric_from_json(const nlohmann::json& j) {
  scen::FabricFacts f;
  f.hcas = j.at("hcas");
  f.switches = j.at("switches");
  f.links = j.at("links");
  f.tiers = j.at("tiers");
  for (const auto& o : j.at("oversubscription"))
    f.oversubscription.push_back(o.is_null() ? std::nullopt : std::optional<double>(o.get<double>()));
  f.bisection_gbps = j.at("bisection_gbps");
  return f;
}

} // namespace

nlohmann::json bandwidth_json(const BandwidthStats& b) {
  return {{"p50", b.p50}, {"p99", b.p99}, {"p999", b.p999}, {"mean", b.mean}, {"min", b.min}, {"max", b.max}};
}

nlohmann::json links_json(const std::vector<TierStats>& tiers) {
  nlohmann::json by_tier = nlohmann::json::array();
  for (const auto& t : tiers) by_tier.push_back(tier_json(t));
  return {{"by_tier", by_tier}};
}

PointResult point_result(const scen::RunResult& r) {
  PointResult p;
  p.manifest = r.manifest;
  for (const auto& c : r.collectives) p.collectives.push_back(collective_result(c));
  for (const auto& t : link_stats_by_tier(r.engine.links, r.sim_time, r.engine.idle_links))
    p.links_by_tier.push_back(rounded(t));
  p.placement = r.placement;
  p.background = r.background;
  p.engine.name = r.engine.engine;
  p.engine.events = r.engine.events;
  p.engine.transfers = r.engine.transfers;
  p.engine.simulated_us = r4(r.sim_time.to_us());
  p.engine.wall_s = std::round(r.wall_s * 1e3) / 1e3;
  p.engine.events_per_s = std::round(r.wall_s > 0 ? static_cast<double>(r.engine.events) / r.wall_s : 0.0);
  p.engine.counters = r.engine.extra;
  p.warnings = r.warnings;
  p.fabric = r.fabric;
  return p;
}

nlohmann::json to_json(const PointResult& p) {
  nlohmann::json colls = nlohmann::json::array();
  for (const auto& c : p.collectives) colls.push_back(collective_json(c));
  return {{"manifest", manifest_json(p.manifest)},
          {"collectives", colls},
          {"links", links_json(p.links_by_tier)},
          {"placement", p.placement},
          {"background", p.background},
          {"engine",
           {{"name", p.engine.name},
            {"events", p.engine.events},
            {"transfers", p.engine.transfers},
            {"simulated_us", p.engine.simulated_us},
            {"counters", p.engine.counters}}},
          {"warnings", p.warnings},
          {"fabric", fabric_json(p.fabric)}};
}

PointResult point_result_from_json(const nlohmann::json& j, const std::string& where) {
  try {
    PointResult p;
    p.manifest = manifest_from_json(j.at("manifest"));
    for (const auto& c : j.at("collectives")) p.collectives.push_back(collective_from_json(c));
    for (const auto& t : j.at("links").at("by_tier")) p.links_by_tier.push_back(tier_from_json(t));
    p.placement = j.at("placement");
    p.background = j.at("background");
    const auto& e = j.at("engine");
    p.engine.name = e.at("name").get<std::string>();
    p.engine.events = e.at("events");
    p.engine.transfers = e.at("transfers");
    p.engine.simulated_us = e.at("simulated_us");
    // Wall-clock figures are not written since 2026-12-07 (results are byte-identical between runs); files
    // of earlier builds still carry them.
    p.engine.wall_s = e.value("wall_s", 0.0);
    p.engine.events_per_s = e.value("events_per_s", 0.0);
    p.engine.counters = e.at("counters");
    p.warnings = j.at("warnings").get<std::vector<std::string>>();
    p.fabric = fabric_from_json(j.at("fabric"));
    return p;
  } catch (const nlohmann::json::exception& e) {
    throw InputError(where + ": not a results.json of this version: " + e.what());
  }
}

nlohmann::json results_json(const scen::RunResult& r) {
  return to_json(point_result(r));
}

namespace {

/// One row of the run table: p99 and p99.9 from fewer samples than they need carry a star (`starred` set).
std::string table_row(const std::string& job, const std::string& op, const std::string& algo,
                      std::uint64_t size, std::uint32_t ranks, std::size_t n, double p50, double p99,
                      double p999, double busbw, bool& starred) {
  auto cell = [&](double v, double q) {
    char b[32];
    const bool star = n < samples_needed(q);
    starred = starred || star;
    std::snprintf(b, sizeof b, star ? "%10.2f*" : "%11.2f", v);
    return std::string(b);
  };
  char line[512];
  std::snprintf(line, sizeof line, "%-12s %-10s %-9s %10s %6u %6zu %11.2f %11s %11s %12.2f\n", job.c_str(),
                op.c_str(), algo.c_str(), format_size(size).c_str(), ranks, n, p50, cell(p99, 0.99).c_str(),
                cell(p999, 0.999).c_str(), busbw);
  return line;
}

/// A collective none of whose iterations completed (a failed QP, the run's time limit): a row, not silence.
std::string missing_row(const std::string& job, const std::string& op, const std::string& algo,
                        std::uint64_t size, std::uint32_t ranks) {
  char line[512];
  std::snprintf(line, sizeof line, "%-12s %-10s %-9s %10s %6u %6d %11s %11s %11s %12s\n", job.c_str(),
                op.c_str(), algo.c_str(), format_size(size).c_str(), ranks, 0, "-", "-", "-", "-");
  return line;
}

/// The results.csv row of such a collective: its identity, 0 iterations, empty percentiles.
template <typename C> std::string missing_csv_row(const C& c) {
  return c.job + "," + c.op + "," + c.algorithm + "," + c.protocol + "," + std::to_string(c.size_bytes) +
         "," + std::to_string(c.ranks) + ",0,,,,,,,,\n";
}

std::string table_notes(bool starred, bool missing) {
  std::string s;
  if (starred)
    s +=
        "* from fewer samples than the percentile needs (p99: 100, p99.9: 1,000): the largest sample or near "
        "it (completion_us.unsupported in results.json)\n";
  if (missing) s += "- no iteration of this collective completed (see the warnings)\n";
  return s;
}

} // namespace

std::string results_csv(const scen::RunResult& r) {
  std::ostringstream s;
  s << "job,op,algorithm,protocol,size_bytes,ranks,iterations,p50_us,p90_us,p99_us,p999_us,max_us,mean_us,"
       "algbw_p50_gbps,busbw_p50_gbps\n";
  for (const auto& c : r.collectives) {
    if (c.samples_us.empty()) {
      if (!c.looping) s << missing_csv_row(c);
      continue;
    }
    const auto p = percentiles(c.samples_us);
    // 0 bytes complete in 0 us: 0 Gb/s, as results.json says (it printed -nan here).
    const double alg = p.p50 > 0 ? static_cast<double>(c.size_bytes) * 8.0 / (p.p50 * 1e3) : 0.0;
    char line[512];
    std::snprintf(line, sizeof line, "%s,%s,%s,%s,%llu,%u,%zu,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f\n",
                  c.job.c_str(), c.op.c_str(), c.algorithm.c_str(), c.protocol.c_str(),
                  static_cast<unsigned long long>(c.size_bytes), c.ranks, c.samples_us.size(), p.p50, p.p90,
                  p.p99, p.p999, p.max, p.mean, alg, alg * c.busbw_factor);
    s << line;
  }
  return s.str();
}

std::string results_table(const scen::RunResult& r) {
  std::ostringstream s;
  char line[512];
  std::snprintf(line, sizeof line, "%-12s %-10s %-9s %10s %6s %6s %11s %11s %11s %12s\n", "job", "op",
                "algorithm", "size", "ranks", "iters", "p50 us", "p99 us", "p99.9 us", "busbw Gb/s");
  s << line;
  bool starred = false, missing = false;
  for (const auto& c : r.collectives) {
    if (c.samples_us.empty()) {
      if (!c.looping) s << missing_row(c.job, c.op, c.algorithm, c.size_bytes, c.ranks), missing = true;
      continue;
    }
    const auto p = percentiles(c.samples_us);
    const double bus =
        p.p50 > 0 ? static_cast<double>(c.size_bytes) * 8.0 / (p.p50 * 1e3) * c.busbw_factor : 0.0;
    s << table_row(c.job, c.op, c.algorithm, c.size_bytes, c.ranks, c.samples_us.size(), p.p50, p.p99, p.p999,
                   bus, starred);
  }
  s << table_notes(starred, missing);
  return s.str();
}

std::string results_csv(const PointResult& r) {
  std::ostringstream s;
  s << "job,op,algorithm,protocol,size_bytes,ranks,iterations,p50_us,p90_us,p99_us,p999_us,max_us,mean_us,"
       "algbw_p50_gbps,busbw_p50_gbps\n";
  for (const auto& c : r.collectives) {
    if (!c.completion_us && c.background) continue;
    if (!c.completion_us) { // no iteration completed (a failed QP, the run's time limit): said, not dropped
      s << missing_csv_row(c);
      continue;
    }
    const auto& p = *c.completion_us;
    char line[512];
    std::snprintf(line, sizeof line, "%s,%s,%s,%s,%llu,%u,%zu,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f\n",
                  c.job.c_str(), c.op.c_str(), c.algorithm.c_str(), c.protocol.c_str(),
                  static_cast<unsigned long long>(c.size_bytes), c.ranks, c.samples_us.size(), p.p50, p.p90,
                  p.p99, p.p999, p.max, p.mean, c.algbw_gbps.p50, c.busbw_gbps.p50);
    s << line;
  }
  return s.str();
}

std::string results_table(const PointResult& r) {
  std::ostringstream s;
  char line[512];
  std::snprintf(line, sizeof line, "%-12s %-10s %-9s %10s %6s %6s %11s %11s %11s %12s\n", "job", "op",
                "algorithm", "size", "ranks", "iters", "p50 us", "p99 us", "p99.9 us", "busbw Gb/s");
  s << line;
  bool starred = false, missing = false;
  for (const auto& c : r.collectives) {
    if (!c.completion_us) {
      if (!c.background) s << missing_row(c.job, c.op, c.algorithm, c.size_bytes, c.ranks), missing = true;
      continue;
    }
    const auto& p = *c.completion_us;
    s << table_row(c.job, c.op, c.algorithm, c.size_bytes, c.ranks, c.samples_us.size(), p.p50, p.p99, p.p999,
                   c.busbw_gbps.p50, starred);
  }
  s << table_notes(starred, missing);
  return s.str();
}

} // namespace ibn::analysis
