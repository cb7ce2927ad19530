#pragma once
// Routing tables: where every switch forwards a packet for each destination. Pure functions of a Fabric
// build an immutable RoutingTables that both engines read: the packet engine per hop, by destination, as a
// switch reads its LFT and AR groups (next_hop / ar_group); the flow engine per flow (route()).
//
// Conventions
// - Destinations are the fabric's HCAs, indexed by HcaIndex = position in Fabric::hcas() (NodeId order).
//   Aggregation nodes (SHARP) are not destinations: they carry no simulated traffic.
// - Ports are switch port numbers 1..radix as in Fabric; kNoPort (0) means "no route" (another plane, or
//   a switch that is not in the tables).
// - LIDs: assign_lids() (the node's own LID when the fabric carries them, else NodeId order from 1).
// - An AR group is the set of output ports that lie on a minimal path to the destination — for updn a
//   minimal up*/down*-legal path, for df-* a dragonfly MIN path (see dragonfly.hpp) — presented with the
//   static (LFT) port first, then the others in port order.
// - Routers (NodeKind::Router) forward like switches; "switch" below means either.
//
// Storage (sized for 65,536 HCAs x 5,120 switches, a 3-tier radix-64 fat-tree):
// - AR groups depend only on (switch, the destination's leaf switch), except at that leaf where the group
//   is the HCA's own port. They are stored as one uint32 group id per (switch, leaf) — 5,120 x 2,048 x 4 B
//   = 42 MB at the largest — into a pool of port sets deduplicated per switch (a fat-tree leaf has one
//   up-going set shared by all remote destinations).
// - Static ports: ftree stores none; the port is computed on lookup, O(1), as
//   group[(ca_rank / divisor) mod |group|] (D-mod-k, see route_ftree). minhop, updn and df-* store a dense
//   table: uint8 per (switch, destination) when every port number is <= 255, else uint16. At the largest
//   fabric that is 65,536 x 5,120 = 335 MB (uint8); use ftree there, minhop/updn are meant for imported and
//   mid-size fabrics.
//
// Limitations: LMC = 0 (one LID, one path per destination in the LFT); switch LIDs are not routed
// (management traffic is not simulated); multicast is not modelled.
#include "sim/registry.hpp"
#include "topology/fabric.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace ibn::routing {

using Port = std::uint16_t;
inline constexpr Port kNoPort = 0;
using HcaIndex = std::uint32_t; ///< index into Fabric::hcas()
using Lid = std::uint32_t;      ///< 32 bits: a 65,536-host fabric needs more LIDs than IB's 0x0001-0xBFFF
inline constexpr Lid kMaxUnicastLid = 0xBFFF;

/// LIDs of every node (HCAs, switches, routers, aggregation nodes).
struct LidMap {
  std::vector<Lid> lid_of_node;          ///< per NodeId, >= 1
  std::vector<topo::NodeId> node_of_lid; ///< index = LID; kNoNode for LIDs nobody has (and for LID 0)
  Lid max_lid() const { return node_of_lid.empty() ? 0 : static_cast<Lid>(node_of_lid.size() - 1); }
};

/// Deterministic LIDs. Nodes that carry a non-zero `lid` (imported fabrics) keep it; the others get the
/// next free LIDs after the largest given one, in NodeId order. Without any given LID: NodeId order from 1.
/// Throws InputError when two nodes carry the same LID.
LidMap assign_lids(const topo::Fabric& f);

/// The AR group of a (switch, destination): the static port first, then the other equal-cost ports in
/// port order. A cheap view into the tables (valid while they live).
class ArGroupView {
 public:
  ArGroupView() = default;
  ArGroupView(std::span<const Port> set, Port static_port);

  std::size_t size() const { return set_.size(); }
  bool empty() const { return set_.empty(); }
  Port static_port() const { return static_; }
  /// i = 0: the static port; then the others in port order.
  Port operator[](std::size_t i) const {
    if (i == 0) return static_;
    return set_[i - 1 < static_pos_ ? i - 1 : i];
  }
  /// The ports in port order (the static one included).
  std::span<const Port> ports() const { return set_; }
  bool contains(Port p) const;
  std::vector<Port> to_vector() const; ///< ordered, static first

  class iterator {
   public:
    using value_type = Port;
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    iterator(const ArGroupView* g, std::size_t i) : g_(g), i_(i) {}
    Port operator*() const { return (*g_)[i_]; }
    iterator& operator++() {
      ++i_;
      return *this;
    }
    iterator operator++(int) {
      iterator t = *this;
      ++i_;
      return t;
    }
    bool operator==(const iterator& o) const { return i_ == o.i_; }

   private:
    const ArGroupView* g_ = nullptr;
    std::size_t i_ = 0;
  };
  iterator begin() const { return {this, 0}; }
  iterator end() const { return {this, size()}; }

