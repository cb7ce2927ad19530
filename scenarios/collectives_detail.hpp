#pragma once
// What the ring evaluators (scenarios/ring_plans.cpp: RingPlan for the symmetric-steps shortcut, RingStages
// for the ring-fluid model) take from the DAG builder of scenarios/collectives.cpp, so that they cut and cost
// a collective exactly as its DAG would: protocol, channels, chunk/slice/window/grain and software costs.
// Internal to scenarios/.
#include "scenarios/collectives.hpp"
#include "sim/time.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ibn::scen::detail {

struct RingCut {
  std::string protocol;
  std::uint32_t channels = 1, nodes = 1;
  std::uint64_t chunk = 0, slice = 0, grain = 1;
  std::uint32_t slices_per_chunk = 1, window = 0;
  Time step_overhead, net_step_overhead, launch_latency;
  Time phase_launch_net, phase_launch_nvlink; ///< hierarchical: the later NCCL calls' launches
  /// The per-channel stage on every transfer (a tree's: per lane), wire Gb/s (0: none).
  double stage_gbps = 0;
  /// The stage's rate inside a node when it is their own (hierarchical; 0: none; nullopt: stage_gbps).
  std::optional<double> stage_gbps_nvlink;
  RingProtocolCut nvlink; ///< the cut of the transfers inside a node (their protocol's; else the same)
};

/// InputError for an impossible spec (as build_collective).
void check_spec(const CollectiveSpec& s);
/// Fewer than 2 ranks or nothing to move: no transfer.
bool trivial_spec(const CollectiveSpec& s);
/// The builder's choices for `algorithm` ("ring" or "hierarchical") with the ring cut (4 Simple steps per
/// chunk, 2 slices per chunk).
RingCut ring_cut(const CollectiveSpec& s, const std::string& algorithm);
/// A tree AllReduce as build_tree() emits it: the cut (tree chunk, no slicing) and, per channel, each rank's
/// parent (-1: the root) and the NIC rail its network transfers use.
struct TreeShape {
  RingCut cut;
  std::vector<std::vector<std::int32_t>> parents; ///< per channel
  std::vector<std::int32_t> rails;                ///< per channel
};
TreeShape tree_shape(const CollectiveSpec& s);
/// `s` with algorithm and protocol "auto" resolved as build_collective() would (the tuning model's
/// choice); `s` itself when nothing is "auto" or the op has no tuned choice.
CollectiveSpec resolve_auto(const CollectiveSpec& s);

/// NCCL's split of one chunk of `data_bytes` into slices (Builder::slices_of).
std::vector<std::uint64_t> cut_slices(std::uint64_t data_bytes, const RingCut& c);
/// Slices over every loop when `bytes` are cut into `units` chunks per loop.
std::uint64_t cut_pieces(std::uint64_t bytes, std::uint64_t units, const RingCut& c);

} // namespace ibn::scen::detail
