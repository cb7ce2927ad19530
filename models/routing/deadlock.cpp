#include "models/routing/deadlock.hpp"

#include <algorithm>
#include <stdexcept>

namespace ibn::routing {

using topo::kNoLink;
using topo::LinkId;
using topo::NodeId;
using topo::NodeKind;

namespace {

bool forwards(const topo::Node& n) {
  return n.kind == NodeKind::Switch || n.kind == NodeKind::Router;
}

// Channel id: ((link * 2 + dir) * kMaxVls + vl); dir 0 = from link.a to link.b.
std::uint64_t channel(LinkId l, bool from_b, int vl) {
  return (static_cast<std::uint64_t>(l) * 2 + (from_b ? 1 : 0)) * kMaxVls + static_cast<std::uint64_t>(vl);
}

int checked(int vl) {
  if (vl < 0 || vl >= kMaxVls)
    throw std::invalid_argument("VL function returned VL " + std::to_string(vl) + " (must be 0..15)");
  return vl;
}

std::string describe_channel(const topo::Fabric& f, std::uint64_t ch) {
  const int vl = static_cast<int>(ch % kMaxVls);
  const std::uint64_t dl = ch / kMaxVls;
  const auto& l = f.link(static_cast<LinkId>(dl / 2));
  const bool from_b = dl % 2 == 1;
  const topo::PortRef& a = from_b ? l.b : l.a;
  const topo::PortRef& b = from_b ? l.a : l.b;
  auto end = [&](const topo::PortRef& p) {
    const auto& n = f.node(p.node);
    return topo::to_string(n.kind) + " " + n.name + " port " + std::to_string(p.port);
  };
  return end(a) + " -> " + end(b) + " (VL" + std::to_string(vl) + ")";
}

/// Dependency graph over channels; finds a cycle by iterative DFS (vertices and edges in id order).
class Cdg {
 public:
  // Channel ids fit in 32 bits for < 2^27 links: an edge is (from << 32 | to). Deduplicated in batches.
  void add(std::uint64_t from, std::uint64_t to) {
    edges_.push_back(from << 32 | to);
    if (edges_.size() >= compact_at_) {
      compact();
      compact_at_ = std::max<std::size_t>(compact_at_, edges_.size() * 2);
    }
  }

  DeadlockReport report(const topo::Fabric& f, int max_vl) {
    compact();
    DeadlockReport r;
    r.vls_used = max_vl + 1;
    r.dependencies = edges_.size();
    std::vector<std::pair<std::uint64_t, std::uint64_t>> e;
    e.reserve(edges_.size());
    for (const std::uint64_t x : edges_) e.emplace_back(x >> 32, x & 0xFFFFFFFFu);
    std::vector<std::uint64_t> verts;
    verts.reserve(e.size() * 2);
    for (const auto& [a, b] : e) {
      verts.push_back(a);
      verts.push_back(b);
    }
    std::sort(verts.begin(), verts.end());
    verts.erase(std::unique(verts.begin(), verts.end()), verts.end());
    r.channels = verts.size();
    auto id = [&](std::uint64_t c) {
      return static_cast<std::size_t>(std::lower_bound(verts.begin(), verts.end(), c) - verts.begin());
    };
    std::vector<std::size_t> off(verts.size() + 1, 0);
    std::vector<std::size_t> to(e.size());
    for (const auto& [a, b] : e) ++off[id(a) + 1];
    for (std::size_t i = 0; i < verts.size(); ++i) off[i + 1] += off[i];
    {
      std::vector<std::size_t> fill(off.begin(), off.end() - 1);
      for (const auto& [a, b] : e) to[fill[id(a)]++] = id(b); // edges sorted: adjacency in id order
    }
    std::vector<std::uint8_t> color(verts.size(), 0);       // 0 new, 1 on stack, 2 done
    std::vector<std::pair<std::size_t, std::size_t>> stack; // (vertex, next edge)
    for (std::size_t root = 0; root < verts.size(); ++root) {
      if (color[root]) continue;
      stack.push_back({root, off[root]});
      color[root] = 1;
      while (!stack.empty()) {
        auto& [v, next] = stack.back();
        if (next == off[v + 1]) {
          color[v] = 2;
          stack.pop_back();
          continue;
        }
        const std::size_t w = to[next++];
        if (color[w] == 0) {
          color[w] = 1;
          stack.push_back({w, off[w]});
        } else if (color[w] == 1) {
          std::size_t k = stack.size();
          while (stack[k - 1].first != w) --k;
          for (std::size_t i = k - 1; i < stack.size(); ++i)
            r.cycle.push_back(describe_channel(f, verts[stack[i].first]));
          r.deadlock_free = false;
          return r;
        }
      }
    }
    return r;
  }

