// Fluid skips (PacketNetwork::enable_fluid_skips; docs/engine.md "Fast-forward", "Fluid skips"): while
// every active QP sends the middle of a long message at a steady rate, the network advances each QP's
// stream by rate x time in one step and carries on packet by packet from there.
//
// Detection (fluid_probe, called by the responder's in-order path once per window): the set of active
// requester QPs must stay the same (no QP starts or stops: Core::qp_set_changes) over kFluidSamples - 1
// windows; each QP's rate in every window — in-order PSNs over the time between the windows' last
// deliveries, exact for a periodic flow — within kFluidTolerance of its rate over the whole span; and each
// QP's packets in flight within that tolerance plus 2 packets (queues neither filling nor draining).
//
// The skip (fluid_skip, its own event at the detecting time): every QP's message must be the one at the
// front of its send queue, its first packet delivered and its last not yet sent (no completion, no
// acknowledgement of another message, no notification pending), no resend, no NAK, READ or CNP in flight,
// and more than a margin of packets left to send after the skip. The time skipped, dt, is the span's time
// for a whole number of packets of the QP that limits the skip (least room for its rate), or less where
// the owner's next timer is due; every QP q moves k_q = rate_q x dt packets ahead: its
// PSNs (next, highest sent, unacknowledged, expected at the responder), its message's received packets and
// bytes and send offset, and the PSNs of its packets and ACKs in flight (which keep their places: the
// network's state relative to now is the steady one). The clock is not moved; the skipped time is an
// offset the owner adds (PacketNetwork::fluid_skip_stats().skipped, PacketEngine::now()). Counters that
// grow with traffic grow by dt / span times their growth over the span; payload bytes by exactly
// sum(k_q) MTUs.
#include "models/packet/core.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ibn::pkt::detail {

namespace {
constexpr double kFluidTolerance = 0.01; // each window's rate within 1 % of the span's
constexpr std::uint32_t kMinPacketsPerWindow = 4;
constexpr Time kMaxWindow = Time::us(64);
constexpr std::uint32_t kMinMargin = 32; // packets left to send after a skip, at least
} // namespace

void Core::fluid_probe() {
  Fluid& f = fluid;
  const Time now = sim.now();
  f.next_probe = now + f.window;
  if (f.scheduled) return;
  if (qp_set_changes != f.changes_mark) { // a QP started or stopped in the last window: begin again
    f.changes_mark = qp_set_changes;
    f.samples = 0;
    return;
  }
  if (f.samples == 0) {
    f.qps.clear();
    for (std::uint32_t q = 0; q < qps.size(); ++q)
      if (qps[q].req_active) f.qps.push_back(q);
    if (f.qps.empty()) return;
    f.epsn.resize(f.qps.size());
    f.last_rx.resize(f.qps.size());
    f.in_flight.resize(f.qps.size());
    snapshot(f.stats0, f.tx0);
    f.events0 = sim.total_events_executed();
  }
  const int s = f.samples++;
  for (std::size_t i = 0; i < f.qps.size(); ++i) {
    const Qp& qp = qps[f.qps[i]];
    f.epsn[i][s] = qp.epsn;
    f.last_rx[i][s] = qp.last_rx;
    f.in_flight[i][s] = qp.next_psn - qp.epsn;
  }
  f.at[s] = now;
  if (f.samples < kFluidSamples) return;
  // Every window's rate against the span's, per QP; then the packets in flight.
  constexpr int last = kFluidSamples - 1;
  bool steady = true;
  for (std::size_t i = 0; i < f.qps.size() && steady; ++i) {
    const auto& e = f.epsn[i];
    const auto& t = f.last_rx[i];
    for (int w = 0; w < last; ++w)
      if (e[w + 1] - e[w] < kMinPacketsPerWindow ||
          t[w + 1] <= t[w]) { // too few packets to tell a rate: longer windows
        f.window = std::min(kMaxWindow, f.window * 2);
        f.samples = 0;
        return;
      }
    const double span =
        static_cast<double>(e[last] - e[0]) / static_cast<double>((t[last] - t[0]).count_ps());
    for (int w = 0; w < last && steady; ++w) {
      const double r =
          static_cast<double>(e[w + 1] - e[w]) / static_cast<double>((t[w + 1] - t[w]).count_ps());
      steady = std::abs(r / span - 1.0) <= kFluidTolerance;
    }
  }
  // Queues neither filling nor draining: each QP's packets in flight (sent, not yet in order at the
  // responder) within a packet or two of where they were, whatever the phase of the samples.
  for (std::size_t i = 0; i < f.qps.size() && steady; ++i) {
    const auto [lo, hi] = std::minmax_element(f.in_flight[i].begin(), f.in_flight[i].end());
    steady = static_cast<double>(*hi - *lo) <= kFluidTolerance * static_cast<double>(*hi) + 2.0;
  }
  if (steady) {
    FluidPlan plan;
    if (fluid_plan(plan)) {
      f.scheduled = true;
      f.skipper->request(now);
      return;
    }
  }
  // Not steady, or nothing to skip: this sample starts the next span.
  for (std::size_t i = 0; i < f.qps.size(); ++i) {
    f.epsn[i][0] = f.epsn[i][last];
    f.last_rx[i][0] = f.last_rx[i][last];
    f.in_flight[i][0] = f.in_flight[i][last];
  }
  f.at[0] = f.at[last];
  snapshot(f.stats0, f.tx0);
  f.events0 = sim.total_events_executed();
  f.samples = 1;
}

