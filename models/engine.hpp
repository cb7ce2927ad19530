#pragma once
// eng::Engine — what the workload layer (scenarios/) sees of an engine. Both the packet engine
// (models/packet/packet_engine.hpp) and the SimGrid flow engine (models/flow/) implement it, so a collective's
// transfer DAG, jobs and background traffic run unchanged on either (DESIGN.md §1).
//
// Contract:
// - Time is integer picoseconds (ibn::Time); now() starts at zero.
// - send() posts a transfer at now() from one HCA to another; `on_delivered` runs (inside the engine's
//   event loop, at the delivery time) when the last byte is at the receiver and the receiver would see its
//   completion (packet engine: data complete + nic_rx). Transfers on the same (src, dst, qp_slot) are
//   delivered in the order they were posted. Zero-byte transfers are allowed (one header-only packet).
// - call_at() runs `fn` at time t >= now() (timers: compute gaps, intra-node copies, background arrivals).
// - run() runs until nothing is pending; callbacks may post more work. It may be called again after more
//   work is posted from outside. A stalled packet network throws DeadlockError.
// - Callbacks run in a deterministic order (time, then posting order), so a run is reproducible per seed.
#include "models/routing/routing.hpp"
#include "sim/time.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ibn::eng {

using HcaIndex = routing::HcaIndex;

struct TransferSpec {
  HcaIndex src = 0;
  HcaIndex dst = 0;
  std::uint64_t bytes = 0;
  std::uint32_t qp_slot = 0; ///< separates connections between the same pair (NCCL channels)
  std::uint8_t sl = 0;       ///< service level (jobs may use different SLs)
};

using DeliveredFn = std::function<void(Time delivered)>;

/// Statistics of one directed cable end (the transmitting side), engine-neutral.
struct LinkRecord {
  int from_tier = 0;             ///< tier of the transmitting node (0 = HCA, 1 = leaf, ...)
  int to_tier = 0;
  double capacity_gbps = 0;      ///< data rate of the cable
  std::uint64_t bytes = 0;       ///< legacy: wire bytes in the packet engine, payload in the flow engine (to go: use the two below)
  std::uint64_t wire_bytes = 0;  ///< bytes on the wire: payload + per-packet headers (+ ACKs, CNPs in the packet engine)
  std::uint64_t payload_bytes = 0; ///< message payload bytes carried
  Time busy;                     ///< time spent transmitting
  Time credit_stall;             ///< packets waiting with no credits (packet engine; zero in the flow engine)
  std::uint64_t peak_queue_bytes = 0;
  std::uint64_t ecn_marks = 0;   ///< packets ECN-marked at this output (DCQCN congestion point)
  std::uint64_t fecn_marks = 0;  ///< packets FECN-marked at this output (IB CC)
  Time pause_time;               ///< PFC pause received by this output (RoCE lossless mode)
};

/// Directed cable ends that carried nothing, folded: `count` of them from a node of tier `from_tier` to one
/// of tier `to_tier`, each a LinkRecord of zeros but for its capacity. An engine that makes its ports on
/// first use lists only those in `links`; the tier tables count these too.
struct IdleLinks {
  int from_tier = 0;
  int to_tier = 0;
  std::uint64_t count = 0;
};

struct EngineReport {
  std::string engine;            ///< "packet" or "flow"
  std::uint64_t events = 0;      ///< engine events executed (packet: event-queue events; flow: actions)
  std::uint64_t transfers = 0;   ///< transfers delivered
  /// One per directed cable end, or (an engine with ports made on first use) per cable end it used, the
  /// others in `idle_links`.
  std::vector<LinkRecord> links;
  std::vector<IdleLinks> idle_links;
  nlohmann::json extra = nlohmann::json::object(); ///< engine-specific counters (retransmissions, CNPs, ...)
};

class Engine {
 public:
  virtual ~Engine() = default;
  virtual std::string name() const = 0;
  virtual Time now() const = 0;
  virtual std::size_t num_hcas() const = 0;
  /// Posts a transfer at now(). Throws InputError for an out-of-range or equal src/dst.
  virtual void send(const TransferSpec& spec, DeliveredFn on_delivered) = 0;
  /// Runs `fn` at time `t` (>= now()).
  virtual void call_at(Time t, std::function<void()> fn) = 0;
  /// Runs until no event is pending.
  virtual void run() = 0;
  virtual EngineReport report() const = 0;

  // Period skips (packet.fast_forward; scenarios/executor_skip.cpp, docs/engine.md "Fast-forward"). A caller
  // whose traffic runs in a steady repetition marks the engine at one repetition and, one period later, asks
  // it to skip n more: now() and every later time the engine reports move n periods ahead, its counters grow
  // by n periods' worth, and its state (queues, packets in flight) carries on as it is; the caller relabels
  // its own work. An engine that cannot skip answers false to both (the default).
  /// Remembers the engine's counters at now(); false when this engine or its features cannot skip.
  virtual bool mark_period() { return false; }
  /// Skips `n` periods of length now() - (the mark's time); false (nothing changed) without a mark. Uses the
  /// mark up.
  virtual bool skip_periods(std::uint64_t n) {
    (void)n;
    return false;
  }
};

} // namespace ibn::eng
