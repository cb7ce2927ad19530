#pragma once
// Variability model: what makes repeated runs of the same collective differ (docs/calibration.md
// "Variability"). Three parts, each opt-in (all zero = today's behaviour, bit for bit):
//
//  - run state: a multiplicative factor S = exp(sigma(size) * Z), Z ~ N(0, 1) drawn once per run and job
//    (per seed), applied to every measured collective time of that run (the run-to-run state of a shared
//    cluster: other tenants, clocks, firmware state). sigma(size) is a table over sizes, interpolated in
//    log2(size), constant beyond its ends; one Z per run, so a slow run is slow at every size.
//  - launch jitter: per iteration, one rank chosen uniformly starts late by a draw of a heavy-tailed
//    distribution (LognormalPareto: lognormal body, Pareto tail with a mixing probability), in us.
//  - stragglers: K nodes of the job chosen per seed; each of their ranks starts every iteration
//    `delay_us` late, and each network transfer they send is posted later by the extra serialization a
//    NIC at `rate_factor` x its rate would need (bytes x 8 / rate x (1 / rate_factor - 1)).
//
// fit_variability() fits the run state and the launch jitter from repeated nccl-tests runs of one
// configuration (or several configurations: the spread is pooled as a relative, dimensionless quantity).
#include "sim/rng.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ibn::calib {

/// Standard normal CDF Phi(x) = erfc(-x / sqrt 2) / 2.
double normal_cdf(double x);
/// Standard normal quantile Phi^-1(p), 0 < p < 1 (Acklam's rational approximation refined by one Halley
/// step; |error| < 1e-12).
double normal_quantile(double p);
/// One N(0, 1) draw (Box-Muller, one value per call: deterministic and portable).
double standard_normal(Rng& rng);

/// A lognormal body with a Pareto tail: with probability 1 - tail_p a draw is median * exp(sigma * N(0,1)),
/// with probability tail_p it is Pareto(xm = tail_xm, alpha = tail_alpha): xm * U^(-1/alpha).
/// CDF F(x) = (1 - p) Phi(ln(x / median) / sigma) + p (1 - (xm / x)^alpha) [x >= xm, else 0 for the tail].
/// Mean = (1 - p) median exp(sigma^2 / 2) + p alpha xm / (alpha - 1) (infinite for alpha <= 1).
struct LognormalPareto {
  double median = 0; ///< body median (0: no body)
  double sigma = 0.5;
  double tail_p = 0;
  double tail_alpha = 1.5;
  double tail_xm = 0;
  bool zero() const { return median <= 0 && (tail_p <= 0 || tail_xm <= 0); }
  double cdf(double x) const;
  /// The q-quantile (0 < q < 1), by bisection on cdf() (monotone), to 1e-12 relative.
  double quantile(double q) const;
  double mean() const;
  /// The typical delay: the mean of a draw without its tail events, (1 - tail_p) x median x exp(sigma^2 / 2)
  /// (the part of the launch jitter that averaged measurements, and constants fitted to them, contain).
  double typical() const;
  double draw(Rng& rng) const;
  /// The largest delay a draw_capped() returns, us (1,000 s): a heavy tail (alpha near 0.1) draws values
  /// beyond what an integer picosecond clock holds.
  static constexpr double kMaxDrawUs = 1e9;
  /// draw(), held at kMaxDrawUs; `capped` counts the draws that were.
  double draw_capped(Rng& rng, std::uint64_t& capped) const;
  /// The run's warning for `capped` held draws.
  static std::string capped_note(std::uint64_t capped);
  bool operator==(const LognormalPareto&) const = default;
};

/// Fits a LognormalPareto to samples (all >= 0; zeros are the body's lower end and are ignored for the
/// logarithms). Body: median and sigma from the median and MAD of ln(x) (sigma = 1.4826 MAD). Tail: the
/// samples above the body's 1 - 0.1/n quantile (fewer than 0.1 body samples expected there); p = their
/// fraction, xm = their minimum, alpha = (k - 1) / sum ln(x_i / xm) (the unbiased Pareto MLE with xm
/// estimated, k >= 3; with fewer tail samples alpha is left at `default_alpha`). The body is refitted without
/// the tail samples. Assumes the tail sits beyond the body (xm above that quantile), as a rare slow event
/// does.
LognormalPareto fit_lognormal_pareto(std::vector<double> samples, double default_alpha = 1.5);

