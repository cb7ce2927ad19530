#include "topology/fabric.hpp"

#include "sim/error.hpp"

#include <algorithm>
#include <cmath>
#include <queue>
#include <set>
#include <unordered_map>

namespace ibn::topo {

std::string to_string(NodeKind k) {
  switch (k) {
  case NodeKind::Hca: return "hca";
  case NodeKind::Switch: return "switch";
  case NodeKind::Router: return "router";
  case NodeKind::Aggregator: return "aggregator";
  }
  return "?";
}

std::string to_string(Medium m) { return m == Medium::Dac ? "dac" : "fiber"; }

Medium parse_medium(const std::string& text, const std::string& what) {
  if (text == "dac" || text == "copper") return Medium::Dac;
  if (text == "fiber" || text == "fibre" || text == "aoc") return Medium::Fiber;
  throw InputError(what + ": unknown cable medium '" + text + "' (expected dac or fiber)");
}

std::int64_t propagation_ps_per_m(Medium m) { return m == Medium::Dac ? 4760 : 5130; }

Link make_link(PortRef a, PortRef b, LinkSpeed speed, double length_m, Medium medium) {
  Link l;
  l.a = a;
  l.b = b;
  l.speed = speed;
  l.length_m = length_m;
  l.medium = medium;
  l.latency = Time::ps(std::llround(length_m * static_cast<double>(propagation_ps_per_m(medium))));
  return l;
}

NodeId Fabric::add_node(Node n) {
  if (n.radix < 1) throw InputError("node '" + n.name + "': radix must be at least 1");
  const auto id = static_cast<NodeId>(nodes_.size());
  ports_.emplace_back(static_cast<std::size_t>(n.radix), kNoLink);
  nodes_.push_back(std::move(n));
  boost::add_vertex(graph_);
  return id;
}

LinkId Fabric::add_link(const Link& l) {
  auto check = [&](const PortRef& p) {
    if (p.node >= nodes_.size()) throw InputError("link refers to unknown node id " + std::to_string(p.node));
    const Node& n = nodes_[p.node];
    if (p.port < 1 || p.port > n.radix)
      throw InputError("node '" + n.name + "': port " + std::to_string(p.port) + " is outside 1.." +
                       std::to_string(n.radix));
    if (ports_[p.node][static_cast<std::size_t>(p.port - 1)] != kNoLink)
      throw InputError("node '" + n.name + "': port " + std::to_string(p.port) + " is cabled twice");
  };
  check(l.a);
  check(l.b);
  if (l.a.node == l.b.node) throw InputError("node '" + nodes_[l.a.node].name + "': self-loop cable");
  const auto id = static_cast<LinkId>(links_.size());
  links_.push_back(l);
  ports_[l.a.node][static_cast<std::size_t>(l.a.port - 1)] = id;
  ports_[l.b.node][static_cast<std::size_t>(l.b.port - 1)] = id;
  boost::add_edge(l.a.node, l.b.node, id, graph_);
  return id;
}

std::optional<LinkId> Fabric::link_at(NodeId node, int port) const {
  const auto& p = ports_.at(node);
  if (port < 1 || port > static_cast<int>(p.size())) return std::nullopt;
  const LinkId l = p[static_cast<std::size_t>(port - 1)];
  if (l == kNoLink) return std::nullopt;
  return l;
}

std::vector<LinkId> Fabric::links_of(NodeId node) const {
  std::vector<LinkId> r;
  for (LinkId l : ports_.at(node))
    if (l != kNoLink) r.push_back(l);
  return r;
}

std::optional<NodeId> Fabric::find_node(const std::string& n) const {
  for (NodeId i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].name == n) return i;
  return std::nullopt;
}

std::vector<NodeId> Fabric::hcas() const {
  std::vector<NodeId> r;
  for (NodeId i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].kind == NodeKind::Hca) r.push_back(i);
  return r;
}

