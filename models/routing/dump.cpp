#include "models/routing/dump.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

namespace ibn::routing {

namespace {

const std::string& label(const topo::Node& n) {
  return n.description.empty() ? n.name : n.description;
}

std::string hex(std::uint64_t v, int width) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%0*" PRIx64, width, v);
  return buf;
}

std::string port3(Port p) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%03u", static_cast<unsigned>(p));
  return buf;
}

} // namespace

std::size_t write_lft_dump(const topo::Fabric& f, const RoutingTables& t, std::ostream& out) {
  const LidMap& lids = t.lids();
  std::size_t synthetic = 0; // GUIDs printed that the fabric does not have (counted per row)
  std::vector<char> counted(f.num_nodes(), 0);
  // The node's GUID, or a synthetic one where the fabric carries none (kSyntheticGuidBase + NodeId + 1).
  auto guid = [&](topo::NodeId id) -> std::uint64_t {
    if (const std::uint64_t g = f.node(id).guid; g != 0) return g;
    if (!counted[id]) counted[id] = 1, ++synthetic;
    return kSyntheticGuidBase + id + 1;
  };
  // Destinations by LID.
  std::vector<std::pair<Lid, HcaIndex>> dests;
  dests.reserve(t.num_hcas());
  for (HcaIndex d = 0; d < t.num_hcas(); ++d) dests.emplace_back(t.lid_of_hca(d), d);
  std::sort(dests.begin(), dests.end());
  std::string block;
  for (const topo::NodeId sw : t.switch_nodes()) {
    const auto& n = f.node(sw);
    const std::uint32_t s = t.switch_index(sw);
    block.clear();
    block += "Unicast lids [0x0-" + hex(lids.max_lid(), 1) + "] of switch Lid " +
             std::to_string(lids.lid_of_node[sw]) + " guid " + hex(guid(sw), 16) + " (" + label(n) + "):\n";
    block += "  Lid  Out   Destination\n";
    block += "       Port     Info\n";
    std::size_t valid = 0;
    for (const auto& [lid, d] : dests) {
      const Port p = t.next_hop_by_index(s, d);
      if (p == kNoPort) continue;
      const auto& h = f.node(t.hca_nodes()[d]);
      block += hex(lid, 4) + " " + port3(p) + " : (Channel Adapter portguid " +
               hex(guid(t.hca_nodes()[d]), 16) + ": '" + label(h) + "')\n";
      ++valid;
    }
    block += std::to_string(valid) + " valid lids dumped\n";
    out << block;
  }
  return synthetic;
}

} // namespace ibn::routing
