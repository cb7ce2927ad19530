// Honest percentiles: sample counts, supported percentiles and distribution-free confidence intervals.
#include "analysis/tail_stats.hpp"
#include "sim/rng.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

using namespace ibn;
using namespace ibn::analysis;

TEST_CASE("tail stats: a nearest-rank q-quantile needs 1/(1-q) samples to have one beyond it") {
  CHECK(samples_needed(0.5) == 2);
  CHECK(samples_needed(0.9) == 10);
  CHECK(samples_needed(0.99) == 100);
  CHECK(samples_needed(0.999) == 1000);
  CHECK_THROWS_AS(samples_needed(1.0), std::invalid_argument);
}

TEST_CASE("tail stats: unsupported percentiles are named with what they need and what there is") {
  const auto f100 = unsupported_percentiles(100);
  REQUIRE(f100.size() == 1);
  CHECK(f100[0] == "p99.9 needs >= 1,000 samples; have 100");
  CHECK(unsupported_percentiles(1000).empty());
  const auto f50 = unsupported_percentiles(50);
  REQUIRE(f50.size() == 2);
  CHECK(f50[0] == "p99 needs >= 100 samples; have 50");
  CHECK(unsupported_percentiles(1).size() == 4);
}

TEST_CASE("tail stats: order-statistic interval around the quantile, open when too few samples") {
  std::vector<double> s;
  for (int i = 1; i <= 1000; ++i) s.push_back(i);
  // Closed form: B ~ Binomial(1000, 0.5) has sd 15.8, so the 95 % ranks are about 500 -/+ 1.96 x 15.8 =
  // 469..531.
  const auto [lo50, hi50] = quantile_ci(s, 0.5);
  CHECK(lo50 >= 467);
  CHECK(lo50 <= 471);
  CHECK(hi50 >= 530);
  CHECK(hi50 <= 534);
  // Binomial(1000, 0.99): sd 3.15, ranks about 990 -/+ 6.
  const auto [lo99, hi99] = quantile_ci(s, 0.99);
  CHECK(lo99 < 990);
  CHECK(lo99 >= 982);
  CHECK(hi99 > 990);
  CHECK(hi99 <= 998);
  // 100 samples: the 95 % interval of p99 has no upper bound (P(max < true p99) = 0.99^100 = 37 % > 2.5 %).
  std::vector<double> h(s.begin(), s.begin() + 100);
  const auto c = quantile_ci(h, 0.99);
  CHECK(std::isnan(c.second));
  CHECK(c.first <= 99);
  const std::vector<double> few = {1, 2, 3, 4, 5};
  CHECK(std::isnan(quantile_ci(few, 0.5).first)); // P(B = 0) = 1/32 > 2.5 %: open below too
  CHECK(std::isnan(quantile_ci(few, 0.99).second));
  CHECK(std::isnan(quantile_ci({}, 0.5).first));
  CHECK(std::isinf(relative_half_width(c, 99)));
}

TEST_CASE("tail stats: the interval covers the true quantile at least at its level, for any distribution") {
  // 400 independent sets of 200 samples from Exponential(1): true p50 = ln 2, true p99 = ln 100. The interval
  // is exact up to the discreteness of ranks, so coverage is >= 95 % (binomial sd over 400 sets: 1.1 %).
  int cov50 = 0, cov99 = 0;
  for (int set = 0; set < 400; ++set) {
    Rng g(1000 + static_cast<std::uint64_t>(set));
    std::vector<double> v(200);
    for (auto& x : v) x = g.exponential(1.0);
    std::sort(v.begin(), v.end());
    const auto a = quantile_ci(v, 0.5), b = quantile_ci(v, 0.99);
    auto covers = [](std::pair<double, double> ci, double t) {
      return (std::isnan(ci.first) || ci.first <= t) && (std::isnan(ci.second) || ci.second >= t);
    };
    cov50 += covers(a, std::log(2.0));
    cov99 += covers(b, std::log(100.0));
  }
  CHECK(cov50 >= 372); // >= 93 %
  CHECK(cov99 >= 372);
  // The sample maximum alone would cover the true p99 only in about 1 - 0.99^200 = 87 % of the sets.
}

TEST_CASE("tail stats: relative half-width") {
  CHECK(relative_half_width({9, 11}, 10) == doctest::Approx(0.1));
  CHECK(relative_half_width({0, 0}, 0) == 0);
}
