// Timed faults on the flow engine (flow_engine.hpp, "Timed faults"; docs/flow-engine.md "Faults"): cables
// going down and up, the subnet manager's reroute after its sweep delay, QPs that exhaust their retries and
// degraded link rates, with the packet engine's semantics (models/packet/faults.cpp) in fluid form. Nothing
// here runs, and Impl::faults stays null, until configure_faults or a schedule_* call.
#include "models/flow/flow_impl.hpp"

#include <algorithm>
#include <stdexcept>

namespace ibn::flow {

using What = FlowFaults::What;

double FlowEngine::Impl::link_bandwidth(topo::LinkId l, double rate_bps) const {
  double bw = rate_bps / 8.0;                                               // wire bytes per second
  if (l < cfg.link_bit_error_rate.size() && cfg.link_bit_error_rate[l] > 0) // capacity after retransmissions
    bw *= std::exp(8.0 * static_cast<double>(cfg.wire_bytes(cfg.mtu_bytes)) *
                   std::log1p(-std::min(cfg.link_bit_error_rate[l], 0.5)));
  return bw;
}

void FlowEngine::Impl::set_qp_route(Qp& q) {
  compute_route(q.src, q.dst, false, q.route);
  q.route_lat_ps = 0;
  q.links.clear();
  for (const std::uint32_t d : q.route) {
    q.route_lat_ps += dl[d].lat_ps;
    q.links.push_back(dl[d].impl);
  }
  q.has_route = true;
}

routing::Port FlowEngine::Impl::swept_next_hop(topo::NodeId sw_node, std::uint32_t dst) const {
  for (auto it = faults->sweeps.rbegin(); it != faults->sweeps.rend(); ++it) {
    const routing::Port p = (*it)->tables.next_hop(sw_node, dst);
    if (p != routing::kNoPort) return p;
  }
  return tables.next_hop(sw_node, dst);
}

bool FlowEngine::Impl::route_dead(const std::vector<std::uint32_t>& route) const {
  return std::any_of(route.begin(), route.end(), [&](std::uint32_t d) { return dead(d); });
}

void FlowEngine::Impl::fault_at(Time t, const FlowFaults::Ev& ev) {
  FlowFaults& fs = fault_state(); // made (and the platform checked) on the first fault
  fs.evs.push_back(ev);
  ++fs.background;
  push(t, Kind::Fault, static_cast<std::uint32_t>(fs.evs.size() - 1), next_seq++);
}

void FlowEngine::Impl::stall(std::uint32_t i) {
  Xfer& x = xfers[i];
  faults->stalled.push_back(i);
  if (x.stall_since_ps >= 0) return; // still the same stall: the QP's retries keep counting
  x.stall_since_ps = now.count_ps();
  // Its sender keeps sending into the dead route (a switch drops what it cannot forward): at least at its
  // first link's rate when it had no rate yet (suspend() set it from the rate it had).
  const auto& route = cfg.adaptive_routing ? x.route : qps[x.qp].route;
  if (!route.empty())
    x.void_until_ps = std::max(
        x.void_until_ps, (now + from_seconds(x.wire_left / dl[route[0]].link->get_bandwidth())).count_ps());
  ++faults->stalls;
  FlowFaults::Ev ev;
  ev.what = What::StallCheck;
  ev.xfer = i;
  ev.seq = x.seq;
  ev.since_ps = x.stall_since_ps;
  fault_at(now + faults->ack_timeout * (faults->retry_count + 1), ev);
}

void FlowEngine::Impl::suspend(std::uint32_t i) {
  Xfer& x = xfers[i];
  skres::Action* a = x.action;
  const double rem = std::clamp(a->get_remains(), 0.0, x.wire_left);
  // Were its route dead, until when its sender would still be sending (this message and those queued
  // behind it on its QP) at the rate it has now.
  double ahead = rem;
  for (std::uint32_t j = qps[x.qp].head; j != kNil; j = xfers[j].next_in_qp) ahead += xfers[j].wire_left;
  const double rate = a->get_rate();
  x.void_until_ps = rate > 0 ? (now + from_seconds(ahead / rate)).count_ps() : Time::max().count_ps();
  in_network.erase(a); // first: cancel() fails the action, and the link signal must not take it as finished
  a->cancel();
  a->unref();
  x.action = nullptr;
  // What it carried so far counts on the links it used; the rest is accounted where it goes next.
  const auto wire_done =
      std::min<std::uint64_t>(x.wire_acc_left, static_cast<std::uint64_t>(std::llround(x.wire_left - rem)));
  const std::uint64_t payload_done =
      x.wire_acc_left == 0 ? 0
                           : static_cast<std::uint64_t>(static_cast<long double>(x.payload_left) * wire_done /
                                                        x.wire_acc_left);
  account_left(i, payload_done, wire_done);
  x.wire_left = rem;
}

void FlowEngine::Impl::fault_event(std::uint32_t idx) {
  const FlowFaults::Ev ev = faults->evs[idx];
  FlowFaults& fs = *faults;
  // A route came back (link up, or the SM's new tables). A stalled sender still sending has its next packet
  // arrive after a gap: NAK and go-back-N resend from the first lost byte now (start() stalls it again if its
  // route is still dead). One that sent everything into the dead route waits for its next ACK timeout
  // (since + k ack_timeout); after retry_count of them the StallCheck fails its QP.
  auto restart_stalled = [&] {
    std::vector<std::uint32_t> list = std::move(fs.stalled);
    fs.stalled.clear();
    for (const std::uint32_t i : list) {
      Xfer& x = xfers[i];
      if (x.void_until_ps >= now.count_ps()) {
        start(i);
        continue;
      }
      fs.stalled.push_back(i);
      const std::int64_t a = fs.ack_timeout.count_ps();
      const std::int64_t k = std::max<std::int64_t>(1, (now.count_ps() - x.stall_since_ps + a - 1) / a);
      if (k > fs.retry_count || x.retry_at_ps >= now.count_ps()) continue; // the StallCheck / a retry comes
      x.retry_at_ps = x.stall_since_ps + k * a;
      FlowFaults::Ev retry;
      retry.what = What::Retry;
      retry.xfer = i;
      retry.seq = x.seq;
      retry.since_ps = x.stall_since_ps;
      fault_at(Time::ps(x.retry_at_ps), retry);
    }
  };
  auto by_seq = [&](std::vector<std::uint32_t>& v) {
    std::sort(v.begin(), v.end(),
              [&](std::uint32_t a, std::uint32_t b) { return xfers[a].seq < xfers[b].seq; });
  };
  switch (ev.what) {
  case What::Speed: { // both directions at the new rate from now: SimGrid re-shares the flows on the cable
    const double bw = link_bandwidth(ev.link, static_cast<double>(ev.speed.rate_bps()));
    dl[2 * ev.link].link->set_bandwidth(bw); // (every link is made in a run with faults)
    dl[2 * ev.link + 1].link->set_bandwidth(bw);
    if (fs.rate_gbps.empty()) fs.rate_gbps.assign(fabric.num_links(), 0.0);
    fs.rate_gbps[ev.link] = ev.speed.rate_gbps(); // what report() shows, as the packet engine's last rate
    return;
  }
  case What::Down:
  case What::Up: {
    const bool up = ev.what == What::Up;
    if (fs.down[ev.link] == !up) return; // no change
    fs.down[ev.link] = !up;
    (up ? fs.stats.link_ups : fs.stats.link_downs)++;
    if (!up) {
      // Every flow crossing the cable stops now with its remaining bytes and starts again at once: on a
      // static route it finds the route dead and waits; with AR it takes a live port where its group has one.
      std::vector<std::uint32_t> hit;
      for (std::uint32_t i = 0; i < xfers.size(); ++i) {
        if (!in_bandwidth_phase(i)) continue;
        const auto& route = cfg.adaptive_routing ? xfers[i].route : qps[xfers[i].qp].route;
        if (std::any_of(route.begin(), route.end(), [&](std::uint32_t d) { return d / 2 == ev.link; }))
          hit.push_back(i);
      }
      by_seq(hit);
      for (const std::uint32_t i : hit) suspend(i);
      for (const std::uint32_t i : hit) start(i);
    } else {
      restart_stalled(); // a route through the cable is alive again at once (the old LFT entries)
    }
    if (fs.cfg.reroute) {
      FlowFaults::Ev sweep;
      sweep.what = What::Sweep;
      fault_at(now + fs.cfg.sm_sweep_delay, sweep);
    }
    return;
  }
  case What::Sweep: {
    // The SM's heavy sweep: the same algorithm on the fabric without the dead switch-to-switch cables (an
    // HCA's cable is never removed: the HCA has no other path), as the packet engine's Core::sm_sweep.
    std::vector<bool> failed(fabric.num_links(), false);
    for (topo::LinkId l = 0; l < fabric.num_links(); ++l)
      failed[l] =
          fs.down[l] && tables.is_switch(fabric.link(l).a.node) && tables.is_switch(fabric.link(l).b.node);
    fs.sweeps.push_back(std::make_unique<routing::Rerouted>(
        routing::reroute(fabric, failed, tables.algorithm(), fs.cfg.routing_options)));
    fs.stats.reroutes++;
    // Flows in their bandwidth phase whose route changed move to the new one with their remaining bytes (the
    // packet engine's next packets follow the new LFT entries); every QP's route is the new one from now.
    std::vector<std::uint32_t> moved, route;
    for (std::uint32_t i = 0; i < xfers.size(); ++i) {
      if (!in_bandwidth_phase(i)) continue;
      compute_route(xfers[i].src, xfers[i].dst, false, route);
      if (route != qps[xfers[i].qp].route) moved.push_back(i);
    }
    by_seq(moved);
    for (const std::uint32_t i : moved) suspend(i);
    for (Qp& q : qps) {
      if (!q.has_route) continue;
      for (const std::uint32_t d : q.route) dl[d].bytes += q.bytes, dl[d].wire += q.wire; // old route's share
      q.bytes = q.wire = 0;
      set_qp_route(q);
    }
    fs.moves += moved.size();
    for (const std::uint32_t i : moved) start(i);
    restart_stalled();
    return;
  }
  case What::Retry: { // an ACK timeout: the sender resends from the first lost byte on the current route
    Xfer& x = xfers[ev.xfer];
    if (x.seq != ev.seq || x.stall_since_ps != ev.since_ps) return; // it moved since
    x.retry_at_ps = -1;
    const auto it = std::find(fs.stalled.begin(), fs.stalled.end(), ev.xfer);
    if (it == fs.stalled.end()) return;
    fs.stalled.erase(it);
    start(ev.xfer); // stalls again (same stall) while the route is dead
    return;
  }
  case What::StallCheck: {
    Xfer& x = xfers[ev.xfer];
    if (x.seq != ev.seq || x.stall_since_ps != ev.since_ps) return; // it moved since
    // (retry_count + 1) ACK timeouts without progress: the QP goes to the error state, the run ends.
    const Qp& q = qps[x.qp];
    pkt::QpFailure f{q.src, q.dst, q.slot, now, {static_cast<std::uint32_t>(x.seq)}};
    for (std::uint32_t j = q.head; j != kNil; j = xfers[j].next_in_qp)
      f.messages.push_back(static_cast<std::uint32_t>(xfers[j].seq));
    fs.failures.push_back(std::move(f));
    fs.stats.qp_errors++;
    fs.stopped = true;
    for (std::uint32_t i = 0; i < xfers.size(); ++i) // nothing moves any more: SimGrid's run() returns
      if (in_bandwidth_phase(i)) {
        in_network.erase(xfers[i].action);
        xfers[i].action->cancel();
        xfers[i].action->unref();
        xfers[i].action = nullptr;
      }
    return;
  }
  }
}

void FlowEngine::Impl::fault_report(nlohmann::json& extra) const {
  const pkt::FaultStats& s = faults->stats;
  if (s.link_downs + s.link_ups + s.qp_errors == 0) return; // only in faulted runs, as the packet engine
  extra["link_downs"] = s.link_downs;
  extra["link_ups"] = s.link_ups;
  extra["reroutes"] = s.reroutes;
  extra["qp_errors"] = s.qp_errors;
  extra["stalled_transfers"] = faults->stalls;
  extra["moved_transfers"] = faults->moves;
}

// ---------------------------------------------------------------- FlowEngine's fault API
FlowFaults& FlowEngine::Impl::fault_state() {
  Impl& m = *this;
  if (m.faults) return *m.faults;
  if (m.flows != 0 || !m.xfers.empty() || m.solver_decided)
    throw std::logic_error("flow engine: faults must be configured before the first send and run()");
  if (!m.declared.empty()) // the SM's reroute may take any cable: the platform must hold them all
    throw std::logic_error("flow engine: timed faults need the platform of every HCA (built with used HCAs)");
  if (!m.use_direct)
    throw InputError("flow engine: timed faults need SimGrid's network-model path (" + m.direct_unavailable +
                     ")");
  m.faults = std::make_unique<FlowFaults>();
  m.faults->down.assign(m.fabric.num_links(), false);
  m.faults->ack_timeout = FlowFaultConfig{}.ack_timeout;
  if (m.cfg.adaptive_routing) m.faults->cfg.reroute = false; // checked again by configure_faults
  return *m.faults;
}
void FlowEngine::Impl::check_link(topo::LinkId l, Time at, const char* what) const {
  const Impl& m = *this;
  if (l >= m.fabric.num_links())
    throw InputError(std::string(what) + ": unknown link " + std::to_string(l) + " (the fabric has " +
                     std::to_string(m.fabric.num_links()) + ")");
  if (at < m.now) throw std::logic_error(std::string(what) + " in the past");
}

void FlowEngine::configure_faults(const FlowFaultConfig& cfg) {
  if (cfg.sm_sweep_delay < Time::zero()) throw InputError("faults: sm_sweep_delay must be >= 0");
  if (cfg.ack_timeout <= Time::zero()) throw InputError("faults: ack_timeout must be > 0");
  if (cfg.retry_count < 0 || cfg.retry_count > 7) throw InputError("faults: retry_count must be 0..7");
  if (cfg.reroute && impl_->cfg.adaptive_routing)
    throw InputError("faults: reroute needs static routing (adaptive routing is on); set reroute off");
  FlowFaults& fs = impl_->fault_state();
  fs.cfg = cfg;
  fs.ack_timeout = cfg.ack_timeout;
  fs.retry_count = cfg.retry_count;
}

void FlowEngine::schedule_link_down(topo::LinkId link, Time at) {
  impl_->check_link(link, at, "link down");
  FlowFaults::Ev ev;
  ev.what = What::Down;
  ev.link = link;
  impl_->fault_at(at, ev);
}

void FlowEngine::schedule_link_up(topo::LinkId link, Time at) {
  impl_->check_link(link, at, "link up");
  FlowFaults::Ev ev;
  ev.what = What::Up;
  ev.link = link;
  impl_->fault_at(at, ev);
}

void FlowEngine::schedule_node_down(topo::NodeId node, Time at) {
  if (node >= impl_->fabric.num_nodes()) throw InputError("node down: unknown node " + std::to_string(node));
  for (const topo::LinkId l : impl_->fabric.links_of(node)) schedule_link_down(l, at);
}

void FlowEngine::schedule_node_up(topo::NodeId node, Time at) {
  if (node >= impl_->fabric.num_nodes()) throw InputError("node up: unknown node " + std::to_string(node));
  for (const topo::LinkId l : impl_->fabric.links_of(node)) schedule_link_up(l, at);
}

void FlowEngine::schedule_link_speed(topo::LinkId link, topo::LinkSpeed speed, Time at) {
  impl_->check_link(link, at, "link speed");
  if (speed.rate_bps() == 0) throw InputError("link speed: rate 0 for link " + std::to_string(link));
  FlowFaults::Ev ev;
  ev.what = What::Speed;
  ev.link = link;
  ev.speed = speed;
  impl_->fault_at(at, ev);
}

bool FlowEngine::link_up(topo::LinkId link) const {
  const auto& f = impl_->faults;
  return !f || link >= f->down.size() || !f->down[link];
}

const std::vector<pkt::QpFailure>& FlowEngine::qp_failures() const {
  static const std::vector<pkt::QpFailure> none;
  return impl_->faults ? impl_->faults->failures : none;
}

pkt::FaultStats FlowEngine::fault_stats() const {
  return impl_->faults ? impl_->faults->stats : pkt::FaultStats{};
}

} // namespace ibn::flow