bool Core::fluid_plan(FluidPlan& plan) const {
  const Fluid& f = fluid;
  if (f.samples != kFluidSamples || qp_set_changes != f.changes_mark) return false;
  if (!period_skips_allowed()) return false; // e.g. faults configured after the skips were turned on
  if (!notify->items.empty() || !poster->heap.empty()) return false; // a completion or a post is due
  constexpr int last = kFluidSamples - 1;
  const Time now = sim.now();
  // Which QPs skip, and how far they may go (packets left to send beyond the margin).
  plan.slot.assign(qps.size(), kNil); // QP -> index in f.qps
  for (std::size_t i = 0; i < f.qps.size(); ++i) plan.slot[f.qps[i]] = static_cast<std::uint32_t>(i);
  plan.room.assign(f.qps.size(), 0);
  for (std::uint32_t q = 0; q < qps.size(); ++q) {
    const Qp& qp = qps[q];
    if (qp.sendq.empty() && !qp.unacked() && qp.reads.empty()) continue; // idle
    if (plan.slot[q] == kNil) return false; // finishing (all sent, ACKs due), or outside the sampled set
    const Msg& m = msgs[qp.sendq.front()];
    if (qp.send_pos != 0 || m.rec.spec.verb == Verb::Read || !m.psn_assigned || qp.failed ||
        !qp.ooo.empty() || !qp.reads.empty() || qp.reads_outstanding != 0 || qp.next_psn != qp.max_psn_sent ||
        qp.una < m.first_psn || qp.epsn <= m.first_psn || qp.next_psn >= m.first_psn + m.npkts)
      return false;
    const std::uint32_t unsent = m.first_psn + m.npkts - qp.next_psn;
    const std::uint32_t margin = std::max(kMinMargin, 2 * (qp.next_psn - qp.epsn));
    if (unsent <= margin) return false;
    plan.room[plan.slot[q]] = unsent - margin;
  }
  bool other = false; // a packet that is not a data packet in the middle of its QP's message, nor an ACK
  for (const std::uint32_t pi : pool.allocated()) {
    const Packet& p = pool[pi];
    if (p.kind == Kind::Data)
      other |= plan.slot[p.qp] == kNil || p.last || p.msg != qps[p.qp].sendq.front();
    else
      other |= p.kind != Kind::Ack || plan.slot[p.qp] == kNil;
  }
  if (other) return false;
  // The time: a whole number of packets of the QP that limits the skip, at its span's rate.
  double dt_max = std::numeric_limits<double>::max();
  for (std::size_t i = 0; i < f.qps.size(); ++i) {
    const double t = static_cast<double>(plan.room[i]) / fluid_rate(i);
    if (t < dt_max) {
      dt_max = t;
      plan.ref = i;
    }
  }
  const std::int64_t packets = f.epsn[plan.ref][last] - f.epsn[plan.ref][0];
  const std::int64_t span = (f.last_rx[plan.ref][last] - f.last_rx[plan.ref][0]).count_ps();
  plan.k_ref = plan.room[plan.ref];
  if (f.horizon) { // the owner's next timer, which must run at its own time
    const Time h = f.horizon();
    if (h <= now) return false;
    if (h != Time::max()) plan.k_ref = std::min(plan.k_ref, (h - now).count_ps() * packets / span);
  }
  plan.dt = Time::ps(plan.k_ref * span / packets);
  return plan.dt >= f.at[last] - f.at[0]; // else not worth it: less than the span it took to see
}

