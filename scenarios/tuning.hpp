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
//     Tree Simple min(busBw x 0.92, ch x perChMaxTreeBw); Tree LL min(busBw/3.8, llMaxBw);
//     Tree LL128 min(busBw x (nodes == 1 ? 7/9 : 120/128), ch x perChMaxTreeLL128Bw);
//     algBw = busBw x n/nsteps (ring), x 0.5 (tree).
// Not modelled: treeCorrectionFactor (its table is not in the reference), the x0.85 of the TREE
// intra-node pattern, CollNet/NVLS, and per-architecture tables other than Hopper (sm90) and, for the
// latency-only terms, everything before sm80.
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
};

struct TuningEstimate {
  std::string algorithm;  ///< "ring" or "tree"
  std::string protocol;   ///< "ll", "ll128", "simple"
  bool available = false; ///< false: the algorithm does not do the op, or LL128 is disabled
  double latency_us = 0;  ///< the latency term (after the Simple plateau factor)
  double algbw_GBps = 0;
  double time_us = 0;
};

/// The inputs the model gets from a spec: nodes, channels (spec or default) and bus_GBps from nic_gbps,
/// nics_per_node and nvlink_gbps.
TuningInputs tuning_inputs(const CollectiveSpec& spec);

/// Every (algorithm, protocol) for ring and tree, in the order ring {ll, ll128, simple}, tree {...}.
std::vector<TuningEstimate> tuning_table(const TuningInputs& in);

/// NCCL's choice: the available estimate with the lowest time. Throws std::logic_error if none is
/// available (cannot happen: ring Simple always is).
TuningEstimate tuning_choose(const TuningInputs& in);

/// The same restricted to one algorithm ("ring" or "tree"): the protocol NCCL would pick for it.
TuningEstimate tuning_choose_protocol(const TuningInputs& in, const std::string& algorithm);

} // namespace ibn::scen
