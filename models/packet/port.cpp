// The transmit path of a port (Tx, port.hpp): selecting the next packet, serializing it, handing it to the
// cable, the credit line, and the port's four events. The Fast event model's shortcuts it takes are in
// event_model.hpp.
#include "models/packet/event_model.hpp"

#include <cmath>

namespace ibn::pkt::detail {

void Tx::on_event(EventTag tag) {
  switch (tag) {
  case kTxDone:
    core.tx_done(*this);
    break;
  case kArrival:
    core.arrivals(*this);
    break;
  case kCredits:
    core.credit_wake(*this);
    break;
  default:
    core.arrival_wake(*this);
    break;
  }
}

/// Something changed at `tx` (a packet, credits, a message): if it is free, it selects and starts a packet,
/// else it waits for credits, a packet or its injection cap.
void Core::kick(Tx& tx) {
  if (tx.down) [[unlikely]] { // a dead cable: drop what it would send (faults.cpp)
    if (!tx.busy) drain_dead(tx);
    return;
  }
  if (tx.busy && quiet_busy(tx)) return;
  if (tx.gate > sim.now()) { // HCA injection cap: not yet
    pacer_of(tx.owner).request(tx.gate);
    return;
  }
  if (tx.creditq.front_t() <= sim.now()) absorb_credits(tx);
  if (tx.incoming.front_t() <= sim.now() && take_incoming(tx)) return; // shortcuts 1 and 3
  tx.credit_blocked = false;
  const std::uint32_t p = tx.owner_is_switch ? select_switch(tx) : select_hca(tx);
  if (p == kNil) {
    if (tx.owner_is_switch) tx.credit_blocked = tx.queued_packets > 0;
    tx.waiting = tx.credit_blocked;
    if (tx.credit_blocked) {
      if (!tx.stalled) {
        tx.stalled = true;
        tx.stall_since = sim.now();
      }
      if (!tx.creditq.empty()) arm_credits(tx);
    }
    if (!tx.incoming.empty()) arm_wake(tx, tx.incoming.front_t());
    return;
  }
  tx.waiting = false;
  start_tx(tx, p);
}

/// A kCredits event for the earliest credit return on its way (for a quiet HCA: for when the returns bring
/// enough), unless one is pending for that time or earlier (an earlier return can join the line later: quiet
/// ends return credits ahead).
void Core::arm_credits(Tx& tx) {
  const Time t = tx.quiet_need == 0 ? tx.creditq.front_t() : quiet_credit_time(tx);
  if (t >= tx.credit_at) return;
  tx.credit_at = t;
  sim.post(t, tx.id(), kCredits);
}

void Core::credit_wake(Tx& tx) {
  if (sim.now() >= tx.credit_at) tx.credit_at = Time::max(); // (a later, superseded one just kicks again)
  if (tx.quiet_need != 0 && sim.now() < tx.busy_until) { // (superseded, before the quiet transmission ends)
    arm_credits(tx);
    return;
  }
  kick(tx);
}

void Core::start_tx(Tx& tx, std::uint32_t pi) {
  Packet& p = pool[pi];
  const Time now = sim.now();
  if (tx.stalled) {
    tx.stats.credit_stall += now - tx.stall_since;
    tx.stalled = false;
  }
  tx.busy = true;
  tx.current = pi;
  tx.cur_in_port = p.in_port;
  tx.cur_in_vl = p.in_vl;
  tx.cur_wire = p.wire;
  auto& cr = tx.credits[p.vl];
  cr -= PacketConfig::credits_for(p.wire);
  if (cr < stats.min_credits_seen) stats.min_credits_seen = cr;
  // Exact serialization: bits * 1e12 / rate, the remainder carried to the next packet of this port.
  Time ser;
  if (tx.ps_per_byte != 0) {
    ser = Time::ps(static_cast<std::int64_t>(p.wire * tx.ps_per_byte));
  } else {
    // wire < 2^32 B and carry < rate: 64 bits hold wire * 8e12 + carry while wire < 2^21 B.
    if (p.wire < (1u << 21)) {
      const std::uint64_t num = std::uint64_t{p.wire} * 8'000'000'000'000ull + tx.carry;
      ser = Time::ps(static_cast<std::int64_t>(num / tx.rate_bps));
      tx.carry = num % tx.rate_bps;
    } else {
      const unsigned __int128 num = static_cast<unsigned __int128>(p.wire) * 8'000'000'000'000ull + tx.carry;
      ser = Time::ps(static_cast<std::int64_t>(num / tx.rate_bps));
      tx.carry = static_cast<std::uint64_t>(num % tx.rate_bps);
    }
  }
  if (tx.capped) { // HCA injection cap: the next start is wire x 8 / cap later, remainder carried
    const unsigned __int128 num =
        static_cast<unsigned __int128>(p.wire) * 8'000'000'000'000ull + tx.cap_carry;
    tx.gate = now + Time::ps(static_cast<std::int64_t>(num / tx.cap_bps));
    tx.cap_carry = static_cast<std::uint64_t>(num % tx.cap_bps);
  }
  Time end = now + ser;
  if (p.tail > end) end = p.tail; // cut-through: cannot finish before the tail has arrived
  if (bit_errors && !p.corrupted) {
    const double ber = link_ber.empty() ? cfg.bit_error_rate : link_ber[tx.link];
    const double ok = std::pow(1.0 - ber, 8.0 * p.wire);
    const double u = static_cast<double>(ber_rng->next_u64() >> 11) * 0x1.0p-53;
    if (u >= ok) p.corrupted = true;
  }
  // Cut-through: a switch may forward the head its latency after it arrived (common::DeviceKnobs: one
  // switch latency per switch, its model's, charged here on arrival; tx.prop = cable_latency); an HCA takes
  // the tail.
  const Time deliver = tx.peer_is_switch ? now + tx.prop + tx.peer_switch_latency : end + tx.prop;
  p.tail = end + tx.prop;
  tx.sent_packets++;
  tx.sent_bytes += p.wire;
  tx.sent_payload += p.payload;
  tx.busy_time += end - now;
  stats.packet_hops++;
  if (!try_quiet_end(tx, p, end, cr)) sim.post(end, tx.id(), kTxDone);
  if (tx.peer_is_switch && incoming_shortcut && !p.corrupted) {
    hand_over(tx, pi, deliver); // shortcut 1: no arrival event
  } else {
    tx.wire.push_back({deliver, pi, 0});
    if (tx.wire.size() == 1) sim.post(deliver, tx.id(), kArrival);
  }
}

[[gnu::always_inline]] inline void Core::return_credits(const Switch& sw, int in_port, int vl,
                                                        std::uint32_t wire) {
  Tx& up = *txs[sw.up_tx[static_cast<std::size_t>(in_port - 1)]];
  push_credits(up, static_cast<std::uint32_t>(vl), wire);
  if (pfc_on) pfc_left(up, vl, wire);
}

[[gnu::noinline]] void Core::tx_done(Tx& tx) {
  tx.busy = false;
  const std::uint32_t pi = tx.current;
  tx.current = kNil;
  // The packet has left this switch: its input buffer space goes back upstream. (From what start_tx
  // recorded: with cut-through the packet may already have reached the next switch, which rewrites its
  // input port and VL.)
  if (tx.owner_is_switch && pi != kNil)
    return_credits(switches[tx.owner], tx.cur_in_port, tx.cur_in_vl, tx.cur_wire);
  kick(tx);
}

/// The packets on `tx`'s cable that have reached the peer by now, in order.
[[gnu::noinline]] void Core::arrivals(Tx& tx) {
  const Time now = sim.now();
  do {
    const std::uint32_t pi = tx.wire.front().a;
    tx.wire.pop_front();
    if (tx.peer_is_switch)
      arrive_switch(tx.peer_owner, tx.peer_port, pi);
    else
      arrive_hca(tx.peer_owner, tx, pi);
  } while (tx.wire.front_t() <= now);
  if (!tx.wire.empty()) sim.post(tx.wire.front_t(), tx.id(), kArrival);
}

} // namespace ibn::pkt::detail
