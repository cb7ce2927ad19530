#pragma once
// Collectives as transfer DAGs: build_collective() turns one NCCL-style collective call into an
// engine-agnostic TransferDag (scenarios/dag.hpp). docs/collectives.md describes every algorithm, the
// chunk/slice/window rules and the limits; the numbers come from docs/model-reference.md §5 (NCCL 2.20.3).
//
// Ranks are GPUs placed node-major: rank r is on node r / gpus_per_node, local GPU r % gpus_per_node.
// Transfers between ranks of one node are intra-node (NVLink) copies; inter-node transfers carry the NIC
// index (`rail`) both ends use.
//
// Algorithms (registered in builtin_collectives(), printed by `ibnetsim list`):
//   ring              AllReduce (reduce-scatter + all-gather, 2(n-1) steps), AllGather, ReduceScatter (n-1
//                     steps), Broadcast and Reduce (pipelined chain); channels, chunks, slices, FIFO window.
//   tree              AllReduce: NCCL's double binary tree over nodes + a chain inside each node.
//   halving-doubling  AllReduce: recursive halving reduce-scatter + recursive doubling all-gather (2^k
//   ranks). hierarchical      AllReduce: intra-node ring reduce-scatter, inter-node ring AllReduce per local
//   GPU,
//                     intra-node ring all-gather.
//   direct            AllToAll (every pair, 128 KiB chunks) and SendRecv (r -> r+1).
//   nvls              AllReduce with NVSwitch multicast/reduction (NVLink SHARP) inside each node; across
//                     nodes NCCL's NVLS_TREE (a tree over nodes per GPU's shard). Simple only.
//   collnet           AllReduce with in-network reduction in the InfiniBand switches (SHARP, NCCL's CollNet
//                     Direct): intra-node gather to one head per NIC, one trip through the switch tree,
//                     intra-node broadcast. Simple only.
//   auto              NCCL's tuning model (scenarios/tuning.hpp) picks ring or tree (nvls, collnet when the
//                     spec offers them) and the protocol.
//   "a,b,..."         an NCCL_ALGO-style list ("ring,tree,nvls"): the tuning model picks among those.
//
// Dependency convention: a dependency on the last transfer of a connection (src, dst, channel) stands for
// every earlier transfer on it, because a connection (one RC QP, or one NVLink copy queue) delivers in order.
#include "scenarios/dag.hpp"
#include "sim/registry.hpp"
#include "sim/time.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>

