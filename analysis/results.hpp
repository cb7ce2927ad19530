#pragma once
// Results: percentiles, algbw/busbw as nccl-tests defines them, link statistics by tier, and the
// results.json / CSV documents of CLI.md, from a scen::RunResult.
//
// Percentiles use the nearest-rank rule on the sorted samples: p-th = sorted[ceil(p * n) - 1] (perftest's and
// most benchmark tools' convention), so p99.9 of 100 samples is the maximum. algbw = size / time and
// busbw = algbw x factor (AllReduce 2(n-1)/n, AllGather/ReduceScatter/AllToAll (n-1)/n, others 1), both in
// Gb/s (1e9 bit/s) — note nccl-tests prints GB/s; the nccl-tests front-end converts.
#include "models/engine.hpp"
#include "scenarios/runner.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace ibn::analysis {

struct Percentiles {
  std::size_t n = 0;
  double min = 0, p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0, mean = 0;
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
};
std::string tier_name(int tier);
std::vector<TierStats> link_stats_by_tier(const std::vector<eng::LinkRecord>& links, Time duration);

/// results.json (CLI.md): manifest, collectives (percentiles, algbw, busbw, samples), links.by_tier, engine.
nlohmann::json results_json(const scen::RunResult& r);
/// One CSV row per collective: job,op,algorithm,size_bytes,ranks,iterations,p50_us,...,busbw_p50_gbps.
std::string results_csv(const scen::RunResult& r);
/// A plain-text table of the collectives for the terminal.
std::string results_table(const scen::RunResult& r);

} // namespace ibn::analysis
