#pragma once
// Repeated runs of one test: reading them for `calibrate fit --repeats` and the leave-one-out check
// `validate repeats LOG... --leave-one-out` (docs/validation.md "Tails", docs/calibration.md "Variability").
//
// read_repeat_runs(): each file is one nccl-tests output (one results table) or one OSU/IMB output (one
// table); its configuration key is "nccl-tests all_reduce 2 nodes x 8 ranks float" or "osu_latency 2
// processes host". A file that is neither, or holds several tables, is an InputError naming it.
//
// Leave-one-out (validate_repeats): for each run h, the variability model is fitted on every other run
// (calib::fit_variability; runs of other configurations contribute their relative spread), the run's
// configuration is simulated once (nccl-tests: the nccl-tests front-end with the measured job, as validate
// nccl-tests builds it; the base time per size, no variability) and the distribution of one run's printed
// time is composed from it: T = (T_sim + mean of n launch-jitter draws) x exp(sigma(size) Z), by Monte Carlo
// (`draws` runs, fixed seed). The launch draw is added whole (an upper bound: in the runner it delays one
// rank's start, which delays the collective by at most that much). Per size, the run's measured times
// (out-of-place and in-place) are inside when p1 <= t <= p99 of T; the predicted p99/p50 is compared with the
// measured p99/p50 of the configuration's runs (every run, both columns; nearest rank, n given).
// The base simulation applies what the log says (nccl_log_sets: its NCCL release, GDR, channel bounds), then
// the configuration's settings (ConfigSettings), then the shared --set. With `fit_costs` the base is
// simulated per held-back run, with NCCL's costs fitted on the other runs of its configuration only (a
// profile written to a private temporary folder, removed afterwards; the fitted values are in the run's JSON
// entry). A second centring is reported beside the simulation's: the median of the other runs of the same
// configuration in place of T_sim (what the spread model alone achieves when the mean is right).
// OSU inputs are read and fitted, not simulated: the leave-one-out check needs nccl-tests logs.
#include "analysis/validate.hpp"
#include "calibration/variability.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace ibn::analysis {

std::vector<calib::RepeatRun> read_repeat_runs(const std::vector<std::string>& files);

/// `calibrate fit --repeats`: reads the runs, checks that they are repeats of one configuration (the first
/// file's; another configuration, or no size in common with the first, is an InputError naming the file)
/// and fits the variability model.
calib::VariabilityModel fit_repeats(const std::vector<std::string>& files,
                                    const calib::VariabilityFitOptions& opt);

/// What one configuration's base simulation runs on besides the shared options: its own fabric, NICs per node
/// and scenario keys (`--fabric-for LOG=F`, `--nics-for LOG=K`, `--set-for LOG=KEY=VALUE`; LOG names one of
/// the inputs, by its path as given or its file name, and the setting holds for every run of its
/// configuration).
struct ConfigSettings {
  std::string fabric;              ///< "" = RepeatsOptions::sim.fabric
  std::uint32_t nics_per_node = 0; ///< 0 = RepeatsOptions::sim.nics_per_node
  std::vector<std::string> sets;   ///< after the log's own keys, before the shared --set
};

struct RepeatsOptions {
  ValidateOptions sim;                 ///< fabric, profile, engine, iterations of the base simulation
  std::map<std::string, ConfigSettings>
      per_log; ///< LOG (as the user named it) -> its configuration's settings
  /// Fit NCCL's costs per held-back run on the other runs of its configuration (analysis/nccl_cost_fit.hpp,
  /// rows up to `fit_max_bytes`) and simulate it with them; a run with no other run of its configuration is
  /// reported, not compared.
  bool fit_costs = false;
  std::uint64_t fit_max_bytes = 64u << 10;
  calib::VariabilityFitOptions fit;    ///< fit settings
  std::uint32_t draws = 4000;          ///< Monte Carlo runs per size
  std::uint64_t max_bytes = 32u << 20; ///< sizes above this are not compared (simulation cost)
};

/// {"rows": [...], "runs": [...], "summary": {...}}: one row per (held-back run, size); one entry per
/// held-back run with its coverage and ratio errors; the summary over all.
nlohmann::json validate_repeats(const std::vector<std::string>& files, const RepeatsOptions& opt);
std::string validate_repeats_table(const nlohmann::json& v);

} // namespace ibn::analysis
