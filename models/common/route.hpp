#pragma once
// The route walk, one definition for both engines: from an HCA over its cable to its switch, then switch by
// switch through the port each switch chooses (its LFT entry, or an adaptive choice) until the destination
// HCA. The packet engine takes the same decision one hop at a time as packets arrive; the flow engine walks
// the whole route when a message starts.
#include "models/routing/routing.hpp"
#include "sim/error.hpp"
#include "topology/fabric.hpp"

#include <string>
#include <vector>

namespace ibn::common {

/// A cable crossed in one direction.
struct Hop {
  topo::LinkId link = topo::kNoLink;
  topo::NodeId from = 0; ///< the transmitting node
  bool operator==(const Hop&) const = default;
};

/// Longest route accepted before the walk reports a routing loop.
inline constexpr int kMaxRouteHops = 64;

/// Walks src -> dst. At each switch calls `choose(sw_index, sw_node)` for the output port (kNoPort: no
/// route), and for every cable crossed calls `visit(Hop)`, the HCA's own cable first. Throws InputError
/// naming the nodes when the source is not cabled, a switch has no port for dst, the route ends elsewhere or
/// loops.
template <typename ChooseFn, typename VisitFn>
void walk_route(const topo::Fabric& fabric, const routing::RoutingTables& tables, routing::HcaIndex src,
                routing::HcaIndex dst, ChooseFn&& choose, VisitFn&& visit) {
  const topo::NodeId src_node = tables.hca_nodes()[src];
  const topo::NodeId dst_node = tables.hca_nodes()[dst];
  auto where = [&] { return fabric.node(src_node).name + " to " + fabric.node(dst_node).name; };
  const topo::LinkId first = tables.hca_link(src);
  std::uint32_t sw = tables.hca_switch_index(src);
  if (first == topo::kNoLink || sw == routing::RoutingTables::kNone)
    throw InputError("route from " + where() + ": " + fabric.node(src_node).name +
                     " is not cabled to a switch");
  visit(Hop{first, src_node});
  for (int hop = 0; hop < kMaxRouteHops; ++hop) {
    const topo::NodeId sw_node = tables.switch_nodes()[sw];
    const routing::Port port = choose(sw, sw_node);
    const topo::LinkId l = port == routing::kNoPort ? topo::kNoLink : tables.link_at(sw, port);
    if (l == topo::kNoLink)
      throw InputError("no route from " + where() + " at switch " + fabric.node(sw_node).name);
    visit(Hop{l, sw_node});
    const topo::NodeId peer = tables.peer_at(sw, port);
    if (peer == dst_node) return;
    sw = tables.switch_index(peer);
    if (sw == routing::RoutingTables::kNone)
      throw InputError("route from " + where() + " ends at " + fabric.node(peer).name);
  }
  throw InputError("routing loop from " + where());
}

/// The static (LFT) route src -> dst as hops.
inline std::vector<Hop> static_route(const topo::Fabric& fabric, const routing::RoutingTables& tables,
                                     routing::HcaIndex src, routing::HcaIndex dst) {
  std::vector<Hop> out;
  walk_route(
      fabric, tables, src, dst,
      [&](std::uint32_t sw, topo::NodeId) { return tables.next_hop_by_index(sw, dst); },
      [&](const Hop& h) { out.push_back(h); });
  return out;
}

} // namespace ibn::common
