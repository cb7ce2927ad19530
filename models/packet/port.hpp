#pragma once
// Tx: one transmitting cable end — an output port of a switch or an HCA's port — with the two delay lines of
// its cable: the packets it sent that have not reached the peer yet (`wire`, one pending event for its head)
// and the credits the peer returned that have not reached it yet (`creditq`). A switch output also holds its
// virtual output queues (switch_port.hpp) and, in the Fast event model, the time-ordered `incoming` list of
// packets bound for it (event_model.hpp). Its behaviour is in port.cpp (transmit path) and hca.cpp (what an
// HCA port sends next); this file is the state, laid out for the hot path.
#include "models/packet/delay_line.hpp"
#include "models/packet/network.hpp"
#include "models/packet/packet.hpp"
#include "models/packet/switch_port.hpp"
#include "sim/simulation.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace ibn::pkt::detail {

struct Core;

// Event tags of a transmitter (one component per directed cable end).
inline constexpr EventTag kTxDone = 0;  // the current packet's last byte left
inline constexpr EventTag kArrival = 1; // the head packet on the cable reaches the peer
inline constexpr EventTag kCredits =
    2;                               // the head credit return reaches this transmitter (only while it waits)
inline constexpr EventTag kWake = 3; // an idle switch output: a packet bound for it arrives at its switch

// PFC as credits: in PFC mode a transmitter starts with kPfcBase credits (never exhausted by the ordinary
// credit returns, which keep flowing) and a pause frame subtracts kPfcPause, a resume frame adds it back.
inline constexpr std::int64_t kPfcBase = std::int64_t{1} << 29;
inline constexpr std::int32_t kPfcPause = std::int32_t{1} << 30;

/// Credits are applied lazily, when the transmitter next selects a packet; an event for them is scheduled
/// only while the transmitter is idle and waits for credits (`waiting`), so a busy or idle port costs no
/// event per credit return.
struct alignas(64) Tx : Component {
  // A Foreground component: it posts its own events with Simulation::post.
  Tx(Core& core, Simulation& sim, std::uint32_t index, std::string name)
      : Component(sim, std::move(name), HandlerKind::Foreground), core(core), index(index) {}
  void on_event(EventTag tag) override; // port.cpp

