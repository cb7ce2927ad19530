#pragma once
// DagExecutor: runs a TransferDag for one job on any eng::Engine.
//
// Mapping: rank r lives on node r / gpus_per_node (local GPU r % gpus_per_node). A transfer between ranks
// of different nodes is an engine send from the source node's HCA of the transfer's rail to the destination
// node's HCA of the same rail (rail = transfer.rail, or channel mod nics_per_node when -1), on QP slot =
// channel. A transfer inside a node is an NVLink copy: each GPU has one NVLink egress shared by its copies
// (first come, first served), a copy takes latency + bytes/bandwidth and does not touch the fabric.
//
// Timing: a transfer is posted when its last dependency is delivered, plus its local_delay, plus a draw
// of the calibrated per-operation noise (if any), but never before its source rank is ready (the rank's
// compute for this iteration is over). A DAG's launch_latency (NCCL's base cost, scenarios/nccl_cost.hpp)
// delays every rank's ready time. The execution is done when every transfer is delivered.
#include "models/engine.hpp"
#include "scenarios/dag.hpp"

#include <atomic>
#include <functional>
#include <vector>

namespace ibn::scen {

struct JobLayout {
  std::vector<std::vector<eng::HcaIndex>> nodes; ///< node -> HCA of each rail
  std::uint32_t gpus_per_node = 1;
  std::uint8_t sl = 0;
  std::uint32_t ranks() const { return static_cast<std::uint32_t>(nodes.size()) * gpus_per_node; }
};

struct ExecOptions {
  double nvlink_gbps = 3600;
  Time nvlink_latency = Time::ns(700);
  /// Extra delay drawn per network transfer (calibrated noise); empty = none. Called in post order.
  std::function<Time(std::uint64_t bytes)> noise;
  /// Stragglers' slow NICs: the rate (Gb/s) at which job node `src_node`'s NICs send, 0 = at `line_gbps`;
  /// empty = none. Each slow NIC paces what it sends: a transfer of B bytes ends no earlier than B x 8 /
  /// paced after the NIC's previous one, and is posted B x 8 / line_gbps before that end (the engine then
  /// carries it at line rate). Per transfer that is the extra B x 8 / line x (line / paced - 1); over many
  /// transfers in flight (pipelined chunks, channels) the NIC's throughput is the paced rate.
  std::function<double(std::uint32_t src_node)> node_paced_gbps;
  double line_gbps = 0; ///< the NICs' line rate, for node_paced_gbps
  /// Called at each delivery with the transfer, its post time and its delivery time (traces); empty = off.
  std::function<void(TransferId, Time posted, Time delivered)> on_transfer;
  /// Incremented at each delivery (progress, sim/progress.hpp); null = off.
  std::atomic<std::uint64_t>* delivered = nullptr;
  /// Period skips (packet.fast_forward, docs/engine.md "Fast-forward"): where the DAG repeats step after step
  /// and the frontier's progress is steady, skip whole periods (scenarios/executor_skip.cpp). The caller
  /// sets it only when nothing else runs on the engine (one job, no background, no timed faults); the
  /// executor ignores it with `noise`, `node_paced_gbps` or `on_transfer`.
  bool fast_forward = false;
};

class DagExecutor {
 public:
  /// `engine`, `dag` and `layout` must outlive the executor. Throws InputError if the DAG needs more ranks
  /// than the layout has.
  DagExecutor(eng::Engine& engine, const TransferDag& dag, const JobLayout& layout, ExecOptions opt);

  /// Starts one execution now; rank r may post from `ready[r]` on (empty = all ready now). `done` runs
  /// at the last delivery with its time. One execution at a time per executor (std::logic_error otherwise).
  void start(std::vector<Time> ready, std::function<void(Time end)> done);
  bool running() const { return running_; }
  /// Whether this executor may skip periods within an execution (and so marks the engine itself).
  bool skips_periods() const { return !regions_.empty(); }
  /// Network (inter-node) and NVLink transfers per execution.
  std::size_t network_transfers() const { return network_transfers_; }
  std::size_t nvlink_transfers() const { return dag_.size() - network_transfers_; }

 private:
  void release(TransferId t);
  void post(TransferId t);
  void delivered(TransferId t);
  /// The rail (index into the nodes' HCAs) a network transfer from node `sn` to node `dn` uses.
  std::uint32_t rail_of(const Transfer& tr, std::uint32_t sn, std::uint32_t dn) const;

  // Period skips (scenarios/executor_skip.cpp). Pending work (timers, engine sends) names its transfer as
  // of when it was scheduled; a skip relabels transfer t as t + S, so a callback resolves its id through
  // current() with the shift it saw.
  TransferId current(TransferId t, std::uint64_t base) const {
    return static_cast<TransferId>(t + (shift_ - base));
  }
  void find_skip_regions();
  void skip_start();
  /// Records t's delivery; when the frontier has moved steadily long enough, skips and returns t's new id.
  TransferId skip_delivered(TransferId t);
  void skip_enter_region();
  void skip_relabel(std::uint64_t s, Time dt);

  eng::Engine& engine_;
  const TransferDag& dag_;
  const JobLayout& layout_;
  ExecOptions opt_;
  std::vector<std::uint32_t> succ_begin_; ///< CSR successor lists, built once
  std::vector<TransferId> succ_;
  std::vector<std::uint32_t> roots_; ///< transfers without dependencies
  std::size_t network_transfers_ = 0;
  // per execution
  std::vector<std::uint32_t> waiting_; ///< dependencies not yet delivered
  std::vector<Time> ready_;
  std::vector<Time> nvlink_free_; ///< per rank: when its NVLink egress is free
  std::vector<Time> channel_free_; ///< per (rank, channel[, lane]): when its stage is free (dag channel_gbps)
  /// Per (rank, channel, lane): when its last pass began (channel_stage_overlaps).
  std::vector<Time> channel_start_;
  std::vector<std::vector<Time>> nic_free_; ///< per (job node, rail): when a paced (slow) NIC is free
  std::vector<Time> posted_;      ///< per transfer, when on_transfer is set
  std::size_t remaining_ = 0;
  bool running_ = false;
  std::function<void(Time)> done_;

  // Period skips (fast_forward); see executor_skip.cpp.
  struct SkipRegion {
    TransferId a = 0, b = 0; ///< [a, b): transfer t repeats as t + d while t + d < b
    std::uint32_t d = 0;     ///< transfers per step
    std::uint32_t reach = 0; ///< largest t - (a dependency of t) within the region
  };
  std::vector<SkipRegion> regions_;
  bool skip_on_ = false;
  std::uint64_t shift_ = 0; ///< transfers relabelled so far in this execution
  std::vector<std::uint8_t> done_flag_;
  TransferId lo_ = 0, hi_ = 0; ///< smallest undelivered; one past the largest touched
  std::size_t region_ = 0;     ///< the region lo_ is in (regions_.size(): none)
  TransferId next_edge_ = 0;   ///< where lo_ completes the current window of the region
  std::vector<Time> edges_;    ///< when lo_ crossed the region's window edges, since the last mark
};

} // namespace ibn::scen
