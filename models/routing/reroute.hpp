#pragma once
// Rerouting around failed cables: what a subnet manager's heavy sweep does after a port goes down — the same
// routing algorithm run again on the fabric without the dead cables. Used by the packet engine's faults
// (models/packet/faults.hpp); usable on its own (e.g. to count flows per link after a failure).
#include "models/routing/routing.hpp"

#include <memory>
#include <vector>

namespace ibn::routing {

/// `f` without the cables marked in `failed` (indexed by LinkId; shorter vectors mean "not failed"): the same
/// nodes, NodeIds and port numbers; the remaining cables are renumbered in LinkId order.
topo::Fabric without_links(const topo::Fabric& f, const std::vector<bool>& failed);

/// Tables recomputed around failed cables and the fabric they were computed on (kept alive with them).
struct Rerouted {
  std::unique_ptr<topo::Fabric> fabric;
  RoutingTables tables;
};

/// Runs `algorithm` (a name of builtin_routing(), e.g. before.algorithm()) on `f` without the failed cables.
/// Throws InputError for an unknown algorithm or when the algorithm refuses the degraded fabric.
Rerouted reroute(const topo::Fabric& f, const std::vector<bool>& failed, const std::string& algorithm,
                 const RoutingOptions& opt = {});

} // namespace ibn::routing
