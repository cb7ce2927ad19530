#include "models/routing/dragonfly.hpp"
#include "models/routing/routing.hpp"
#include "sim/error.hpp"

#include <algorithm>
#include <sstream>

namespace ibn::routing {

using topo::kNoLink;
using topo::kNoNode;
using topo::LinkId;
using topo::NodeId;

LidMap assign_lids(const topo::Fabric& f) {
  LidMap m;
  const std::size_t n = f.num_nodes();
  m.lid_of_node.assign(n, 0);
  Lid max_given = 0;
  for (NodeId i = 0; i < n; ++i) {
    const int lid = f.node(i).lid;
    if (lid < 0) throw InputError("node '" + f.node(i).name + "' has a negative LID " + std::to_string(lid));
    max_given = std::max(max_given, static_cast<Lid>(lid));
  }
  m.node_of_lid.assign(static_cast<std::size_t>(max_given) + 1, kNoNode);
  for (NodeId i = 0; i < n; ++i) {
    const auto lid = static_cast<Lid>(f.node(i).lid);
    if (lid == 0) continue;
    if (m.node_of_lid[lid] != kNoNode)
      throw InputError("LID " + std::to_string(lid) + " is carried by both '" +
                       f.node(m.node_of_lid[lid]).name + "' and '" + f.node(i).name + "'");
    m.node_of_lid[lid] = i;
    m.lid_of_node[i] = lid;
  }
  Lid next = max_given + 1;
  for (NodeId i = 0; i < n; ++i)
    if (m.lid_of_node[i] == 0) {
      m.lid_of_node[i] = next++;
      m.node_of_lid.push_back(i);
    }
  return m;
}

std::string to_string(VlRule r) {
  return r == VlRule::Single ? "single VL" : "VL + 1 per global hop";
}

ArGroupView::ArGroupView(std::span<const Port> set, Port static_port) : set_(set), static_(static_port) {
  const auto it = std::find(set_.begin(), set_.end(), static_port);
  static_pos_ = static_cast<std::size_t>(it - set_.begin());
}

bool ArGroupView::contains(Port p) const {
  return std::find(set_.begin(), set_.end(), p) != set_.end();
}

std::vector<Port> ArGroupView::to_vector() const {
  return {begin(), end()};
}

RoutingTables::RoutingTables() = default;
RoutingTables::~RoutingTables() = default;
RoutingTables::RoutingTables(RoutingTables&&) noexcept = default;
RoutingTables& RoutingTables::operator=(RoutingTables&&) noexcept = default;

std::optional<HcaIndex> RoutingTables::hca_index(NodeId hca) const {
  if (hca >= hca_of_node_.size() || hca_of_node_[hca] == kNone) return std::nullopt;
  return hca_of_node_[hca];
}

std::optional<HcaIndex> RoutingTables::hca_of_lid(Lid lid) const {
  if (lid >= lids_.node_of_lid.size()) return std::nullopt;
  const NodeId n = lids_.node_of_lid[lid];
  if (n == kNoNode) return std::nullopt;
  return hca_index(n);
}

Port RoutingTables::next_hop_by_index(std::uint32_t s, HcaIndex d) const {
  const HcaEntry& h = hca_[d];
  if (h.sw == s) return h.port;
  const std::uint32_t c = h.cls;
  if (c == kNone) return kNoPort;
  const std::uint32_t gid = group_of_[s * num_classes_ + c];
  if (gid == kNone) return kNoPort;
  switch (storage_) {
  case StaticStorage::Dense8:
    return static8_[static_cast<std::size_t>(s) * hca_nodes_.size() + d];
  case StaticStorage::Dense16:
    return static16_[static_cast<std::size_t>(s) * hca_nodes_.size() + d];
  case StaticStorage::DmodK: {
    const Group& g = groups_[gid];
    return group_ports_[g.offset + (h.rank / g.divisor) % g.size];
  }
  }
  return kNoPort;
}

Port RoutingTables::next_hop(NodeId sw, HcaIndex d) const {
  const std::uint32_t s = switch_index(sw);
  if (s == kNone || d >= hca_nodes_.size()) return kNoPort;
  return next_hop_by_index(s, d);
}

ArGroupView RoutingTables::ar_group(NodeId sw, HcaIndex d) const {
  const std::uint32_t s = switch_index(sw);
  if (s == kNone || d >= hca_nodes_.size()) return {};
  const HcaEntry& h = hca_[d];
  if (h.sw == s) return ArGroupView({&h.port, 1}, h.port);
  const std::uint32_t c = h.cls;
  if (c == kNone) return {};
  const std::uint32_t gid = group_of_[s * num_classes_ + c];
  if (gid == kNone) return {};
  const Group& g = groups_[gid];
  return ArGroupView({group_ports_.data() + g.offset, g.size}, next_hop_by_index(s, d));
}

LinkId RoutingTables::link_at(std::uint32_t s, Port port) const {
  if (port == kNoPort || port_base_[s] + port - 1u >= port_base_[s + 1]) return kNoLink;
  return port_link_[port_base_[s] + port - 1u];
}

NodeId RoutingTables::peer_at(std::uint32_t s, Port port) const {
  if (port == kNoPort || port_base_[s] + port - 1u >= port_base_[s + 1]) return kNoNode;
  return port_peer_[port_base_[s] + port - 1u];
}

namespace {
[[noreturn]] void no_route(const std::string& algo, HcaIndex src, HcaIndex dst, const std::string& why) {
  throw InputError("no route from HCA " + std::to_string(src) + " to HCA " + std::to_string(dst) + " (" +
                   algo + "): " + why);
}
} // namespace

bool RoutingTables::reachable(HcaIndex src, HcaIndex dst) const {
  if (src >= hca_nodes_.size() || dst >= hca_nodes_.size()) return false;
  if (src == dst) return true;
  std::uint32_t s = hca_[src].sw;
  if (s == kNone) return false;
  for (std::size_t hops = 0; hops <= sw_nodes_.size(); ++hops) {
    const Port p = next_hop_by_index(s, dst);
    if (p == kNoPort) return false;
    const NodeId peer = peer_at(s, p);
    if (peer == hca_nodes_[dst]) return true;
    if (peer == kNoNode || sw_of_node_[peer] == kNone) return false;
    s = sw_of_node_[peer];
  }
  return false;
}

std::vector<LinkId> RoutingTables::route(HcaIndex src, HcaIndex dst) const {
  if (src >= hca_nodes_.size() || dst >= hca_nodes_.size())
    throw InputError("route: HCA index out of range (the fabric has " + std::to_string(hca_nodes_.size()) +
                     " HCAs)");
  std::vector<LinkId> path;
  if (src == dst) return path;
  std::uint32_t s = hca_[src].sw;
  if (s == kNone) no_route(algorithm_, src, dst, "the source is not cabled to a switch");
  path.push_back(hca_link_[src]);
  for (std::size_t hops = 0; hops <= sw_nodes_.size(); ++hops) {
    const Port p = next_hop_by_index(s, dst);
    if (p == kNoPort)
      no_route(algorithm_, src, dst, "switch has no entry for the destination (another plane?)");
    path.push_back(link_at(s, p));
    const NodeId peer = peer_at(s, p);
    if (peer == hca_nodes_[dst]) return path;
    if (peer == kNoNode || sw_of_node_[peer] == kNone)
      no_route(algorithm_, src, dst, "the LFT leads to an HCA that is not the destination");
    s = sw_of_node_[peer];
  }
  no_route(algorithm_, src, dst, "routing loop");
}

std::vector<LinkId> RoutingTables::route_nodes(NodeId src, NodeId dst) const {
  const auto s = hca_index(src), d = hca_index(dst);
  if (!s || !d) throw InputError("route: both ends must be HCAs");
  return route(*s, *d);
}

std::size_t RoutingTables::memory_bytes() const {
  auto bytes = [](const auto& v) { return v.capacity() * sizeof(v[0]); };
  std::size_t b = bytes(lids_.lid_of_node) + bytes(lids_.node_of_lid) + bytes(sw_nodes_) +
                  bytes(sw_of_node_) + bytes(port_base_) + bytes(port_link_) + bytes(port_peer_) +
                  bytes(hca_nodes_) + bytes(hca_of_node_) + bytes(hca_) + bytes(hca_link_) +
                  bytes(group_of_) + bytes(groups_) + bytes(group_ports_) + bytes(static8_) +
                  bytes(static16_);
  if (df_)
    b += bytes(df_->group_of_switch) + bytes(df_->index_in_group) + bytes(df_->cable_offset) +
         bytes(df_->cables) + bytes(df_->local_port);
  return b;
}

std::string RoutingTables::storage_description() const {
  std::ostringstream s;
  switch (storage_) {
  case StaticStorage::Dense8:
    s << "dense uint8 LFT (" << static8_.size() << " entries)";
    break;
  case StaticStorage::Dense16:
    s << "dense uint16 LFT (" << static16_.size() << " entries)";
    break;
  case StaticStorage::DmodK:
    s << "D-mod-k rule (no per-destination LFT storage)";
    break;
  }
  s << "; " << groups_.size() << " AR port sets over " << sw_nodes_.size() << " switches x " << num_classes_
    << " leaves; " << memory_bytes() / (1024.0 * 1024.0) << " MiB";
  return s.str();
}

} // namespace ibn::routing