  // Layout: Tx is 64-byte aligned and the fields an event of this port (or a neighbour returning credits
  // or handing over a packet) touches are packed into its first lines, hottest first, so that an event
  // touches few cache lines of it. Line 0 (after the Component base): state of the current transmission.
  Core& core;
  std::uint32_t index;
  std::uint32_t current = kNil;
  bool busy = false;
  bool owner_is_switch = false;
  bool peer_is_switch = false;
  /// A transmission that ends at `busy_until` with no kTxDone pending (event_model.hpp, "quiet ends"): a
  /// switch output with nothing to do then, or an HCA whose next packet will not fit the credits then
  /// (quiet_need). The port counts as idle from `busy_until` on.
  bool quiet_end = false;
  bool waiting = false; ///< idle with packets that do not fit the credits
  bool stalled = false;
  bool credit_blocked = false; ///< set by the last selection: a packet was ready but credits were short
  std::uint8_t cur_in_vl = 0;  ///< of `current` (switch outputs): where it came in, for its credits
  std::uint16_t cur_in_port = 0;
  bool capped = false;       ///< cap_bps != 0 (tested per packet: kept on this line)
  std::uint8_t quiet_vl = 0; ///< with quiet_need: the VL of the blocked next packet
  bool down = false;         ///< its cable is down (faults.cpp): whatever it would send is dropped
  std::uint32_t cur_wire = 0;
  std::uint32_t owner = 0;      ///< switch slot or HCA index
  std::uint32_t peer_owner = 0; ///< switch slot or HCA index
  /// An HCA in a quiet transmission (quiet_end) whose next packet needs this many credits on quiet_vl,
  /// more than it will have when the transmission ends; 0 otherwise. Its kCredits event is armed for when
  /// the returns on their way bring enough (event_model.hpp).
  std::uint32_t quiet_need = 0;
  // Line 1: times and queue sizes.
  /// HCA injection cap: the earliest time the next packet may start (Time::zero() when uncapped).
  Time gate;
  Time busy_until;              ///< end of the current transmission (with quiet_end)
  Time wake_at = Time::max();   ///< earliest pending kWake event (Time::max(): none)
  Time credit_at = Time::max(); ///< earliest pending kCredits event (Time::max(): none)
  std::uint64_t queued_packets = 0;
  std::uint64_t queued_bytes = 0;
  Time prop;
  Time peer_switch_latency; ///< the peer switch's port-to-port latency (DeviceKnobs::switch_latency_of); 0 for an HCA
  std::uint64_t ps_per_byte = 0; ///< 8e12 / rate when that is a whole number (then no carry), else 0
  // Line 2: what the peer touches when it returns credits.
  DelayLine creditq; ///< (arrival time here, VL, credits)
  Time ctrl_delay;   ///< credit return / pause frame delay to this transmitter
  // Switch outputs: virtual output queues [vl * radix + (in_port - 1)] and a bitmask of non-empty ones.
  Fifo* voq = nullptr;
  int peer_port = 0;
  int radix = 0;
  // Line 3: what the transmitter handing packets to this output touches.
  /// Switch outputs, Fast event model: packets bound for this output that have not reached its switch yet,
  /// (arrival time, packet, input port) ordered by time (event_model.hpp, "incoming lists").
  DelayLine incoming;
  std::uint64_t* nonempty = nullptr; // [vl * words + w]
  std::uint16_t words = 0;           ///< 64-bit words per VL in `nonempty`
  // Line 4: credits (int32: buffer credits, or kPfcBase minus at most one kPfcPause under PFC).
  std::array<std::int32_t, kMaxVls> credits{}; ///< per VL, of the peer's input buffer
  // Line 5.
  std::array<std::uint16_t, kMaxVls> rr_input{}; ///< per VL: last input served (0-based)
  // Counted per packet here, next to the rest of the hot state; port_stats() copies them into PortStats.
  std::uint64_t peak_queue = 0; ///< PortStats::peak_queue_bytes
  std::uint64_t sent_packets = 0;
  // Line 5.
  std::uint64_t sent_bytes = 0;
  Time busy_time;
  DelayLine wire;                 ///< (arrival time at the peer, packet)
  std::uint64_t cap_bps = 0;      ///< HCA injection cap below the link rate (0: none)
  std::uint64_t sent_payload = 0; ///< PortStats::payload_bytes
  // Statistics and the rest.
  std::uint64_t carry = 0;
  std::uint64_t cap_carry = 0; ///< remainder of the cap's gap computation (like `carry`)
  std::uint64_t rate_bps = 0;
  Time stall_since;
  PortStats stats;
  ArbPosition high, low;
  std::uint64_t high_bytes = 0; // high-priority bytes since the last low-priority packet
  topo::NodeId node = topo::kNoNode;
  int port = 0;
  topo::LinkId link = topo::kNoLink;
  topo::NodeId peer = topo::kNoNode;
  std::uint32_t rev = kNil; ///< the Tx of the opposite direction of the same cable
  std::vector<Fifo> voq_store;
  std::vector<std::uint64_t> nonempty_store;
  // Congestion control (cold unless enabled).
  std::uint64_t ecn_kmin = 0, ecn_kmax = 0; ///< DCQCN marking thresholds of this output (bytes)
  std::uint32_t fecn_count = 0;             ///< IB CC: eligible packets since the last FECN mark
  // PFC, on a transmitter whose peer is a switch: the bytes it sent that sit in the peer's input buffer,
  // per priority, and the pause state the peer keeps for it (pfc.cpp).
  std::array<std::uint64_t, kMaxVls> pfc_in{};
  std::uint32_t pfc_paused = 0; ///< bit per VL: the peer sent XOFF
  std::array<Time, kMaxVls> pause_since{};
  std::uint64_t pfc_xoff = 0, pfc_xon = 0, pfc_limit = 0;
  std::uint64_t dropped = 0; ///< packets it sent that a dead cable lost, or dropped while down (faults.cpp)
};

/// EventModel::Checked: a Tx that checks the event model's invariants on itself after each of its events
/// (event_model.hpp). A type of its own, so that the ordinary Tx pays nothing for the checks.
struct CheckedTx final : Tx {
  using Tx::Tx;
  void on_event(EventTag tag) override; // event_model.cpp
};

} // namespace ibn::pkt::detail
