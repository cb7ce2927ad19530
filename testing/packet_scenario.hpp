#pragma once
// Test support (testing/, shared by tests/ and bench/, which never include each other).
// The scenario shared by bench/packet_bench.cpp (ibnetsim's packet engine) and bench/ns3_reference.cpp
// (ns-3): a 2-tier fat-tree and two traffic patterns, defined once so both programs simulate the same thing.
//
// Topology (what `build_fat_tree({tiers 2, radix 20, leaf_ports 20, 4:1, hosts 128})` generates):
//   128 hosts, 16 per leaf -> 8 leaves; 4 up-cables per leaf; 2 spines, each leaf with 2 parallel cables to
//   each spine (leaf up-cable k goes to spine k mod 2, parallel index k / 2). Every cable 4x NDR 400 Gb/s;
//   host cables 3 m DAC (3 x 4,760 ps = 14,280 ps), leaf-spine cables 30 m fiber (30 x 5,130 = 153,900 ps).
// Paths (ftree = D-mod-k): the leaf sends destination d up cable d mod 4, i.e. spine (d mod 4) mod 2, and
// that spine sends it down parallel cable (d mod 4) / 2 — the same cable d's own leaf would use going up.
//
// Traffic: every host sends `bytes` to one partner, all flows start at t = 0.
//   perm: a random derangement (no host sends to itself), Fisher-Yates driven by SplitMix64(seed);
//   ring: host i sends to host (i + 1) mod hosts.
// Header-only and independent of ibnetsim's libraries, so the ns-3 program can include it.
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace ibn::bench {

struct FatTreeShape {
  int hosts = 128;
  int hosts_per_leaf = 16;
  int uplinks_per_leaf = 4;
  int spines = 2;
  std::uint64_t rate_bps = 400'000'000'000ull;
  std::int64_t host_cable_ps = 14'280;
  std::int64_t leaf_cable_ps = 153'900;
  int leaves() const { return (hosts + hosts_per_leaf - 1) / hosts_per_leaf; }
  int parallel() const { return uplinks_per_leaf / spines; }
  /// D-mod-k: the up-cable (0-based, among the leaf's up-cables) toward destination d.
  int up_cable(int d) const { return d % uplinks_per_leaf; }
};

/// SplitMix64 (Steele, Lea, Flood 2014): tiny, deterministic on every platform.
struct SplitMix64 {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, n) (multiply-shift; the bias is below 2^-32 for the n used here).
  std::uint64_t below(std::uint64_t n) { return static_cast<std::uint64_t>((next() >> 32) * n >> 32); }
};

/// dst[i] for host i. pattern: "perm" or "ring".
inline std::vector<int> traffic(const std::string& pattern, int hosts, std::uint64_t seed) {
  if (hosts < 2) throw std::invalid_argument("need at least 2 hosts");
  std::vector<int> dst(static_cast<std::size_t>(hosts));
  if (pattern == "ring") {
    for (int i = 0; i < hosts; ++i) dst[static_cast<std::size_t>(i)] = (i + 1) % hosts;
    return dst;
  }
  if (pattern != "perm") throw std::invalid_argument("unknown pattern '" + pattern + "' (perm or ring)");
  std::iota(dst.begin(), dst.end(), 0);
  SplitMix64 rng{seed};
  for (int i = hosts - 1; i > 0; --i) {
    const auto j = static_cast<std::size_t>(rng.below(static_cast<std::uint64_t>(i) + 1));
    std::swap(dst[static_cast<std::size_t>(i)], dst[j]);
  }
  // Fixed points: swap each with its successor (a deterministic repair that keeps it a permutation).
  for (int i = 0; i < hosts; ++i)
    if (dst[static_cast<std::size_t>(i)] == i) {
      const auto k = static_cast<std::size_t>((i + 1) % hosts);
      std::swap(dst[static_cast<std::size_t>(i)], dst[k]);
    }
  return dst;
}

/// A short fingerprint of the flows, printed by both programs so a run can show they simulated the same.
inline std::uint64_t traffic_checksum(const std::vector<int>& dst) {
  std::uint64_t h = 1469598103934665603ull; // FNV-1a
  for (int d : dst) {
    h ^= static_cast<std::uint64_t>(d);
    h *= 1099511628211ull;
  }
  return h;
}

} // namespace ibn::bench