/// Run-state spread at one size (fit_variability fills every field; a scenario value only `sigma`).
struct StateSpread {
  std::uint64_t size_bytes = 0;
  double sigma = 0;       ///< log-sd of the per-run factor used (after smoothing)
  double between_sd = 0;  ///< raw log-sd between runs at this size (pooled over configurations)
  double within_sd = 0;   ///< raw log-sd of one run's measurement (out-of-place vs in-place)
  std::uint64_t runs = 0; ///< runs that measured this size
  bool operator==(const StateSpread&) const = default;
};

struct VariabilityModel {
  std::vector<StateSpread> state; ///< increasing size_bytes; empty = no run-state factor
  LognormalPareto launch;         ///< us per iteration, one rank
  std::uint32_t stragglers = 0;
  double straggler_rate_factor = 1.0;
  double straggler_delay_us = 0;
  // What it was fitted from.
  std::vector<std::string> inputs;
  std::uint64_t within_pairs = 0; ///< (run, size) out-of-place/in-place pairs the launch fit used
  std::uint64_t tail_events = 0;  ///< of them, outliers read as one slow iteration
  std::vector<std::string> notes;

  bool empty() const {
    return state.empty() && launch.zero() &&
           (stragglers == 0 || (straggler_rate_factor == 1.0 && straggler_delay_us == 0));
  }
  /// sigma at `size`: linear in log2(size) between table sizes, constant beyond the ends, 0 when empty.
  double state_sigma(std::uint64_t size) const;
  /// The run-state factor exp(sigma(size) * z) for the run's standard-normal draw z.
  double state_factor(std::uint64_t size, double z) const;

  nlohmann::json to_json() const;
  /// Validates keys and values; errors name `source` and the JSON path (`path` is where the object sits).
  static VariabilityModel from_json(const nlohmann::json& j, const std::string& source,
                                    const std::string& path);
};

/// One measured run for fit_variability: a log's table of one collective.
struct RepeatRun {
  std::string file;
  std::string config;      ///< configuration key: runs with equal keys are repeats of each other
  std::uint32_t iters = 0; ///< iterations each printed time averages (nccl-tests -n)
  struct Row {
    std::uint64_t size_bytes = 0;
    double oop_us = 0;
    double ip_us = 0; ///< 0 when the table has no in-place result
  };
  std::vector<Row> rows;
};

struct VariabilityFitOptions {
  double body_sigma = 0.5;         ///< shape of the launch-jitter body (not identifiable from averages)
  double default_tail_alpha = 1.5; ///< Pareto index when fewer than 3 tail events are seen
  double outlier_sd = 6;           ///< a within-run difference beyond this many robust sds is a tail event
  double latency_bound_factor =
      4;                     ///< launch jitter is fitted on sizes whose time < this x the run's smallest
  double smooth_octaves = 2; ///< sigma(size) pools the raw variances within +-this many octaves
};

/// Fits the run state and the launch jitter from repeated runs (docs/calibration.md "Variability"):
///  - per size, the value of one run is ln(min(oop, ip)) (a single slow iteration inflates one of the two);
///    between-run variance = sample variance over the runs of one configuration (n - 1), pooled over the
///    configurations that have >= 2 runs at that size (weights n - 1); within-run variance = mean of
///    ln(oop / ip)^2 / 2; the state variance is max(0, between - within), smoothed over +-smooth_octaves
///    (mean of the raw variances), sigma = its square root;
///  - launch jitter, from the out-of-place minus in-place time differences d (us) of latency-bound sizes,
///    each put in per-iteration units z = d sqrt(n / 2) (a difference of two n-iteration means has sd
///    sigma_it sqrt(2 / n)): the robust sd s = 1.4826 MAD(z) is the per-iteration sd, matched by the body
///    (median = s / sqrt(e^{sigma^2} (e^{sigma^2} - 1))); a pair with |z - median(z)| > outlier_sd s is a
///    tail event: one iteration late by |d| n, so xm = the smallest such excess, p = events / (pairs x 2n)
///    and alpha the Pareto MLE ((k - 1) / sum ln(x / xm), k >= 3).
/// InputError when fewer than two runs are given or no configuration has two runs.
VariabilityModel fit_variability(const std::vector<RepeatRun>& runs, const VariabilityFitOptions& opt = {});

} // namespace ibn::calib
