#pragma once
// Placement: which HCAs a job's nodes get (DESIGN.md §5; docs/workloads.md "Placement").
//
// Node slots. A node (server) owns `nics_per_node` HCAs, one per rail; rail i of a node is its HCA i. The
// pool of node slots is built from a Fabric once (NodePool::from_fabric):
// - Host mode: when some host (Node::host) owns more than one HCA — a fabric generated with K rails, or
//   an imported fabric whose servers have several ports — every host is one node slot and its HCAs, sorted
//   by (plane, HcaIndex), are rails 0..H-1. A host that owns fewer than nics_per_node HCAs is not a node
//   (a storage or login server beside the GPU nodes of an imported fabric: NodePool::left_out() counts and
//   names them, and the run warns); with nics_per_node < H a slot holds the host's rails
//   0..nics_per_node-1 (the other HCAs stay unused). InputError when no host has nics_per_node HCAs.
// - Consecutive mode: when every host owns one HCA (a single-plane fabric), consecutive HCAs in HcaIndex
//   order form nodes: HCAs [K*n, K*n + K) are node n; a remainder of fewer than K HCAs is not a node.
// Slot order is the order of the slot's rail-0 HCA in HcaIndex order (host order for generated fabrics).
// A slot's leaf is the switch cabled to its rail-0 HCA (kNoNode for an uncabled HCA). A slot's name is its
// host's name: the first word of the rail-0 HCA's description when it has one (ibnetdiscover's
// "host mlx5_0"), else the rail-0 HCA's name without a trailing "-rail-<n>" (generated fabrics:
// "host-3-rail-0" -> "host-3"); in consecutive mode with K > 1 the name is the rail-0 HCA's name.
//
// Policies (a Registry, `ibnetsim list` can print it). `free` is the list of free slots in slot order.
// - linear:     the first `nodes` free slots, in slot order.
// - random:     `nodes` free slots drawn uniformly without replacement (partial Fisher-Yates on the free
//               list with Rng::uniform_below), then sorted into slot order (ranks follow node order, as a
//               batch scheduler's sorted host list does).
// - spread:     free slots grouped by leaf (leaves in order of their first slot); round-robin over the
//               leaves taking each leaf's next free slot, so a job of n nodes spans min(n, leaves with a
//               free slot) leaves. Node order is the round-robin order (consecutive ranks on different
//               leaves).
// - fragmented: every other free slot: free[0], free[2], free[4], ...; when more are needed than that
//               gives, continue with free[1], free[3], ... Leaves one-slot gaps for later jobs.
// - explicit:   the listed slots, in the listed order: each entry is a slot index ("12"), a slot name
//               ("host-12") or the name of any HCA of the slot. Unknown, repeated or busy entries are
//               InputErrors naming the job and the entry; the count must equal `nodes` when nodes > 0.
// Jobs are placed one after another on the slots still free. Asking for more nodes than are free is an
// InputError naming the job, the request and the free count.
#include "models/routing/routing.hpp"
#include "sim/registry.hpp"
#include "sim/rng.hpp"
#include "topology/fabric.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ibn::scen {

using routing::HcaIndex;

/// One server: its HCAs by rail.
struct NodeSlot {
  std::string name;                  ///< host name (see the header comment)
  std::vector<HcaIndex> hcas;        ///< rail i -> HCA, size nics_per_node
  topo::NodeId leaf = topo::kNoNode; ///< the switch cabled to the rail-0 HCA
  /// Rail i -> the switch cabled to that HCA (from_fabric; empty for slots given directly: `leaf` stands for
  /// every rail). On a rail-optimized fabric the rails of one node sit on different leaves.
  std::vector<topo::NodeId> rail_leaves;
};