namespace ibn::scen {

enum class CollOp { AllReduce, AllGather, ReduceScatter, AllToAll, SendRecv, Broadcast, Reduce };

/// "allreduce", "allgather", "reducescatter", "alltoall", "sendrecv", "broadcast", "reduce".
std::string to_string(CollOp op);
/// Accepts any case and optional '_' or '-' ("all_reduce", "AllReduce", "all-reduce"); InputError naming
/// `what` (the flag or key) and the accepted names otherwise.
CollOp parse_coll_op(const std::string& text, const std::string& what);

/// NCCL's FIFO depth per connection (NCCL_STEPS).
inline constexpr std::uint32_t kNcclSteps = 8;
/// NCCL's largest channel count (MAXCHANNELS in current releases).
inline constexpr std::uint32_t kMaxChannels = 64;
/// A DAG larger than this is refused (InputError suggesting a larger chunk_bytes). A run holds about 100 bytes
/// per transfer (DAG, executor and flow state; measured: 630 MB for a 512-rank ring of ~6 M transfers), so
/// the limit is ~3 GB; it admits a 1,024-rank (128 x 8) 64 MiB ring with NCCL's default 16 channels (~24 M).
inline constexpr std::uint64_t kMaxTransfers = 32'000'000;

struct CollectiveSpec {
  CollOp op = CollOp::AllReduce;
  /// The size as nccl-tests' "size" column prints it: AllReduce, Broadcast, Reduce: the buffer S;
  /// AllGather / ReduceScatter: the whole buffer (ranks x the per-rank part, rounded up to a multiple of
  /// ranks); AllToAll: what each rank sends in total (size/ranks to each rank, itself included);
  /// SendRecv: what each rank sends to the next.
  std::uint64_t size_bytes = 0;
  std::uint32_t ranks = 2;
  std::uint32_t gpus_per_node = 1;
  std::uint32_t nics_per_node = 1; ///< rails; channel c leaves its node through NIC c mod nics_per_node
  /// "ring", "tree", "halving-doubling", "hierarchical", "direct", "nvls", "collnet" or "auto" (tuning
  /// model: ring or tree, plus nvls / collnet when offered below, for the collectives that have them, direct
  /// for AllToAll/SendRecv); or a comma-separated NCCL_ALGO list ("ring,nvls"; NCCL's names are accepted:
  /// NVLSTree -> nvls, CollNetDirect / CollNetChain / COLLNET_DIRECT -> collnet): the tuning model picks
  /// among those. A named or listed algorithm is built whatever the offer flags say (as NCCL_ALGO forces it).
  std::string algorithm = "auto";
  /// The system offers NVLS (NVSwitch with multicast, Hopper or later: scenario key nccl.nvls) and CollNet
  /// (SHARP switches: nccl.collnet); "auto" considers them only then.
  bool nvls = false, collnet = false;
  std::string protocol = "auto"; ///< "simple", "ll128", "ll" or "auto" (tuning model)
  /// 0: NCCL's count as modelled here: min(32, 2 x nics_per_node) (one ring per NIC found by the search,
  /// doubled by ncclTopoDupChannels for NVLink-class intra bandwidth).
  std::uint32_t channels = 0;
  /// NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS: bounds on the count used when channels == 0 (0 = none).
  std::uint32_t min_channels = 0, max_channels = 0;
  /// Data bytes per chunk; 0: NCCL's (Simple: ring AllReduce/AllGather/ReduceScatter 2 MiB = 4 steps of
  /// 512 KiB, chain 512 KiB, tree 512 KiB halved for small sizes, halving-doubling 2 MiB; LL 32 KiB;
  /// LL128 576,000 B = one step of data).
  std::uint64_t chunk_bytes = 0;
  /// Transfers in flight per connection (the FIFO window); 0: NCCL_STEPS / steps per slice = 4 for Simple
  /// ring AllReduce/AllGather/ReduceScatter and halving-doubling (2-step slices), 8 otherwise.
  std::uint32_t slices_in_flight = 0;
  std::uint32_t root = 0; ///< Broadcast / Reduce root rank
  /// Per-transfer software cost, written as the local_delay of every transfer (of every intra-node transfer
  /// when net_step_overhead is set). The NCCL cost model (scenarios/nccl_cost.hpp) sets it to the
  /// algorithm/protocol's per-step cost inside a node.
  Time step_overhead;
  /// Per-transfer software cost of inter-node transfers; unset: step_overhead.
  std::optional<Time> net_step_overhead;
  /// Fixed cost of the collective before its first transfer (NCCL's baseLat: kernel launch); written as
  /// TransferDag::launch_latency.
  Time launch_latency;
  /// NCCL release whose constants the tuning model (and the cost model) use ("" = 2.20.3); see
  /// scenarios/nccl_cost.hpp.
  std::string nccl_version;
  /// NCCL's cost model on: the builder adds the resolved algorithm/protocol's base latency to
  /// launch_latency and its per-step costs to the local_delay of every transfer (intra- and inter-node
  /// separately), from nccl_step_costs() of the nccl_version's table.
  bool nccl_costs = false;
  /// Fitted costs (from a calibration profile's nccl section) that replace the table's base and net costs
  /// for one protocol; protocol "" = none.
  struct FittedCosts {
    std::string protocol;
    double base_us = 0, net_us = 0;
  } nccl_fitted;
  /// The engine's own latency of an inter-node message (NIC transmit and receive, one switch, two cables:
  /// the shortest path between nodes), which NCCL's per-step network constant hwLat[NET] (measured on real
  /// systems) already contains. With the cost model on, the table's inter-node step cost is charged less
  /// this, never below zero. Intra-node steps and fitted costs (measured against the simulation) are charged
  /// whole (docs/collectives.md "NCCL cost model"). Zero: no credit.
  Time hw_net_latency;
  /// The typical launch delay the variability model adds per iteration (LognormalPareto::typical() of
  /// variability.launch), which NCCL's base latency already contains: the table's constants and a fitted
  /// base both come from averaged measured times, launch jitter included. With the cost model on, the base
  /// is charged less this, never below zero (docs/calibration.md "Variability"). Zero: no credit.
  Time launch_credit;
  // Inputs of the tuning model (algorithm or protocol "auto"):
  double nic_gbps = 400;     ///< per NIC, per direction, Gb/s
  double nvlink_gbps = 3600; ///< per GPU, per direction, Gb/s
  bool amd_host = false;     ///< NCCL's AMD-host constants (netOverhead 2 us, lower llMaxBw)
  bool ll128_enabled = true; ///< LL128 allowed (NCCL enables it on Hopper with NVLink by default)
};

/// Builds the DAG. Throws InputError for impossible specs (0 ranks, ranks not a multiple of
/// gpus_per_node, unknown algorithm/protocol, an algorithm that does not do the op, halving-doubling on
/// a rank count that is not a power of two, ...). One rank or size 0: an empty DAG.
TransferDag build_collective(const CollectiveSpec& spec);

/// The algorithm names in `algorithm` (a name or a comma-separated NCCL_ALGO list), lower case, with NCCL's
/// spellings mapped (NVLSTree -> nvls; CollNetDirect, CollNetChain, COLLNET_DIRECT -> collnet); duplicates
/// dropped. InputError for a list member other than ring, tree, nvls, collnet.
std::vector<std::string> algorithm_names(const std::string& algorithm);

/// nccl-tests' busbw = algbw x factor: AllReduce 2(n-1)/n; AllGather, ReduceScatter, AllToAll (n-1)/n;
/// SendRecv, Broadcast, Reduce 1. (n = 1: 0 for the (n-1) forms, as nccl-tests prints 0 busbw.)
double busbw_factor(CollOp op, std::uint32_t ranks);

/// Bytes rank `rank` sends in `dag` (wire bytes of the protocol), for tests and reports.
std::uint64_t bytes_sent_by(const TransferDag& dag, std::uint32_t rank);

/// The channel count used when spec.channels == 0 (see CollectiveSpec::channels), within the spec's
/// min_channels/max_channels bounds.
std::uint32_t default_channels(const CollectiveSpec& spec);

/// Wire bytes that carry `data_bytes` in `protocol`: simple x1, ll x2 (8 B data per 16 B line),
/// ll128 x128/120 (rounded up).
std::uint64_t wire_bytes(std::uint64_t data_bytes, const std::string& protocol);

/// What build_collective() emits for a ring AllReduce, AllGather or ReduceScatter (algorithm "ring"), for
/// evaluators that walk the same ring without building its DAG (scenarios/ring_shortcut.hpp). Per loop of
/// loop_bytes(), chunk j of channel c has chunk_size(); at step s position p of channel c sends chunk
/// (p - s) mod ranks to position p + 1 as slices_of(size) transfers of wire(slice) bytes each, each after the
/// same slice one step earlier one position back (step 0: after everything delivered to p in the previous
/// loop), the transfer `window` earlier on its connection and step_overhead (net_step_overhead for a
/// transfer between nodes); every rank starts launch_latency after it is ready (DagExecutor::start).
/// These three include NCCL's software costs when the cost model is on, as the DAG's transfers do.
struct RingPlan {
  CollOp op = CollOp::AllReduce;
  std::string protocol; ///< "simple", "ll128", "ll"
  std::uint32_t ranks = 0, gpus_per_node = 1, nics_per_node = 1, channels = 1;
  std::uint64_t bytes = 0; ///< AllReduce: the buffer; AllGather / ReduceScatter: the per-rank part
  std::uint64_t chunk = 0, slice = 0, grain = 1;
  std::uint32_t slices_per_chunk = 1, window = 0;
  Time step_overhead;     ///< per transfer inside a node (TransferDag local_delay)
  Time net_step_overhead; ///< per transfer between nodes
  Time launch_latency;    ///< per execution, before a rank's first transfer
  /// The channel's stage on every send (TransferDag::channel_gbps with channel_stage_all), wire Gb/s; 0:
  /// none. A ring's send is posted after its pass: max(its post, the previous pass of its rank and channel) +
  /// wire / rate; a tree's rate is per lane and spaces the passes without delaying the posts
  /// (TransferDag::channel_stage_overlaps).
  double stage_gbps = 0;
  std::vector<std::vector<std::uint32_t>> orders; ///< per channel: ring position -> rank
  std::vector<std::int32_t> rails;                ///< per channel

