#include "topology/ibnetdiscover.hpp"

#include "sim/atomic_file.hpp"
#include "sim/error.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <istream>
#include <limits>
#include <map>
#include <optional>
#include <ostream>
#include <queue>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "topology/ibnetdiscover_parse.hpp"
#include "topology/switch_models.hpp"

namespace ibn::topo {
namespace {

using namespace ibnd;

// ---------------------------------------------------------------------------------------------------------
// Building the fabric

/// A node to be: a switch/router device, or one port of a channel adapter. `variant` > 0 when the file
/// cables the same port twice to different peers and the importer keeps the extra cable on a copy.
struct Rec {
  std::size_t dev = 0;
  int ca_port = 0; ///< CA port number as in the file; 0 for switches and routers
  int variant = 0;
  int lid = 0;
};

class Builder {
 public:
  Builder(ParseResult& p, std::string source) : p_(p), src_(std::move(source)) {}
  ImportResult run();

 private:
  ParseResult& p_;
  std::string src_;
  std::vector<Rec> recs_;
  std::map<std::pair<std::size_t, int>, std::vector<std::size_t>> variants_; // (dev, ca_port) -> recs
  struct Slot {
    std::size_t rec; ///< the peer
    int port;        ///< the peer's node port
    std::size_t cable;
  };
  std::map<std::pair<std::size_t, int>, Slot> occupied_; // (rec, node port) -> peer
  struct Cable {
    std::size_t ra, rb;
    int pa, pb;
    std::size_t sighting;
  };
  std::vector<Cable> cables_;

  void warn(std::size_t line, const std::string& msg) { p_.warnings.push_back(at_line(src_, line, msg)); }
  void warn(const std::string& msg) { p_.warnings.push_back(src_ + ": " + msg); }

  std::size_t new_rec(std::size_t dev, int ca_port) {
    auto& v = variants_[{dev, ca_port}];
    recs_.push_back(Rec{dev, ca_port, static_cast<int>(v.size()), 0});
    v.push_back(recs_.size() - 1);
    return recs_.size() - 1;
  }
  int node_port(const End& e) const { return is_ca(p_.devices[e.dev]) ? 1 : e.port; }
  int ca_port(const End& e) const { return is_ca(p_.devices[e.dev]) ? e.port : 0; }