/// The node slots of a fabric for a given number of NICs per node.
class NodePool {
 public:
  /// Builds the slots (rules in the header comment). InputError when nics_per_node is 0, when a host
  /// owns a different number of HCAs than nics_per_node (host mode), or when no slot results.
  static NodePool from_fabric(const topo::Fabric& fabric, std::uint32_t nics_per_node);
  /// Slots given directly (tests, or callers with their own grouping). Every slot must have
  /// nics_per_node HCAs; InputError otherwise.
  NodePool(std::vector<NodeSlot> slots, std::uint32_t nics_per_node);

  std::size_t size() const { return slots_.size(); }
  std::uint32_t nics_per_node() const { return nics_per_node_; }
  const NodeSlot& slot(std::uint32_t i) const { return slots_.at(i); }
  const std::vector<NodeSlot>& slots() const { return slots_; }
  /// The slot called `name` (its host name or the name of one of its HCAs, when names are known).
  std::optional<std::uint32_t> find(const std::string& name) const;
  /// Attaches HCA names (HcaIndex -> name) so find() also matches HCA names.
  void set_hca_names(std::vector<std::string> names) { hca_names_ = std::move(names); }
  /// Host mode: hosts left out for owning fewer than nics_per_node HCAs, and the first of them ("" if none).
  std::size_t left_out() const { return left_out_; }
  /// Whether nodes are hosts (some host owns several HCAs), not runs of consecutive one-HCA hosts.
  bool host_mode() const { return host_mode_; }
  const std::string& left_out_example() const { return left_out_example_; }

 private:
  std::size_t left_out_ = 0;
  std::string left_out_example_;
  bool host_mode_ = false;
  std::vector<NodeSlot> slots_;
  std::uint32_t nics_per_node_ = 1;
  std::vector<std::string> hca_names_;
};

struct JobPlacementRequest {
  std::string job;                         ///< name used in errors and results
  std::uint32_t nodes = 1;                 ///< number of node slots (0 with `explicit`: as many as listed)
  std::string policy = "linear";           ///< linear, random, spread, fragmented, explicit
  std::vector<std::string> explicit_nodes; ///< `explicit` only: slot indices or names
  /// NICs the job uses per node: rails 0..n-1 of each slot; 0 = all of the pool's nics_per_node.
  std::uint32_t nics_per_node = 0;
  /// Where the request came from, for errors about one listed node: the scenario file and the job's key
  /// ("jobs[0]"); empty: errors name the job only.
  std::string file, key;
};

struct JobPlacement {
  std::string job;
  std::vector<std::uint32_t> slots;         ///< slot indices, in rank (node) order
  std::vector<std::vector<HcaIndex>> nodes; ///< per node, rail i -> HCA (size = the job's NICs per node)
  /// Every HCA of the job, node-major (node 0 rail 0, node 0 rail 1, ...).
  std::vector<HcaIndex> all_hcas() const;
};

/// A placement policy: choose `n` of the free slots (given in slot order). Throws InputError on a
/// request it cannot satisfy; must return n distinct entries of `free`.
using PlacementFn =
    std::function<std::vector<std::uint32_t>(const NodePool& pool, const std::vector<std::uint32_t>& free,
                                             const JobPlacementRequest& req, std::uint32_t n, Rng& rng)>;

/// A fresh registry of the built-in policies (linear, random, spread, fragmented, explicit).
Registry<PlacementFn> builtin_placement_policies();

/// Places the jobs one after another on the free slots of `pool`. Random draws come from `rng`.
std::vector<JobPlacement> place_jobs(const NodePool& pool, const std::vector<JobPlacementRequest>& jobs,
                                     Rng& rng);

/// Number of distinct leaf switches the placed job's HCAs are cabled to, over the rails it uses
/// (NodeSlot::rail_leaves; NodeSlot::leaf where those are not known). A 4-node job inside one rail-optimized
/// SU with 8 NICs per node spans 8 leaves (it counted 1, the rail-0 leaf, before 2026-12-07).
std::size_t leaves_spanned(const NodePool& pool, const JobPlacement& job);

} // namespace ibn::scen