 private:
  void compact() {
    std::sort(edges_.begin(), edges_.end());
    edges_.erase(std::unique(edges_.begin(), edges_.end()), edges_.end());
  }
  std::vector<std::uint64_t> edges_;
  std::size_t compact_at_ = std::size_t{1} << 22;
};

} // namespace

VlFunction single_vl() {
  return [](const HopContext&) { return 0; };
}

VlFunction vl_per_global_hop() {
  return [](const HopContext& h) {
    if (h.in_link == kNoLink) return h.in_vl;
    const auto& l = h.fabric.link(h.in_link);
    const auto& a = h.fabric.node(l.a.node);
    const auto& b = h.fabric.node(l.b.node);
    const bool global = forwards(a) && forwards(b) && a.group >= 0 && b.group >= 0 && a.group != b.group;
    return global ? h.in_vl + 1 : h.in_vl;
  };
}

VlFunction vl_function(VlRule rule) {
  return rule == VlRule::Single ? single_vl() : vl_per_global_hop();
}

DeadlockReport check_deadlock_free(const topo::Fabric& f, const RoutingTables& t, const VlFunction& vl,
                                   bool include_ar) {
  Cdg cdg;
  int max_vl = 0;
  const auto& sws = t.switch_nodes();
  const std::size_t H = t.num_hcas();
  // Injection does not depend on the destination: the source's VL, then the VL it leaves its leaf on through
  // each port. Aggregated per (leaf, port) as a mask of VLs, so each destination costs O(leaves x group).
  std::vector<std::vector<HcaIndex>> on_leaf(sws.size());
  for (HcaIndex h = 0; h < H; ++h)
    if (t.hca_switch_index(h) != RoutingTables::kNone) on_leaf[t.hca_switch_index(h)].push_back(h);
  std::vector<std::uint32_t> port_base(sws.size() + 1, 0);
  for (std::uint32_t s = 0; s < sws.size(); ++s)
    port_base[s + 1] = port_base[s] + static_cast<std::uint32_t>(f.node(sws[s]).radix) + 1;
  std::vector<std::uint16_t> leaf_vls(port_base.back(), 0); // [(leaf, port)] -> mask of VLs leaving on it
  std::vector<std::uint32_t> leaves;
  for (std::uint32_t s = 0; s < sws.size(); ++s) {
    if (on_leaf[s].empty()) continue;
    leaves.push_back(s);
    for (const HcaIndex h : on_leaf[s]) {
      const int vl0 = checked(vl({f, t.hca_nodes()[h], kNoLink, 0, t.hca_link(h)}));
      max_vl = std::max(max_vl, vl0);
      for (Port p = 1; p <= f.node(sws[s]).radix; ++p) {
        const LinkId out = t.link_at(s, p);
        if (out == kNoLink || t.switch_index(t.peer_at(s, p)) == RoutingTables::kNone) continue;
        const int v = checked(vl({f, sws[s], t.hca_link(h), vl0, out}));
        leaf_vls[port_base[s] + p] |= static_cast<std::uint16_t>(1u << v);
      }
    }
  }
  struct State {
    std::uint32_t sw; // switch index the channel enters
    LinkId in_link;
    int in_vl;
    std::uint64_t ch;
  };
  std::vector<State> queue;
  std::vector<std::uint32_t> stamp(f.num_links() * 2 * kMaxVls, 0);
  std::vector<Port> ports;
  auto ports_of = [&](std::uint32_t s, HcaIndex d) {
    ports.clear();
    if (include_ar) {
      for (const Port p : t.ar_group(sws[s], d)) ports.push_back(p);
    } else if (const Port p = t.next_hop_by_index(s, d); p != kNoPort) {
      ports.push_back(p);
    }
  };
  for (HcaIndex d = 0; d < H; ++d) {
    const auto mark = d + 1;
    queue.clear();
    for (const std::uint32_t leaf : leaves) {
      if (leaf == t.hca_switch_index(d)) continue;
      ports_of(leaf, d);
      for (const Port p : ports) {
        const std::uint16_t mask = leaf_vls[port_base[leaf] + p];
        if (mask == 0) continue;
        const LinkId out = t.link_at(leaf, p);
        const std::uint32_t ps = t.switch_index(t.peer_at(leaf, p));
        for (int v = 0; v < kMaxVls; ++v) {
          if (!(mask >> v & 1)) continue;
          max_vl = std::max(max_vl, v);
          const std::uint64_t ch = channel(out, f.link(out).b.node == sws[leaf], v);
          if (stamp[ch] != mark) {
            stamp[ch] = mark;
            queue.push_back({ps, out, v, ch});
          }
        }
      }
    }
    for (std::size_t head = 0; head < queue.size(); ++head) {
      const State st = queue[head];
      ports_of(st.sw, d);
      const NodeId at = sws[st.sw];
      for (const Port p : ports) {
        const LinkId out = t.link_at(st.sw, p);
        const std::uint32_t ps = t.switch_index(t.peer_at(st.sw, p));
        if (ps == RoutingTables::kNone) continue; // delivery channel
        const int v = checked(vl({f, at, st.in_link, st.in_vl, out}));
        max_vl = std::max(max_vl, v);
        const std::uint64_t ch = channel(out, f.link(out).b.node == at, v);
        cdg.add(st.ch, ch);
        if (stamp[ch] != mark) {
          stamp[ch] = mark;
          queue.push_back({ps, out, v, ch});
        }
      }
    }
  }
  return cdg.report(f, max_vl);
}

DeadlockReport check_deadlock_free_paths(const topo::Fabric& f, const std::vector<std::vector<LinkId>>& paths,
                                         const VlFunction& vl) {
  Cdg cdg;
  int max_vl = 0;
  for (const auto& path : paths) {
    if (path.empty()) continue;
    const auto& first = f.link(path.front());
    NodeId at = f.node(first.a.node).kind == NodeKind::Hca ? first.a.node : first.b.node;
    LinkId in = kNoLink;
    int in_vl = 0;
    std::uint64_t prev = 0;
    bool prev_is_switch_channel = false;
    for (const LinkId l : path) {
      const auto& lk = f.link(l);
      const int v = checked(vl({f, at, in, in_vl, l}));
      max_vl = std::max(max_vl, v);
      const NodeId next = lk.other(at);
      const bool sw_channel = forwards(f.node(at)) && forwards(f.node(next));
      const std::uint64_t ch = channel(l, lk.b.node == at, v);
      if (sw_channel && prev_is_switch_channel) cdg.add(prev, ch);
      prev = ch;
      prev_is_switch_channel = sw_channel;
      in = l;
      in_vl = v;
      at = next;
    }
  }
  return cdg.report(f, max_vl);
}

} // namespace ibn::routing