  struct Resolved {
    std::size_t rec = kNone;
    bool matched = false; ///< this port already carries the same cable
    std::optional<Slot> conflict;
  };
  Resolved resolve(const End& e, const End& peer);
  void resolve_cables();
  std::string label(std::size_t rec) const;
};

Builder::Resolved Builder::resolve(const End& e, const End& peer) {
  auto& list = variants_[{e.dev, ca_port(e)}];
  const int np = node_port(e);
  Resolved r;
  std::optional<Slot> first_conflict;
  for (std::size_t rec : list) {
    auto it = occupied_.find({rec, np});
    if (it == occupied_.end()) {
      if (r.rec == kNone) r.rec = rec;
      continue;
    }
    const Rec& other = recs_[it->second.rec];
    if (other.dev == peer.dev && other.ca_port == ca_port(peer) && it->second.port == node_port(peer)) {
      r.rec = rec;
      r.matched = true;
      r.conflict.reset();
      return r;
    }
    if (!first_conflict) first_conflict = it->second;
  }
  if (r.rec == kNone) r.conflict = first_conflict; // every copy of this port is busy (or none exists yet)
  return r;
}

std::string Builder::label(std::size_t rec) const {
  const Rec& r = recs_[rec];
  const Device& d = p_.devices[r.dev];
  return "'" + (d.desc.empty() ? d.id : d.desc) + "' (" + d.id + ")";
}

void Builder::resolve_cables() {
  for (std::size_t si = 0; si < p_.sightings.size(); ++si) {
    const Sighting& s = p_.sightings[si];
    if (s.a.dev == s.b.dev && ca_port(s.a) == ca_port(s.b)) {
      warn(s.line, "cable from " + p_.devices[s.a.dev].id + " port " + std::to_string(s.a.port) +
                       " to itself (port " + std::to_string(s.b.port) + ") ignored");
      continue;
    }
    Resolved ra = resolve(s.a, s.b);
    if (ra.matched) {
      // Seen before from the other side (or twice): the same cable.
      const Slot& slot = occupied_.at({ra.rec, node_port(s.a)});
      const Cable& c = cables_[slot.cable];
      const Sighting& first = p_.sightings[c.sighting];
      if (!(first.speed == s.speed))
        warn(s.line, "cable " + p_.devices[s.a.dev].id + "[" + std::to_string(s.a.port) + "] - " +
                         p_.devices[s.b.dev].id + "[" + std::to_string(s.b.port) + "] is " +
                         s.speed.to_string() + " here but " + first.speed.to_string() + " on line " +
                         std::to_string(first.line) + "; keeping " + first.speed.to_string());
      continue;
    }
    Resolved rb = resolve(s.b, s.a);
    if (rb.matched) continue; // cannot happen (occupancy is symmetric); never cable a port twice
    auto place = [&](const End& e, Resolved& r) {
      if (r.rec != kNone) return;
      r.rec = new_rec(e.dev, ca_port(e));
      if (r.conflict) {
        const Cable& c = cables_[r.conflict->cable];
        const Sighting& prev = p_.sightings[c.sighting];
        const Rec& other = recs_[r.conflict->rec];
        warn(s.line, "port " + std::to_string(e.port) + " of " + label(r.rec) + " is already cabled to " +
                         label(r.conflict->rec) + " port " +
                         std::to_string(other.ca_port ? other.ca_port : r.conflict->port) + " (line " +
                         std::to_string(prev.line) + "); keeping this cable on a second node for it");
      }
    };
    place(s.a, ra);
    place(s.b, rb);
    const std::size_t cable = cables_.size();
    cables_.push_back(Cable{ra.rec, rb.rec, node_port(s.a), node_port(s.b), si});
    occupied_[{ra.rec, node_port(s.a)}] = Slot{rb.rec, node_port(s.b), cable};
    occupied_[{rb.rec, node_port(s.b)}] = Slot{ra.rec, node_port(s.a), cable};
    Rec& a = recs_[ra.rec];
    Rec& b = recs_[rb.rec];
    if (a.lid == 0) a.lid = s.a.lid;
    if (b.lid == 0) b.lid = s.b.lid;
  }
}

/// Switch-like nodes forward traffic; HCAs and aggregation nodes are endpoints.
bool forwards(NodeKind k) {
  return k == NodeKind::Switch || k == NodeKind::Router;
}

/// Tiers from the graph: endpoints 0, switches with HCAs 1 (unless they act as a spine), others one more
/// than their switch-hop distance to the nearest leaf.
void infer_tiers(Fabric& f, const std::vector<bool>& tier_fixed, const std::string& src,
                 std::vector<std::string>& warnings) {
  const std::size_t n = f.num_nodes();
  std::vector<int> hca_cables(n, 0), switch_cables(n, 0);
  for (const Link& l : f.links()) {
    const NodeKind ka = f.node(l.a.node).kind, kb = f.node(l.b.node).kind;
    auto count = [&](NodeId self, NodeKind self_kind, NodeKind peer_kind) {
      if (!forwards(self_kind)) return;
      if (peer_kind == NodeKind::Hca)
        ++hca_cables[self];
      else if (forwards(peer_kind))
        ++switch_cables[self];
    };
    count(l.a.node, ka, kb);
    count(l.b.node, kb, ka);
  }
  std::vector<bool> candidate(n, false), spine_like(n, false), leaf(n, false);
  bool any_real_leaf = false;
  for (NodeId i = 0; i < n; ++i)
    if (forwards(f.node(i).kind) && hca_cables[i] > 0) {
      candidate[i] = true;
      spine_like[i] = switch_cables[i] > hca_cables[i];
    }
  for (NodeId i = 0; i < n; ++i) {
    if (!candidate[i]) continue;
    bool next_to_leaf = false;
    for (LinkId l : f.links_of(i)) {
      const NodeId m = f.link(l).other(i);
      if (candidate[m] && !spine_like[m]) next_to_leaf = true;
    }
    leaf[i] = !(spine_like[i] && next_to_leaf);
    any_real_leaf = any_real_leaf || leaf[i];
  }
  if (!any_real_leaf) leaf = candidate;

  // Multi-source BFS over switch-to-switch cables from the leaves.
  std::vector<int> dist(n, -1);
  std::queue<NodeId> q;
  for (NodeId i = 0; i < n; ++i)
    if (leaf[i]) {
      dist[i] = 0;
      q.push(i);
    }
  while (!q.empty()) {
    const NodeId u = q.front();
    q.pop();
    for (LinkId l : f.links_of(u)) {
      const NodeId v = f.link(l).other(u);
      if (forwards(f.node(v).kind) && dist[v] < 0) {
        dist[v] = dist[u] + 1;
        q.push(v);
      }
    }
  }
  std::size_t unreachable = 0;
  std::string first_unreachable;
  for (NodeId i = 0; i < n; ++i) {
    Node& node = f.mutable_node(i);
    if (tier_fixed[i]) continue;
    if (!forwards(node.kind)) {
      node.tier = 0;
      continue;
    }
    if (dist[i] < 0) {
      node.tier = 1;
      if (unreachable++ == 0) first_unreachable = node.name;
      continue;
    }
    node.tier = 1 + dist[i];
    if (candidate[i] && !leaf[i])
      warnings.push_back(src + ": switch '" + node.name + "' has " + std::to_string(hca_cables[i]) +
                         " HCA cable(s) but " + std::to_string(switch_cables[i]) +
                         " cables to other switches and is cabled to leaves: treated as a spine (tier " +
                         std::to_string(node.tier) + ")");
  }
  if (unreachable > 0)
    warnings.push_back(src + ": " + std::to_string(unreachable) +
                       " switch(es) have no path to an HCA (e.g. '" + first_unreachable +
                       "'); placed at tier 1");
}

std::size_t count_components(const Fabric& f, std::size_t& largest) {
  const std::size_t n = f.num_nodes();
  std::vector<char> seen(n, 0);
  std::size_t comps = 0;
  largest = 0;
  for (NodeId s = 0; s < n; ++s) {
    if (seen[s]) continue;
    ++comps;
    std::size_t size = 0;
    std::queue<NodeId> q;
    q.push(s);
    seen[s] = 1;
    while (!q.empty()) {
      const NodeId u = q.front();
      q.pop();
      ++size;
      for (LinkId l : f.links_of(u)) {
        const NodeId v = f.link(l).other(u);
        if (!seen[v]) {
          seen[v] = 1;
          q.push(v);
        }
      }
    }
    largest = std::max(largest, size);
  }
  return comps;
}

std::string fmt_ns(double ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", ns);
  return buf;
}

/// Default NodeDescriptions of unconfigured adapters ("MT25408 ConnectX Mellanox Technologies") say nothing
/// about the server.
bool default_ca_description(std::string_view desc) {
  return desc.empty() || contains_ci(desc, "Mellanox Technologies") ||
         (desc.size() > 2 && desc[0] == 'M' && desc[1] == 'T' && is_digit(desc[2]));
}

ImportResult Builder::run() {
  resolve_cables();
  // Every device becomes at least one node, cabled or not.
  for (std::size_t d = 0; d < p_.devices.size(); ++d) {
    bool has = false;
    for (auto it = variants_.lower_bound({d, 0}); it != variants_.end() && it->first.first == d; ++it)
      has = has || !it->second.empty();
    if (!has) new_rec(d, is_ca(p_.devices[d]) ? 1 : 0);
  }
  // Node order: devices in block order (then first mention), CA ports ascending, variants last.
  std::vector<std::size_t> order(recs_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto key = [&](std::size_t i) {
    const Rec& r = recs_[i];
    const Device& d = p_.devices[r.dev];
    return std::make_tuple(d.block_seq, d.first_seq, r.ca_port, r.variant);
  };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return key(x) < key(y); });
  std::vector<NodeId> node_of(recs_.size());
  for (std::size_t i = 0; i < order.size(); ++i) node_of[order[i]] = static_cast<NodeId>(i);

