#include "calibration/variability.hpp"

#include "sim/error.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <numbers>

namespace ibn::calib {

double normal_cdf(double x) {
  return 0.5 * std::erfc(-x / std::numbers::sqrt2);
}

double normal_quantile(double p) {
  if (!(p > 0 && p < 1)) throw std::invalid_argument("normal_quantile: p must be in (0, 1)");
  // Acklam's rational approximation (relative error < 1.15e-9), then one Halley step on Phi(x) - p.
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                                 1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                                 6.680131188771972e+01, -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                                 -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                                 3.754408661907416e+00};
  const double lo = 0.02425, hi = 1 - lo;
  double x;
  if (p < lo) {
    const double q = std::sqrt(-2 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p <= hi) {
    const double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  } else {
    const double q = std::sqrt(-2 * std::log(1 - p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  const double e = normal_cdf(x) - p;
  const double u = e * std::sqrt(2 * std::numbers::pi) * std::exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

double standard_normal(Rng& rng) {
  const double u1 = 1.0 - rng.uniform01(), u2 = rng.uniform01();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

// ---- LognormalPareto -------------------------------------------------------------------------------
double LognormalPareto::cdf(double x) const {
  if (zero()) return x >= 0 ? 1.0 : 0.0;
  const double p = tail_xm > 0 ? std::clamp(tail_p, 0.0, 1.0) : 0.0;
  double body = 0;
  if (median > 0) {
    if (x > 0) body = sigma > 0 ? normal_cdf(std::log(x / median) / sigma) : (x >= median ? 1.0 : 0.0);
  } else {
    body = x >= 0 ? 1.0 : 0.0; // no body: a point mass at 0
  }
  const double tail = x >= tail_xm && tail_xm > 0 ? 1.0 - std::pow(tail_xm / x, tail_alpha) : 0.0;
  return (1 - p) * body + p * tail;
}

double LognormalPareto::quantile(double q) const {
  if (!(q > 0 && q < 1)) throw std::invalid_argument("LognormalPareto::quantile: q must be in (0, 1)");
  if (zero()) return 0.0;
  double lo = 0, hi = std::max({median, tail_xm, 1e-12});
  while (cdf(hi) < q && hi < 1e300) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (cdf(mid) < q ? lo : hi) = mid;
  }
  return hi;
}

double LognormalPareto::typical() const {
  if (zero() || median <= 0) return 0.0;
  const double p = tail_xm > 0 ? tail_p : 0.0;
  return (1 - p) * median * std::exp(sigma * sigma / 2);
}

double LognormalPareto::mean() const {
  if (zero()) return 0.0;
  const double p = tail_xm > 0 ? tail_p : 0.0;
  const double body = median > 0 ? median * std::exp(sigma * sigma / 2) : 0.0;
  const double tail = p > 0 ? (tail_alpha > 1 ? tail_alpha * tail_xm / (tail_alpha - 1)
                                              : std::numeric_limits<double>::infinity())
                            : 0.0;
  return (1 - p) * body + p * tail;
}

double LognormalPareto::draw(Rng& rng) const {
  if (zero()) return 0.0;
  if (tail_p > 0 && tail_xm > 0 && rng.uniform01() < tail_p) {
    const double u = 1.0 - rng.uniform01(); // (0, 1]
    return tail_xm * std::pow(u, -1.0 / tail_alpha);
  }
  return median > 0 ? median * std::exp(sigma * standard_normal(rng)) : 0.0;
}

namespace {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double mad_of(const std::vector<double>& v, double med) {
  std::vector<double> dev;
  dev.reserve(v.size());
  for (const double x : v) dev.push_back(std::abs(x - med));
  return median_of(std::move(dev));
}

} // namespace

double LognormalPareto::draw_capped(Rng& rng, std::uint64_t& capped) const {
  const double d = draw(rng);
  if (d <= kMaxDrawUs) return d;
  ++capped;
  return kMaxDrawUs;
}

std::string LognormalPareto::capped_note(std::uint64_t capped) {
  return std::to_string(capped) +
         " launch-jitter draw(s) above 1,000 s were charged as 1,000 s (variability.launch parameters with a "
         "tail this heavy draw delays no clock holds)";
}

LognormalPareto fit_lognormal_pareto(std::vector<double> samples, double default_alpha) {
  std::vector<double> logs;
  for (const double x : samples) {
    if (!(x >= 0) || !std::isfinite(x))
      throw InputError("fit_lognormal_pareto: samples must be finite and >= 0");
    if (x > 0) logs.push_back(std::log(x));
  }
  LognormalPareto f;
  f.tail_alpha = default_alpha;
  if (logs.size() < 3) return f;
  auto body_fit = [&](const std::vector<double>& l) {
    const double m = median_of(l);
    f.median = std::exp(m);
    f.sigma = 1.4826 * mad_of(l, m);
  };
  body_fit(logs);
  // Above the body's 1 - 0.1/n quantile fewer than 0.1 body samples are expected: what lies there is tail.
  const double threshold =
      f.median * std::exp(normal_quantile(1.0 - 0.1 / static_cast<double>(logs.size())) * f.sigma);
  std::vector<double> tail, body;
  for (const double l : logs) (std::exp(l) > threshold ? tail : body).push_back(l);
  if (tail.empty() || body.size() < 3) return f;
  body_fit(body);
  f.tail_p = static_cast<double>(tail.size()) / static_cast<double>(samples.size());
  f.tail_xm = std::exp(*std::min_element(tail.begin(), tail.end()));
  if (tail.size() >= 3) {
    double s = 0;
    for (const double l : tail) s += l - std::log(f.tail_xm);
    if (s > 0) f.tail_alpha = std::clamp(static_cast<double>(tail.size() - 1) / s, 0.1, 100.0);
  }
  return f;
}

// ---- VariabilityModel ------------------------------------------------------------------------------
double VariabilityModel::state_sigma(std::uint64_t size) const {
  if (state.empty()) return 0.0;
  if (size <= state.front().size_bytes) return state.front().sigma;
  if (size >= state.back().size_bytes) return state.back().sigma;
  for (std::size_t i = 1; i < state.size(); ++i)
    if (size <= state[i].size_bytes) {
      const double x0 = std::log2(static_cast<double>(std::max<std::uint64_t>(1, state[i - 1].size_bytes)));
      const double x1 = std::log2(static_cast<double>(state[i].size_bytes));
      const double x = std::log2(static_cast<double>(size));
      const double t = x1 > x0 ? (x - x0) / (x1 - x0) : 1.0;
      return state[i - 1].sigma + t * (state[i].sigma - state[i - 1].sigma);
    }
  return state.back().sigma;
}

double VariabilityModel::state_factor(std::uint64_t size, double z) const {
  return std::exp(state_sigma(size) * z);
}

nlohmann::json VariabilityModel::to_json() const {
  nlohmann::json st = nlohmann::json::array();
  for (const auto& s : state)
    st.push_back({{"size_bytes", s.size_bytes},
                  {"sigma", s.sigma},
                  {"between_sd", s.between_sd},
                  {"within_sd", s.within_sd},
                  {"runs", s.runs}});
  return {{"model",
           "run state exp(sigma(size) Z) per run; launch jitter LognormalPareto per iteration (us, one "
           "rank); stragglers"},
          {"state", st},
          {"launch",
           {{"median_us", launch.median},
            {"sigma", launch.sigma},
            {"tail_p", launch.tail_p},
            {"tail_alpha", launch.tail_alpha},
            {"tail_xm_us", launch.tail_xm}}},
          {"stragglers",
           {{"count", stragglers}, {"rate_factor", straggler_rate_factor}, {"delay_us", straggler_delay_us}}},
          {"inputs", inputs},
          {"within_pairs", within_pairs},
          {"tail_events", tail_events},
          {"notes", notes}};
}

VariabilityModel VariabilityModel::from_json(const nlohmann::json& j, const std::string& source,
                                             const std::string& path) {
  auto fail = [&](const std::string& p, const std::string& msg) -> void {
    throw InputError(source + ": " + p + ": " + msg);
  };
  auto keys = [&](const nlohmann::json& o, const std::string& p, std::initializer_list<const char*> allowed) {
    if (!o.is_object()) fail(p, "expected an object");
    for (const auto& [k, v] : o.items()) {
      (void)v;
      bool ok = false;
      for (const char* a : allowed) ok = ok || k == a;
      if (!ok) fail(p + "." + k, "unknown key");
    }
  };
  auto num = [&](const nlohmann::json& o, const std::string& p, const char* key, double lo, double hi,
                 double def) {
    if (!o.contains(key)) return def;
    const auto& v = o.at(key);
    if (!v.is_number() || !std::isfinite(v.get<double>())) fail(p + "." + key, "expected a finite number");
    const double d = v.get<double>();
    if (d < lo || d > hi)
      fail(p + "." + key, "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return d;
  };
  keys(j, path, {"model", "state", "launch", "stragglers", "inputs", "within_pairs", "tail_events", "notes"});
  VariabilityModel m;
  if (j.contains("state")) {
    if (!j["state"].is_array()) fail(path + ".state", "expected an array");
    for (std::size_t i = 0; i < j["state"].size(); ++i) {
      const auto p = path + ".state[" + std::to_string(i) + "]";
      const auto& e = j["state"][i];
      keys(e, p, {"size_bytes", "sigma", "between_sd", "within_sd", "runs"});
      if (!e.contains("size_bytes") || !e.contains("sigma")) fail(p, "needs size_bytes and sigma");
      StateSpread s;
      s.size_bytes = static_cast<std::uint64_t>(num(e, p, "size_bytes", 0, 1.8e19, 0));
      s.sigma = num(e, p, "sigma", 0, 5, 0);
      s.between_sd = num(e, p, "between_sd", 0, 1e3, 0);
      s.within_sd = num(e, p, "within_sd", 0, 1e3, 0);
      s.runs = static_cast<std::uint64_t>(num(e, p, "runs", 0, 1e12, 0));
      if (!m.state.empty() && s.size_bytes <= m.state.back().size_bytes)
        fail(p + ".size_bytes", "sizes must increase");
      m.state.push_back(s);
    }
  }
  if (j.contains("launch")) {
    const auto p = path + ".launch";
    keys(j["launch"], p, {"median_us", "sigma", "tail_p", "tail_alpha", "tail_xm_us"});
    m.launch.median = num(j["launch"], p, "median_us", 0, 1e9, 0);
    m.launch.sigma = num(j["launch"], p, "sigma", 0, 10, 0.5);
    m.launch.tail_p = num(j["launch"], p, "tail_p", 0, 1, 0);
    m.launch.tail_alpha = num(j["launch"], p, "tail_alpha", 0.1, 100, 1.5);
    m.launch.tail_xm = num(j["launch"], p, "tail_xm_us", 0, 1e9, 0);
  }
  if (j.contains("stragglers")) {
    const auto p = path + ".stragglers";
    keys(j["stragglers"], p, {"count", "rate_factor", "delay_us"});
    m.stragglers = static_cast<std::uint32_t>(num(j["stragglers"], p, "count", 0, 1e6, 0));
    m.straggler_rate_factor = num(j["stragglers"], p, "rate_factor", 1e-3, 1, 1);
    m.straggler_delay_us = num(j["stragglers"], p, "delay_us", 0, 1e9, 0);
  }
  if (j.contains("inputs")) {
    if (!j["inputs"].is_array()) fail(path + ".inputs", "expected an array");
    for (const auto& s : j["inputs"]) {
      if (!s.is_string()) fail(path + ".inputs", "expected strings");
      m.inputs.push_back(s.get<std::string>());
    }
  }
  m.within_pairs = static_cast<std::uint64_t>(num(j, path, "within_pairs", 0, 1e12, 0));
  m.tail_events = static_cast<std::uint64_t>(num(j, path, "tail_events", 0, 1e12, 0));
  if (j.contains("notes")) {
    if (!j["notes"].is_array()) fail(path + ".notes", "expected an array");
    for (const auto& s : j["notes"]) {
      if (!s.is_string()) fail(path + ".notes", "expected strings");
      m.notes.push_back(s.get<std::string>());
    }
  }
  return m;
}

// ---- fit ------------------------------------------------------------------------------------------
VariabilityModel fit_variability(const std::vector<RepeatRun>& runs, const VariabilityFitOptions& opt) {
  if (runs.size() < 2) throw InputError("fitting the variability model needs at least two runs");
  VariabilityModel m;
  for (const auto& r : runs) m.inputs.push_back(r.file);
  std::map<std::string, std::vector<const RepeatRun*>> groups;
  for (const auto& r : runs) groups[r.config].push_back(&r);
  // Per size: pooled between-run variance (weights n - 1) and within-run variance.
  struct Acc {
    double between = 0, w_between = 0, within = 0, n_within = 0;
    std::uint64_t runs = 0;
  };
  std::map<std::uint64_t, Acc> by_size;
  bool any_group = false;
  for (const auto& [cfg, rs] : groups) {
    std::map<std::uint64_t, std::vector<double>> vals;
    for (const auto* r : rs)
      for (const auto& row : r->rows) {
        if (!(row.oop_us > 0)) continue;
        const double v = row.ip_us > 0 ? std::min(row.oop_us, row.ip_us) : row.oop_us;
        vals[row.size_bytes].push_back(std::log(v));
        auto& a = by_size[row.size_bytes];
        if (row.ip_us > 0) {
          const double d = std::log(row.oop_us / row.ip_us);
          a.within += d * d / 2;
          a.n_within += 1;
        }
      }
    for (const auto& [size, v] : vals) {
      if (v.size() < 2) continue;
      any_group = true;
      double mean = 0;
      for (const double x : v) mean += x;
      mean /= static_cast<double>(v.size());
      double ss = 0;
      for (const double x : v) ss += (x - mean) * (x - mean);
      auto& a = by_size[size];
      a.between += ss; // sum of squares: pooled variance = sum ss / sum (n - 1)
      a.w_between += static_cast<double>(v.size() - 1);
      a.runs += v.size();
    }
  }
  if (!any_group)
    throw InputError(
        "no configuration has two runs of the same size (the inputs are not repeats of each other)");
  std::vector<std::pair<std::uint64_t, double>> raw; // size, state variance
  for (const auto& [size, a] : by_size) {
    if (a.w_between <= 0) continue;
    const double between = a.between / a.w_between;
    const double within = a.n_within > 0 ? a.within / a.n_within : 0.0;
    StateSpread s;
    s.size_bytes = size;
    s.between_sd = std::sqrt(between);
    s.within_sd = std::sqrt(within);
    s.runs = a.runs;
    m.state.push_back(s);
    raw.emplace_back(size, std::max(0.0, between - within));
  }
  for (std::size_t i = 0; i < m.state.size(); ++i) {
    const double x = std::log2(static_cast<double>(std::max<std::uint64_t>(1, raw[i].first)));
    double sum = 0, n = 0;
    for (const auto& [size, var] : raw)
      if (std::abs(std::log2(static_cast<double>(std::max<std::uint64_t>(1, size))) - x) <=
          opt.smooth_octaves + 1e-9)
        sum += var, n += 1;
    m.state[i].sigma = std::sqrt(sum / n);
  }
  // Launch jitter from the within-run differences at latency-bound sizes.
  std::vector<double> diffs;
  std::vector<double> iters;
  for (const auto& r : runs) {
    double smallest = std::numeric_limits<double>::infinity();
    for (const auto& row : r.rows)
      if (row.oop_us > 0)
        smallest = std::min(smallest, std::min(row.oop_us, row.ip_us > 0 ? row.ip_us : row.oop_us));
    for (const auto& row : r.rows) {
      if (!(row.oop_us > 0) || !(row.ip_us > 0)) continue;
      if (std::min(row.oop_us, row.ip_us) > opt.latency_bound_factor * smallest) continue;
      diffs.push_back(row.oop_us - row.ip_us);
      iters.push_back(std::max<double>(1, r.iters));
    }
  }
  m.within_pairs = diffs.size();
  m.launch.sigma = opt.body_sigma;
  m.launch.tail_alpha = opt.default_tail_alpha;
  if (diffs.size() >= 3) {
    // Each difference in per-iteration units: a difference of two n-iteration means has sd sigma_it
    // sqrt(2/n).
    std::vector<double> z(diffs.size());
    for (std::size_t i = 0; i < diffs.size(); ++i) z[i] = diffs[i] * std::sqrt(iters[i] / 2);
    const double med = median_of(z);
    const double s = 1.4826 * mad_of(z, med); // robust per-iteration sd
    std::vector<double> excess;
    double total_iters = 0;
    for (std::size_t i = 0; i < diffs.size(); ++i) {
      total_iters += 2 * iters[i];
      if (s > 0 && std::abs(z[i] - med) > opt.outlier_sd * s) excess.push_back(std::abs(diffs[i]) * iters[i]);
    }
    const double e = std::exp(opt.body_sigma * opt.body_sigma);
    m.launch.median = opt.body_sigma > 0 ? s / std::sqrt(e * (e - 1)) : s;
    m.tail_events = excess.size();
    if (!excess.empty()) {
      m.launch.tail_xm = *std::min_element(excess.begin(), excess.end());
      m.launch.tail_p = static_cast<double>(excess.size()) / total_iters;
      if (excess.size() >= 3) {
        double sum = 0;
        for (const double x : excess) sum += std::log(x / m.launch.tail_xm);
        if (sum > 0) m.launch.tail_alpha = static_cast<double>(excess.size() - 1) / sum;
        // The profile's (and the scenario's) range is [0.1, 100]: an estimate outside it is held at the
        // bound, said in a note, so that the written profile reads back.
        if (m.launch.tail_alpha < 0.1 || m.launch.tail_alpha > 100) {
          const double raw = m.launch.tail_alpha;
          m.launch.tail_alpha = std::clamp(raw, 0.1, 100.0);
          char buf[200];
          std::snprintf(buf, sizeof buf,
                        "the Pareto index estimate %.3g lies outside [0.1, 100]: held at %.3g (a tail this "
                        "heavy has no finite mean; look at the slowest rows of the inputs)",
                        raw, m.launch.tail_alpha);
          m.notes.push_back(buf);
        }
      } else {
        m.notes.push_back(std::to_string(excess.size()) +
                          " tail event(s): the Pareto index is not identifiable from so few; assumed " +
                          std::to_string(opt.default_tail_alpha).substr(0, 4));
      }
    }
  } else {
    m.notes.push_back(
        "fewer than 3 out-of-place/in-place pairs at latency-bound sizes: no launch jitter fitted");
  }
  m.notes.push_back(
      "the logs print averages over n iterations, not per-iteration times: the launch body's shape "
      "(sigma " +
      std::to_string(opt.body_sigma).substr(0, 4) +
      ") is assumed, its scale fitted from the out-of-place vs in-place spread");
  return m;
}

} // namespace ibn::calib
