#pragma once
// The nccl-tests front-end: all_reduce_perf, all_gather_perf, reduce_scatter_perf, alltoall_perf and
// sendrecv_perf simulated on a fabric, printed in nccl-tests' own table layout (so a real run and a
// simulated run sit side by side, and calib::parse_nccl_tests reads both).
//
// What a row is: each size runs `warmup` unmeasured iterations, then `iters` out-of-place and `iters`
// in-place iterations (the same traffic: both are simulated, so they differ only by noise and jitter); the
// time column is the mean iteration time in microseconds as nccl-tests prints it, algbw = size / time in
// GB/s (1e9 bytes/s) and busbw = algbw x the nccl-tests factor. Data is not computed, so #wrong is "N/A"
// (what nccl-tests prints with -c 0). "# Avg bus bandwidth" is the mean busbw over both columns and all sizes. Sizes go from min_bytes to max_bytes multiplying by `factor`, each
// rounded down to a whole number of float elements (and of ranks x elements for AllGather, ReduceScatter
// and AllToAll), as nccl-tests does.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ibn::analysis {

struct NcclTestsOptions {
  std::string test = "all_reduce_perf";
  std::uint64_t min_bytes = 8, max_bytes = 128u << 20;
  std::uint64_t factor = 2;
  std::uint32_t gpus_per_node = 8;  ///< -g
  std::uint32_t nodes = 1;
  std::uint32_t nics_per_node = 0;  ///< 0: one per GPU
  std::uint32_t iters = 20, warmup = 5;
  std::string fabric;               ///< fabric file; "" = a non-blocking NDR fat-tree just large enough
  std::string profile;              ///< calibration profile; "" = none
  std::string engine = "packet";
  std::string algorithm = "auto", protocol = "auto";
  std::uint32_t channels = 0;
  std::uint64_t seed = 1;
  std::vector<std::string> sets;    ///< extra scenario overrides
};

struct NcclTestsRow {
  std::uint64_t size_bytes = 0, count = 0;
  std::string type = "float", redop = "sum";
  int root = -1;
  double oop_time_us = 0, oop_algbw = 0, oop_busbw = 0; ///< GB/s
  double ip_time_us = 0, ip_algbw = 0, ip_busbw = 0;
  /// Samples behind each column: -n each, fewer when the run stopped early (a QP out of retries,
  /// run.max_sim_time_ms); a column with none has NaN times and prints "n/a".
  std::uint32_t oop_n = 0, ip_n = 0;
  std::string algorithm, protocol;
  double launch_us = 0; ///< the simulation's fixed cost per iteration (NCCL base latency charged), us
};

struct NcclTestsResult {
  std::vector<NcclTestsRow> rows; ///< one per simulated size
  /// Sizes of -b..-e that round to 0 (below one aligned element per rank): printed first as nccl-tests'
  /// "0 0" rows with 0.00 times, and counted in the average bus bandwidth as nccl-tests counts them.
  std::uint32_t zero_rows = 0;
  nlohmann::json results; ///< the underlying results.json document
  std::uint32_t ranks = 0;
  /// The run's warnings (results.json "warnings") and one per row short of its -n samples per column.
  std::vector<std::string> warnings;
};

/// The collective op name (allreduce, ...) of an nccl-tests binary name; InputError for an unknown one.
std::string nccl_test_op(const std::string& test);

/// Scenario keys a `--set` (named `flag`) may not change where the job is the command's own or a measured
/// log's: the test (jobs[0].workload.op), sizes, iterations, nodes, GPUs and NICs per node, the fabric file,
/// the engine and,
/// with `seed_flag`, the seed. Each is exit 2 naming the key and `where` (what sets it: "TEST, -b/-e/-f, -g,
/// --nodes, -n", or "the log"); before, such a --set simulated another job than the one printed.
void refuse_job_keys_in_sets(const std::vector<std::string>& sets, const std::string& flag,
                             const std::string& where, bool seed_flag);
/// The scenario document the front-end runs (also used by `validate nccl-tests`).
nlohmann::json nccl_tests_scenario(const NcclTestsOptions& o);
NcclTestsResult run_nccl_tests(const NcclTestsOptions& o, std::function<void(const std::string&)> progress = {});
/// nccl-tests' output: header comments, the table, "# Avg bus bandwidth" trailer.
std::string format_nccl_tests(const NcclTestsOptions& o, const NcclTestsResult& r);

} // namespace ibn::analysis