  // Node fields.
  const std::size_t n = order.size();
  std::vector<Node> nodes(n);
  std::vector<const Annotation*> ann(n, nullptr);
  std::vector<std::string> base(n), guid_text(n);
  std::set<std::size_t> radix_warned;
  for (std::size_t i = 0; i < n; ++i) {
    const Rec& r = recs_[order[i]];
    const Device& d = p_.devices[r.dev];
    Node& node = nodes[i];
    if (r.variant == 0)
      if (auto it = d.annotations.find(r.ca_port); it != d.annotations.end()) ann[i] = &it->second;
    node.kind = d.letter == 'S' ? NodeKind::Switch : (d.letter == 'R' ? NodeKind::Router : NodeKind::Hca);
    if (node.kind == NodeKind::Hca && contains_ci(d.desc, "Aggregation Node"))
      node.kind = NodeKind::Aggregator;
    node.guid = d.guid;
    node.description = d.desc;
    node.lid = r.lid != 0 ? r.lid : d.lid;
    if (is_ca(d)) {
      node.radix = 1;
    } else {
      node.radix = std::max({d.declared_ports, d.max_port, 1});
      if (d.declared_ports > 0 && d.max_port > d.declared_ports && radix_warned.insert(r.dev).second)
        warn(d.block_line, "'" + d.desc + "' declares " + std::to_string(d.declared_ports) +
                               " ports but port " + std::to_string(d.max_port) + " is cabled; radix " +
                               std::to_string(d.max_port) + " used");
    }
    base[i] = d.desc.empty() ? d.id : d.desc;
    guid_text[i] = d.guid != 0 ? "0x" + hex16(d.guid) : d.id.substr(2);
    if (const Annotation* a = ann[i]) {
      if (a->kind) node.kind = *a->kind;
      if (a->description) node.description = *a->description;
      if (a->guid) node.guid = *a->guid;
      if (a->plane) node.plane = *a->plane;
      if (a->group) node.group = *a->group;
    }
  }

