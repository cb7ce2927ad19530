#pragma once
// TransferDag: a collective (or any communication pattern) as a DAG of transfers between the ranks of one
// job, independent of any engine (DESIGN.md §5). A transfer may start when every transfer it depends on
// has been delivered, plus its own `local_delay` (reduction or copy work at the sender). Ranks are GPUs;
// the job (scenarios/job.hpp) maps each rank to a node and a local GPU index, and the executor
// (scenarios/executor.hpp) turns a transfer into an engine send between HCAs (different nodes: over the
// fabric, through the NIC of `rail`) or into an intra-node NVLink copy (same node).
//
// Invariants (checked by add()): dependencies name earlier transfers only (so index order is a topological
// order); src != dst; src, dst < ranks.
#include "sim/error.hpp"
#include "sim/time.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace ibn::scen {

using TransferId = std::uint32_t;

struct Transfer {
  std::uint32_t src = 0;      ///< sending rank
  std::uint32_t dst = 0;      ///< receiving rank
  std::uint64_t bytes = 0;
  std::uint32_t channel = 0;  ///< NCCL channel; becomes the QP slot, so channels are separate connections
  /// NIC index within the node used for an inter-node transfer (both ends use the same index: rail-aligned);
  /// -1 lets the executor pick (the channel's NIC: channel mod NICs per node).
  std::int32_t rail = -1;
  Time local_delay;           ///< work at the sender between the last dependency's delivery and the post
  std::uint32_t step = 0;     ///< algorithm step (for traces and tests), free for builders to use
  std::uint32_t dep_begin = 0, dep_end = 0; ///< range in TransferDag::deps()
  /// With channel_stage_overlaps: the transfer carries what the previous transfer its rank released on its
  /// channel's lane carries (a tree's broadcast to its other children, written in the same pass as NCCL's
  /// tree does), so it is posted with that transfer's pass and takes none of its own.
  bool stage_shared = false;
  /// With channel_stage_overlaps: which of its (rank, channel)'s two stage lanes the transfer takes (a
  /// tree's sends up: 0, down: 1).
  std::uint8_t stage_lane = 0;
};

/// One pass of `wire_bytes` through a channel's stage of `gbps` (TransferDag::channel_gbps): the one
/// definition the executor and the flow shortcut share, so that they round alike.
inline Time channel_stage_pass(std::uint64_t wire_bytes, double gbps) {
  return Time::from_s(static_cast<double>(wire_bytes) * 8.0 / (gbps * 1e9));
}

class TransferDag {
 public:
  TransferDag() = default;
  explicit TransferDag(std::uint32_t ranks) : ranks_(ranks) {}

  /// Appends a transfer with its dependencies; returns its id. Throws std::logic_error on a broken invariant.
  TransferId add(Transfer t, std::span<const TransferId> deps = {}) {
    if (t.src >= ranks_ || t.dst >= ranks_ || t.src == t.dst) throw std::logic_error("TransferDag: bad ranks");
    const auto id = static_cast<TransferId>(transfers_.size());
    t.dep_begin = static_cast<std::uint32_t>(deps_.size());
    for (const auto d : deps) {
      if (d >= id) throw std::logic_error("TransferDag: dependency on a later transfer");
      deps_.push_back(d);
    }
    t.dep_end = static_cast<std::uint32_t>(deps_.size());
    transfers_.push_back(t);
    return id;
  }
  TransferId add(Transfer t, std::initializer_list<TransferId> deps) {
    return add(t, std::span<const TransferId>(deps.begin(), deps.size()));
  }

  std::uint32_t ranks() const { return ranks_; }
  std::size_t size() const { return transfers_.size(); }
  const Transfer& operator[](TransferId i) const { return transfers_[i]; }
  const std::vector<Transfer>& transfers() const { return transfers_; }
  std::span<const TransferId> deps_of(TransferId i) const {
    const auto& t = transfers_[i];
    return std::span<const TransferId>(deps_.data() + t.dep_begin, t.dep_end - t.dep_begin);
  }
  void reserve(std::size_t transfers, std::size_t deps) {
    transfers_.reserve(transfers);
    deps_.reserve(deps);
  }

  // Description, filled by the builder (written into results and traces).
  std::string op;          ///< "allreduce", "allgather", ...
  std::string algorithm;   ///< "ring", "tree", "halving-doubling", "hierarchical", "direct", ...
  std::string protocol;    ///< "simple", "ll128", "ll"
  std::uint64_t size_bytes = 0; ///< the collective's size as nccl-tests reports it
  std::uint32_t channels = 1;
  /// Fixed cost before any transfer of an execution may be posted (NCCL's launch/base latency); zero
  /// unless the NCCL cost model is on.
  Time launch_latency;
  /// Per-channel stage before a transfer between nodes (0 = none): a channel's thread block moves one
  /// chunk at a time through its staging buffer at this rate (Gb/s of the transfers' wire bytes), so the
  /// channel's chunks leave no faster than channel_gbps (NCCL point-to-point,
  /// scenarios/nccl_cost.hpp kP2pChannelNetGBps; with channel_stage_all, every transfer).
  double channel_gbps = 0;
  /// The stage takes every transfer of the channel (a ring protocol's own ceiling: a channel's thread block
  /// handles every chunk it sends, scenarios/tuning.hpp ring_channel_cap_GBps), not only those between
  /// nodes (point-to-point's proxy staging).
  bool channel_stage_all = false;
  /// With channel_stage_all, the stage's rate for transfers inside a node when it is their own (0: none;
  /// nullopt: channel_gbps): a hierarchical AllReduce's intra-node rings are NCCL one-node rings with their
  /// own protocol and ceiling.
  std::optional<double> channel_gbps_nvlink;
  /// The stage spaces the channel's passes at its rate without putting them before the posts: a pass
  /// begins when its transfer is released (and its rank launched) and the previous pass of the same lane is
  /// over, and the transfer is posted once its own delays are over and its pass has begun. A rate for a
  /// pipeline that forwards data while it arrives (the tree, scenarios/tuning.hpp tree_channel_cap_GBps),
  /// where a pass before each post would be paid once per tree level. Each (rank, channel) has two lanes
  /// (Transfer::stage_lane), each at channel_gbps.
  bool channel_stage_overlaps = false;
  /// The protocol of the transfers inside a node when it differs from `protocol` (empty: the same).
  std::string protocol_nvlink;

 private:
  std::uint32_t ranks_ = 0;
  std::vector<Transfer> transfers_;
  std::vector<TransferId> deps_;
};

} // namespace ibn::scen
