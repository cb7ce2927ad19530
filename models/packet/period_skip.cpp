// Period skips (PacketConfig::fast_forward, docs/engine.md "Fast-forward"): the network's side. The caller
// (the collective executor, through PacketEngine) finds its traffic in a steady repetition: mark_period()
// remembers every counter that grows with traffic; repeat_periods(n), one period later, adds n periods'
// growth to each. The clock itself is not moved here: PacketEngine keeps the skipped time as an offset
// between its own clock and the simulation's, and the state (queues, credits, packets on cables) carries on
// as it is.
#include "models/packet/core.hpp"

namespace ibn::pkt::detail {

bool Core::period_skips_allowed() const {
  return !bit_errors && !cc_dcqcn && !cc_ibcc && !pfc_on && cfg.ar_mode == ArMode::Off && faults == nullptr &&
         cfg.trace_interval_ns == 0 && !cfg.trace_rates;
}

void Core::mark_period() {
  period_mark.stats = stats;
  period_mark.tx.assign(txs.size(), TxCounters{});
  for (std::uint32_t i = 0; i < txs.size(); ++i)
    if (const Tx* t = txs[i])
      period_mark.tx[i] = {t->sent_packets, t->sent_bytes, t->sent_payload, t->busy_time,
                           t->stats.credit_stall};
  period_mark.valid = true;
}

bool Core::repeat_periods(std::uint64_t n) {
  if (!period_mark.valid) return false;
  period_mark.valid = false;
  for (std::uint32_t i = 0; i < txs.size(); ++i) {
    Tx* t = txs[i];
    if (t == nullptr) continue;
    const TxCounters& m = period_mark.tx[i]; // (zero for a port made since the mark)
    const auto k = static_cast<std::int64_t>(n);
    t->sent_packets += n * (t->sent_packets - m.packets);
    t->sent_bytes += n * (t->sent_bytes - m.bytes);
    t->sent_payload += n * (t->sent_payload - m.payload);
    t->busy_time += Time::ps(k * (t->busy_time - m.busy).count_ps());
    t->stats.credit_stall += Time::ps(k * (t->stats.credit_stall - m.stall).count_ps());
  }
  const NetworkStats& m = period_mark.stats;
  auto grow = [n](std::uint64_t& now, std::uint64_t then) { now += n * (now - then); };
  grow(stats.packets_injected, m.packets_injected);
  grow(stats.packets_delivered, m.packets_delivered);
  grow(stats.payload_bytes_sent, m.payload_bytes_sent);
  grow(stats.payload_bytes_delivered, m.payload_bytes_delivered);
  grow(stats.packet_hops, m.packet_hops);
  grow(stats.acks, m.acks);
  // The others (losses, retransmissions, marks, CNPs, pauses) need a feature period_skips_allowed() excludes.
  return true;
}

} // namespace ibn::pkt::detail
