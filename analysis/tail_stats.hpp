#pragma once
// Honest percentiles: a percentile comes with its sample count, a confidence interval, and a flag when the
// samples cannot support it.
//
// Nearest-rank percentiles (analysis/results.hpp): p-th = sorted[ceil(p n) - 1]. With n samples the
// q-quantile has at least one sample beyond it only when n >= 1 / (1 - q): p99 needs 100 samples, p99.9 needs
// 1,000. Below that the reported "p99.9" is simply the maximum, and it is flagged ("p99.9 needs >= 1,000
// samples; have 100").
//
// Confidence interval: the distribution-free order-statistic interval (e.g. Hahn & Meeker, Statistical
// Intervals, 1991, ch. 5). The number B of samples at or below the true q-quantile is Binomial(n, q), so
// [X_(l), X_(u)] covers it with probability P(l <= B <= u - 1); l is the largest rank with P(B <= l - 1) <=
// a/2 and u the smallest with P(B >= u) <= a/2 (a = 1 - level), so coverage is at least `level` for any
// distribution. When no rank satisfies a side, that side is open (NaN): with 100 samples the 95 % interval of
// p99 has no upper bound, which is the truth (the sample maximum lies above the true p99 only with
// probability 1 - 0.99^100 = 63 %). This is why the interval is not a bootstrap: a percentile bootstrap
// cannot reach beyond the sample maximum and so claims [.., max] with 95 % where the coverage is 63 %.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace ibn::analysis {

/// Samples needed for the nearest-rank q-quantile to have a sample beyond it: ceil(1 / (1 - q)) (0 < q < 1).
std::size_t samples_needed(double q);

/// Order-statistic confidence interval of the q-quantile from samples sorted ascending, at confidence
/// `level`: {lo, hi}, either NaN when that side is open (too few samples). Empty input gives {NaN, NaN}.
std::pair<double, double> quantile_ci(const std::vector<double>& sorted, double q, double level = 0.95);

/// The flags for the reported percentiles (p50, p90, p99, p99.9) that `n` samples cannot support, e.g.
/// "p99.9 needs >= 1,000 samples; have 100". Empty when all are supported.
std::vector<std::string> unsupported_percentiles(std::size_t n);

/// Relative half-width of an interval around its point estimate: (hi - lo) / 2 / |estimate|; infinity when a
/// side is open, 0 when the estimate is 0.
double relative_half_width(const std::pair<double, double>& ci, double estimate);

} // namespace ibn::analysis
