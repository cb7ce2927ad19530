// Switches: a packet arriving at a switch (input checks, PFC admission, routing through the LFT or the AR
// policy), per-global-hop VLs, and the congestion point that marks packets (ECN CE for DCQCN, FECN for IB
// CC). The output's queues and arbiter are in switch_port.hpp.
#include "models/packet/core.hpp"

#include <stdexcept>

namespace ibn::pkt::detail {

void Core::throw_no_route(const Switch& sw, const Packet& p) const {
  throw std::runtime_error("switch '" + fabric.node(sw.node).name + "' has no route to HCA '" +
                           fabric.node(tables.hca_nodes()[p.dst]).name + "'");
}

/// Packet `pi` has arrived (its head, plus the switch latency) on input `in_port` of switch `s` (an arrival
/// event: the Plain event model, adaptive routing or PFC; else it came through an incoming list).
void Core::arrive_switch(std::uint32_t s, int in_port, std::uint32_t pi) {
  Packet& p = pool[pi];
  Switch& sw = switches[s];
  if (p.corrupted) { // VCRC fails (or its cable died under it): dropped here, its buffer space returned
    Tx& up = *txs[sw.up_tx[static_cast<std::size_t>(in_port - 1)]];
    count_lost(up, p);
    push_credits(up, p.vl, p.wire);
    pool.release(pi);
    return;
  }
  if (pfc_on && !pfc_admit(*txs[sw.up_tx[static_cast<std::size_t>(in_port - 1)]], p)) {
    pool.release(pi); // headroom exceeded: the packet is lost
    return;
  }
  Tx* out;
  if (static_routing) {
    out = &route_static(s, p);
  } else {
    const routing::Port port = ar.choose(tables, sw.node, p.dst, sim.now(), [&](routing::Port q) {
      // A port's load: its queued bytes plus the packet on its wire (the maximum for an uncabled or dead port).
      const std::uint32_t t = sw.tx_of_port[q - 1];
      if (t == kNil) return ~std::uint64_t{0};
      const Tx* x = txs[t];
      if (x == nullptr) return std::uint64_t{0}; // never used: nothing queued, not busy (faults make all)
      const Tx& o = *x;
      if (o.down) [[unlikely]] return ~std::uint64_t{0}; // a dead port: the switch sees its state at once
      return o.queued_bytes + (o.busy ? pool[o.current].wire : 0);
    });
    if (port == routing::kNoPort || sw.tx_of_port[port - 1] == kNil) throw_no_route(sw, p);
    out = &tx_at(sw.tx_of_port[port - 1]);
  }
  enqueue_at_switch(s, in_port, pi, *out);
  if (out->queued_bytes > out->peak_queue) out->peak_queue = out->queued_bytes;
  kick(*out);
}

/// Dragonfly-style VL rule: a packet that crossed from a switch of another group moves up one VL.
void Core::next_global_hop_vl(std::uint32_t s, int in_port, Packet& p) const {
  const Switch& sw = switches[s];
  const topo::NodeId from = txs[sw.up_tx[in_port - 1]]->node; // (it sent the packet: materialised)
  const auto& fn = fabric.node(from);
  if ((fn.kind == topo::NodeKind::Switch || fn.kind == topo::NodeKind::Router) &&
      fn.group != fabric.node(sw.node).group && p.vl + 1 < cfg.num_vls)
    ++p.vl;
}

/// The congestion point: marks data packet `p` leaving or joining output `tx` whose queue is `q` bytes
/// (excluding `p`): DCQCN's RED-like CE marking or IB CC's FECN above the port threshold.
void Core::mark(Tx& tx, Packet& p, std::uint64_t q) {
  if (p.kind != Kind::Data) return;
  if (cc_dcqcn) {
    if (q <= tx.ecn_kmin) return;
    // p(q) = Pmax (q - Kmin) / (Kmax - Kmin) for Kmin < q <= Kmax, 1 above Kmax.
    const bool m =
        q > tx.ecn_kmax || ecn_rng->uniform01() < cfg.dcqcn.pmax * static_cast<double>(q - tx.ecn_kmin) /
                                                      static_cast<double>(tx.ecn_kmax - tx.ecn_kmin);
    if (!m || (p.flags & kFlagCe)) return;
    p.flags |= kFlagCe;
    tx.stats.ecn_marks++;
    stats.ecn_marks++;
  } else {
    if (q <= cfg.ibcc.threshold_bytes || p.wire < cfg.ibcc.min_packet_bytes) return;
    if (tx.fecn_count < cfg.ibcc.marking_rate) {
      ++tx.fecn_count;
      return;
    }
    tx.fecn_count = 0;
    if (p.flags & kFlagFecn) return;
    p.flags |= kFlagFecn;
    tx.stats.fecn_marks++;
    stats.fecn_marks++;
  }
}

} // namespace ibn::pkt::detail
