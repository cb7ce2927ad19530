#pragma once
// Results: percentiles, algbw/busbw as nccl-tests defines them, link statistics by tier, and the
// results.json / CSV documents of CLI.md, from a scen::RunResult.
//
// PointResult is results.json as a type: a run summarised (percentiles and bandwidths of each collective,
// link statistics by tier, engine counters; rounded as written) plus the fabric's summary from when its
// world was built. Studies (whatif, sweep) keep PointResults in memory; to_json() writes results.json and
// point_result_from_json() reads it back (resumed points, points run in a child process), and the two are
// exact inverses.
//
// Percentiles use the nearest-rank rule on the sorted samples: p-th = sorted[ceil(p * n) - 1] (perftest's and
// most benchmark tools' convention), so p99.9 of 100 samples is the maximum. algbw = size / time and
// busbw = algbw x factor (AllReduce 2(n-1)/n, AllGather/ReduceScatter/AllToAll (n-1)/n, others 1), both in
// Gb/s (1e9 bit/s) — note nccl-tests prints GB/s; the nccl-tests front-end converts.
#include "models/engine.hpp"
#include "scenarios/runner.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace ibn::analysis {

struct Percentiles {
  std::size_t n = 0;
  double min = 0, p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0, mean = 0;
  bool operator==(const Percentiles&) const = default;
};
/// Throws std::invalid_argument on an empty sample set.
Percentiles percentiles(std::vector<double> samples);
nlohmann::json to_json(const Percentiles& p);

/// Link statistics of one direction between two tiers, e.g. "hca->leaf", "leaf->spine".
struct TierStats {
  std::string tier;
  std::size_t links = 0;
  double util_mean = 0, util_max = 0; ///< busy time / run duration
  std::uint64_t queue_max_bytes = 0;
  std::uint64_t ecn_marks = 0;        ///< DCQCN CE marks by the tier's outputs
  std::uint64_t fecn_marks = 0;       ///< IB CC FECN marks by the tier's outputs
  double stall_us = 0;                ///< credit-stall time summed over the tier's links
  double pause_us = 0;                ///< PFC pause time summed over the tier's links
  double bytes = 0;                   ///< legacy (LinkRecord::bytes)
  double wire_bytes = 0;              ///< bytes on the wire (headers, ACKs and CNPs included)
  double payload_bytes = 0;           ///< message payload carried
  bool operator==(const TierStats&) const = default;
};
std::string tier_name(int tier);
/// `idle`: cable ends not in `links` that carried nothing (eng::EngineReport::idle_links), counted as links.
std::vector<TierStats> link_stats_by_tier(const std::vector<eng::LinkRecord>& links, Time duration,
                                          const std::vector<eng::IdleLinks>& idle = {});

/// Bandwidth at the completion-time percentiles (the p-th fastest iteration's bandwidth is size / time at
/// p, so `min` comes from the slowest iteration), Gb/s.
struct BandwidthStats {
  double p50 = 0, p99 = 0, p999 = 0, mean = 0, min = 0, max = 0;
  bool operator==(const BandwidthStats&) const = default;
};

/// One collective of a run, as results.json holds it (values rounded to 1e-4).
struct CollectiveResult {
  std::string job, op, algorithm, protocol;
  std::uint32_t channels = 0;
  std::uint64_t size_bytes = 0;
  std::uint32_t ranks = 0, nodes = 0;
  bool background = false; ///< a looping job's
  std::size_t network_transfers = 0, nvlink_transfers = 0; ///< per iteration
  double launch_us = 0; ///< fixed cost per iteration before a rank's first transfer (NCCL base latency)
  double busbw_factor = 0;
  std::vector<double> samples_us;
  std::optional<Percentiles> completion_us; ///< empty without samples (so are the bandwidths)
  BandwidthStats algbw_gbps, busbw_gbps;
  std::size_t iterations() const { return samples_us.size(); }
  bool measured() const { return !background && completion_us.has_value(); }
};

/// Summarises one collective's samples (percentiles and bandwidths, rounded as results.json holds them).
CollectiveResult collective_result(const scen::CollectiveSamples& c);

/// A collective's `completion_us`: the percentiles, `n` (samples), `ci` {level, p50: [lo, hi], p99: [lo, hi]}
/// (order-statistic intervals, null for an open side) and `unsupported` (percentiles the samples cannot
/// support, e.g. "p99.9 needs >= 1,000 samples; have 100"). Needs completion_us.
nlohmann::json completion_json(const CollectiveResult& c);

struct EngineSummary {
  std::string name;
  std::uint64_t events = 0, transfers = 0;
  double simulated_us = 0;
  double wall_s = 0, events_per_s = 0; ///< wall-clock figures (differ between runs): printed, never written
  nlohmann::json counters = nlohmann::json::object();
};

/// results.json as a type (see the top of this file).
struct PointResult {
  scen::RunManifest manifest;
  std::vector<CollectiveResult> collectives;
  std::vector<TierStats> links_by_tier; ///< rounded as written
  nlohmann::json placement = nlohmann::json::array();
  nlohmann::json background = nlohmann::json::array();
  EngineSummary engine;
  std::vector<std::string> warnings;
  scen::FabricFacts fabric;
};

/// Summarises a run (computes and rounds every figure once).
PointResult point_result(const scen::RunResult& r);
/// results.json (CLI.md): manifest, collectives (percentiles, algbw, busbw, samples), links.by_tier,
/// placement, background, engine, warnings, fabric.
nlohmann::json to_json(const PointResult& p);
/// Reads results.json back; InputError naming `where` and the missing or mistyped key.
PointResult point_result_from_json(const nlohmann::json& j, const std::string& where);
/// {"p50", "p99", "p999", "mean", "min", "max"} as stored.
nlohmann::json bandwidth_json(const BandwidthStats& b);
/// The links part of results.json: {"by_tier": [...]}.
nlohmann::json links_json(const std::vector<TierStats>& tiers);

/// to_json(point_result(r)).
nlohmann::json results_json(const scen::RunResult& r);
/// One CSV row per collective: job,op,algorithm,size_bytes,ranks,iterations,p50_us,...,busbw_p50_gbps.
std::string results_csv(const scen::RunResult& r);
/// A plain-text table of the collectives for the terminal.
std::string results_table(const scen::RunResult& r);
/// The same two from a PointResult (a run in segments: its percentiles as results.json holds them).
std::string results_csv(const PointResult& r);
std::string results_table(const PointResult& r);

} // namespace ibn::analysis