  // Names: the description when unique; otherwise add the GUID, then the CA port, then "#k".
  std::vector<std::string> names(n);
  std::vector<bool> fixed(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    names[i] = base[i];
    if (ann[i] && ann[i]->name) {
      names[i] = *ann[i]->name;
      fixed[i] = true;
    }
  }
  auto colliding = [&]() {
    std::map<std::string, std::vector<std::size_t>> by;
    for (std::size_t i = 0; i < n; ++i) by[names[i]].push_back(i);
    std::vector<std::vector<std::size_t>> groups;
    for (auto& [nm, g] : by) {
      (void)nm;
      if (g.size() > 1) groups.push_back(g);
    }
    return groups;
  };
  for (const auto& g : colliding())
    for (std::size_t i : g)
      if (!fixed[i]) names[i] += " (" + guid_text[i] + ")";
  for (const auto& g : colliding()) {
    std::set<int> ports;
    for (std::size_t i : g) ports.insert(recs_[order[i]].ca_port);
    if (ports.size() > 1)
      for (std::size_t i : g)
        if (!fixed[i] && recs_[order[i]].ca_port > 0)
          names[i] += " port " + std::to_string(recs_[order[i]].ca_port);
  }
  {
    std::set<std::string> used;
    for (std::size_t i = 0; i < n; ++i)
      if (fixed[i]) used.insert(names[i]);
    for (std::size_t i = 0; i < n; ++i) {
      if (fixed[i]) continue;
      if (used.insert(names[i]).second) continue;
      for (int k = 2;; ++k) {
        const std::string cand = names[i] + " #" + std::to_string(k);
        if (used.insert(cand).second) {
          names[i] = cand;
          break;
        }
      }
    }
    // Annotated names that collide among themselves (hand-edited files).
    std::set<std::string> seen;
    for (std::size_t i = 0; i < n; ++i) {
      if (seen.insert(names[i]).second) continue;
      for (int k = 2;; ++k) {
        const std::string cand = names[i] + " #" + std::to_string(k);
        if (!used.count(cand) && seen.insert(cand).second) {
          names[i] = cand;
          used.insert(cand);
          break;
        }
      }
    }
  }
  for (std::size_t i = 0; i < n; ++i) nodes[i].name = names[i];

