#pragma once
// Port splits of fat-tree leaves (docs/planning.md): which number of used leaf ports realises a ratio
// exactly, and which of those is cheapest for a given host count.
//
// A split of `leaf_ports` at down:up = a:b gives leaf_ports/(a+b)·a down-ports and leaf_ports/(a+b)·b
// up-ports; it exists when a+b divides leaf_ports. For a host count H the generator builds
// L = ceil(H / down) leaves and spreads their uplinks over the fewest spines (a divisor of `up`) that take
// them (3 tiers: pods of leaves under pod spines and cores, as build_fat_tree does). A split is *exact* for H
// when every leaf is full (H is a multiple of down). Candidates are ordered exact first, then by total
// switches, then by fewer unused leaf ports.
#include "topology/generators.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ibn::topo {

/// Smallest divisor s of `u` with s * radix >= needed (the fewest upper switches that take `needed` cable
/// ends while every lower switch spreads its u uplinks evenly), or -1 when none does.
int spread_switch_count(int u, std::int64_t needed, int radix);

struct LeafPortSplit {
  int leaf_ports = 0; ///< ports used on each leaf
  int down = 0, up = 0;
  std::int64_t switches = 0; ///< all tiers, one plane
  bool exact = false;        ///< every leaf full
  int unused_leaf_ports(int radix) const { return radix - leaf_ports; }
};

/// Every leaf-port count <= radix that splits exactly at ratio r1 (the upper tier at r2 for 3 tiers) and
/// holds `hosts`, ordered as in the header comment. Empty when none does.
std::vector<LeafPortSplit> leaf_port_splits(int tiers, int radix, std::int64_t hosts, const Ratio& r1,
                                            const Ratio& r2 = Ratio{1, 1});

/// The cheapest split (first of leaf_port_splits), if any.
std::optional<LeafPortSplit> cheapest_leaf_ports(int tiers, int radix, std::int64_t hosts, const Ratio& r1,
                                                 const Ratio& r2 = Ratio{1, 1});

/// " --leaf-ports 48 (32 down/16 up, 40 switches, every leaf full)" style hints for an error message: the
/// cheapest exact split and, when different, the cheapest with a partly filled last leaf.
std::string leaf_port_hints(int tiers, int radix, std::int64_t hosts, const Ratio& r1,
                            const Ratio& r2 = Ratio{1, 1});

} // namespace ibn::topo
