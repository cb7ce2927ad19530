#pragma once
// NCCL's cost constants per version and what one collective costs in software (docs/collectives.md, "NCCL
// cost model"). One definition used by the tuning model (scenarios/tuning.hpp: algorithm and protocol
// choice) and by the DAG builders (scenarios/collectives.hpp: CollectiveSpec::launch_latency and the
// per-step overheads), so both engines charge the same costs: the DAG carries them, the engine only moves
// bytes.
//
// Per algorithm (ring, tree) x protocol (LL, LL128, Simple):
//   base      baseLat: the fixed cost of one collective (kernel launch, work setup), us;
//   intra     hwLat[NVLINK]: the cost of one step between two GPUs of one node, us;
//   net       hwLat[NET]: the cost of one step between two nodes (proxy, network post/poll), us;
//   wire efficiency: data bytes per wire byte (LL 8/16, LL128 120/128, Simple 1);
//   caps      per-channel bandwidth ceilings of the tuning (GB/s): ring LL128, tree, tree LL128; llMaxBw.
// The constants are NCCL's published ones (src/graph/tuning.cc of NVIDIA/nccl at the tag of each table
// entry); the table holds the releases where they changed. A version selects the newest entry not newer
// than it (the constants change only at releases), or the oldest entry for anything before it.
//
// Per-step costs as the DAG charges them (nccl_step_costs): every transfer waits its step's overhead after
// its last dependency (the builder writes it as Transfer::local_delay); inter-node transfers (different
// nodes) get `net`, intra-node ones `intra`. On several nodes a ring's intra steps cost at least NCCL's
// netOverhead (1 us Intel, 2 us AMD; x3 for Simple) from 2.18 on, as NCCL's model says. From 2.23 on a
// ring with one GPU per node uses the tree's `net` value, as NCCL's model does. The collective's start
// waits `base` (CollectiveSpec::launch_latency).
#include "scenarios/collectives.hpp"

#include <cstdint>
#include <string>

