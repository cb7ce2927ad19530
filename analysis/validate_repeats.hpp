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
// A second centring is reported beside the simulation's: the median of the other runs of the same
// configuration in place of T_sim (what the spread model alone achieves when the mean is right).
// OSU inputs are read and fitted, not simulated: the leave-one-out check needs nccl-tests logs.
#include "analysis/validate.hpp"
#include "calibration/variability.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace ibn::analysis {

std::vector<calib::RepeatRun> read_repeat_runs(const std::vector<std::string>& files);

/// `calibrate fit --repeats`: reads the runs, checks that they are repeats of one configuration (the first
/// file's; another configuration, or no size in common with the first, is an InputError naming the file)
/// and fits the variability model.
calib::VariabilityModel fit_repeats(const std::vector<std::string>& files,
                                    const calib::VariabilityFitOptions& opt);

struct RepeatsOptions {
  ValidateOptions sim;                 ///< fabric, profile, engine, iterations of the base simulation
  calib::VariabilityFitOptions fit;    ///< fit settings
  std::uint32_t draws = 4000;          ///< Monte Carlo runs per size
  std::uint64_t max_bytes = 32u << 20; ///< sizes above this are not compared (simulation cost)
};

/// {"rows": [...], "runs": [...], "summary": {...}}: one row per (held-back run, size); one entry per
/// held-back run with its coverage and ratio errors; the summary over all.
nlohmann::json validate_repeats(const std::vector<std::string>& files, const RepeatsOptions& opt);
std::string validate_repeats_table(const nlohmann::json& v);

} // namespace ibn::analysis
