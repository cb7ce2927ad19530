#include "models/routing/builder.hpp"

#include "models/routing/dragonfly.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace ibn::routing::detail {

using topo::kNoLink;
using topo::LinkId;
using topo::NodeId;
using topo::NodeKind;

Index::Index(const topo::Fabric& f) : fabric(f) {
  const std::size_t n = f.num_nodes();
  sw_of_node.assign(n, kNone);
  hca_of_node.assign(n, kNone);
  for (NodeId i = 0; i < n; ++i) {
    const auto k = f.node(i).kind;
    if (k == NodeKind::Switch || k == NodeKind::Router) {
      sw_of_node[i] = static_cast<std::uint32_t>(sw_nodes.size());
      sw_nodes.push_back(i);
      max_port = std::max(max_port, f.node(i).radix);
    } else if (k == NodeKind::Hca) {
      hca_of_node[i] = static_cast<std::uint32_t>(hca_nodes.size());
      hca_nodes.push_back(i);
    }
  }
  if (max_port > 0xFFFF) throw InputError("routing: switch radix above 65535 is not supported");
  adj_offset.assign(sw_nodes.size() + 1, 0);
  for (std::uint32_t s = 0; s < sw_nodes.size(); ++s) {
    const NodeId node = sw_nodes[s];
    const int radix = f.node(node).radix;
    for (int p = 1; p <= radix; ++p) {
      const auto l = f.link_at(node, p);
      if (!l) continue;
      const NodeId other = f.link(*l).other(node);
      if (sw_of_node[other] == kNone) continue;
      adj.push_back(SwitchPort{static_cast<Port>(p), sw_of_node[other], *l});
    }
    adj_offset[s + 1] = static_cast<std::uint32_t>(adj.size());
  }
  const std::size_t H = hca_nodes.size();
  hca_sw.assign(H, kNone);
  hca_port.assign(H, kNoPort);
  hca_link.assign(H, kNoLink);
  hca_class.assign(H, kNone);
  class_of_sw.assign(sw_nodes.size(), kNone);
  for (std::uint32_t h = 0; h < H; ++h) {
    const NodeId node = hca_nodes[h];
    const auto links = f.links_of(node);
    if (links.empty()) continue;
    const LinkId l = links.front();
    hca_link[h] = l;
    const auto& lk = f.link(l);
    const NodeId other = lk.other(node);
    if (sw_of_node[other] == kNone) continue;
    hca_sw[h] = sw_of_node[other];
    hca_port[h] = static_cast<Port>(lk.a.node == other ? lk.a.port : lk.b.port);
    class_of_sw[hca_sw[h]] = 0; // mark; numbered below in switch order
  }
  for (std::uint32_t s = 0; s < sw_nodes.size(); ++s)
    if (class_of_sw[s] != kNone) {
      class_of_sw[s] = static_cast<std::uint32_t>(class_sw.size());
      class_sw.push_back(s);
    }
  for (std::uint32_t h = 0; h < H; ++h)
    if (hca_sw[h] != kNone) hca_class[h] = class_of_sw[hca_sw[h]];
}

std::vector<HcaIndex> Index::hcas_by_lid(const LidMap& lids) const {
  std::vector<HcaIndex> order(hca_nodes.size());
  for (HcaIndex d = 0; d < order.size(); ++d) order[d] = d;
  std::sort(order.begin(), order.end(), [&](HcaIndex a, HcaIndex b) {
    return lids.lid_of_node[hca_nodes[a]] < lids.lid_of_node[hca_nodes[b]];
  });
  return order;
}

std::vector<std::uint16_t> class_distances(const Index& idx) {
  const std::size_t S = idx.num_switches(), C = idx.num_classes();
  std::vector<std::uint16_t> dist(S * C, kInfDist);
  std::vector<std::uint32_t> queue(S);
  std::vector<std::uint16_t> d(S);
  for (std::size_t c = 0; c < C; ++c) {
    std::fill(d.begin(), d.end(), kInfDist);
    std::size_t head = 0, tail = 0;
    const std::uint32_t root = idx.class_sw[c];
    d[root] = 0;
    queue[tail++] = root;
    while (head < tail) {
      const std::uint32_t s = queue[head++];
      const std::uint16_t next = static_cast<std::uint16_t>(d[s] + 1);
      for (const SwitchPort& sp : idx.nbrs(s))
        if (d[sp.nbr] == kInfDist) {
          d[sp.nbr] = next;
          queue[tail++] = sp.nbr;
        }
    }
    for (std::size_t s = 0; s < S; ++s) dist[s * C + c] = d[s];
  }
  return dist;
}

