#pragma once
// NCCL's tuning model (src/graph/tuning.cc; constants per release from scenarios/nccl_cost.hpp, by default
// those of 2.20.3, as summarised in docs/model-reference.md §5.6): the
// predicted time of a collective per (algorithm, protocol) and NCCL's choice (the lowest time).
//
//   time_us = latency_us + size_bytes / (1000 x algbw_GBps)
//   Ring latency = baseLat + (nsteps - nInterSteps) x intra + nInterSteps x interLat, with intra =
//     max(hwLat[NVLINK], netOverhead) on several nodes (netOverhead x3 for Simple) and hwLat[NVLINK] on one;
//     interLat = hwLat[NET] + latencyInter (+ latencyInter again for Simple);
//     AllReduce nsteps = 2(n-1), nInterSteps = 2 x nodes; AllGather/ReduceScatter n-1 and nodes;
//     Broadcast/Reduce (chain) n-1 and nodes-1 (our reading; nInterSteps = 0 on one node).
//     Ring Simple AllReduce on several nodes: latency x1.4 (sm >= 80; x1.9 below) when
//     size / (channels x n) >= 64 B.
//   Tree (AllReduce only) latency = baseLat + 2 x ((n/nodes - 1) x hwLat[NVLINK] + log2(nodes) x interLat).
//   Bandwidth: busBw = channels x per-channel bw, where the per-channel bw here is
//     min(nvlink_GBps, nodes > 1 ? nics x nic_GBps : inf) / channels (the ring/tree graph's bottleneck);
//     Ring LL min(llMaxBw, busBw/4); Ring LL128 min(busBw x (ppn < 2 ? 0.7 : 0.92), ch x 36.7);
//     Tree: first busBw = min(busBw x 0.92, ch x perChMaxTreeBw) for every protocol, then
//     Tree LL min(busBw/3.8, llMaxBw); Tree LL128 min(busBw x (nodes == 1 ? 7/9 : 120/128), ch x
//     perChMaxTreeLL128Bw); algBw = busBw x n/nsteps (ring), x 0.5 (tree). The tree's time divides by algBw x
//     treeCorrectionFactor [protocol][log2(size/64)] (0.4 .. 1, sizes 64 B .. 256 MiB), as NCCL's
//     ncclTopoGetAlgoTime does.
// Not modelled: the x0.85 of the TREE intra-node pattern (NCCL's search prefers the balanced tree), CollNet
// Chain and NVLS+CollNet (NVLS and CollNet Direct are in tuning_table below), and per-architecture tables
// other than Hopper (sm90) and, for the latency-only terms, everything before sm80.
#include "scenarios/collectives.hpp"
#include "scenarios/nccl_cost.hpp"

#include <string>
#include <vector>

