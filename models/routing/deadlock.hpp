#pragma once
// Deadlock freedom of a routing: the channel dependency graph (Dally & Seitz) over every route the tables
// allow — the static LFT ports and every AR alternative — and a search for a cycle in it.
//
// A channel is (directed cable, VL). There is a dependency c1 -> c2 when some packet may take c2 right
// after c1: at the switch where c1 ends, c2's port is in the AR group (or is the LFT port, without AR) for
// a destination that packets on c1 are heading to. Cables from and to HCAs never lie on a cycle (nothing
// enters an injection channel, nothing leaves a delivery channel), so only switch-to-switch channels are
// kept. A cycle means a credit loop is possible: lossless links can deadlock. No cycle means deadlock
// freedom for that VL assignment.
//
// VLs come from a VlFunction applied hop by hop (the SL->VL mapping; the source HCA sends on VL
// vl(hop 0) with in_vl 0). single_vl(): VL0 everywhere. vl_per_global_hop(): +1 after every dragonfly
// global (inter-group) cable.
#include "models/routing/routing.hpp"

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace ibn::routing {

/// One hop of a packet: node `at` sends on `out_link`, having arrived on `in_link` (kNoLink at the source
/// HCA) on VL `in_vl` (0 at the source).
struct HopContext {
  const topo::Fabric& fabric;
  topo::NodeId at;
  topo::LinkId in_link;
  int in_vl;
  topo::LinkId out_link;
};
/// Returns the VL (0..15) of the hop.
using VlFunction = std::function<int(const HopContext&)>;

VlFunction single_vl();
/// in_vl + 1 when in_link joins two switches of different dragonfly groups (both `group` >= 0), else in_vl.
VlFunction vl_per_global_hop();
/// The VL function of the tables' VlRule.
VlFunction vl_function(VlRule rule);

inline constexpr int kMaxVls = 16;

struct DeadlockReport {
  bool deadlock_free = true;
  /// A dependency cycle, one channel per entry in dependency order (each waits on the next, the last on
  /// the first): "switch leaf-0 port 5 -> switch spine-1 port 1 (VL0)".
  std::vector<std::string> cycle;
  std::size_t channels = 0;     ///< switch-to-switch channels in use
  std::size_t dependencies = 0; ///< distinct edges of the dependency graph
  int vls_used = 0;             ///< highest VL seen + 1
};

/// Checks every route of `tables` (static and, with include_ar, every AR alternative) under `vl`.
/// Throws std::invalid_argument if `vl` returns a VL outside 0..15.
DeadlockReport check_deadlock_free(const topo::Fabric& f, const RoutingTables& tables, const VlFunction& vl,
                                   bool include_ar = true);

/// The same over explicit paths (e.g. Valiant paths), each starting at an HCA's cable as route() returns.
DeadlockReport check_deadlock_free_paths(const topo::Fabric& f,
                                         const std::vector<std::vector<topo::LinkId>>& paths,
                                         const VlFunction& vl);

} // namespace ibn::routing