 private:
  std::span<const Port> set_;
  Port static_ = kNoPort;
  std::size_t static_pos_ = 0;
};

/// How the VL of a packet changes along its path (the SL->VL part of the routing output; deadlock.hpp
/// turns it into a VlFunction). Single: every hop on VL0. PerGlobalHop: the VL goes up by one after each
/// dragonfly global (inter-group) hop, so MIN uses VL0-1 and Valiant VL0-2.
enum class VlRule : std::uint8_t { Single, PerGlobalHop };
std::string to_string(VlRule r);

/// Dragonfly path choice the tables are meant for (the static LFT is always the minimal one).
enum class DragonflyMode : std::uint8_t { None, Minimal, Valiant, Ugal };

struct DragonflyLayout; // dragonfly.hpp

namespace detail {
class TablesBuilder;
}

class RoutingTables {
 public:
  RoutingTables();
  ~RoutingTables();
  RoutingTables(RoutingTables&&) noexcept;
  RoutingTables& operator=(RoutingTables&&) noexcept;
  RoutingTables(const RoutingTables&) = delete;
  RoutingTables& operator=(const RoutingTables&) = delete;

  const std::string& algorithm() const { return algorithm_; }
  const LidMap& lids() const { return lids_; }

  // --- destinations ---
  std::size_t num_hcas() const { return hca_nodes_.size(); }
  const std::vector<topo::NodeId>& hca_nodes() const { return hca_nodes_; } ///< HcaIndex -> NodeId
  std::optional<HcaIndex> hca_index(topo::NodeId hca) const;
  Lid lid_of_hca(HcaIndex d) const { return lids_.lid_of_node[hca_nodes_[d]]; }
  std::optional<HcaIndex> hca_of_lid(Lid lid) const;

  // --- switches ---
  const std::vector<topo::NodeId>& switch_nodes() const { return sw_nodes_; } ///< switches and routers
  bool is_switch(topo::NodeId n) const { return n < sw_of_node_.size() && sw_of_node_[n] != kNone; }

  /// The LFT entry: the output port of switch `sw` for destination `d`; kNoPort if unreachable or `sw` is
  /// not a switch.
  Port next_hop(topo::NodeId sw, HcaIndex d) const;
  /// The AR group (static port first); empty if unreachable.
  ArGroupView ar_group(topo::NodeId sw, HcaIndex d) const;

  /// Whether the static routes deliver from `src` to `dst` (false across planes of a multi-rail fabric).
  bool reachable(HcaIndex src, HcaIndex dst) const;
  /// The static path from `src` to `dst` as LinkIds, starting with the source HCA's cable and ending with
  /// the destination's; empty when src == dst. Throws InputError when there is no route.
  std::vector<topo::LinkId> route(HcaIndex src, HcaIndex dst) const;
  /// The same by NodeId (both must be HCAs).
  std::vector<topo::LinkId> route_nodes(topo::NodeId src, topo::NodeId dst) const;

  // --- virtual lanes ---
  VlRule vl_rule() const { return vl_rule_; }
  int num_vls() const { return num_vls_; } ///< data VLs the routing needs to be deadlock-free
  /// Whether the algorithm guarantees deadlock freedom with num_vls() VLs on any fabric it accepts.
  bool deadlock_free_by_construction() const { return deadlock_free_; }

  // --- dragonfly ---
  DragonflyMode dragonfly_mode() const { return df_mode_; }
  const DragonflyLayout* dragonfly() const { return df_.get(); }

  /// Bytes held by the tables (for reports and benchmarks).
  std::size_t memory_bytes() const;
  /// One line: how the static ports and groups are stored, e.g. "D-mod-k rule; 34 port sets".
  std::string storage_description() const;
  /// Things a user should know (e.g. updn fell back to a single root).
  const std::vector<std::string>& notes() const { return notes_; }

  // --- low-level access for engines that index switches densely ---
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  std::uint32_t switch_index(topo::NodeId sw) const {
    return sw < sw_of_node_.size() ? sw_of_node_[sw] : kNone;
  }
  Port next_hop_by_index(std::uint32_t sw_index, HcaIndex d) const;
  /// Switch index the HCA is cabled to (kNone if none) and its cable.
  std::uint32_t hca_switch_index(HcaIndex d) const { return hca_[d].sw; }
  topo::LinkId hca_link(HcaIndex d) const { return hca_link_[d]; }
  /// The link cabled to `port` of switch `sw_index` (kNoLink if none) and the node at its other end.
  topo::LinkId link_at(std::uint32_t sw_index, Port port) const;
  topo::NodeId peer_at(std::uint32_t sw_index, Port port) const;

 private:
  friend class detail::TablesBuilder;
  enum class StaticStorage : std::uint8_t { Dense8, Dense16, DmodK };
  struct Group {
    std::uint32_t offset = 0;
    std::uint32_t size = 0;
    std::uint32_t divisor = 1; ///< D-mod-k: static index = (rank / divisor) mod size
  };

