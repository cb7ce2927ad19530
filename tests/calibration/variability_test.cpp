// The variability model's distributions against closed forms, and the fits recovering known parameters
// from synthetic samples (calibration/variability.hpp).
#include "calibration/variability.hpp"
#include "sim/error.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

using namespace ibn;
using namespace ibn::calib;

TEST_CASE("normal quantile and CDF match tabulated values") {
  // Phi^-1(0.99) = 2.326347874, Phi^-1(0.975) = 1.959963985, Phi^-1(0.5) = 0 (standard tables).
  CHECK(normal_quantile(0.99) == doctest::Approx(2.326347874).epsilon(1e-9));
  CHECK(normal_quantile(0.975) == doctest::Approx(1.959963985).epsilon(1e-9));
  CHECK(std::abs(normal_quantile(0.5)) < 1e-12);
  CHECK(normal_quantile(0.001) == doctest::Approx(-3.090232306).epsilon(1e-9));
  for (const double p : {1e-6, 0.01, 0.3, 0.7, 0.999})
    CHECK(normal_cdf(normal_quantile(p)) == doctest::Approx(p).epsilon(1e-10));
}

TEST_CASE("LognormalPareto: pure lognormal quantiles and mean are the closed forms") {
  LognormalPareto d;
  d.median = 3.0;
  d.sigma = 0.7;
  // q-quantile = median exp(sigma Phi^-1(q)); mean = median exp(sigma^2 / 2).
  for (const double q : {0.01, 0.5, 0.9, 0.99})
    CHECK(d.quantile(q) == doctest::Approx(3.0 * std::exp(0.7 * normal_quantile(q))).epsilon(1e-9));
  CHECK(d.mean() == doctest::Approx(3.0 * std::exp(0.49 / 2)).epsilon(1e-12));
}

TEST_CASE("LognormalPareto: the tail's quantiles and the mixture mean are the closed forms") {
  LognormalPareto d;
  d.median = 1.0;
  d.sigma = 0.3;
  d.tail_p = 0.05;
  d.tail_alpha = 2.0;
  d.tail_xm = 20.0;
  // Beyond the body (F_body ~ 1 above x = 20: Phi(ln 20 / 0.3) = 1 - 1e-23), F(x) = 0.95 + 0.05 (1 -
  // (20/x)^2), so the q-quantile for q > 0.95 is 20 / sqrt((1 - q) / 0.05).
  for (const double q : {0.96, 0.99, 0.999})
    CHECK(d.quantile(q) == doctest::Approx(20.0 / std::sqrt((1 - q) / 0.05)).epsilon(1e-8));
  // Mean = 0.95 exp(0.045) + 0.05 x 2 x 20 / (2 - 1).
  CHECK(d.mean() == doctest::Approx(0.95 * std::exp(0.045) + 0.05 * 40.0).epsilon(1e-12));
  // Sampling agrees with the closed forms (200,000 draws: the sample mean's sd is about 0.014 here... the
  // Pareto with alpha 2 has infinite variance, so compare the median and the tail fraction instead).
  Rng rng(7);
  std::vector<double> x(200000);
  for (auto& v : x) v = d.draw(rng);
  std::sort(x.begin(), x.end());
  CHECK(x[x.size() / 2] == doctest::Approx(d.quantile(0.5)).epsilon(0.01));
  const auto above = std::count_if(x.begin(), x.end(), [](double v) { return v >= 20.0; });
  CHECK(static_cast<double>(above) / x.size() == doctest::Approx(0.05).epsilon(0.05)); // +-5 % of 0.05
  CHECK(x[static_cast<std::size_t>(0.99 * x.size())] == doctest::Approx(d.quantile(0.99)).epsilon(0.03));
}

TEST_CASE("fit_lognormal_pareto recovers known parameters from synthetic samples") {
  LognormalPareto truth;
  truth.median = 2.0;
  truth.sigma = 0.4;
  truth.tail_p = 0.02;
  truth.tail_alpha = 1.8;
  truth.tail_xm = 30.0; // above the body's 1 - 0.1/n quantile (n = 1e5: 2 exp(0.4 x 4.75) = 13.4)
  Rng rng(11);
  std::vector<double> x(100000);
  for (auto& v : x) v = truth.draw(rng);
  const auto f = fit_lognormal_pareto(x);
  CHECK(f.median == doctest::Approx(2.0).epsilon(0.02));
  CHECK(f.sigma == doctest::Approx(0.4).epsilon(0.03));
  CHECK(f.tail_p == doctest::Approx(0.02).epsilon(0.1));
  CHECK(f.tail_xm == doctest::Approx(30.0).epsilon(0.02));
  CHECK(f.tail_alpha == doctest::Approx(1.8).epsilon(0.1));
  // Without a tail the fit finds none.
  LognormalPareto body;
  body.median = 5;
  body.sigma = 0.2;
  std::vector<double> y(20000);
  for (auto& v : y) v = body.draw(rng);
  const auto g = fit_lognormal_pareto(y);
  CHECK(g.tail_p < 1e-3);
  CHECK(g.median == doctest::Approx(5).epsilon(0.02));
}

