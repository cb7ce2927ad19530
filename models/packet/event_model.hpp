#pragma once
// The Fast event model's shortcuts, in one place (docs/engine.md, "Event model"). Included by port.cpp, the
// transmit path that uses them; event_model.cpp holds the cold parts and the invariant checks.
//
// EventModel::Plain spends an event on every packet arrival at a switch and on every transmission end. The
// Fast model (the default) skips the events whose outcome is known when they are scheduled. The shortcuts and
// when each is on (Core::build):
//
// 1. Incoming lists (`incoming_shortcut`: static routing, no PFC, not Plain). A packet sent towards a switch
//    does not get an arrival event: its output at that switch is known when it is sent (the LFT), so it is
//    inserted, time-ordered, into that output's `Tx::incoming` (hand_over). The output moves the due ones
//    into its VOQs in arrival order when it next selects (absorb_arrivals, from kick), exactly as the arrival
//    events would have, before choosing. An event (kWake) exists only for an output that would otherwise not
//    look: an idle one, or a quiet one (2.), at max(arrival, end of its transmission).
//    Invariant I1: an output that is idle, or busy with a quiet end, and has packets in `incoming` has a
//    kWake pending no later than max(the first one's arrival, busy_until): `wake_at <= max(front_t,
//    busy_until)`.
// 2. Quiet ends at switch outputs (with 1.). When an output starts a packet with nothing queued and nothing
//    in `incoming` due before the transmission ends, it schedules no kTxDone: the packet's credits go back
//    upstream at once, timed for the end (the credit line is insert-sorted for that), the port counts as busy
//    until `busy_until` and idle from then on (quiet_busy); a packet that joins `incoming` meanwhile arms a
//    wake at max(its arrival, busy_until) (hand_over).
//    Invariant I2: a quiet switch output has nothing queued while its quiet transmission runs (anything due
//    before busy_until would have made the end an ordinary one: queued_packets == 0 while now < busy_until).
// 3. Direct starts (`direct_start`: 1., one VL in the arbitration, no marking, no per-global-hop VLs). A lone
//    due packet at an output with empty queues goes to the wire without the VOQ round trip (start_direct),
//    leaving the same state (input port and VL, peak queue, round-robin position) as enqueue + select would.
// 4. Quiet ends at HCAs (`hca_quiet`: 1., no DCQCN / IB CC, whose pacing moves send times). When start_tx on
//    an HCA port can tell that the selection at the end of this packet would find the next packet short of
//    credits (blocked_next: no ACK/NAK queued, one active requester in the middle of a WRITE or SEND that is
//    ready, and the credits now plus the returns that reach the port by the end fall short), no kTxDone is
//    scheduled: the port counts as stalled from the end, and its kCredits event is armed for when the returns
//    on their way add up to the need, not before the end (quiet_credit_time; re-armed as returns join). Any
//    change to the HCA's state meanwhile (a message posted, an ACK to send, a rewind, a timer) kicks it, and
//    a quiet HCA then arms a wake at the end of its transmission and selects normally then (quiet_busy).
//    Invariant I3: a quiet HCA (quiet_need != 0) is quiet_end, waiting, stalled and credit_blocked, and has a
//    kCredits event pending no later than quiet_credit_time (or none if the line cannot bring enough yet).
// Invariant I4 (every port, every model): a port waiting for credits (`waiting`, not quiet) with returns on
//    their way has a kCredits event pending no later than the first return: `credit_at <= creditq.front_t()`.
// Invariant I5: `wake_at` and `credit_at` are Time::max() or not in the past when no event of the port is
//    running (a handler clears them when it runs at or after them).
//
// EventModel::Checked is Fast with check_port (event_model.cpp) run on the port after each of its events: a
// broken invariant throws std::logic_error naming the port and the invariant.
// tests/models/event_model_test.cpp runs its scenarios in this mode.
#include "models/packet/core.hpp"

#include <algorithm>