TablesBuilder::TablesBuilder(const topo::Fabric& f, std::string algorithm)
    : idx_(f), nc_(idx_.num_classes()) {
  t_.algorithm_ = std::move(algorithm);
  t_.lids_ = assign_lids(f);
  t_.sw_nodes_ = idx_.sw_nodes;
  t_.sw_of_node_ = idx_.sw_of_node;
  t_.port_base_.assign(idx_.num_switches() + 1, 0);
  for (std::uint32_t s = 0; s < idx_.num_switches(); ++s)
    t_.port_base_[s + 1] = t_.port_base_[s] + static_cast<std::uint32_t>(idx_.sw_node(s).radix);
  t_.port_link_.assign(t_.port_base_.back(), kNoLink);
  t_.port_peer_.assign(t_.port_base_.back(), topo::kNoNode);
  for (std::uint32_t s = 0; s < idx_.num_switches(); ++s) {
    const NodeId node = idx_.sw_nodes[s];
    for (int p = 1; p <= idx_.sw_node(s).radix; ++p)
      if (const auto l = f.link_at(node, p)) {
        t_.port_link_[t_.port_base_[s] + static_cast<std::uint32_t>(p - 1)] = *l;
        t_.port_peer_[t_.port_base_[s] + static_cast<std::uint32_t>(p - 1)] = f.link(*l).other(node);
      }
  }
  t_.hca_nodes_ = idx_.hca_nodes;
  t_.hca_of_node_ = idx_.hca_of_node;
  t_.hca_.resize(idx_.num_hcas());
  for (HcaIndex h = 0; h < idx_.num_hcas(); ++h) {
    t_.hca_[h].sw = idx_.hca_sw[h];
    t_.hca_[h].cls = idx_.hca_class[h];
    t_.hca_[h].port = idx_.hca_port[h];
  }
  t_.hca_link_ = idx_.hca_link;
  t_.num_classes_ = nc_;
  t_.group_of_.assign(idx_.num_switches() * nc_, kNone);
  adj_pos_.assign(static_cast<std::size_t>(idx_.max_port) + 1, -1);
}

std::uint32_t TablesBuilder::intern_mask(std::uint32_t s, const std::string& mask_key,
                                         const std::vector<std::uint64_t>& mask) {
  const auto it = seen_.find(mask_key);
  if (it != seen_.end()) return it->second;
  RoutingTables::Group g;
  g.offset = static_cast<std::uint32_t>(t_.group_ports_.size());
  const auto nb = idx_.nbrs(s);
  for (std::size_t i = 0; i < nb.size(); ++i)
    if (mask[i / 64] >> (i % 64) & 1) t_.group_ports_.push_back(nb[i].port);
  g.size = static_cast<std::uint32_t>(t_.group_ports_.size()) - g.offset;
  const auto id = static_cast<std::uint32_t>(t_.groups_.size());
  t_.groups_.push_back(g);
  seen_.emplace(mask_key, id);
  return id;
}

void TablesBuilder::begin_switch(std::uint32_t s) {
  cur_ = s;
  seen_.clear();
  std::fill(adj_pos_.begin(), adj_pos_.end(), -1);
  const auto nb = idx_.nbrs(s);
  for (std::size_t i = 0; i < nb.size(); ++i) adj_pos_[nb[i].port] = static_cast<int>(i);
}

void TablesBuilder::set_group(std::uint32_t c, const std::vector<Port>& ports) {
  if (ports.empty()) return;
  const std::size_t words = (idx_.nbrs(cur_).size() + 63) / 64;
  std::vector<std::uint64_t> mask(words, 0);
  for (const Port p : ports) {
    const int i = p < adj_pos_.size() ? adj_pos_[p] : -1;
    if (i < 0)
      throw std::logic_error("routing: AR group port " + std::to_string(p) + " of '" +
                             idx_.sw_node(cur_).name + "' does not lead to a switch");
    mask[static_cast<std::size_t>(i) / 64] |= std::uint64_t{1} << (static_cast<std::size_t>(i) % 64);
  }
  std::string key(reinterpret_cast<const char*>(mask.data()), words * sizeof(std::uint64_t));
  t_.group_of_[cur_ * nc_ + c] = intern_mask(cur_, key, mask);
}

