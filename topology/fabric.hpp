#pragma once
// Fabric: the immutable-after-build graph of an InfiniBand fabric — HCA ports, switches and the cables
// between their ports. Both engines, the routing layer and every report read this one model.
//
// Conventions
// - NodeId / LinkId are dense indices (0..n-1) into nodes() / links(); Boost.Graph vertex i == NodeId i,
//   and each Boost edge carries its LinkId, so Boost algorithms and our arrays agree.
// - Ports are numbered 1..radix as on real switches (port 0 is the management port, never cabled).
// - Tier: HCAs and aggregation nodes 0, leaf switches 1, spines 2, super-spines/cores 3. Dragonfly
//   routers are tier 1 and carry their group in `group`.
// - An HCA belongs to a host (server) `host`; with rails/planes a host has several HCAs, HCA i on plane i.
// - Parallel cables between the same two switches are separate links.
// - Link latency is cable propagation only, in integer picoseconds (DAC 4.76 ns/m, fibre 5.13 ns/m).
//
// Limitations: one port per HCA node (a dual-port card is two HCA nodes of one host).
#include "sim/time.hpp"
#include "topology/link_speed.hpp"

#include <boost/graph/adjacency_list.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ibn::topo {

using NodeId = std::uint32_t;
using LinkId = std::uint32_t;
inline constexpr NodeId kNoNode = ~NodeId{0};
inline constexpr LinkId kNoLink = ~LinkId{0};

enum class NodeKind : std::uint8_t {
  Hca,        ///< a channel adapter port attached to a host: a traffic endpoint
  Switch,     ///< an InfiniBand switch
  Router,     ///< an InfiniBand router (ibnetdiscover "Rt")
  Aggregator, ///< a SHARP aggregation node: a CA inside a switch, not a traffic endpoint
};
std::string to_string(NodeKind k);

enum class Medium : std::uint8_t { Dac, Fiber };
std::string to_string(Medium m);
Medium parse_medium(const std::string& text, const std::string& what);
/// Propagation delay per metre: DAC 4.76 ns/m, fibre 5.13 ns/m (model-reference.md §1.5).
std::int64_t propagation_ps_per_m(Medium m);
/// Cables up to this length default to DAC, longer ones to fibre.
inline constexpr double kDacMaxLengthM = 5.0;

struct Node {
  NodeKind kind = NodeKind::Switch;
  std::string name;        ///< unique within a fabric
  std::uint64_t guid = 0;  ///< 0 when unknown or redacted
  int radix = 1;           ///< number of ports (1 for an HCA port)
  int tier = 0;            ///< 0 HCA, 1 leaf, 2 spine, 3 core
  int host = -1;           ///< HCAs: index of the server; -1 for switches
  int plane = 0;           ///< rail / plane index
  int group = -1;          ///< dragonfly group or fat-tree pod; -1 if none
  int lid = 0;             ///< base LID, 0 when unknown
  std::string description; ///< NodeDescription as ibnetdiscover shows it (may be empty)
  /// Switches: the catalog id of the switch model (topology/switch_models.hpp), empty when unknown. Both
  /// engines charge this model's port-to-port latency for the switch; without one, the engine's default.
  std::string switch_model;
};

struct PortRef {
  NodeId node = kNoNode;
  int port = 0;
  bool operator==(const PortRef&) const = default;
};

struct Link {
  PortRef a;
  PortRef b;
  LinkSpeed speed;
  double length_m = 1.0;
  Medium medium = Medium::Dac;
  Time latency; ///< propagation delay of the cable

  std::uint64_t rate_bps() const { return speed.rate_bps(); }
  NodeId other(NodeId n) const { return a.node == n ? b.node : a.node; }
};

/// Makes a link whose latency follows from length and medium.
Link make_link(PortRef a, PortRef b, LinkSpeed speed, double length_m, Medium medium);

class Fabric {
public:
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, boost::no_property,
                                      boost::property<boost::edge_index_t, LinkId>>;

  Fabric() = default;

  NodeId add_node(Node n);
  /// Adds a cable. Throws InputError if a port is out of range or already cabled, or on a self-loop.
  LinkId add_link(const Link& l);

  std::size_t num_nodes() const { return nodes_.size(); }
  std::size_t num_links() const { return links_.size(); }
  const Node& node(NodeId id) const { return nodes_.at(id); }
  Node& mutable_node(NodeId id) { return nodes_.at(id); }
  const Link& link(LinkId id) const { return links_.at(id); }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<Link>& links() const { return links_; }
  const Graph& graph() const { return graph_; }

  /// The link cabled to `port` of `node`, if any.
  std::optional<LinkId> link_at(NodeId node, int port) const;
  /// Every link of `node`, in port order.
  std::vector<LinkId> links_of(NodeId node) const;
  std::optional<NodeId> find_node(const std::string& name) const;

  /// HCAs (traffic endpoints) in NodeId order.
  std::vector<NodeId> hcas() const;
  std::vector<NodeId> switches() const; ///< switches and routers
  std::size_t num_hosts() const;        ///< distinct servers owning HCAs
  int max_tier() const;
  /// The connected component of every node (0, 1, ... in order of their lowest NodeId), by the cables.
  std::vector<int> components() const;

  /// Structural checks: every port within radix (enforced on insert), no self-loops, names unique, and all
  /// nodes of a plane (rail) in one connected component (so a single-plane fabric is connected).
  /// Throws InputError describing the first problem.
  void validate() const;

  /// Free text name of the fabric and, for generated fabrics, the generator and its parameters.
  std::string name;
  nlohmann::json origin = nlohmann::json::object();

private:
  std::vector<Node> nodes_;
  std::vector<Link> links_;
  std::vector<std::vector<LinkId>> ports_; // ports_[node][port-1]
  Graph graph_;
};

/// Directed cables per (transmitter's tier, receiver's tier), sorted by tier pair: each cable counts once
/// in each direction. What an engine's report folds its idle links into (eng::EngineReport::idle_links).
using CableDirections = std::vector<std::pair<std::pair<int, int>, std::uint64_t>>;
CableDirections cable_directions_by_tier(const Fabric& f);

} // namespace ibn::topo
