#pragma once
// Text dump of the LFTs in the layout `ibroute` (infiniband-diags) prints and OpenSM's LFT dumps resemble,
// one block per switch in NodeId order:
//
//   Unicast lids [0x0-0x10] of switch Lid 1 guid 0x1000000000000001 (leaf-0):
//     Lid  Out   Destination
//          Port     Info
//   0x0007 001 : (Channel Adapter portguid 0x1000000000000007: 'host-0')
//   ...
//   8 valid lids dumped
//
// Rows are the HCA destinations this switch has a route to, by LID. Names are the node description when
// the fabric has one (imported fabrics), else the node name; GUIDs are the fabric's, or synthetic where it
// has none (generated fabrics): kSyntheticGuidBase + NodeId + 1, so that every node has a distinct one (tools
// that key on GUIDs saw 0 for all). Switch LIDs are not listed: the tables do not route management traffic.
#include "models/routing/routing.hpp"

#include <cstddef>
#include <cstdint>
#include <iosfwd>

namespace ibn::routing {

inline constexpr std::uint64_t kSyntheticGuidBase = 0x1000000000000000ull;

/// Writes the dump; returns how many nodes it gave a synthetic GUID.
std::size_t write_lft_dump(const topo::Fabric& f, const RoutingTables& t, std::ostream& out);

} // namespace ibn::routing
