#pragma once
// PacketNetwork: the packet engine's model of a Fabric — HCAs, switches and the cables between them —
// wired into a Simulation, with the message API the layers above (collectives, perftest) drive.
//
// What is modelled (model-reference.md §1, §2.3, §4):
// - Cables: per direction a transmitter (exact serialization time per packet, remainder carried so long
//   transfers do not drift), a propagation delay line (length x ns/m + FEC knob), and a credit return line.
// - Credit-based link-level flow control per data VL in 64-byte blocks: a packet leaves only when the
//   receiver's input buffer has room for all of it; a switch returns the credits when the packet has left
//   its output, an HCA when the packet has arrived; credits travel back over the cable.
// - Switches: cut-through — a packet may leave `switch_latency` after its head arrived, never finishing
//   before its tail arrived; virtual output queues per (output, VL, input); round-robin across inputs,
//   round-robin across VLs; forwarding by destination through the routing tables' LFTs; adaptive routing
//   over the AR group by least queued bytes (per packet, or bounded per destination).
// - HCAs: QPs (one per (src, dst, slot)), MTU segmentation, tx/rx processing latency, round-robin across
//   QPs, a per-QP pacing hook (next allowed send time) for congestion control, RC transport with PSNs,
//   ACK coalescing, go-back-N on a sequence gap (NAK) or ACK timeout; out-of-order placement when AR is on.
// - Verbs: RDMA WRITE, WRITE with immediate, SEND (data from requester), RDMA READ (request, then
//   response data from the responder, at most max_rd_atomic outstanding per QP).
//
// Timing of one packet over one switch (the closed form tested in tests/models):
//   t = nic_tx + prop1 + switch_latency + ser + prop2 + nic_rx   (same rate on both cables)
//
// The model is built from small components (models/packet/core.hpp lists them; docs/engine.md).
//
// Limitations: HCA ports only (one port per HCA node); the responder has a receive posted for every SEND
// (no RNR); READ responses are not retransmitted (a lost READ response packet is counted, not recovered).
#include "models/packet/config.hpp"
#include "models/packet/faults.hpp"
#include "models/routing/routing.hpp"
#include "sim/simulation.hpp"
#include "topology/fabric.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ibn::pkt {

using HcaIndex = routing::HcaIndex;
using MessageId = std::uint32_t;

enum class Verb : std::uint8_t { Write, WriteImm, Send, Read };
std::string to_string(Verb v);

struct MessageSpec {
  HcaIndex src = 0;          ///< requester
  HcaIndex dst = 0;          ///< responder
  std::uint64_t bytes = 0;   ///< payload; 0 is allowed (a zero-length WRITE_WITH_IMM still sends one packet)
  std::uint32_t qp_slot = 0; ///< distinguishes several QPs between the same pair (perftest -q, NCCL channels)
  Verb verb = Verb::Write;
  std::uint8_t sl = 0; ///< service level; SL i travels on VL min(i, num_vls - 1) (OpenSM's default SL2VL)
  std::uint64_t user_tag = 0; ///< returned in the record, for the caller's bookkeeping
};

struct MessageRecord {
  MessageId id = 0;
  MessageSpec spec;
  Time posted;    ///< when the message was posted
  Time first_tx;  ///< when its first packet started on the wire (data for W/S, request for READ)
  Time delivered; ///< data complete at the receiver of the data, plus nic_rx (for READ: at the requester)
  Time acked;     ///< requester completion (WRITE/SEND: ACK received + nic_rx; READ: == delivered)
  bool is_delivered = false;
  bool is_acked = false;
  bool is_failed = false; ///< its QP went to the error state (retries exhausted) before it completed
  Time failed;            ///< when (with is_failed)
  std::uint32_t retransmitted_packets = 0;
};

