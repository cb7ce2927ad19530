#pragma once
// `validate nccl-tests`: read a real nccl-tests output (calib::parse_nccl_tests), build the same job — test,
// nodes, GPUs per node, sizes — on a given fabric with a calibration profile, simulate it with the nccl-tests
// front-end (analysis/nccl_tests.hpp) and compare the out-of-place bus bandwidth per size.
//
// Rows {file, test, size_bytes, measured, measured_printed, simulated, error_pct, ...} with bandwidths in
// GB/s (1e9 B/s): `measured` is the busbw of the measured time (size / time x the test's busbw factor, as
// nccl-tests computes it), `measured_printed` the busbw column as the log prints it (two decimals: 0.01 GB/s
// for a 128-byte row, which is why the error is not taken from it), and error_pct = (simulated - measured) /
// measured x 100 = (measured time / simulated time - 1) x 100. Every row with a size above 0 is compared
// (those whose busbw prints as 0.00 too); the "0 0" rows of sizes that round to nothing are skipped and
// counted. The summary holds the median and maximum absolute error.
#include "analysis/nccl_tests.hpp"
#include "calibration/nccl_tests_parser.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ibn::analysis {

struct ValidateOptions {
  std::string fabric;  ///< "" = the front-end's default fabric (non-blocking NDR fat-tree)
  std::string profile; ///< "" = no calibration
  std::string engine = "packet";
  std::uint32_t iters = 5, warmup = 1;
  std::uint32_t nics_per_node = 0; ///< 0: from the log (NICs seen per node), else one per GPU
  std::uint32_t nodes = 0;         ///< 0: from the log (rank lines, nNodes), else 1 with a note
  std::uint64_t max_bytes = 0;     ///< skip sizes above this (0 = none)
  std::vector<std::string> tests;  ///< only these tests ("all_gather_perf", ...); empty = every test
  std::vector<std::string> sets;   ///< scenario overrides "key=value" (nvlink.bandwidth_gbps=2900, ...)
};

/// The nccl-tests front-end's options that reproduce one measured run of `log` (nodes, GPUs and NICs per
/// node, algorithm and protocol from NCCL_ALGO/NCCL_PROTO, fabric, profile, engine, iterations); notes (GDR
/// off) are appended to `notes` when given.
NcclTestsOptions nccl_tests_options_for(const calib::NcclTestsRun& run, const std::string& log,
                                        const ValidateOptions& opt,
                                        std::vector<std::string>* notes = nullptr);

/// What a validation JSON carries as its manifest (docs/cli.md): tool, command, version, build-id, `inputs`
/// (the logs, then the --fabric and --profile files given) with their fnv1a64 hashes and sizes
/// (calib::input_hashes, as calibrate's manifests), the simulation seed, engine, fabric, profile and the
/// user's scenario keys.
nlohmann::json validate_manifest(const std::string& command, const std::vector<std::string>& logs,
                                 const std::string& engine, const std::string& fabric,
                                 const std::string& profile, const std::vector<std::string>& sets,
                                 std::uint64_t seed = 1);

/// A manifest's value in effect for `key` over the entries of `runs`: the value when every run has the same
/// one, else the runs' values in order (a log with 2-, 4- and 8-node runs: [2, 4, 8]); null without runs.
nlohmann::json value_in_effect(const nlohmann::json& runs, const std::string& key);

/// The scenario keys a measured run implies (validate nccl-tests and validate repeats set them before the
/// user's --set): the NCCL release it prints, packet.gpudirect=false for GDR 0 across nodes, the channel
/// bounds of NCCL_MIN/MAX_NCHANNELS, nccl.nvls / nccl.collnet when NCCL_ALGO names them.
std::vector<std::string> nccl_log_sets(const calib::NcclTestsRun& run, std::uint32_t nodes);

/// Validates every test in `log`; returns {"rows": [...], "summary": {...}, "runs": [...]}.
nlohmann::json validate_nccl_tests(const std::string& log, const ValidateOptions& opt);
std::string validate_table(const nlohmann::json& v);

