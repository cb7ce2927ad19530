#pragma once
// Rng — a named, reproducible random stream (xoshiro256**, seeded through SplitMix64).
//
// Every random draw in a simulation comes from a stream derived from (scenario seed, stream name):
// Rng::for_stream(seed, "switch s3 ar") depends on nothing else, so streams are identical whatever the
// order in which they are created, and adding a stream never shifts the draws of another.
// Derivation: key = splitmix_mix(seed) XOR fnv1a64(name) (then mixed again); the 256-bit xoshiro state
// is four successive SplitMix64 outputs from that key.
//
// The draw helpers below (uniform_below, uniform01, ...) are defined here, bit for bit, so results do
// not depend on the standard library (std::uniform_int_distribution & co. differ between libstdc++
// and libc++). Rng also satisfies UniformRandomBitGenerator for code that does not need that guarantee.
#include "sim/time.hpp"

#include <array>
#include <cstdint>
#include <limits>
#include <string_view>

namespace ibn {

/// SplitMix64 finaliser (Steele, Lea, Flood 2014): a bijective 64-bit mixer.
constexpr std::uint64_t splitmix_mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// One SplitMix64 step: advances `state` and returns the next output.
constexpr std::uint64_t splitmix_next(std::uint64_t& state) {
  state += 0x9e3779b97f4a7c15ull;
  return splitmix_mix(state);
}

/// 64-bit FNV-1a of a name (stable across platforms and runs, unlike std::hash).
constexpr std::uint64_t fnv1a64(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

class Rng {
 public:
  using result_type = std::uint64_t;

  /// A stream seeded directly from a 64-bit value.
  explicit Rng(std::uint64_t seed);
  /// The stream called `name` in a simulation seeded with `seed`.
  static Rng for_stream(std::uint64_t seed, std::string_view name);
  /// A generator with the given raw xoshiro256** state (not all zero), e.g. to check reference vectors.
  static Rng from_state(const std::array<std::uint64_t, 4>& state) {
    Rng r(0);
    for (std::size_t i = 0; i < 4; ++i) r.s_[i] = state[i];
    return r;
  }

  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return std::numeric_limits<result_type>::max(); }
  result_type operator()() { return next_u64(); }

  /// xoshiro256** (Blackman & Vigna 2018).
  std::uint64_t next_u64() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  /// Uniform in [0, bound), unbiased (Lemire's multiply-and-reject). bound == 0 returns 0.
  std::uint64_t uniform_below(std::uint64_t bound) {
    if (bound == 0) return 0;
    unsigned __int128 m = static_cast<unsigned __int128>(next_u64()) * bound;
    auto low = static_cast<std::uint64_t>(m);
    if (low < bound) {
      const std::uint64_t threshold = (0 - bound) % bound;
      while (low < threshold) {
        m = static_cast<unsigned __int128>(next_u64()) * bound;
        low = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }

  /// Uniform integer in [lo, hi] (inclusive). Precondition: lo <= hi.
  std::int64_t uniform_int(std::int64_t lo, std::int64_t hi) {
    const std::uint64_t span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
    const std::uint64_t off = span == max() ? next_u64() : uniform_below(span + 1);
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + off);
  }

  /// Uniform time in [lo, hi] at picosecond resolution. Precondition: lo <= hi.
  Time uniform_time(Time lo, Time hi) { return Time::ps(uniform_int(lo.count_ps(), hi.count_ps())); }

  /// Uniform double in [0, 1) with 53 random bits.
  double uniform01() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

  /// true with probability p (p <= 0: never, p >= 1: always).
  bool bernoulli(double p) { return uniform01() < p; }

  /// Exponentially distributed with the given mean (inverse transform; uses std::log).
  double exponential(double mean);

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

} // namespace ibn