  // Hosts: HCA ports of the same server (first word of the description) share a host index.
  int next_host = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (ann[i] && ann[i]->host) next_host = std::max(next_host, *ann[i]->host + 1);
  std::map<std::string, int> host_of;
  for (std::size_t i = 0; i < n; ++i) {
    Node& node = nodes[i];
    if (ann[i] && ann[i]->host) {
      node.host = *ann[i]->host;
      continue;
    }
    if (node.kind != NodeKind::Hca) continue;
    const Rec& r = recs_[order[i]];
    const Device& d = p_.devices[r.dev];
    std::string hk;
    if (default_ca_description(d.desc))
      hk = "\x1f" + d.id + "\x1f" + d.desc;
    else {
      Cursor c(d.desc);
      hk = std::string(c.token());
    }
    auto [it, inserted] = host_of.emplace(hk, next_host);
    if (inserted) ++next_host;
    node.host = it->second;
  }

  ImportResult out;
  Fabric& f = out.fabric;
  for (Node& node : nodes) f.add_node(std::move(node));
  // A cable's length and medium as the exporter's annotations give them (either end), else the defaults.
  auto annotated_cable = [&](const End& e) -> const std::pair<double, Medium>* {
    for (const auto& [port, a] : p_.devices[e.dev].annotations) {
      (void)port;
      if (auto it = a.cables.find(e.port); it != a.cables.end()) return &it->second;
    }
    return nullptr;
  };
  for (const Cable& c : cables_) {
    const NodeId a = node_of[c.ra], b = node_of[c.rb];
    const bool hca_cable = !forwards(f.node(a).kind) || !forwards(f.node(b).kind);
    const Sighting& s = p_.sightings[c.sighting];
    const auto* given = annotated_cable(s.a);
    if (!given) given = annotated_cable(s.b);
    f.add_link(make_link(PortRef{a, c.pa}, PortRef{b, c.pb}, s.speed,
                         given ? given->first : (hca_cable ? kHcaCableM : kSwitchCableM),
                         given ? given->second : (hca_cable ? Medium::Dac : Medium::Fiber)));
  }

  std::vector<bool> tier_fixed(n, false);
  for (std::size_t i = 0; i < n; ++i)
    if (ann[i] && ann[i]->tier) {
      f.mutable_node(static_cast<NodeId>(i)).tier = *ann[i]->tier;
      tier_fixed[i] = true;
    }
  infer_tiers(f, tier_fixed, src_, p_.warnings);

  if (p_.text_format) {
    std::size_t blockless = 0;
    for (const Device& d : p_.devices) blockless += d.block_seq == kNone;
    if (blockless > 0)
      warn(std::to_string(blockless) +
           " node(s) have no block of their own (seen only in port lines of their " +
           "peers); created from those lines");
  }
  std::size_t largest = 0;
  const std::size_t comps = count_components(f, largest);
  if (comps > 1)
    warn("fabric is not connected: " + std::to_string(comps) + " connected components (largest has " +
         std::to_string(largest) + " of " + std::to_string(f.num_nodes()) + " nodes)");