/// `validate osu`: reads a real OSU micro-benchmark or IMB-MPI1 output (calib::parse_osu), simulates the
/// same measurement and compares per size (docs/calibration.md, "validate osu"):
///  - point-to-point latency (osu_latency, osu_multi_lat with one pair, IMB PingPong): the perftest
///    driver's send/receive ping-pong between two nodes (RTT/2, as OSU reports it), `samples` round trips;
///    predicted p50/p99 are the median and 99th percentile of those samples;
///  - point-to-point bandwidth (osu_bw, osu_bibw, osu_mbw_mr): the perftest driver's ib_send_bw with
///    tx depth = OSU's window (64 unless printed), QPs = pairs, both directions for osu_bibw; `repeats`
///    runs with different seeds; measured_us and predicted_*_us are the time per message (size / bandwidth);
///  - MPI AllReduce over host memory (osu_allreduce, IMB Allreduce): a scenario with one job of N nodes x
///    K ranks, one NIC per node, the algorithm `algorithm` ("mpi" = halving-doubling for 2^k ranks, else
///    hierarchical when K > 1, else ring), one channel, Simple protocol; copies inside a node use the
///    nvlink.* keys set to host shared memory (shm_gbps, shm_latency_us); p50/p99 over `iters`
///    iterations.
/// Ranks and nodes come from --nodes/--ppn, else from the launcher line before the table, else InputError.
/// Rows {file, benchmark, size_bytes, measured_us, predicted_p50_us, predicted_p99_us, error_pct} with
/// error_pct = (p50 - measured) / measured x 100 (bandwidth rows also carry measured_mbps and
/// predicted_mbps); summary: median and max |error_pct|.
struct OsuValidateOptions {
  std::string fabric;  ///< "" = two nodes back to back (pt2pt) / a non-blocking fat-tree (collectives)
  std::string profile; ///< "" = no calibration
  std::string engine = "packet";    ///< collectives only (pt2pt runs on the packet engine)
  std::string rate;                 ///< default fabric's link rate ("HDR"); "" = the profile's, else NDR
  std::uint32_t nodes = 0, ppn = 0; ///< 0 = from the launcher line
  std::uint32_t iters = 20, warmup = 2;
  std::uint32_t samples = 1000; ///< latency round trips per size
  std::uint32_t repeats = 3;    ///< bandwidth runs per size (seeds 1..repeats)
  std::string algorithm = "mpi";
  double shm_gbps = 80, shm_latency_us = 0.4;
  std::uint64_t max_bytes = 0;    ///< skip sizes above this (0 = none)
  std::vector<std::string> tests; ///< only these benchmarks ("osu_allreduce", "PingPong"); empty = all
  std::vector<std::string> sets;  ///< scenario overrides for collectives
};
nlohmann::json validate_osu(const std::string& log, const OsuValidateOptions& opt);

/// The `summary` of a validation: median and max of the |error %| values (2 decimals) and the row count.
/// `abs_errors` must not be empty.
nlohmann::json error_summary(std::vector<double> abs_errors);
std::string validate_osu_table(const nlohmann::json& v);

/// `calibrate nvlink`: fits the intra-node model (scenario keys nvlink.bandwidth_gbps and nvlink.latency_us)
/// to the single-node runs of a real nccl-tests output by simulation: it minimises the mean squared
/// log-ratio of simulated to measured out-of-place busbw over the rows (validate_nccl_tests with the two
/// keys set), by coordinate descent (golden-section search on ln(bandwidth) in [100, 20000] Gb/s, then on
/// the latency in [0, 20] us; three rounds). Runs with more than one node are refused (InputError): their
/// time includes the network.
struct NvlinkFitOptions {
  std::vector<std::string> tests; ///< which tests of the log to fit on; empty = all
  std::uint64_t max_bytes = 1ull << 30;
  std::uint32_t iters = 1;
};
struct NvlinkFit {
  double bandwidth_gbps = 0, latency_us = 0;
  double rms_log_error = 0; ///< sqrt(mean ln(sim/meas)^2) at the fit
  int evaluations = 0;
  nlohmann::json validation; ///< validate_nccl_tests at the fit (rows, summary)
  nlohmann::json to_json(const std::string& log) const;
};
NvlinkFit fit_nvlink(const std::string& log, const NvlinkFitOptions& opt);

} // namespace ibn::analysis