/// Per directed cable (transmitter side), for link statistics.
struct PortStats {
  topo::LinkId link = topo::kNoLink;
  topo::NodeId node = topo::kNoNode; ///< transmitting node
  int port = 0;
  std::uint64_t packets = 0;
  std::uint64_t bytes = 0;            ///< wire bytes (payload, headers, ACKs, CNPs)
  std::uint64_t payload_bytes = 0;    ///< message payload bytes it carried (every transmission, resends too)
  Time busy;                          ///< time spent serializing
  Time credit_stall;                  ///< time with packets waiting and no credits for any of them
  std::uint64_t peak_queue_bytes = 0; ///< largest wire bytes waiting for this output
  std::uint64_t ecn_marks = 0;        ///< packets this output marked CE (DCQCN)
  std::uint64_t fecn_marks = 0;       ///< packets this output marked FECN (IB CC)
  Time pause_time;                    ///< PFC: time this transmitter was paused (summed over priorities)
  std::uint64_t pause_frames = 0;     ///< PFC: XOFF and XON frames it received
  std::uint64_t pfc_drops = 0;        ///< PFC: its packets dropped at the peer's full input buffer
  std::uint64_t dropped_packets = 0;  ///< faults: its packets lost on the dead cable or dropped while down
  std::uint64_t rate_bps = 0;         ///< its rate (the cable's, or a set_link_speed override)
};

/// A time series point (for traces).
struct TracePoint {
  Time t;
  double value = 0;
};
/// Congestion-control rate of one QP (requester side) in Gb/s, one point per change
/// (PacketConfig::trace_rates).
struct QpRateTrace {
  HcaIndex src = 0, dst = 0;
  std::uint32_t slot = 0;
  std::vector<TracePoint> rate_gbps;
};
/// Queued bytes of one output port, sampled every PacketConfig::trace_interval_ns.
struct PortQueueTrace {
  topo::NodeId node = topo::kNoNode;
  int port = 0;
  topo::LinkId link = topo::kNoLink;
  std::vector<TracePoint> queue_bytes;
};

struct NetworkStats {
  std::uint64_t packets_injected = 0;
  std::uint64_t packets_delivered = 0;
  std::uint64_t payload_bytes_sent = 0;      ///< first transmissions only
  std::uint64_t payload_bytes_delivered = 0; ///< accepted by receivers (duplicates excluded)
  std::uint64_t packet_hops = 0;             ///< transmissions on any cable
  std::uint64_t packets_corrupted = 0;
  std::uint64_t retransmitted_packets = 0;
  std::uint64_t naks = 0;
  std::uint64_t timeouts = 0;
  std::uint64_t acks = 0;
  std::int64_t min_credits_seen = 0; ///< smallest credit count any transmitter held (never negative)
  std::uint64_t ecn_marks = 0;       ///< CE marks by switches (DCQCN)
  std::uint64_t fecn_marks = 0;      ///< FECN marks by switches (IB CC)
  std::uint64_t cnps_sent = 0;       ///< DCQCN CNPs sent by notification points
  std::uint64_t becns_sent = 0;      ///< IB CC BECN packets sent by destination HCAs
  std::uint64_t cnps_received = 0;   ///< CNPs or BECNs that reached their reaction point
  std::uint64_t rate_cuts = 0;       ///< DCQCN rate decreases applied
  std::uint64_t pause_frames = 0;    ///< PFC XOFF + XON frames sent
  std::uint64_t pfc_drops = 0;       ///< packets dropped at a full PFC input buffer (headroom exceeded)
};

/// Fluid skips so far (PacketNetwork::enable_fluid_skips).
struct FluidSkipStats {
  std::uint64_t skips = 0;
  Time skipped;                      ///< simulated time skipped in all
  std::uint64_t packets_skipped = 0; ///< data packets moved ahead without being simulated
  std::uint64_t events_skipped = 0;  ///< events the skipped time would have taken, at the measured rate
};