  // Switch models from the NodeDescriptions (topology/switch_models.hpp): a switch whose description names
  // no known model keeps none and pays the engine's switch latency (the generation default).
  std::map<std::string, std::size_t> inferred;
  std::size_t unknown = 0;
  std::string unknown_example;
  for (NodeId i = 0; i < f.num_nodes(); ++i) {
    Node& node = f.mutable_node(i);
    if (!forwards(node.kind)) continue;
    if (ann[i] && ann[i]->switch_model) { // the exporter's: kept as written ("" = none), not inferred
      node.switch_model = *ann[i]->switch_model;
      continue;
    }
    if (const SwitchModel* m = infer_switch_model(node.description)) {
      node.switch_model = m->id;
      ++inferred[m->id];
    } else if (unknown++ == 0) {
      unknown_example = node.description.empty() ? node.name : node.description;
    }
  }
  for (const auto& [id, count] : inferred)
    out.notes.push_back(src_ + ": " + std::to_string(count) + " switch(es) identified as " + id +
                        " from their description (port-to-port latency " +
                        fmt_ns(find_switch_model(id)->latency_ns) + " ns)");
  if (unknown > 0)
    out.notes.push_back(src_ + ": " + std::to_string(unknown) +
                        " switch(es) name no known model in their description (e.g. '" + unknown_example +
                        "'; known: " + switch_model_ids() +
                        "): they use the engine's switch latency, the link generation's default where the "
                        "front-end picks one (perftest --fabric), else packet.switch_latency_ns");

  f.name = src_;
  f.origin = nlohmann::json{{"importer", "ibnetdiscover"},
                            {"source", src_},
                            {"format", p_.text_format ? (p_.ports_format ? "mixed" : "text") : "ports"}};
  out.warnings = std::move(p_.warnings);
  return out;
}

} // namespace

// -------------------------------------------------------------------------------------------------------------
// Public API

ImportResult import_ibnetdiscover(std::istream& in, const std::string& source) {
  ParseResult parsed = ibnd::parse(in, source);
  return Builder(parsed, source).run();
}

ImportResult import_ibnetdiscover_file(const std::string& path) {
  refuse_folder(path, "an ibnetdiscover output");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("cannot open ibnetdiscover file '" + path + "'");
  return import_ibnetdiscover(in, path);
}

