// Building the packet model of a Fabric: switches, HCAs, two transmitter slots per cable (each transmitter
// and HCA timer made on first use), the dense LFT, and which event-model shortcuts (event_model.hpp) and
// device features are on.
#include "models/packet/core.hpp"
#include "models/packet/fault_state.hpp"

#include "sim/error.hpp"

#include <algorithm>
#include <cmath>

namespace ibn::pkt::detail {

Core::Core(Simulation& s, const topo::Fabric& f, const routing::RoutingTables& t, const PacketConfig& c,
           EventModel em)
    : sim(s), fabric(f), tables(t), cfg(c), plain_events(em == EventModel::Plain),
      checked(em == EventModel::Checked) {
  cfg.validate();
  arbiter = VlArbiter(cfg);
  ar = ArPolicy(cfg.ar_mode, cfg.ar_bound_window);
  if (tables.num_hcas() != f.hcas().size())
    throw InputError("routing tables were computed for another fabric (" + std::to_string(tables.num_hcas()) +
                     " HCAs vs " + std::to_string(f.hcas().size()) + ")");
  build();
  sim.add_progress_probe([this] { return pool.in_flight(); });
  sim.add_wait_for_provider([this] { return wait_edges(); });
  ber_rng = &sim.rng("packet/bit-errors");
  stats.min_credits_seen = static_cast<std::int64_t>(cfg.switch_buffer_bytes / 64);
  if (pfc_on) stats.min_credits_seen = kPfcBase;
  if (cfg.trace_interval_ns > 0) { // queue traces of every port: all made now
    materialise_all();
    for (const Tx* tx : txs) queue_traces.push_back({tx->node, tx->port, tx->link, {}});
    sim.make<Sampler>(*this, std::max(Time::ps(1), Time::from_ns(cfg.trace_interval_ns)));
  }
}

void Core::build() {
  pfc_on = cfg.flow_control == FlowControl::Pfc;
  bit_errors = cfg.bit_error_rate > 0;
  if (!cfg.link_bit_error_rate.empty()) {
    if (cfg.link_bit_error_rate.size() != fabric.num_links())
      throw InputError("link_bit_error_rate: " + std::to_string(cfg.link_bit_error_rate.size()) +
                       " rates for " + std::to_string(fabric.num_links()) + " cables");
    link_ber = cfg.link_bit_error_rate;
    bit_errors = true;
  }
  cc_dcqcn = cfg.cc == CcMode::Dcqcn;
  cc_ibcc = cfg.cc == CcMode::IbCc;
  const MarkPoint mp = cc_dcqcn ? cfg.dcqcn.mark_point : cfg.ibcc.mark_point;
  mark_enqueue = (cc_dcqcn || cc_ibcc) && mp == MarkPoint::Enqueue;
  mark_dequeue = (cc_dcqcn || cc_ibcc) && mp == MarkPoint::Dequeue;
  ecn_rng = &sim.rng("packet/ecn");
  if (cc_ibcc) {
    cct = cfg.ibcc.table();
    if (cfg.ibcc.per_sl) sl_cc.assign(tables.num_hcas(), {});
    for (auto& a : sl_cc) a.fill(IbCcRp(cfg.ibcc));
  }
  switch_of_node.assign(fabric.num_nodes(), kNil);
  hca_of_node.assign(fabric.num_nodes(), kNil);
  for (HcaIndex h = 0; h < tables.num_hcas(); ++h) hca_of_node[tables.hca_nodes()[h]] = h;
  hcas.resize(tables.num_hcas());
  for (topo::NodeId n = 0; n < fabric.num_nodes(); ++n) {
    const auto& node = fabric.node(n);
    if (node.kind == topo::NodeKind::Switch || node.kind == topo::NodeKind::Router) {
      switch_of_node[n] = static_cast<std::uint32_t>(switches.size());
      Switch s;
      s.node = n;
      s.tx_of_port.assign(static_cast<std::size_t>(node.radix), kNil);
      s.up_tx.assign(static_cast<std::size_t>(node.radix), kNil);
      switches.push_back(std::move(s));
    }
  }
  for (HcaIndex h = 0; h < hcas.size(); ++h) hcas[h].node = tables.hca_nodes()[h]; // timers: on first use
  // Two transmitters per cable between simulated nodes (aggregation nodes carry no traffic), indices only:
  // the transmitters themselves are made on first use (materialise).
  auto simulated = [&](topo::NodeId n) { return switch_of_node[n] != kNil || hca_of_node[n] != kNil; };
  auto place = [&](topo::PortRef me, std::uint32_t idx) {
    if (switch_of_node[me.node] != kNil) {
      Switch& sw = switches[switch_of_node[me.node]];
      sw.tx_of_port[static_cast<std::size_t>(me.port - 1)] = idx;
      sw.up_tx[static_cast<std::size_t>(me.port - 1)] = idx ^ 1u;
    } else {
      hcas[hca_of_node[me.node]].tx = idx;
    }
  };
  for (topo::LinkId l = 0; l < fabric.num_links(); ++l) {
    const topo::Link& link = fabric.link(l);
    if (!simulated(link.a.node) || !simulated(link.b.node)) continue;
    if (link.rate_bps() == 0) throw InputError("link " + std::to_string(l) + " has no rate");
    const auto idx = static_cast<std::uint32_t>(2 * site_link.size());
    site_link.push_back(l);
    place(link.a, idx);
    place(link.b, idx + 1);
  }
  txs.assign(2 * site_link.size(), nullptr);
  // The static LFTs as one dense array when small enough (a load per hop instead of the tables' lookup).
  const std::size_t nh = tables.num_hcas();
  if (cfg.ar_mode == ArMode::Off && !switches.empty() && nh > 0 &&
      switches.size() * nh <= kDenseLftMaxEntries) {
    lft_tx.resize(switches.size() * nh);
    lft_stride = nh;
    for (std::size_t s = 0; s < switches.size(); ++s)
      for (HcaIndex d = 0; d < nh; ++d) {
        const routing::Port out = tables.next_hop(switches[s].node, d);
        lft_tx[s * nh + d] = out == routing::kNoPort ? kNil : switches[s].tx_of_port[out - 1];
      }
  }
  per_global_hop_vl = tables.vl_rule() == routing::VlRule::PerGlobalHop;
  static_routing = cfg.ar_mode == ArMode::Off;
  // The event model's shortcuts (event_model.hpp) and when they hold.
  incoming_shortcut = static_routing && !pfc_on && !plain_events;
  direct_start =
      incoming_shortcut && !per_global_hop_vl && !mark_enqueue && !mark_dequeue && arbiter.single_vl() >= 0;
  hca_quiet = incoming_shortcut && !cc_dcqcn && !cc_ibcc;
  max_pkt_credits = PacketConfig::credits_for(cfg.max_packet_wire_bytes());
  notify = &sim.make<NotifyLine>(*this, "completions");
  poster = &sim.make<Poster>(*this);
}

Core::HcaTimer& Core::make_timer(HcaIndex h, const char* what) {
  return sim.make<HcaTimer>(*this, h, "hca " + fabric.node(hcas[h].node).name + " " + what);
}

void Core::materialise_all() {
  for (std::uint32_t i = 0; i < txs.size(); ++i) tx_at(i);
}

/// Makes transmitter `i` as it is at time zero: nothing has happened to a port before its first use (an
/// idle port has no events, no credits on their way and no statistics), so making it late changes nothing.
[[gnu::noinline]] Tx& Core::materialise(std::uint32_t idx) {
  const topo::LinkId l = link_of_tx(idx);
  const topo::PortRef me = tx_end(idx), peer = rx_end(idx);
  const auto& node = fabric.node(me.node);
  std::string name = node.name + " port " + std::to_string(me.port);
  Tx& tx = checked ? sim.make<CheckedTx>(*this, sim, idx, std::move(name))
                   : sim.make<Tx>(*this, sim, idx, std::move(name));
  txs[idx] = &tx;
  ++materialised;
  tx.rev = idx ^ 1u;
  const topo::Link& link = fabric.link(l);
  tx.node = me.node;
  tx.port = me.port;
  tx.link = l;
  tx.rate_bps = link.rate_bps(); // (not 0: build)
  if (8'000'000'000'000ull % tx.rate_bps == 0) tx.ps_per_byte = 8'000'000'000'000ull / tx.rate_bps;
  // common::DeviceKnobs: a cable costs propagation + FEC. The switch latency is charged when a packet reaches
  // the switch (Tx::transmit), the flow engine charges it on the link the switch sends on: one per switch.
  tx.prop = cfg.cable_latency(link);
  tx.owner_is_switch = switch_of_node[me.node] != kNil;
  tx.owner = tx.owner_is_switch ? switch_of_node[me.node] : hca_of_node[me.node];
  tx.peer = peer.node;
  tx.peer_port = peer.port;
  tx.peer_is_switch = switch_of_node[peer.node] != kNil;
  tx.peer_switch_latency = tx.peer_is_switch ? cfg.switch_latency_of(fabric.node(peer.node)) : Time::zero();
  tx.peer_owner = tx.peer_is_switch ? switch_of_node[peer.node] : hca_of_node[peer.node];
  const std::uint32_t buffer = tx.peer_is_switch ? cfg.switch_buffer_bytes : cfg.hca_buffer_bytes;
  std::fill(tx.credits.begin(), tx.credits.begin() + cfg.num_vls,
            pfc_on ? kPfcBase : static_cast<std::int64_t>(buffer / 64));
  tx.ctrl_delay = tx.prop + cfg.credit_update_delay;
  if (pfc_on) init_pfc(tx);
  if (cc_dcqcn) {
    const double scale = cfg.dcqcn.scale_ref_gbps > 0
                             ? static_cast<double>(tx.rate_bps) / (cfg.dcqcn.scale_ref_gbps * 1e9)
                             : 1.0;
    tx.ecn_kmin = static_cast<std::uint64_t>(cfg.dcqcn.kmin_bytes * scale);
    tx.ecn_kmax = static_cast<std::uint64_t>(cfg.dcqcn.kmax_bytes * scale);
  }
  tx.wire.reserve(8); // per-port state, allocated with the port rather than by the first packets
  tx.creditq.reserve(8);
  if (tx.owner_is_switch) tx.incoming.reserve(16);
  tx.stats.link = l;
  tx.stats.node = me.node;
  tx.stats.port = me.port;
  if (tx.owner_is_switch) {
    tx.radix = node.radix;
    tx.words = static_cast<std::uint16_t>((node.radix + 63) / 64);
    tx.voq_store.assign(static_cast<std::size_t>(cfg.num_vls * node.radix), Fifo{});
    tx.nonempty_store.assign(static_cast<std::size_t>(cfg.num_vls * tx.words), 0);
    tx.voq = tx.voq_store.data();
    tx.nonempty = tx.nonempty_store.data();
    std::fill(tx.rr_input.begin(), tx.rr_input.begin() + cfg.num_vls,
              static_cast<std::uint16_t>(node.radix - 1));
    arbiter.init(tx.high, tx.low);
  } else {
    // The injection cap: a cap at or above the link rate never binds.
    if (const std::uint64_t cap = hca_cap_bps(link); cap < tx.rate_bps) {
      tx.cap_bps = cap;
      tx.capped = true;
    }
  }
  return tx;
}

} // namespace ibn::pkt::detail
