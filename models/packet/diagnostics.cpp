// What the packet model reports besides its messages: the wait-for edges the deadlock detector asks for on a
// stall (and an ACK timeout, to tell a credit cycle from a lost packet), queue traces, and port statistics.
#include "models/packet/core.hpp"

namespace ibn::pkt::detail {

void Core::sample_queues() {
  const Time now = sim.now();
  for (std::size_t i = 0; i < txs.size(); ++i) { // (all made: the constructor, with traces on)
    const Tx& tx = *txs[i];
    std::uint64_t q = tx.queued_bytes;
    // Incoming lists: packets that have reached the switch but not yet joined the queues.
    for (std::uint32_t k = 0; k < tx.incoming.size(); ++k) {
      const LineItem& it = tx.incoming.at(k);
      if (it.t <= now) q += pool[it.a].wire;
    }
    queue_traces[i].queue_bytes.push_back({now, static_cast<double>(q)});
  }
}

std::string Core::out_name(const Tx& tx, int vl) const {
  return fabric.node(tx.node).name + " port " + std::to_string(tx.port) + " VL" + std::to_string(vl) +
         " output";
}

std::string Core::in_name(topo::NodeId n, int port, int vl) const {
  return fabric.node(n).name + " port " + std::to_string(port) + " VL" + std::to_string(vl) + " input buffer";
}

/// Who waits for whom: a switch input's packets wait for the output they are queued at; an output (or an HCA
/// port) with packets and no credits waits for the peer's input buffer.
std::vector<WaitEdge> Core::wait_edges() const {
  std::vector<WaitEdge> edges;
  for (const Tx* t : txs) {
    if (t == nullptr) continue; // never used: nothing queued, nothing waits for it
    const Tx& tx = *t;
    if (tx.busy && !(tx.quiet_end && tx.busy_until <= sim.now())) continue; // (a quiet end: idle since)
    for (int vl = 0; vl < cfg.num_vls; ++vl) {
      bool waiting = false;
      if (tx.owner_is_switch) {
        for (int in = 0; in < tx.radix; ++in) {
          const Fifo& f = tx.voq[static_cast<std::size_t>(vl) * tx.radix + in];
          if (f.empty()) continue;
          waiting = true;
          // Packets of input `in` sit in its buffer until this output takes them.
          edges.push_back({in_name(tx.node, in + 1, vl), out_name(tx, vl), "the output"});
        }
      } else {
        waiting = tx.credit_blocked && tx.credits[static_cast<std::size_t>(vl)] <= 0;
      }
      if (waiting) edges.push_back({out_name(tx, vl), in_name(tx.peer, tx.peer_port, vl), "credits"});
    }
  }
  return edges;
}

/// Every port's statistics, in transmitter order; with `materialised_only` only those of the ports that were
/// made (the others' are zero but for their place and rate).
std::vector<PortStats> Core::port_stats(bool materialised_only) const {
  const Time now = sim.now();
  std::vector<PortStats> out;
  out.reserve(materialised_only ? materialised : txs.size());
  for (std::uint32_t i = 0; i < txs.size(); ++i) {
    const Tx* t = txs[i];
    if (t == nullptr) {
      if (materialised_only) continue;
      PortStats& s = out.emplace_back();
      s.link = link_of_tx(i);
      s.node = tx_end(i).node;
      s.port = tx_end(i).port;
      s.rate_bps = fabric.link(s.link).rate_bps();
      continue;
    }
    PortStats& s = out.emplace_back(t->stats);
    s.packets = t->sent_packets;
    s.bytes = t->sent_bytes;
    s.payload_bytes = t->sent_payload;
    s.busy = t->busy_time;
    s.peak_queue_bytes = t->peak_queue;
    s.dropped_packets = t->dropped;
    s.rate_bps = t->rate_bps;
    // A pause still in force counts up to now.
    for (std::size_t vl = 0; vl < kMaxVls; ++vl)
      if (t->pfc_paused >> vl & 1u) s.pause_time += now - t->pause_since[vl];
  }
  return out;
}

} // namespace ibn::pkt::detail
