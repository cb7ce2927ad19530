#pragma once
// Honest percentiles: a percentile comes with its sample count, a bootstrap confidence interval, and a flag
// when the samples cannot support it.
//
// Nearest-rank percentiles (analysis/results.hpp): p-th = sorted[ceil(p n) - 1]. With n samples the
// q-quantile has at least one sample beyond it only when n >= 1 / (1 - q): p99 needs 100 samples, p99.9 needs
// 1,000. Below that the reported "p99.9" is simply the maximum, and it is flagged ("p99.9 needs >= 1,000
// samples; have 100").
//
// Confidence interval (percentile bootstrap, Efron & Tibshirani 1993, ch. 13): draw B resamples of n samples
// with replacement, take the same nearest-rank quantile of each, and report the (1 - level)/2 and (1 +
// level)/2 quantiles of those B values. Since the samples are sorted once, a resample's k-th order statistic
// is the sample at the k-th smallest drawn index, so each resample costs O(n) (nth_element on indices). B =
// 1,000 while n B <= 2e7, fewer (at least 200) above, so the interval costs at most ~0.1 s per collective.
// The draws come from the named stream "bootstrap <name>" of the run's seed: the same run gives the same
// interval, byte for byte.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ibn::analysis {

struct QuantileCi {
  double lo = 0, hi = 0;
};

/// Samples needed for the nearest-rank q-quantile to have a sample beyond it: ceil(1 / (1 - q)) (q < 1).
std::size_t samples_needed(double q);

/// Bootstrap confidence interval of the nearest-rank q-quantile of `samples` at confidence `level` (e.g.
/// 0.95). Deterministic in (samples, q, seed, stream). Throws std::invalid_argument on an empty sample set or
/// q outside (0, 1], level outside (0, 1).
QuantileCi bootstrap_quantile_ci(const std::vector<double>& samples, double q, std::uint64_t seed,
                                 std::string_view stream, double level = 0.95);

/// The flags for the reported percentiles (p50, p90, p99, p99.9) that `n` samples cannot support, e.g.
/// "p99.9 needs >= 1,000 samples; have 100". Empty when all are supported.
std::vector<std::string> unsupported_percentiles(std::size_t n);

/// Relative half-width of a CI around its point estimate: (hi - lo) / 2 / estimate (0 when estimate is 0).
double relative_half_width(const QuantileCi& ci, double estimate);

} // namespace ibn::analysis
