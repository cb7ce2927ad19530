#pragma once
// Per-rank extra compute time before each iteration (workload.jitter: stragglers), drawn per rank from the
// job's stream. Used by the scenario runner (scenarios/runner.cpp).
#include "scenarios/scenario.hpp"
#include "sim/rng.hpp"
#include "sim/time.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace ibn::scen {

/// Per-rank extra compute time (stragglers).
class Jitter {
 public:
  Jitter(const JitterSpec& j, Rng& rng) : j_(j), rng_(rng) {}
  /// Whether every draw is zero (no distribution, or a zero scale).
  bool none() const { return j_.distribution == JitterDist::None || j_.scale_us == 0; }
  Time draw() {
    const double s = j_.scale_us;
    double x = 0;
    if (none()) return Time::zero();
    switch (j_.distribution) {
    case JitterDist::None:
      break;
    case JitterDist::Normal:
      x = std::max(0.0, s * gauss());
      break;
    case JitterDist::Lognormal:
      x = s * std::exp(j_.lognormal_sigma * gauss());
      break;
    case JitterDist::Exponential:
      x = rng_.exponential(s);
      break;
    case JitterDist::Uniform:
      x = s * rng_.uniform01();
      break;
    }
    return Time::from_us(x);
  }

 private:
  double
  gauss() { // Box-Muller, one value per call (deterministic and portable, unlike std::normal_distribution)
    const double u1 = 1.0 - rng_.uniform01(), u2 = rng_.uniform01();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }
  JitterSpec j_;
  Rng& rng_;
};

} // namespace ibn::scen