std::vector<NodeId> Fabric::switches() const {
  std::vector<NodeId> r;
  for (NodeId i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].kind == NodeKind::Switch || nodes_[i].kind == NodeKind::Router) r.push_back(i);
  return r;
}

std::size_t Fabric::num_hosts() const {
  std::set<int> hosts;
  std::size_t unowned = 0;
  for (const Node& n : nodes_) {
    if (n.kind != NodeKind::Hca) continue;
    if (n.host < 0) ++unowned;
    else hosts.insert(n.host);
  }
  return hosts.size() + unowned;
}

int Fabric::max_tier() const {
  int t = 0;
  for (const Node& n : nodes_) t = std::max(t, n.tier);
  return t;
}

std::vector<int> Fabric::components() const {
  std::vector<int> comp(nodes_.size(), -1);
  int components = 0;
  for (NodeId start = 0; start < nodes_.size(); ++start) {
    if (comp[start] >= 0) continue;
    const int c = components++;
    std::queue<NodeId> q;
    q.push(start);
    comp[start] = c;
    while (!q.empty()) {
      const NodeId n = q.front();
      q.pop();
      for (LinkId l : ports_[n]) {
        if (l == kNoLink) continue;
        const NodeId m = links_[l].other(n);
        if (comp[m] < 0) {
          comp[m] = c;
          q.push(m);
        }
      }
    }
  }
  return comp;
}

void Fabric::validate() const {
  if (nodes_.empty()) throw InputError("fabric has no nodes");
  std::unordered_map<std::string, NodeId> names;
  names.reserve(nodes_.size());
  for (NodeId i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].name.empty()) throw InputError("node " + std::to_string(i) + " has no name");
    if (!names.emplace(nodes_[i].name, i).second)
      throw InputError("node name '" + nodes_[i].name + "' is used twice");
  }
  for (const Link& l : links_) {
    if (l.a.node == l.b.node) throw InputError("node '" + nodes_[l.a.node].name + "': self-loop cable");
    if (l.length_m < 0) throw InputError("cable at '" + nodes_[l.a.node].name + "' has a negative length");
  }
  // Connectivity: all nodes of one plane (rail) must lie in one connected component. A single-plane fabric
  // must therefore be connected as a whole; K separate planes may form K components.
  const std::vector<int> comp = components();
  const int components = comp.empty() ? 0 : *std::max_element(comp.begin(), comp.end()) + 1;
  std::unordered_map<int, int> component_of_plane;
  for (NodeId i = 0; i < nodes_.size(); ++i) {
    auto [it, fresh] = component_of_plane.emplace(nodes_[i].plane, comp[i]);
    if (!fresh && it->second != comp[i]) {
      NodeId first = 0;
      while (nodes_[first].plane != nodes_[i].plane) ++first;
      throw InputError("fabric is not connected: node '" + nodes_[i].name + "' cannot be reached from '" +
                       nodes_[first].name + "'" +
                       (component_of_plane.size() > 1 ? " (plane " + std::to_string(nodes_[i].plane) + ")" : "") +
                       "; " + std::to_string(components) + " connected components");
    }
  }
}

CableDirections cable_directions_by_tier(const Fabric& f) {
  constexpr int kTiers = 8; // tiers 0..7 counted in a table, others (none today) in `out` directly
  std::uint64_t table[kTiers][kTiers] = {};
  CableDirections out;
  auto count = [&](int from, int to) {
    if (from >= 0 && from < kTiers && to >= 0 && to < kTiers) return void(++table[from][to]);
    for (auto& [tiers, n] : out)
      if (tiers.first == from && tiers.second == to) return void(++n);
    out.push_back({{from, to}, 1});
  };
  for (const Link& link : f.links()) {
    const int ta = f.node(link.a.node).tier, tb = f.node(link.b.node).tier;
    count(ta, tb);
    count(tb, ta);
  }
  for (int a = 0; a < kTiers; ++a)
    for (int b = 0; b < kTiers; ++b)
      if (table[a][b] > 0) out.push_back({{a, b}, table[a][b]});
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace ibn::topo
