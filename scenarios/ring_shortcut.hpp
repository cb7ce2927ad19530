#pragma once
// RingShortcut — the flow engine's symmetric-steps shortcut for ring collectives (docs/flow-engine.md,
// "Symmetric steps"; scenario key flow.symmetric_steps).
//
// A ring AllReduce/AllGather/ReduceScatter (scenarios/collectives.hpp, RingPlan) repeats the same step
// 2(n-1) (or n-1) times: at every step every position of every channel sends one chunk to the next
// position, over the same routes. When no fabric link is shared by two different ring edges (HCA pairs),
// SimGrid's max-min sharing falls apart into one independent problem per HCA pair: the flows of the pair's
// channels that are in their bandwidth phase share the route's bottleneck equally, C/m each for m active
// flows. That solution (C per pair, from the pair's route) is computed once per pair and reused at every
// step and for every channel, and the DAG executor and the flow engine are replayed by a recurrence over
// (step, channel, position, slice) without building the DAG or starting SimGrid actions:
//   post      = max(deliveries it depends on (same slice one step earlier one position back; the transfer
//               `window` earlier on its connection; at step 0 of a later loop everything delivered to the
//               position before) + step_overhead (net_step_overhead between nodes), the rank's ready
//               time + launch_latency)                                          [DagExecutor::release]
//   network   bandwidth phase from max(post, the QP's previous bandwidth-phase end), processor-shared with
//             the pair's other active flows (C/m each); delivered delay later, in QP order   [FlowEngine]
//   NVLink    first come first served on the source GPU's egress (bytes / NVLink rate), + NVLink latency
//             [DagExecutor::post]
// It is exact (to SimGrid's rounding) when the condition holds and flows of one pair do not overlap across
// steps; where NVLink copies of several channels queue on one GPU the order of equal-time copies is the
// emission order (the executor's is its event order), which the tests bound against the exact path.
// make() refuses (and says why) when a link carries two pairs, when a QP would carry two ring edges or when
// the FIFO window is shorter than a chunk's slices; the caller then builds the DAG (exact path).
#include "models/flow/flow_engine.hpp"
#include "scenarios/collectives.hpp"
#include "scenarios/executor.hpp"
#include "sim/time.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ibn::scen {

class RingShortcut {
 public:
  /// Whether the shortcut takes a job with `gpus_per_node` GPUs per node: one only. With NVLink steps the
  /// recurrence is not exact: it serves a GPU's copies step by step, while the executor serves them first
  /// come first served across steps (a channel whose position 0 sits on the GPU posts about a step late, so
  /// earlier-posted copies of the next step queue behind it: +7-10 % at g = 8 with 8 or 16 channels, 8 MiB).
  /// Exact would need run() in time order (docs/flow-engine.md "Symmetric steps").
  static constexpr bool takes_layout(std::uint32_t gpus_per_node) { return gpus_per_node == 1; }

  /// The shortcut for `plan` on `layout`, or nullptr with `why_not` set. `engine` must outlive it.
  static std::unique_ptr<RingShortcut> make(const RingPlan& plan, const JobLayout& layout,
                                            flow::FlowEngine& engine, const ExecOptions& opt,
                                            std::string& why_not);

  /// One execution starting now (`now`), rank r ready from ready[r] (empty: all at `now`); returns the
  /// time of the last delivery and adds the traffic to the engine's link counters. Returns nullopt (and
  /// counts nothing) when a flow of an HCA pair would start while a flow of the pair's previous step is still
  /// in its bandwidth phase (channels out of step: their sharing is no longer per step); the caller then runs
  /// the collective on the exact path.
  std::optional<Time> run(Time now, const std::vector<Time>& ready);

  std::uint64_t network_transfers() const { return network_transfers_; } ///< per execution
  std::uint64_t nvlink_transfers() const { return nvlink_transfers_; }   ///< per execution
  std::uint64_t pairs() const { return pairs_.size(); }                  ///< HCA pairs (solved once each)
  std::uint64_t cells() const { return cells_; } ///< transfers evaluated so far (all executions)

 private:
  RingShortcut(const RingPlan& plan, const JobLayout& layout, flow::FlowEngine& engine, ExecOptions opt)
      : plan_(plan), layout_(layout), engine_(engine), opt_(std::move(opt)) {}

  struct Pair {
    flow::FlowEngine::StaticPath path;
    std::vector<std::uint32_t> edges; ///< edge ids (c * ranks + p) whose transfers use this pair
    std::uint64_t payload = 0, wire = 0, messages = 0; ///< per execution
  };

  RingPlan plan_;
  const JobLayout& layout_;
  flow::FlowEngine& engine_;
  ExecOptions opt_;
  std::vector<Pair> pairs_;
  std::vector<std::int32_t> edge_pair_; ///< per edge: its pair, -1 for an NVLink edge
  std::vector<std::uint32_t> nvlink_edges_;
  std::vector<std::uint32_t> chan_mult_; ///< per channel: channels it stands for (0: a twin of an earlier one)
  std::vector<std::int64_t> last_key_;   ///< the previous execution's ready offsets (ps after its start)
  std::int64_t last_duration_ = 0;       ///< and its duration
  std::uint64_t network_transfers_ = 0, nvlink_transfers_ = 0, cells_ = 0;
  bool counted_ = false;
};

} // namespace ibn::scen
