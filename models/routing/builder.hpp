#pragma once
// Internal to models/routing: the index of the forwarding graph every algorithm starts from, and the
// builder that fills a RoutingTables (AR-group pool with per-switch deduplication, static ports).
//
// Classes: HCAs attached to the same switch form one class (the "leaf"); min-hop distances, up/down
// legality and dragonfly MIN choices are the same for all of them everywhere except at that leaf, so
// distances and AR groups are computed per (switch, class).
#include "models/routing/routing.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace ibn::routing::detail {

inline constexpr std::uint32_t kNone = RoutingTables::kNone;
inline constexpr std::uint16_t kInfDist = 0xFFFF;

/// A switch port cabled to another switch.
struct SwitchPort {
  Port port = kNoPort;
  std::uint32_t nbr = 0; ///< switch index of the other end
  topo::LinkId link = topo::kNoLink;
};

struct Index {
  explicit Index(const topo::Fabric& f);

  const topo::Fabric& fabric;
  std::vector<topo::NodeId> sw_nodes;     ///< switch index -> NodeId (NodeId order)
  std::vector<std::uint32_t> sw_of_node;  ///< NodeId -> switch index or kNone
  std::vector<topo::NodeId> hca_nodes;    ///< HcaIndex -> NodeId
  std::vector<std::uint32_t> hca_of_node; ///< NodeId -> HcaIndex or kNone
  std::vector<std::uint32_t> hca_sw;      ///< HcaIndex -> switch index it is cabled to, or kNone
  std::vector<Port> hca_port;
  std::vector<topo::LinkId> hca_link;
  std::vector<std::uint32_t> hca_class;   ///< HcaIndex -> class or kNone
  std::vector<std::uint32_t> class_sw;    ///< class -> switch index (ascending)
  std::vector<std::uint32_t> class_of_sw; ///< switch index -> class or kNone
  std::vector<std::uint32_t> adj_offset;  ///< CSR: switch s's switch ports are adj[adj_offset[s] .. [s+1])
  std::vector<SwitchPort> adj;            ///< by port
  int max_port = 0;

  std::size_t num_switches() const { return sw_nodes.size(); }
  std::size_t num_hcas() const { return hca_nodes.size(); }
  std::size_t num_classes() const { return class_sw.size(); }
  std::span<const SwitchPort> nbrs(std::uint32_t s) const {
    return {adj.data() + adj_offset[s], adj.data() + adj_offset[s + 1]};
  }
  const topo::Node& sw_node(std::uint32_t s) const { return fabric.node(sw_nodes[s]); }
  /// HcaIndex list sorted by LID.
  std::vector<HcaIndex> hcas_by_lid(const LidMap& lids) const;
};

/// BFS hop distances between switches: dist[s * C + c] = hops from switch s to class c's switch.
std::vector<std::uint16_t> class_distances(const Index& idx);

class TablesBuilder {
 public:
  TablesBuilder(const topo::Fabric& f, std::string algorithm);

  const Index& index() const { return idx_; }
  const LidMap& lids() const { return t_.lids_; }

  /// Groups from a distance table (dist[s * C + c], kInfDist = unreachable): port p of switch s toward
  /// switch n belongs to the group of class c when dist[n, c] + 1 == dist[s, c] and allow(s, sp, c).
  template <typename Allow> void groups_from_distances(const std::vector<std::uint16_t>& dist, Allow allow);

  /// Explicit groups: call begin_switch(s), then set_group(c, ports) for its classes (any order of ports;
  /// they must be switch-facing), then end_switch().
  void begin_switch(std::uint32_t s);
  void set_group(std::uint32_t c, const std::vector<Port>& ports);
  void end_switch();

  std::uint32_t group_id(std::uint32_t s, std::uint32_t c) const { return t_.group_of_[s * nc_ + c]; }
  std::span<const Port> group_ports(std::uint32_t gid) const {
    const auto& g = t_.groups_[gid];
    return {t_.group_ports_.data() + g.offset, g.size};
  }
  std::size_t num_groups() const { return t_.groups_.size(); }
  void set_divisor(std::uint32_t gid, std::uint32_t divisor) { t_.groups_[gid].divisor = divisor; }

  /// Dense static table (uint8 if every port <= 255).
  void use_dense_static();
  void set_static(std::uint32_t s, HcaIndex d, Port p);
  /// Port equalisation (minhop/updn): per switch, destinations in LID order take the group port with the
  /// fewest destinations so far (ties: lowest port).
  void fill_static_by_port_equalisation();
  /// D-mod-k rule: static port = group[(rank[d] / divisor) mod size].
  void use_dmodk(std::vector<std::uint32_t> rank);

  void set_vls(VlRule rule, int num_vls, bool deadlock_free);
  void set_dragonfly(DragonflyMode mode, std::unique_ptr<DragonflyLayout> layout);
  void add_note(std::string note) { t_.notes_.push_back(std::move(note)); }
  RoutingTables finish();

 private:
  std::uint32_t intern_mask(std::uint32_t s, const std::string& mask_key,
                            const std::vector<std::uint64_t>& mask);

  Index idx_;
  RoutingTables t_;
  std::size_t nc_;
  // per-switch deduplication state
  std::uint32_t cur_ = kNone;
  std::unordered_map<std::string, std::uint32_t> seen_;
  std::vector<int> adj_pos_; // port -> position in nbrs(cur_), -1 if not switch-facing
};

template <typename Allow>
void TablesBuilder::groups_from_distances(const std::vector<std::uint16_t>& dist, Allow allow) {
  const std::size_t C = nc_;
  std::vector<std::uint64_t> masks;
  std::vector<std::uint64_t> one;
  std::string key;
  for (std::uint32_t s = 0; s < idx_.num_switches(); ++s) {
    const auto nb = idx_.nbrs(s);
    const std::size_t words = (nb.size() + 63) / 64;
    masks.assign(C * words, 0);
    const std::uint16_t* ds = dist.data() + static_cast<std::size_t>(s) * C;
    for (std::size_t i = 0; i < nb.size(); ++i) {
      const std::uint16_t* dn = dist.data() + static_cast<std::size_t>(nb[i].nbr) * C;
      const std::uint64_t bit = std::uint64_t{1} << (i % 64);
      const std::size_t w = i / 64;
      for (std::size_t c = 0; c < C; ++c)
        if (ds[c] != kInfDist && ds[c] != 0 && dn[c] + 1 == ds[c] &&
            allow(s, nb[i], static_cast<std::uint32_t>(c)))
          masks[c * words + w] |= bit;
    }
    seen_.clear();
    for (std::size_t c = 0; c < C; ++c) {
      const std::uint64_t* m = masks.data() + c * words;
      bool any = false;
      for (std::size_t w = 0; w < words; ++w) any = any || m[w] != 0;
      if (!any) continue;
      key.assign(reinterpret_cast<const char*>(m), words * sizeof(std::uint64_t));
      one.assign(m, m + words);
      t_.group_of_[s * C + c] = intern_mask(s, key, one);
    }
  }
  seen_.clear();
}

} // namespace ibn::routing::detail