namespace {

/// Synthetic repeats: `runs` runs of one configuration at sizes 8 B .. 8 KiB, each run's times
/// base(size) exp(sigma Z_run) (one Z per run), out-of-place and in-place equal (no within-run spread).
std::vector<RepeatRun> synthetic_runs(int runs, double sigma, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<RepeatRun> out;
  for (int r = 0; r < runs; ++r) {
    RepeatRun run;
    run.file = "run" + std::to_string(r);
    run.config = "synthetic";
    run.iters = 20;
    const double z = standard_normal(rng);
    for (std::uint64_t s = 8; s <= 8192; s *= 2) {
      const double t = (20.0 + 0.01 * static_cast<double>(s)) * std::exp(sigma * z);
      run.rows.push_back({s, t, t});
    }
    out.push_back(run);
  }
  return out;
}

} // namespace

TEST_CASE("fit_variability recovers the run-state sigma from synthetic repeats") {
  // 400 runs with sigma 0.1: the pooled sample sd has a relative standard error of about 1 / sqrt(2 x 399) =
  // 3.5 %, so the fit is within 10 %.
  const auto m = fit_variability(synthetic_runs(400, 0.1, 3));
  REQUIRE(!m.state.empty());
  for (const auto& s : m.state) CHECK(s.sigma == doctest::Approx(0.1).epsilon(0.1));
  CHECK(m.state_factor(64, 2.0) == doctest::Approx(std::exp(m.state_sigma(64) * 2.0)));
  // No within-run spread: no launch jitter.
  CHECK(m.launch.median == 0);
  CHECK(m.tail_events == 0);
  // Runs that do not repeat each other cannot be fitted.
  auto two = synthetic_runs(2, 0.1, 5);
  two[1].config = "other";
  CHECK_THROWS_AS(fit_variability(two), InputError);
  CHECK_THROWS_AS(fit_variability({two[0]}), InputError);
}

TEST_CASE("fit_variability reads a single slow iteration as a tail event and the spread as launch jitter") {
  // Two runs of 20 iterations; out-of-place and in-place differ by +-d at every size (a body), except one
  // size where one iteration was 400 us late: oop - ip = 400 / 20 = 20 us.
  std::vector<RepeatRun> runs;
  Rng rng(9);
  for (int r = 0; r < 2; ++r) {
    RepeatRun run;
    run.file = "r" + std::to_string(r);
    run.config = "c";
    run.iters = 20;
    for (std::uint64_t s = 8; s <= 4096; s *= 2)
      run.rows.push_back({s, 20.0 + 0.2 * standard_normal(rng), 20.0});
    runs.push_back(run);
  }
  runs[0].rows[3].oop_us = 40.0; // only the first run has the spike
  const auto m = fit_variability(runs);
  CHECK(m.tail_events == 1);
  CHECK(m.launch.tail_xm == doctest::Approx(400.0).epsilon(1e-9));
  // p = 1 event / (pairs x 2n iterations).
  CHECK(m.launch.tail_p == doctest::Approx(1.0 / (static_cast<double>(m.within_pairs) * 40.0)));
  CHECK(m.launch.median > 0);
}

TEST_CASE("VariabilityModel JSON round trip and path-naming errors") {
  VariabilityModel m;
  m.state = {{8, 0.1, 0.12, 0.02, 2}, {1024, 0.05, 0.06, 0.01, 2}};
  m.launch.median = 1.5;
  m.launch.tail_p = 0.001;
  m.launch.tail_xm = 100;
  const auto j = m.to_json();
  const auto back = VariabilityModel::from_json(j, "p.json", "$.variability");
  CHECK(back.state == m.state);
  CHECK(back.launch == m.launch);
  // log2 interpolation: at 90.5 B (halfway in log2 between 8 and 1024) sigma is the mean.
  CHECK(m.state_sigma(90) == doctest::Approx(0.1 + (0.05 - 0.1) * (std::log2(90.0) - 3) / 7).epsilon(1e-12));
  CHECK(m.state_sigma(1) == 0.1);
  CHECK(m.state_sigma(1 << 20) == 0.05);
  auto bad = j;
  bad["state"][1]["size_bytes"] = 4;
  CHECK_THROWS_WITH_AS(VariabilityModel::from_json(bad, "p.json", "$.variability"),
                       doctest::Contains("$.variability.state[1].size_bytes"), InputError);
  bad = j;
  bad["launch"]["tail_p"] = 2;
  CHECK_THROWS_WITH_AS(VariabilityModel::from_json(bad, "p.json", "$.variability"),
                       doctest::Contains("$.variability.launch.tail_p"), InputError);
}
