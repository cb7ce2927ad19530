#include "sim/rng.hpp"

#include <cmath>

namespace ibn {

Rng::Rng(std::uint64_t seed) {
  std::uint64_t sm = seed;
  for (auto& w : s_) w = splitmix_next(sm);
  // SplitMix64 outputs are a bijection of distinct counters, so four of them are never all zero.
}

Rng Rng::for_stream(std::uint64_t seed, std::string_view name) {
  // Mixing the seed before the XOR keeps (seed, name) pairs from cancelling each other out
  // (seed ^ hash(a) == seed' ^ hash(b) would otherwise be easy to hit with small seeds).
  return Rng(splitmix_mix(splitmix_mix(seed) ^ fnv1a64(name)));
}

double Rng::exponential(double mean) {
  // 1 - u lies in (0, 1], so the logarithm is finite.
  return -mean * std::log(1.0 - uniform01());
}

} // namespace ibn