  std::string algorithm_;
  LidMap lids_;
  std::vector<topo::NodeId> sw_nodes_;
  std::vector<std::uint32_t> sw_of_node_; // NodeId -> switch index or kNone
  std::vector<std::uint32_t> port_base_;  // switch index -> offset into port_link_/port_peer_ (radix entries)
  std::vector<topo::LinkId> port_link_;
  std::vector<topo::NodeId> port_peer_;

  std::vector<topo::NodeId> hca_nodes_;
  std::vector<std::uint32_t> hca_of_node_; // NodeId -> HcaIndex or kNone
  struct HcaEntry {                        // one cache line holds 4: next_hop reads one entry
    std::uint32_t sw = kNone;              // switch index the HCA is cabled to, or kNone
    std::uint32_t cls = kNone;             // class (index of its leaf among leaves), or kNone
    std::uint32_t rank = 0;                // DmodK: ca-order rank
    Port port = kNoPort;                   // port of `sw`
  };
  std::vector<HcaEntry> hca_;
  std::vector<topo::LinkId> hca_link_; // HcaIndex -> the HCA's cable, kNoLink if none
  std::size_t num_classes_ = 0;

  std::vector<std::uint32_t> group_of_; // [sw * num_classes_ + class] -> index into groups_, or kNone
  std::vector<Group> groups_;
  std::vector<Port> group_ports_;

  StaticStorage storage_ = StaticStorage::Dense8;
  std::vector<std::uint8_t> static8_; // [sw * num_hcas + d]
  std::vector<std::uint16_t> static16_;

  VlRule vl_rule_ = VlRule::Single;
  int num_vls_ = 1;
  bool deadlock_free_ = false;
  DragonflyMode df_mode_ = DragonflyMode::None;
  std::unique_ptr<DragonflyLayout> df_;
  std::vector<std::string> notes_;
};

/// Per-algorithm options (each algorithm reads the ones it understands).
struct RoutingOptions {
  /// updn: names of the root switches; empty = the switches of the highest tier.
  std::vector<std::string> roots;
};

/// ftree: OpenSM's fat-tree routing as it fills LFTs on a full tree, i.e. D-mod-k. Destinations are
/// ranked in "ca-order" (leaf switches in NodeId order, each leaf's HCAs in port order). At a switch of
/// tier t the up-port for rank r is up[(r / P_t) mod u], u = its minimal up-ports (every cable counts as a
/// port), P_t = product of the up-port counts of tiers 1..t-1 (P_1 = 1): at a leaf r mod u, one tier up
/// (r / u1) mod u2 — OpenSM's floor(d / k^(l-1)) mod k on a k-ary tree. The down path is unique; among
/// parallel down cables to a child c the choice mirrors the one c's own up-ports make:
/// (r / (P_c * n_c)) mod par, n_c = distinct parents of c. Refuses (InputError, suggesting updn/minhop)
/// fabrics that are not layered trees: every HCA on a tier-1 switch, every switch cable between adjacent
/// tiers. Deadlock-free with 1 VL.
RoutingTables route_ftree(const topo::Fabric& f, const RoutingOptions& opt = {});

/// minhop (OpenSM's default): min-hop ports to every destination; per switch, destinations in LID order,
/// each takes the min-hop port with the fewest destinations assigned so far (ties: lowest port).
/// Not deadlock-free on cyclic fabrics (check_deadlock_free reports the cycle).
RoutingTables route_minhop(const topo::Fabric& f, const RoutingOptions& opt = {});

/// updn (up*/down*): switches ranked by BFS distance from the roots (RoutingOptions::roots, default the
/// highest-tier switches); a hop is "up" toward a smaller (rank, NodeId) key. No route turns from down to up,
/// so the channel dependency graph is acyclic with 1 VL. Destination-based tables must be legal whatever
/// the arrival port, so a switch that can reach the destination going down only does so (shortest such
/// path); otherwise it goes up toward the nearest such switch. Among those shortest legal choices, port
/// equalisation as in minhop. On fat-trees ranked from the top tier the result is minimal. A switch without
/// HCAs may lack an entry for a destination no route brings to it (kNoPort; e.g. a root cannot reach the
/// HCAs of another root: down then up). If the default roots leave a destination unreachable from a switch
/// with HCAs (odd fabrics), it ranks from the single most central top-tier switch instead (always complete)
/// and says so in notes(); explicit roots that do so are an InputError.
RoutingTables route_updn(const topo::Fabric& f, const RoutingOptions& opt = {});

/// Builds tables for a named algorithm.
using RoutingFactory = std::function<RoutingTables(const topo::Fabric&, const RoutingOptions&)>;
/// A fresh registry of the built-in algorithms: ftree, minhop, updn, df-min, df-valiant, df-ugal.
Registry<RoutingFactory> builtin_routing();

} // namespace ibn::routing