namespace ibn::scen {

inline constexpr int kNcclLL = 0, kNcclLL128 = 1, kNcclSimple = 2;
inline constexpr int kNcclTree = 0, kNcclRing = 1;

/// Point-to-point over the network (sendrecv, alltoall; docs/collectives.md, "Point-to-point"): a peer pair
/// uses NCCL_NCHANNELS_PER_NET_PEER channels (default 2 from 2.12 to 2.19; from 2.20 chosen at init,
/// starting at 2 and halving only on large communicators), and one channel (one thread block copying
/// 128 KiB steps through its buffer, then the proxy's post) moves about 14 GB/s: NCCL's own planning value
/// NCCL_P2P_PER_CHANNEL_NET_BW (src/graph/paths.cc, 2.29), which 2.29 uses to raise the channels per peer
/// to fill a NIC. Two channels: 28 GB/s, about half of an NDR link, as real sendrecv shows.
inline constexpr std::uint32_t kP2pChannelsPerNetPeer = 2;
inline constexpr double kP2pChannelNetGBps = 14.0;

/// One release's tuning constants. Index [algorithm: tree, ring][protocol: LL, LL128, Simple].
struct NcclCostTable {
  const char* version; ///< the NVIDIA/nccl tag the constants were read from ("2.19.3")
  int code;            ///< major*10000 + minor*100 + patch (21903)
  double base_lat[2][3];
  double hw_lat_nvlink[2][3];
  double hw_lat_net[2][3];
  // Bandwidth side of the tuning, [arch: 0 = Ampere (sm80), 1 = Hopper (sm90)].
  double ll_max_bw_1node[2];       ///< llMaxBw on one node
  double ll_max_bw_intel[2];       ///< llMaxBw on 2 / >= 3 nodes, Intel (and other) hosts
  double ll_max_bw_amd[2];         ///< the same on AMD hosts
  double per_ch_ring_ll128[2];     ///< GB/s per channel
  double per_ch_tree[2][3];        ///< [arch][nodes: 1, 2, >= 3]
  double per_ch_tree_ll128[2][3];  ///< [arch][nodes: 1, 2, >= 3]
  double ring_ll_bw_factor;        ///< ring LL busBw factor: 1/4 up to 2.20, 1/2 from 2.21
  double ring_ll128_ppn1_factor;   ///< ring LL128 busBw factor with one GPU per node (0.7, 0.92 from 2.23)
  bool ring_inter_steps_minus_one; ///< nInterSteps 2(m-1) / m-1 (2.8-2.11, >= 2.23) instead of 2m / m
  bool net_overhead;               ///< intra steps of multi-node rings >= netOverhead (>= 2.18)
  bool ppn1_tree_net_lat;          ///< ring with ppn 1 uses the tree's hwLat[NET] (>= 2.23)
  /// NVLS, NVLS_TREE and CollNet Direct rows (Simple only; AllReduce). Entries before 2.18 carry none
  /// (NVLS came with 2.17, CollNet was one algorithm before 2.14): the tuning never offers them there.
  struct NvlsCollnet {
    bool present;
    double nvls_base, nvls_intra, nvls_net;                ///< baseLat / hwLat[NVLINK] / hwLat[NET] of NVLS
    double nvls_tree_base, nvls_tree_intra, nvls_tree_net; ///< the same of NVLS_TREE
    /// 2.18's NVLS_TREE model: latency base + 2 (m - 1) x net, algBw = busBw x 0.70 m / (2 (m - 1));
    /// from 2.19: base + intra + 2 log2(m) x net and busBw x 5/6.
    bool nvls_tree_v218;
    double collnet_base, collnet_intra, collnet_net; ///< CollNet Direct
    double collnet_arity;                            ///< "arity serialization latency" per local GPU, us
  } nc;
};

/// The table entries, oldest first.
const NcclCostTable* nccl_cost_tables(std::size_t* count);

/// "2.26.2", "2.26.2+cuda12.2", "2.8", "" -> the entry to use (see header). "" is the tuning model's
/// reference, 2.20.3 (the 2.19.3 entry). InputError naming `what` for text that is not a version.
const NcclCostTable& nccl_cost_table(const std::string& version, const std::string& what = "nccl.version");
/// Version text -> code (2.26.2 -> 22602); nullopt-like -1 when unreadable.
int nccl_version_code(const std::string& version);

/// The software costs of one collective under algorithm/protocol, as the DAG charges them.
struct NcclStepCosts {
  double base_us = 0;  ///< before the first transfer (launch)
  double intra_us = 0; ///< per intra-node step (NVLink)
  double net_us = 0;   ///< per inter-node step
};

struct NcclCostInputs {
  /// "ring" or "tree"; "nvls" and "collnet" take their own rows (NcclCostTable::nc, see nccl_step_costs);
  /// other algorithms use the ring's costs
  std::string algorithm = "ring";
  std::string protocol = "simple";
  std::uint32_t ranks = 2, nodes = 1;
  bool amd_host = false;
};
/// NVLS and CollNet (Simple only) follow NCCL's latency formulas, which charge them per collective rather
/// than per step: "nvls" on one node: base = baseLat + hwLat[NVLINK], no step costs; on several nodes
/// (NVLS_TREE) base = baseLat + hwLat[NVLINK] and net = hwLat[NET] per inter-node tree step. "collnet":
/// base = baseLat + 2 (min(1, ppn - 1) hwLat[NVLINK] + (ppn - 1) arity), net = hwLat[NET] (the one trip
/// through the SHARP tree; from 2.23 with ppn 1 the tree's hwLat[NET]). Both: intra = 0. InputError when the
/// entry has no NVLS/CollNet rows (before 2.18).
NcclStepCosts nccl_step_costs(const NcclCostTable& t, const NcclCostInputs& in);

/// NCCL's step counts of the latency model: steps inside a node and between nodes on the critical path
/// (ring AllReduce 2(n-1) steps of which 2m (2(m-1) in some versions) cross nodes; ring AllGather /
/// ReduceScatter n-1 and m (m-1); tree AllReduce 2(ppn-1) and 2 floor(log2 m); one node: no net steps).
/// Broadcast/Reduce (chain): n-1 and m-1. SendRecv/AllToAll: one step, across nodes when m > 1. Other
/// algorithms (halving-doubling, hierarchical): the ring's counts.
struct NcclStepCounts {
  double intra = 0, net = 0;
};
NcclStepCounts nccl_step_counts(const NcclCostTable& t, CollOp op, const std::string& algorithm,
                                std::uint32_t ranks, std::uint32_t nodes);

/// Data bytes per wire byte of a protocol: ll 0.5, ll128 120/128, simple 1.
double nccl_wire_efficiency(const std::string& protocol);

} // namespace ibn::scen