/// How PacketNetwork maps the model onto events; Fast is the default. They give the same results except where
/// events fall on the same picosecond: such ties run in scheduling order, which differs between the two
/// (tests/models/event_model_test.cpp; docs/engine.md, "Event model").
/// Plain: every packet's arrival at a switch and every transmission end is an event of its own — the
/// straightforward event model, kept as the reference that tests compare Fast against.
/// Fast (with static routing and without PFC): packets bound for a switch output wait in a time-ordered list
/// of that output instead of costing an arrival event; an output or HCA port that will have nothing it can
/// send when its transmission ends schedules no event for that end (models/packet/event_model.hpp, where the
/// shortcuts and their invariants are; docs/engine.md, "Event model").
/// Checked: Fast, and after every event of a port the event model's invariants are checked on that port (a
/// broken one throws std::logic_error); for tests.
enum class EventModel : std::uint8_t { Fast, Plain, Checked };

namespace detail {
struct Core;
}

class PacketNetwork {
 public:
  /// Builds the model. `tables` must have been computed for `fabric` and outlive the network, like `sim`.
  PacketNetwork(Simulation& sim, const topo::Fabric& fabric, const routing::RoutingTables& tables,
                const PacketConfig& config, EventModel events = EventModel::Fast);
  ~PacketNetwork();
  PacketNetwork(const PacketNetwork&) = delete;
  PacketNetwork& operator=(const PacketNetwork&) = delete;

  /// Posts a message now. Throws InputError when src/dst are out of range or equal, or not connected.
  MessageId post(const MessageSpec& spec);
  /// Posts at a later time (>= now).
  void post_at(Time when, const MessageSpec& spec);

  /// Called when a message's data is complete at its receiver (record.delivered is set).
  void on_delivered(std::function<void(const MessageRecord&)> cb);
  /// Called when the requester sees its completion (record.acked is set).
  void on_acked(std::function<void(const MessageRecord&)> cb);

  /// Congestion-control hook: the earliest time QP (src, dst, slot) may start its next packet. (With
  /// PacketConfig::cc on, the built-in CC sets it after every packet and overrides this.)
  void set_qp_next_send_time(HcaIndex src, HcaIndex dst, std::uint32_t slot, Time t);
  /// The built-in CC's current rate of QP (src, dst, slot) in Gb/s (the line rate without CC or before
  /// the first notification); 0 when the QP does not exist.
  double qp_rate_gbps(HcaIndex src, HcaIndex dst, std::uint32_t slot) const;
  /// IB CC: the CCTI of QP (src, dst, slot) (or of its SL with ibcc.per_sl), after its timer decrements.
  int qp_ccti(HcaIndex src, HcaIndex dst, std::uint32_t slot) const;
  /// Rate traces (PacketConfig::trace_rates), one per QP that has a CC state, in QP creation order.
  const std::vector<QpRateTrace>& rate_traces() const;
  /// Queue traces (PacketConfig::trace_interval_ns > 0), one per output port, in port_stats() order.
  const std::vector<PortQueueTrace>& queue_traces() const;

  const MessageRecord& message(MessageId id) const;
  /// Message records held: every message posted, or with recycle_messages the most ever in progress at once.
  std::size_t num_messages() const;
  /// Reuse the record (and id) of a WRITE/SEND once it is delivered and acknowledged, so that memory follows
  /// the messages in progress, not all messages ever posted (PacketEngine, which reads a record only in its
  /// delivery callback). message(id) of a completed message may then describe a later one. Off by default.
  void recycle_messages(bool on);
  std::size_t num_hcas() const;
  const NetworkStats& stats() const;
  /// One entry per directed cable end that can transmit.
  std::vector<PortStats> port_stats() const;
  /// Ports are made on first use (a port that never carries traffic costs a null pointer): the statistics
  /// of the ports made so far, in port_stats() order (every other port's are zero), how many there are of
  /// all ports, and the others counted per (transmitting node's tier, receiving node's tier).
  std::vector<PortStats> used_port_stats() const;
  std::size_t num_ports() const;
  std::size_t materialised_ports() const;
  std::map<std::pair<int, int>, std::uint64_t> unused_ports_by_tier() const;
  /// Packets currently allocated (in queues, on cables, or awaiting ACK-free release).
  std::uint64_t packets_in_flight() const;
  /// High-water mark of packets_in_flight() since construction.
  std::uint64_t peak_packets_in_flight() const;
  /// Bytes of engine state per packet in flight by construction: sizeof the pooled packet plus its
  /// free-list slot and the cable delay-line entry it occupies while it propagates (for memory reports).
  static std::size_t packet_state_bytes();
  const PacketConfig& config() const;