void export_ibnetdiscover(const Fabric& f, std::ostream& out) {
  const std::size_t n = f.num_nodes();
  // Group the nodes into devices: each switch/router is one; HCA/aggregator nodes that share a GUID and a
  // description are the ports of one channel adapter.
  struct ExDev {
    char letter;
    std::vector<NodeId> nodes;
    std::uint64_t guid;
    std::string desc;
  };
  std::vector<ExDev> devs;
  std::vector<std::size_t> dev_of(n);
  std::vector<int> port_base(n, 0);              // CA port of node port p = port_base + p
  std::map<std::uint64_t, std::size_t> ca_index; // GUID -> channel adapter device
  auto display = [&](NodeId i) {
    const Node& nd = f.node(i);
    return sanitize_desc(nd.description.empty() ? nd.name : nd.description);
  };
  for (NodeId i = 0; i < n; ++i) {
    const Node& nd = f.node(i);
    const bool ca = !forwards(nd.kind);
    if (ca && nd.guid != 0) {
      if (auto it = ca_index.find(nd.guid); it != ca_index.end()) {
        ExDev& d = devs[it->second];
        int used = 0;
        for (NodeId m : d.nodes) used += f.node(m).radix;
        d.nodes.push_back(i);
        dev_of[i] = it->second;
        port_base[i] = used;
        continue;
      }
      ca_index.emplace(nd.guid, devs.size());
    }
    dev_of[i] = devs.size();
    devs.push_back(ExDev{ca ? 'H' : (nd.kind == NodeKind::Router ? 'R' : 'S'), {i}, nd.guid, display(i)});
  }
  // Synthetic GUIDs for devices without one (or whose GUID an earlier device already uses), avoiding every
  // real GUID of the fabric; the annotations keep the true value.
  std::set<std::uint64_t> used, taken;
  for (const ExDev& d : devs)
    if (d.guid != 0) used.insert(d.guid);
  std::uint64_t next = kSyntheticGuidBase;
  for (ExDev& d : devs) {
    if (d.guid != 0 && taken.insert(d.guid).second) continue;
    while (used.count(next)) ++next;
    d.guid = next++;
    used.insert(d.guid);
  }
  auto id_of = [&](NodeId i) {
    const ExDev& d = devs[dev_of[i]];
    return std::string(1, d.letter) + "-" + hex16(d.guid);
  };
  auto file_port = [&](NodeId i, int p) { return port_base[i] + p; };
  auto port_guid = [&](NodeId i, int p) {
    return hex_short(devs[dev_of[i]].guid + static_cast<std::uint64_t>(file_port(i, p)));
  };

  out << "#\n# Topology file: generated by ibnetsim from fabric '" << sanitize_desc(f.name) << "'\n"
      << "# " << n << " nodes, " << f.num_links() << " links. '" << kAnnotationTag
      << "' lines carry what the format cannot\n"
      << "# (names, tiers, hosts, planes, groups, GUID 0 for nodes that had none, switch models, cable "
         "lengths\n# and media); other readers ignore them.\n"
      << "#\n";
  for (const ExDev& d : devs) {
    out << "\n";
    for (NodeId i : d.nodes) {
      const Node& nd = f.node(i);
      out << kAnnotationTag << " port=" << (d.letter == 'H' ? file_port(i, 1) : 0)
          << " kind=" << to_string(nd.kind) << " name=\"" << escape(nd.name) << "\" description=\""
          << escape(nd.description) << "\" tier=" << nd.tier << " host=" << nd.host << " plane=" << nd.plane
          << " group=" << nd.group << " guid=0x" << hex16(nd.guid);
      if (forwards(nd.kind)) out << " switch_model=\"" << escape(nd.switch_model) << "\"";
      // Cable lengths and media by the port numbers of the port lines below (shortest exact decimal).
      std::string cables;
      for (int p = 1; p <= nd.radix; ++p)
        if (const auto l = f.link_at(i, p)) {
          char num[32];
          const auto res = std::to_chars(num, num + sizeof num, f.link(*l).length_m);
          cables += (cables.empty() ? "" : " ") + std::to_string(file_port(i, p)) + ":" +
                    std::string(num, res.ptr) + ":" + to_string(f.link(*l).medium);
        }
      if (!cables.empty()) out << " cables=\"" << cables << "\"";
      out << "\n";
    }
    const std::string id = std::string(1, d.letter) + "-" + hex16(d.guid);
    const NodeId first = d.nodes.front();
    if (d.letter == 'S') {
      out << "sysimgguid=0x" << hex16(d.guid) << "\n"
          << "switchguid=0x" << hex16(d.guid) << "(" << hex_short(d.guid) << ")\n"
          << "Switch\t" << f.node(first).radix << " \"" << id << "\"\t\t# \"" << d.desc
          << "\" enhanced port 0 lid " << f.node(first).lid << " lmc 0\n";
    } else {
      int ports = 0;
      for (NodeId i : d.nodes) ports += f.node(i).radix;
      out << "sysimgguid=0x" << hex16(d.guid) << "\n"
          << (d.letter == 'H' ? "caguid=0x" : "rtguid=0x") << hex16(d.guid) << "\n"
          << (d.letter == 'H' ? "Ca" : "Rt") << "\t" << ports << " \"" << id << "\"\t\t# \"" << d.desc
          << "\"\n";
    }
    for (NodeId i : d.nodes) {
      const Node& nd = f.node(i);
      for (int p = 1; p <= nd.radix; ++p) {
        const auto l = f.link_at(i, p);
        if (!l) continue;
        const Link& link = f.link(*l);
        const PortRef peer = link.a.node == i && link.a.port == p ? link.b : link.a;
        const Node& pn = f.node(peer.node);
        const bool peer_ca = !forwards(pn.kind);
        std::string remote =
            "\"" + id_of(peer.node) + "\"[" + std::to_string(file_port(peer.node, peer.port)) + "]";
        if (peer_ca) remote += "(" + port_guid(peer.node, peer.port) + ")";
        if (d.letter == 'S')
          out << "[" << p << "]\t" << remote << " \t\t# \"" << display(peer.node) << "\" lid " << pn.lid
              << " " << link.speed.to_string() << "\n";
        else
          out << "[" << file_port(i, p) << "](" << port_guid(i, p) << ") \t" << remote << "\t\t# lid "
              << nd.lid << " lmc 0 \"" << display(peer.node) << "\" lid " << pn.lid << " "
              << link.speed.to_string() << "\n";
      }
    }
  }
}

} // namespace ibn::topo