namespace ibn::pkt::detail {

/// kick's start on a port that is busy: false when the port must not select now (its transmission runs).
/// A quiet transmission that has ended makes the port idle here (its credits went back in start_tx already).
inline bool Core::quiet_busy(Tx& tx) {
  if (!tx.quiet_end) return true;
  if (sim.now() < tx.busy_until) {
    if (!tx.owner_is_switch) // an HCA: something changed (a message, an ACK to send): select at the end
      arm_wake(tx, tx.busy_until);
    else if (!tx.incoming.empty()) // (an earlier wake, e.g. one for a packet already absorbed)
      arm_wake(tx, std::max(tx.incoming.front_t(), tx.busy_until));
    return true;
  }
  tx.busy = false; // the quiet transmission is over
  tx.quiet_end = false;
  tx.quiet_need = 0;
  return false;
}

/// Shortcuts 1 and 3, from kick when packets in `incoming` are due: true when the only due packet went
/// straight to the wire (shortcut 3: at an output with empty queues it is the only candidate), else the due
/// packets have joined the VOQs and the output selects as usual.
[[gnu::always_inline]] inline bool Core::take_incoming(Tx& tx) {
  if (direct_start && tx.queued_packets == 0 &&
      (tx.incoming.size() == 1 || tx.incoming.at(1).t > sim.now()) && start_direct(tx))
    return true;
  absorb_arrivals(tx);
  return false;
}

/// Shortcut 3: `tx`'s only due packet (the head of `incoming`; its queues are empty) starts now if it fits
/// the credits. Returns false, changing nothing, when the credits are short.
inline bool Core::start_direct(Tx& tx) {
  const LineItem it = tx.incoming.front();
  Packet& p = pool[it.a];
  if (p.vl != arbiter.single_vl() ||
      tx.credits[p.vl] < static_cast<std::int64_t>(PacketConfig::credits_for(p.wire)))
    return false;
  tx.incoming.pop_front();
  p.in_port = static_cast<std::uint16_t>(it.b);
  p.in_vl = p.vl;
  if (p.wire > tx.peak_queue) tx.peak_queue = p.wire; // (queued alone for an instant)
  tx.rr_input[p.vl] = static_cast<std::uint16_t>(it.b - 1);
  tx.credit_blocked = false;
  tx.waiting = false;
  start_tx(tx, it.a);
  return true;
}

/// Shortcut 1: moves the packets that have reached `tx`'s switch by now from `incoming` into the VOQs, in
/// arrival order, as their arrival events would have.
inline void Core::absorb_arrivals(Tx& tx) {
  const Time now = sim.now();
  while (tx.incoming.front_t() <= now) {
    const LineItem it = tx.incoming.front();
    tx.incoming.pop_front();
    enqueue_at_switch(tx.owner, static_cast<int>(it.b), it.a, tx);
    if (tx.queued_bytes > tx.peak_queue) tx.peak_queue = tx.queued_bytes;
  }
}

/// A kWake event at `t` unless one is pending for `t` or earlier.
inline void Core::arm_wake(Tx& tx, Time t) {
  if (t >= tx.wake_at) return;
  tx.wake_at = t;
  sim.post(t, tx.id(), kWake);
}

inline void Core::arrival_wake(Tx& tx) {
  if (sim.now() >= tx.wake_at) tx.wake_at = Time::max(); // (a later, superseded wake just kicks again)
  kick(tx);
}

/// When `tx` will hold `need` credits on `vl`, counting the returns on their way in its credit line: now if
/// it does already, Time::max() if the line does not bring enough.
inline Time Core::credits_reach(const Tx& tx, std::uint8_t vl, std::int64_t need) const {
  std::int64_t c = tx.credits[vl];
  if (c >= need) return sim.now();
  for (std::uint32_t i = 0, n = tx.creditq.size(); i < n; ++i) {
    const LineItem& it = tx.creditq.at(i);
    if (it.a != vl) continue;
    c += it.b;
    if (c >= need) return it.t;
  }
  return Time::max();
}

/// Shortcut 4: when the credit returns on their way bring enough for a quiet HCA's next packet, but not
/// before its transmission ends; Time::max() if they do not.
inline Time Core::quiet_credit_time(const Tx& tx) const {
  return std::max(credits_reach(tx, tx.quiet_vl, tx.quiet_need), tx.busy_until);
}

/// start_tx's decision on the end of packet `p` that `tx` starts now and that ends at `end`: true when the
/// end is quiet (shortcut 2 or 4; no kTxDone to schedule). `credits_left`: the credits of p's VL after it.
[[gnu::always_inline]] inline bool Core::try_quiet_end(Tx& tx, const Packet& p, Time end,
                                                       std::int64_t credits_left) {
  if (incoming_shortcut && tx.owner_is_switch && tx.queued_packets == 0 && tx.incoming.front_t() > end) {
    // Shortcut 2: nothing is waiting for this output, and nothing reaches it before `end`: kTxDone would only
    // return the credits and find the port idle. So the credits go back now, timed for `end`.
    tx.quiet_end = true;
    tx.busy_until = end;
    return_credits_at(switches[tx.owner], end, p.in_port, p.in_vl, p.wire);
    if (!tx.incoming.empty()) arm_wake(tx, tx.incoming.front_t());
    return true;
  }
  if (hca_quiet && !tx.owner_is_switch && credits_left < max_pkt_credits &&
      (tx.quiet_need = blocked_next(tx, end)) != 0) {
    // Shortcut 4 (looked at only when this packet's VL has less than the largest packet's credits left): the
    // port waits for credits from `end` on, as kTxDone would have found it.
    tx.quiet_end = true;
    tx.busy_until = end;
    tx.waiting = true;
    tx.credit_blocked = true;
    tx.stalled = true;
    tx.stall_since = end;
    arm_credits(tx);
    return true;
  }
  return false;
}

/// Shortcut 1: packet `pi`, sent by `tx` to a switch, reaches it at `deliver` (its head, plus the switch
/// latency): it waits in its output's `incoming` list, and wakes that output if nothing else will.
[[gnu::always_inline]] inline void Core::hand_over(Tx& tx, std::uint32_t pi, Time deliver) {
  Tx& out = route_static(tx.peer_owner, pool[pi]);
  out.incoming.insert_sorted({deliver, pi, static_cast<std::uint32_t>(tx.peer_port)});
  if (!out.busy) {
    arm_wake(out, deliver);
  } else if (out.quiet_end) {
    arm_wake(out, std::max(deliver, out.busy_until));
  }
}

} // namespace ibn::pkt::detail