void TablesBuilder::end_switch() {
  cur_ = kNone;
  seen_.clear();
}

void TablesBuilder::use_dense_static() {
  const std::size_t n = idx_.num_switches() * idx_.num_hcas();
  if (idx_.max_port <= 0xFF) {
    t_.storage_ = RoutingTables::StaticStorage::Dense8;
    t_.static8_.assign(n, 0);
  } else {
    t_.storage_ = RoutingTables::StaticStorage::Dense16;
    t_.static16_.assign(n, 0);
  }
}

void TablesBuilder::set_static(std::uint32_t s, HcaIndex d, Port p) {
  const std::size_t i = static_cast<std::size_t>(s) * idx_.num_hcas() + d;
  if (t_.storage_ == RoutingTables::StaticStorage::Dense8)
    t_.static8_[i] = static_cast<std::uint8_t>(p);
  else
    t_.static16_[i] = p;
}

void TablesBuilder::fill_static_by_port_equalisation() {
  use_dense_static();
  const auto order = idx_.hcas_by_lid(t_.lids_);
  std::vector<std::uint32_t> count(static_cast<std::size_t>(idx_.max_port) + 1);
  std::vector<std::uint32_t> owner(count.size()); // port -> group of this switch using it (disjointness test)
  std::vector<std::uint32_t> cursor(t_.groups_.size(), 0);
  std::vector<std::uint32_t> gids;
  for (std::uint32_t s = 0; s < idx_.num_switches(); ++s) {
    std::fill(count.begin(), count.end(), 0);
    // When the switch's groups are pairwise disjoint (trees, dragonflies), "fewest so far, lowest port" only
    // counts this group's own picks, which is a round-robin in port order: O(1) per destination.
    gids.clear();
    for (std::size_t c = 0; c < nc_; ++c)
      if (const auto g = t_.group_of_[s * nc_ + c]; g != kNone) gids.push_back(g);
    std::sort(gids.begin(), gids.end());
    gids.erase(std::unique(gids.begin(), gids.end()), gids.end());
    std::fill(owner.begin(), owner.end(), kNone);
    bool disjoint = true;
    for (const auto g : gids)
      for (const Port q : group_ports(g)) {
        if (owner[q] != kNone) disjoint = false;
        owner[q] = g;
      }
    for (const HcaIndex d : order) {
      Port p = kNoPort;
      if (idx_.hca_sw[d] == s)
        p = idx_.hca_port[d];
      else if (idx_.hca_class[d] != kNone) {
        const std::uint32_t gid = t_.group_of_[s * nc_ + idx_.hca_class[d]];
        if (gid == kNone) continue;
        const auto ports = group_ports(gid);
        if (disjoint) {
          p = ports[cursor[gid]];
          if (++cursor[gid] == ports.size()) cursor[gid] = 0;
        } else {
          for (const Port q : ports)
            if (p == kNoPort || count[q] < count[p]) p = q; // ports ascending: ties keep the lowest
        }
      }
      if (p == kNoPort) continue;
      ++count[p];
      set_static(s, d, p);
    }
  }
}

void TablesBuilder::use_dmodk(std::vector<std::uint32_t> rank) {
  t_.storage_ = RoutingTables::StaticStorage::DmodK;
  for (HcaIndex h = 0; h < rank.size(); ++h) t_.hca_[h].rank = rank[h];
}

void TablesBuilder::set_vls(VlRule rule, int num_vls, bool deadlock_free) {
  t_.vl_rule_ = rule;
  t_.num_vls_ = num_vls;
  t_.deadlock_free_ = deadlock_free;
}

void TablesBuilder::set_dragonfly(DragonflyMode mode, std::unique_ptr<DragonflyLayout> layout) {
  t_.df_mode_ = mode;
  t_.df_ = std::move(layout);
}

RoutingTables TablesBuilder::finish() {
  t_.group_ports_.shrink_to_fit();
  t_.groups_.shrink_to_fit();
  return std::move(t_);
}

} // namespace ibn::routing::detail