  bool all_reduce() const { return op == CollOp::AllReduce; }
  std::uint32_t steps() const { return all_reduce() ? 2 * (ranks - 1) : ranks - 1; }
  std::uint64_t loop_bytes() const;
  /// The chunk size of a loop that starts with `remaining` bytes left (NCCL's realChunkSize).
  std::uint64_t real_chunk(std::uint64_t remaining) const;
  /// Chunk j of channel c in a loop with `remaining` bytes left and chunk size `real` (0: not sent).
  std::uint64_t chunk_size(std::uint64_t remaining, std::uint64_t real, std::uint32_t c,
                           std::uint32_t j) const;
  std::vector<std::uint64_t> slices_of(std::uint64_t data_bytes) const;
  std::uint64_t wire(std::uint64_t data_bytes) const { return wire_bytes(data_bytes, protocol); }
};

/// The ring plan of `spec` when build_collective(spec) would build a ring AllReduce/AllGather/ReduceScatter
/// DAG of at least one transfer (algorithm "ring", 2+ ranks, size > 0); nullopt otherwise. InputError as
/// build_collective for an impossible spec. Does not apply kMaxTransfers.
std::optional<RingPlan> ring_plan(const CollectiveSpec& spec);
/// Transfers (network and intra-node) of a ring plan per collective call: what its DAG would hold.
std::uint64_t ring_plan_transfers(const RingPlan& plan);

/// A collective's protocol as results name it: `protocol`, or "inter/intra" (e.g. "ll128/simple") when the
/// transfers inside a node run another (a hierarchical AllReduce's intra-node rings under `auto`).
inline std::string protocol_label(const std::string& protocol, const std::string& nvlink_protocol) {
  return nvlink_protocol.empty() || nvlink_protocol == protocol ? protocol : protocol + "/" + nvlink_protocol;
}

/// One protocol's cut of a ring's data (Builder::cut_for): chunk, nominal slice, grain, slices per chunk,
/// window.
struct RingProtocolCut {
  std::string protocol;
  std::uint64_t chunk = 0, slice = 0, grain = 1;
  std::uint32_t slices_per_chunk = 1, window = 0;
};

/// The rings of a ring-structured collective, stage by stage, for the flow engine's ring-fluid model
/// (scenarios/ring_fluid.hpp): a ring AllReduce/AllGather/ReduceScatter is one stage, and so is a tree
/// AllReduce (its double binary trees; `parents` instead of `orders`); a hierarchical AllReduce is three
/// (intra-node reduce-scatter on every node, inter-node AllReduce per local GPU on its rail, intra-node
/// all-gather), run one after the other. Every ring of a stage has the same kind and bytes and runs at the
/// same time; the cut (chunk, slices, window, grain) and software costs are the DAG's.
struct RingStage {
  bool all_reduce = true;  ///< 2(n-1) steps; else n-1 (AllGather / ReduceScatter)
  std::uint64_t bytes = 0; ///< per ring: AllReduce the buffer, else the per-rank part
  std::uint32_t channels = 1; ///< rings per ring group (loop bytes count them)
  std::vector<std::vector<std::uint32_t>> orders; ///< every ring of the stage: position -> rank
  std::vector<std::int32_t> rails;                ///< per ring (-1: inside a node)
  /// Every ring inside a node (a hierarchical AllReduce's intra-node stages): RingStages::nvlink's cut.
  bool nvlink = false;
  /// A launch before the stage starts (a hierarchical AllReduce's later NCCL calls; the first stage's is
  /// RingStages::launch_latency).
  Time launch;
  /// A tree AllReduce stage instead of rings (algorithm "tree"): per channel each rank's parent (-1: root);
  /// every chunk goes up to the root and back down; `orders` is empty.
  std::vector<std::vector<std::int32_t>> parents;
  bool tree() const { return !parents.empty(); }
  std::uint32_t positions() const { return orders.empty() ? 0 : static_cast<std::uint32_t>(orders[0].size()); }
  /// Chunks one edge carries per loop: a ring's steps; a tree edge carries every chunk once.
  std::uint32_t steps() const {
    if (tree()) return 1;
    return all_reduce ? 2 * (positions() - 1) : positions() - 1;
  }
  /// Chunks cut per loop: a ring AllReduce one per position and channel, else (AllGather, ReduceScatter,
  /// tree) one per channel.
  std::uint64_t chunks_per_loop() const {
    return all_reduce && !tree() ? std::uint64_t{channels} * positions() : channels;
  }
  std::uint64_t loop_bytes(std::uint64_t chunk) const { return chunks_per_loop() * chunk; }
};
struct RingStages {
  std::string algorithm, protocol;
  std::uint32_t ranks = 0, gpus_per_node = 1, channels = 1;
  std::uint64_t chunk = 0, slice = 0, grain = 1;
  std::uint32_t slices_per_chunk = 1, window = 0;
  Time step_overhead, net_step_overhead, launch_latency;
  /// The per-channel stage on every transfer (a tree's: per lane), wire Gb/s (0: none).
  double stage_gbps = 0;
  /// Its rate on the stages inside a node when it is their own (0: none; nullopt: stage_gbps).
  std::optional<double> stage_gbps_nvlink;
  /// The cut of the stages inside a node (RingStage::nvlink): their protocol's (hierarchical `auto`: the
  /// intra-node rings are tuned on their own); else the same as the fields above.
  RingProtocolCut nvlink;
  std::vector<RingStage> stages;
  /// The cut `stage` runs with: chunk, slice, grain, slices per chunk, window and protocol.
  RingProtocolCut cut_of(const RingStage& stage) const;
  /// The largest chunk of a loop with `remaining` bytes left in `stage` (NCCL's realChunkSize).
  std::uint64_t real_chunk(const RingStage& stage, std::uint64_t remaining) const;
  /// Slices of one chunk of `data_bytes` of `stage` (Builder::slices_of): their count and the first one's
  /// size.
  std::pair<std::uint64_t, std::uint64_t> slices(const RingStage& stage, std::uint64_t data_bytes) const;
  std::uint64_t wire(const RingStage& stage, std::uint64_t data_bytes) const {
    return wire_bytes(data_bytes, cut_of(stage).protocol);
  }
};
/// The stages of `spec` when it is a ring (AllReduce, AllGather, ReduceScatter), tree or hierarchical
/// AllReduce with at least one transfer ("auto" resolved by the tuning model as build_collective() does);
/// nullopt for every other algorithm, op or a trivial collective. InputError as build_collective for an
/// impossible spec. Does not apply kMaxTransfers.
std::optional<RingStages> ring_stages(const CollectiveSpec& spec);
/// Transfers its DAG would hold (what kMaxTransfers bounds).
std::uint64_t ring_stages_transfers(const RingStages& plan);
/// Transfers of stage i alone.
std::uint64_t ring_stage_transfers(const RingStages& plan, std::size_t i);

using CollectiveFactory = std::function<TransferDag(const CollectiveSpec&)>;
/// Every collective algorithm by name ("ring", "tree", ...); build_collective() dispatches through it.
Registry<CollectiveFactory> builtin_collectives();

// ---- exposed for tests -------------------------------------------------------------------------------

/// Parent of each node (index 0..nodes-1) in one of NCCL-style double binary trees (tree 0 or 1); -1
/// for the root. Tree 0: node 0 is the root with one child (the largest power of two below nodes), and
/// node x (lowest set bit b) hangs under (x ^ b) | 2b, or x ^ b when that does not exist. Tree 1 is the
/// mirror (x -> nodes-1-x) when nodes is even, the shift (x -> x-1 mod nodes) when odd, so that with an
/// even count every node is interior in at most one tree.
std::vector<std::int32_t> double_tree_parents(std::uint32_t nodes, std::uint32_t tree);

/// Ring order of channel c: node-major, each node's GPUs rotated by c (position -> rank).
std::vector<std::uint32_t> ring_order(std::uint32_t ranks, std::uint32_t gpus_per_node,
                                      std::uint32_t channel);

} // namespace ibn::scen
