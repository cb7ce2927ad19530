#pragma once
// Rail-optimized fat-trees (docs/planning.md), the layout of NVIDIA's DGX SuperPOD reference architectures:
//
// - Nodes come in scalable units (SUs) of `su_nodes` node slots. A node has `nics_per_node` NICs (rails); NIC
// i
//   of every node of SU s is cabled to leaf i of SU s (leaf s·K + i), on the port of the node's slot. A leaf
//   therefore has su_nodes down-ports and su_nodes·up/down up-ports at the leaf ratio.
// - 2 tiers: the leaves' uplinks are spread evenly over the fewest spines (a divisor of the leaf up-port
//   count) whose ports take them all.
// - 3 tiers: SUs are grouped into pods of `pod_sus` SUs (default: as many as the spine down-ports take,
//   spine_down / K); each leaf sends one cable to each of its pod's spines (pod spines = leaf up-ports), and
//   spine j of every pod is cabled to core group j, spread the same way.
// - Partial SUs keep their full leaves and leaf-spine cabling (NVIDIA's guidance for node counts that are not
//   a multiple of the SU); only node slots stay empty.
// - `ufm_ports` > 0 cables a UFM appliance into the first empty node slot (NVIDIA's H100 SuperPOD gives one
//   slot of the 32 to UFM): its port k goes to leaf k of that SU. UFM ports are channel adapters that are not
//   traffic endpoints (NodeKind::Aggregator, the fabric's kind for such CAs).
// - `planes` > 1 builds that many copies of the switch fabric (multi-plane); each NIC then has one port per
//   plane, HCA "host-n-rail-(p·K+i)" on plane p.
// Nodes are hosts: HCA "host-n-rail-i" has host n, so placement makes a node slot of a host's K HCAs in rail
// order and GPU i of a job uses NIC i (scenarios/placement.hpp, host mode).
#include "topology/generators.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ibn::topo {

struct RailOptimizedParams {
  std::int64_t nodes = 32;             ///< servers
  int nics_per_node = 8;               ///< rails
  int su_nodes = 32;                   ///< node slots per scalable unit
  int radix = 64;                      ///< switch ports
  std::optional<int> tiers;            ///< 2 or 3; default: 2 when the spines can take every leaf, else 3
  std::vector<Ratio> oversubscription; ///< leaf first, then spine (3 tiers); missing tiers are 1:1
  std::optional<int> pod_sus;          ///< 3 tiers: SUs per pod (default spine down-ports / nics_per_node)
  int planes = 1;
  int ufm_ports = 0;
  LinkSpeed speed;
  CableLengths cables;
  std::int64_t max_hosts = kDefaultMaxHosts; ///< resource bound on HCAs and switches (check_fabric_estimate)
};

/// Builds and validates the fabric; InputError with the reason and a working alternative otherwise.
Fabric build_rail_optimized(const RailOptimizedParams& p);

/// Closed-form bisection in Gb/s for the NICs of `p` (N·K·planes·b/2 · min(1, 1/r1 [, 1/(r1·r2)])).
double rail_optimized_bisection_gbps(const RailOptimizedParams& p);

/// The generator registry entry's parameter reader (keys: nodes, nics-per-node, su-nodes, radix, tiers,
/// oversubscription, pod-sus, planes, ufm-ports, rate, cable-m).
Fabric build_rail_optimized_from_params(const std::map<std::string, std::string>& kv);

} // namespace ibn::topo
