#include "analysis/tail_stats.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace ibn::analysis {

namespace {

std::string with_commas(std::size_t v) {
  std::string s = std::to_string(v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
  return s;
}

/// P(B = k) for k = 0..n, B ~ Binomial(n, q), computed in log space (stable for large n).
std::vector<double> binomial_pmf(std::size_t n, double q) {
  std::vector<double> pmf(n + 1, 0.0);
  const double lq = std::log(q), l1q = std::log1p(-q), ln = std::lgamma(static_cast<double>(n) + 1);
  for (std::size_t k = 0; k <= n; ++k) {
    const double kd = static_cast<double>(k), nd = static_cast<double>(n);
    pmf[k] = std::exp(ln - std::lgamma(kd + 1) - std::lgamma(nd - kd + 1) + kd * lq + (nd - kd) * l1q);
  }
  return pmf;
}

} // namespace

std::size_t samples_needed(double q) {
  if (!(q > 0 && q < 1)) throw std::invalid_argument("samples_needed: q must be in (0, 1)");
  // 1/(1-q) with a small tolerance so 0.99 gives 100 and 0.999 gives 1,000 despite the rounding of 1 - q.
  return static_cast<std::size_t>(std::ceil(1.0 / (1.0 - q) - 1e-9));
}

std::pair<double, double> quantile_ci(const std::vector<double>& sorted, double q, double level) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (!(q > 0 && q < 1)) throw std::invalid_argument("quantile_ci: q must be in (0, 1)");
  if (!(level > 0 && level < 1)) throw std::invalid_argument("quantile_ci: level must be in (0, 1)");
  const std::size_t n = sorted.size();
  if (n == 0) return {nan, nan};
  const double tail = (1.0 - level) / 2.0;
  const auto pmf = binomial_pmf(n, q);
  // Lower rank l (1-based): the largest l with P(B <= l - 1) <= tail.
  std::size_t l = 0;
  double below = 0; // P(B <= l - 1) for the candidate l
  for (std::size_t cand = 1; cand <= n; ++cand) {
    below += pmf[cand - 1];
    if (below <= tail)
      l = cand;
    else
      break;
  }
  // Upper rank u (1-based): the smallest u with P(B >= u) <= tail.
  std::size_t u = n + 1;
  double above = 0; // P(B >= u) for the candidate u
  for (std::size_t cand = n; cand >= 1; --cand) {
    above += pmf[cand];
    if (above <= tail)
      u = cand;
    else
      break;
  }
  return {l >= 1 ? sorted[l - 1] : nan, u <= n ? sorted[u - 1] : nan};
}

std::vector<std::string> unsupported_percentiles(std::size_t n) {
  struct Reported {
    double q;
    const char* name;
  };
  const Reported reported[] = {{0.50, "p50"}, {0.90, "p90"}, {0.99, "p99"}, {0.999, "p99.9"}};
  std::vector<std::string> out;
  for (const auto& r : reported) {
    const std::size_t need = samples_needed(r.q);
    if (n < need)
      out.push_back(std::string(r.name) + " needs >= " + with_commas(need) + " samples; have " +
                    with_commas(n));
  }
  return out;
}

double relative_half_width(const std::pair<double, double>& ci, double estimate) {
  if (std::isnan(ci.first) || std::isnan(ci.second)) return std::numeric_limits<double>::infinity();
  return estimate == 0 ? 0.0 : (ci.second - ci.first) / 2.0 / std::abs(estimate);
}

} // namespace ibn::analysis