double Core::fluid_rate(std::size_t i) const {
  constexpr int last = kFluidSamples - 1;
  const auto& f = fluid;
  return static_cast<double>(f.epsn[i][last] - f.epsn[i][0]) /
         static_cast<double>((f.last_rx[i][last] - f.last_rx[i][0]).count_ps());
}

void Core::fluid_skip() {
  Fluid& f = fluid;
  f.scheduled = false;
  FluidPlan plan;
  const bool go = fluid_plan(plan); // (again: events at the same time ran since the probe planned it)
  f.samples = 0;                    // whatever happens, sampling begins again
  if (!go) return;
  const Time dt = plan.dt;
  // Move every stream.
  std::vector<std::uint32_t> k(f.qps.size());
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < f.qps.size(); ++i) {
    const auto fair =
        static_cast<std::uint32_t>(std::llround(fluid_rate(i) * static_cast<double>(dt.count_ps())));
    k[i] = i == plan.ref ? static_cast<std::uint32_t>(plan.k_ref) : std::min(plan.room[i], fair);
    Qp& qp = qps[f.qps[i]];
    Msg& m = msgs[qp.sendq.front()];
    qp.next_psn += k[i];
    qp.max_psn_sent += k[i];
    qp.una += k[i];
    qp.epsn += k[i];
    qp.send_off += std::uint64_t{k[i]} * cfg.mtu_bytes;
    m.recv_pkts += k[i];
    m.recv_bytes += std::uint64_t{k[i]} * cfg.mtu_bytes;
    total += k[i];
  }
  for (const std::uint32_t pi : pool.allocated()) pool[pi].psn += k[plan.slot[pool[pi].qp]];
  // Counters: ports' and hops as the span's growth scaled to dt; what follows from k exactly (payload, data
  // packets, and the ACKs of one per ack_every packets, the responders' coalescing phase kept).
  const Time measured = f.at[kFluidSamples - 1] - f.at[0];
  const double scale = static_cast<double>(dt.count_ps()) / static_cast<double>(measured.count_ps());
  const NetworkStats before = stats;
  extrapolate(f.stats0, f.tx0, scale);
  std::uint64_t acks = 0;
  for (const auto ki : k) acks += ki / cfg.ack_every_packets;
  stats.payload_bytes_sent = before.payload_bytes_sent + total * cfg.mtu_bytes;
  stats.payload_bytes_delivered = before.payload_bytes_delivered + total * cfg.mtu_bytes;
  stats.acks = before.acks + acks;
  stats.packets_injected = before.packets_injected + total + acks;
  stats.packets_delivered = before.packets_delivered + total + acks;
  f.events_skipped += static_cast<std::uint64_t>(
      std::llround(scale * static_cast<double>(sim.total_events_executed() - f.events0)));
  f.packets_skipped += total;
  f.offset += dt;
  ++f.skips;
  if (f.skipped) f.skipped(dt);
}

} // namespace ibn::pkt::detail
