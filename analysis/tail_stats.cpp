#include "analysis/tail_stats.hpp"

#include "sim/rng.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ibn::analysis {

namespace {

/// Nearest-rank index (0-based) of the q-quantile among n sorted values.
std::size_t rank_index(double q, std::size_t n) {
  auto k = static_cast<std::size_t>(std::ceil(q * static_cast<double>(n)));
  return std::clamp<std::size_t>(k, 1, n) - 1;
}

std::string with_commas(std::size_t v) {
  std::string s = std::to_string(v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
  return s;
}

} // namespace

std::size_t samples_needed(double q) {
  if (!(q > 0 && q < 1)) throw std::invalid_argument("samples_needed: q must be in (0, 1)");
  // 1/(1-q) with a small tolerance so 0.99 gives 100 and 0.999 gives 1,000 despite rounding of 1 - q.
  return static_cast<std::size_t>(std::ceil(1.0 / (1.0 - q) - 1e-9));
}

QuantileCi bootstrap_quantile_ci(const std::vector<double>& samples, double q, std::uint64_t seed,
                                 std::string_view stream, double level) {
  if (samples.empty()) throw std::invalid_argument("bootstrap_quantile_ci: no samples");
  if (!(q > 0 && q <= 1)) throw std::invalid_argument("bootstrap_quantile_ci: q must be in (0, 1]");
  if (!(level > 0 && level < 1))
    throw std::invalid_argument("bootstrap_quantile_ci: level must be in (0, 1)");
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  if (n == 1) return {sorted[0], sorted[0]};
  constexpr double kBudget = 2e7; // draws per interval
  const auto resamples =
      static_cast<std::size_t>(std::clamp(kBudget / static_cast<double>(n), 200.0, 1000.0));
  Rng rng = Rng::for_stream(seed, "bootstrap " + std::string(stream));
  const std::size_t k = rank_index(q, n);
  std::vector<std::uint32_t> idx(n);
  std::vector<double> stat(resamples);
  for (std::size_t b = 0; b < resamples; ++b) {
    for (auto& i : idx) i = static_cast<std::uint32_t>(rng.uniform_below(n));
    std::nth_element(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(k), idx.end());
    stat[b] = sorted[idx[k]];
  }
  std::sort(stat.begin(), stat.end());
  const double a = (1.0 - level) / 2.0;
  return {stat[rank_index(a, resamples)], stat[rank_index(1.0 - a, resamples)]};
}

std::vector<std::string> unsupported_percentiles(std::size_t n) {
  static constexpr struct {
    double q;
    const char* name;
  } kReported[] = {{0.50, "p50"}, {0.90, "p90"}, {0.99, "p99"}, {0.999, "p99.9"}};
  std::vector<std::string> out;
  for (const auto& r : kReported) {
    const std::size_t need = samples_needed(r.q);
    if (n < need)
      out.push_back(std::string(r.name) + " needs >= " + with_commas(need) + " samples; have " +
                    with_commas(n));
  }
  return out;
}

double relative_half_width(const QuantileCi& ci, double estimate) {
  return estimate == 0 ? 0.0 : (ci.hi - ci.lo) / 2.0 / std::abs(estimate);
}

} // namespace ibn::analysis
