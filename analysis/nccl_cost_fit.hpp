#pragma once
// NCCL's software costs fitted from nccl-tests logs (docs/calibration.md, "NCCL costs"): what `calibrate fit`
// writes into a profile's nccl section and `validate repeats --fit-costs` fits per held-back run.
//
// Every log is simulated with NCCL's costs off (the network alone) up to `max_bytes`; per row the residual
// measured - simulated, less NCCL's intra-node step costs of the log's release, is fitted as base + net_steps x
// net_step (calib::fit_nccl_costs) over the rows of the protocol most rows ran in.
#include "calibration/profile.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ibn::analysis {

struct NcclFitOptions {
  std::uint64_t max_bytes = 64u << 10; ///< rows up to this size (LL as a rule)
  std::string engine = "packet";       ///< engine of the simulations
  std::string fabric;                  ///< "" = a non-blocking NDR fat-tree
  std::uint32_t nics_per_node = 0;     ///< 0: from the log
  /// Scenario keys for the simulations, before nccl.costs=false (e.g. nccl.version=2.8.4 for logs that print
  /// no release: its table then prices the intra-node steps and the base prior).
  std::vector<std::string> sets;
};

/// The fit over `logs` (InputError when a log cannot be read or too few rows remain; see
/// calib::fit_nccl_costs). Notes on mixed releases or left-out rows go to `warnings`.
calib::NcclCostFit fit_nccl_cost_section(const std::vector<std::string>& logs, const NcclFitOptions& opt,
                                         std::vector<std::string>& warnings);

} // namespace ibn::analysis
