#pragma once
// `validate nccl-tests`: read a real nccl-tests output (calib::parse_nccl_tests), build the same job — test,
// nodes, GPUs per node, sizes — on a given fabric with a calibration profile, simulate it with the nccl-tests
// front-end (analysis/nccl_tests.hpp) and compare the out-of-place bus bandwidth per size.
//
// Rows {file, test, size_bytes, measured, simulated, error_pct} with bandwidths in GB/s as nccl-tests prints
// them and error_pct = (simulated - measured) / measured x 100; rows whose measured busbw prints as 0.00
// (sizes too small for nccl-tests' two decimals) are skipped and counted. The summary holds the median and
// maximum absolute error.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ibn::analysis {

struct ValidateOptions {
  std::string fabric;   ///< "" = the front-end's default fabric (non-blocking NDR fat-tree)
  std::string profile;  ///< "" = no calibration
  std::string engine = "packet";
  std::uint32_t iters = 5, warmup = 1;
  std::uint32_t nics_per_node = 0; ///< 0: from the log (NICs seen per node), else one per GPU
  std::uint64_t max_bytes = 0;     ///< skip sizes above this (0 = none)
};

/// Validates every test in `log`; returns {"rows": [...], "summary": {...}, "runs": [...]}.
nlohmann::json validate_nccl_tests(const std::string& log, const ValidateOptions& opt);
std::string validate_table(const nlohmann::json& v);

} // namespace ibn::analysis