  // ---- faults (models/packet/faults.hpp; docs/packet-models.md, "Faults")
  /// Sets the reroute behaviour; call before the first packet (like the schedule_* calls below, it turns the
  /// Fast event model's shortcuts off). Throws InputError when reroute is on and the engine has no dense LFT
  /// (adaptive routing, or a fabric above Core::kDenseLftMaxEntries).
  void configure_faults(const FaultConfig& cfg);
  /// Cable `link` (both directions) goes down / comes up at `at` (>= now). Packets on it then are lost,
  /// packets queued for it and sent into it while down are dropped; after FaultConfig::sm_sweep_delay the
  /// LFTs are recomputed. Must be called before the first packet; InputError for an unknown link.
  void schedule_link_down(topo::LinkId link, Time at);
  void schedule_link_up(topo::LinkId link, Time at);
  /// Every cable of switch (or HCA) `node` goes down / comes up at `at`. InputError for an unknown node.
  void schedule_node_down(topo::NodeId node, Time at);
  void schedule_node_up(topo::NodeId node, Time at);
  /// A degraded cable: its rate becomes `speed` (e.g. 1x NDR) in both directions from the next packet on.
  /// A fabric imported from ibnetdiscover already carries each cable's width and speed; this overrides it.
  void set_link_speed(topo::LinkId link, topo::LinkSpeed speed);
  /// Drops the faults and SM sweeps not yet due (the workload is over: a fault after it changes nothing the
  /// run reports, but its reroute ran and was counted while RC timers kept the clock going).
  void cancel_pending_faults();
  /// Whether cable `link` is up now.
  bool link_up(topo::LinkId link) const;
  /// QPs that exhausted their retries, in order; when one fails the run stops (Simulation::request_stop).
  const std::vector<QpFailure>& qp_failures() const;
  FaultStats fault_stats() const;

  // ---- period skips (PacketConfig::fast_forward; models/packet/period_skip.cpp, docs/engine.md
  // "Fast-forward")
  /// Whether this network may skip periods at all: not with bit errors, congestion control, PFC, adaptive
  /// routing, traces or faults (their random draws, rate timers, bindings and schedules do not repeat).
  bool period_skips_allowed() const;
  /// Remembers every counter that grows with traffic (ports' packets, bytes, busy and stall time; packets
  /// injected, delivered, hops, ACKs).
  void mark_period();
  /// Adds `n` times each counter's growth since the mark (the caller skips n repetitions of the interval
  /// since the mark) and uses the mark up; false (nothing changed) without a mark.
  bool repeat_periods(std::uint64_t n);
  // ---- fluid skips (models/packet/fluid_skip.cpp, docs/engine.md "Fast-forward")
  /// Turns fluid skips on: while every active QP sends the middle of a long message at a steady rate, each
  /// QP's stream moves ahead by rate x time in one step. The clock is not moved: the owner adds
  /// fluid_skip_stats().skipped to the simulation's time wherever it reports one (message records included).
  /// `horizon` answers the simulation time of the owner's earliest pending event that must run at its own
  /// time (Time::max(): none); no skip goes past it. After a skip of dt, `skipped(dt)` is called: the owner
  /// moves those events dt earlier in simulation time (they are due at the same time on its clock, which
  /// moved dt ahead). Either may be empty (nothing pending). Stays off where period_skips_allowed() is false.
  void enable_fluid_skips(std::function<Time()> horizon, std::function<void(Time)> skipped);
  FluidSkipStats fluid_skip_stats() const;

 private:
  std::unique_ptr<detail::Core> impl_;
};

} // namespace ibn::pkt
