#pragma once
// Text dump of the LFTs in the layout `ibroute` (infiniband-diags) prints and OpenSM's LFT dumps resemble,
// one block per switch in NodeId order:
//
//   Unicast lids [0x0-0x10] of switch Lid 1 guid 0x0000000000000000 (leaf-0):
//     Lid  Out   Destination
//          Port     Info
//   0x0007 001 : (Channel Adapter portguid 0x0000000000000000: 'host-0')
//   ...
//   8 valid lids dumped
//
// Rows are the HCA destinations this switch has a route to, by LID. Names are the node description when
// the fabric has one (imported fabrics), else the node name; GUIDs are the fabric's (0 when unknown, as in
// generated fabrics). Switch LIDs are not listed: the tables do not route management traffic.
#include "models/routing/routing.hpp"

#include <iosfwd>

namespace ibn::routing {

void write_lft_dump(const topo::Fabric& f, const RoutingTables& t, std::ostream& out);

} // namespace ibn::routing