namespace ibn::scen {

struct TuningInputs {
  CollOp op = CollOp::AllReduce;
  std::uint64_t size_bytes = 0;
  std::uint32_t ranks = 1;
  std::uint32_t nodes = 1;
  std::uint32_t channels = 1;
  double bus_GBps = 0;   ///< channels x per-channel bandwidth of the graph, GB/s (see header)
  bool amd_host = false; ///< netOverhead 2 us instead of 1; llMaxBw 22.5 / 19.0 on 2 / >= 3 nodes
  bool ll128_enabled = true;
  double latency_inter_us = 0; ///< the graph's latencyInter (0 on InfiniBand)
  int sm = 90; ///< compute capability x10: >= 90 Hopper caps, else Ampere; the x1.4 / x1.9 split at 80
  /// The release's constants (scenarios/nccl_cost.hpp); null = the reference entry (2.19.3, as NCCL 2.20.3).
  const NcclCostTable* table = nullptr;
  // NVLS and CollNet (docs/collectives.md "nvls", "collnet"): estimated only when the system offers them.
  bool nvls = false, collnet = false;
  double nvlink_GBps = 0; ///< one GPU's NVLink bandwidth per direction (NCCL's bwIntra side), GB/s
  double net_GBps = 0;    ///< a node's NICs together per direction (bwInter side), GB/s
  std::uint32_t nics = 1; ///< NICs per node: CollNet Direct's heads (its graph's channels)
};

struct TuningEstimate {
  std::string algorithm;  ///< "ring", "tree", "nvls" or "collnet"
  std::string protocol;   ///< "ll", "ll128", "simple"
  bool available = false; ///< false: the algorithm does not do the op, or LL128 is disabled
  double latency_us = 0;  ///< the latency term (after the Simple plateau factor)
  double algbw_GBps = 0;
  double time_us = 0;
};

/// The inputs the model gets from a spec: nodes, channels (spec or default) and bus_GBps from nic_gbps,
/// nics_per_node and nvlink_gbps.
TuningInputs tuning_inputs(const CollectiveSpec& spec);

/// The inputs for a hierarchical AllReduce's inter-node ring (docs/collectives.md "hierarchical"): on
/// several nodes a ring of one GPU per node over m nodes on size / g through one NIC; on one node the
/// intra-node ring itself (tuning_inputs unchanged). Its ring protocol ceiling is NCCL's for that ring.
TuningInputs hierarchical_tuning_inputs(const CollectiveSpec& spec);

/// The inputs for a hierarchical AllReduce's two intra-node rings: the whole size over the node's g GPUs
/// on NVLink (NCCL's one-node ring, the same channels); the op is the caller's to set (ReduceScatter,
/// AllGather).
TuningInputs hierarchical_intra_inputs(const CollectiveSpec& spec);

/// A ring protocol's own per-channel bandwidth ceiling, GB/s of data (NCCL's busBw per channel), from the
/// release's constants: LL llMaxBw / channels (a total over channels in NCCL's model), LL128
/// perChMaxRingLL128Bw; 0 for Simple. The network's share of busBw is not in it: the engines carry that
/// themselves. The ring DAG charges it as each channel's stage (TransferDag::channel_gbps): on one loop the
/// passes add NCCL's bandwidth term size (n - 1) / n / busBw (docs/collectives.md "NCCL cost model").
double ring_channel_cap_GBps(const TuningInputs& in, const std::string& protocol);
/// A tree AllReduce's bandwidth per channel, GB/s of data (NCCL's tree busBw / channels, i.e. 2 x algBw /
/// channels): the tuning model's tree bandwidth for `protocol` (x 0.92 under perChMaxTreeBw, then LL's 1/3.8
/// under llMaxBw or LL128's 120/128 under perChMaxTreeLL128Bw) times treeCorrectionFactor for the size,
/// NCCL's own measured correction of "trees not sticking to the model for medium sizes". 0 when the tree does
/// not run (not an AllReduce, one rank); LL128 is priced even where `in` disables it (the rate of what runs).
/// `in.channels` is the count the collective runs with. The tree DAG gives each rank's channel two lanes, up
/// and down, at half of it each (NCCL's runTreeSplit: a reduce-up and a broadcast-down thread group;
/// TransferDag::channel_stage_overlaps): every rank moves S up and S down at algBw, so the pipeline takes
/// S / algBw, NCCL's bandwidth term, whatever the tree's shape; the network can only make it slower.
double tree_channel_cap_GBps(const TuningInputs& in, const std::string& protocol);

/// Every (algorithm, protocol) for ring and tree, in the order ring {ll, ll128, simple}, tree {...}, then
/// nvls/simple and collnet/simple (available only when in.nvls / in.collnet, for AllReduce, and with an
/// entry that has their rows: 2.18 on). NVLS (one node; NVLS_TREE on several, ppn >= 2):
///   latency = baseLat + hwLat[NVLINK] (+ 2 log2(m) x interLat on several nodes; 2.18: 2 (m - 1) x
///   hwLat[NET]), algBw = bw x 5/6 (2.18 NVLS_TREE: x 0.70 m / (2 (m - 1))), bw = nvlink on one node,
///   min(nvlink, m <= 2 ? net : net/2) on several.
/// CollNet Direct (2+ nodes): latency = baseLat + 2 (min(1, ppn - 1) hwLat[NVLINK] + (ppn - 1) arity) +
///   interLat; busBw = nvlink / f with f = ppn/nics - (ppn/nics - 1)/2, x 0.85 on sm >= 90; algBw = busBw
///   / 2.
std::vector<TuningEstimate> tuning_table(const TuningInputs& in);

/// NCCL's choice: the available estimate with the lowest time. Throws std::logic_error if none is
/// available (cannot happen: ring Simple always is).
TuningEstimate tuning_choose(const TuningInputs& in);

/// The same restricted to one algorithm ("ring", "tree", "nvls", "collnet"): the protocol NCCL would pick.
TuningEstimate tuning_choose_protocol(const TuningInputs& in, const std::string& algorithm);

/// A hierarchical AllReduce's protocols under `auto` (NCCL has no such algorithm: it is three NCCL calls,
/// each tuned on its own): the intra-node protocol with the lowest sum of NCCL's ring estimates of the
/// ReduceScatter and the AllGather of the size over the node's g GPUs (hierarchical_intra_inputs), and the
/// inter-node ring's own choice (hierarchical_tuning_inputs). On one node (or g = 1) both are the ring's.
struct HierarchicalChoice {
  TuningEstimate intra;     ///< the intra-node ReduceScatter's estimate with the chosen protocol
  TuningEstimate inter;     ///< the inter-node AllReduce ring's estimate (NCCL's choice for it)
  double intra_time_us = 0; ///< ReduceScatter + AllGather with intra's protocol (0 on one node)
  double time_us = 0;       ///< intra_time_us + inter.time_us
};
HierarchicalChoice hierarchical_choose_protocols(const CollectiveSpec& spec);

} // namespace ibn::scen
