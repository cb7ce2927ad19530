// Period skips (PacketConfig::fast_forward, docs/engine.md "Fast-forward"): the network's side. The caller
// (the collective executor, through PacketEngine) finds its traffic in a steady repetition: mark_period()
// remembers every counter that grows with traffic; repeat_periods(n), one period later, adds n periods'
// growth to each. The clock itself is not moved here: PacketEngine keeps the skipped time as an offset
// between its own clock and the simulation's, and the state (queues, credits, packets on cables) carries on
// as it is. Fluid skips (fluid_skip.cpp) scale the same counters by a fraction (extrapolate).
#include "models/packet/core.hpp"

#include <cmath>

namespace ibn::pkt::detail {

namespace {

/// Adds scale(growth) to every counter that grows with traffic, growth being its value now minus the one in
/// (`s`, `tx`). The others (losses, retransmissions, marks, CNPs, pauses) need a feature
/// period_skips_allowed() excludes.
template <class Scale>
void grow_counters(std::vector<Tx*>& txs, NetworkStats& stats, const NetworkStats& s,
                   const std::vector<Core::TxCounters>& tx, Scale scale) {
  for (std::uint32_t i = 0; i < txs.size(); ++i) {
    Tx* t = txs[i];
    if (t == nullptr) continue;
    const Core::TxCounters m = i < tx.size() ? tx[i] : Core::TxCounters{}; // (zero: a port made since)
    t->sent_packets += scale(t->sent_packets - m.packets);
    t->sent_bytes += scale(t->sent_bytes - m.bytes);
    t->sent_payload += scale(t->sent_payload - m.payload);
    t->busy_time += Time::ps(static_cast<std::int64_t>(scale((t->busy_time - m.busy).count_ps())));
    t->stats.credit_stall +=
        Time::ps(static_cast<std::int64_t>(scale((t->stats.credit_stall - m.stall).count_ps())));
  }
  auto grow = [&](std::uint64_t& now, std::uint64_t then) { now += scale(now - then); };
  grow(stats.packets_injected, s.packets_injected);
  grow(stats.packets_delivered, s.packets_delivered);
  grow(stats.payload_bytes_sent, s.payload_bytes_sent);
  grow(stats.payload_bytes_delivered, s.payload_bytes_delivered);
  grow(stats.packet_hops, s.packet_hops);
  grow(stats.acks, s.acks);
}

} // namespace

bool Core::period_skips_allowed() const {
  return !bit_errors && !cc_dcqcn && !cc_ibcc && !pfc_on && cfg.ar_mode == ArMode::Off && faults == nullptr &&
         cfg.trace_interval_ns == 0 && !cfg.trace_rates;
}

void Core::snapshot(NetworkStats& s, std::vector<TxCounters>& tx) const {
  s = stats;
  tx.assign(txs.size(), TxCounters{});
  for (std::uint32_t i = 0; i < txs.size(); ++i)
    if (const Tx* t = txs[i])
      tx[i] = {t->sent_packets, t->sent_bytes, t->sent_payload, t->busy_time, t->stats.credit_stall};
}

void Core::extrapolate(const NetworkStats& s, const std::vector<TxCounters>& tx, double f) {
  grow_counters(txs, stats, s, tx,
                [f](auto x) { return static_cast<std::uint64_t>(std::llround(f * static_cast<double>(x))); });
}

void Core::mark_period() {
  snapshot(period_mark.stats, period_mark.tx);
  period_mark.valid = true;
}

bool Core::repeat_periods(std::uint64_t n) {
  if (!period_mark.valid) return false;
  period_mark.valid = false;
  grow_counters(txs, stats, period_mark.stats, period_mark.tx, [n](auto x) {
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(n) * static_cast<std::int64_t>(x));
  });
  return true;
}

} // namespace ibn::pkt::detail
