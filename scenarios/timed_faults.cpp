// Timed faults on either engine: see timed_faults.hpp.
#include "scenarios/timed_faults.hpp"

#include "models/flow/flow_engine.hpp"
#include "models/packet/network.hpp"
#include "models/packet/packet_engine.hpp"
#include "sim/error.hpp"

#include <algorithm>

namespace ibn::scen {

namespace {

/// Both engines' fault calls, in the order of `timed`.
template <typename Configure, typename Api>
void schedule(const std::vector<FaultAction>& timed, const std::string& file, Configure&& configure,
              Api& api) {
  try {
    configure();
  } catch (const InputError& e) {
    throw InputError(file + ": key 'faults.reroute': " + e.what() +
                     " (set faults.reroute to false, or fail at t = 0)");
  }
  for (const auto& a : timed) {
    switch (a.kind) {
    case FaultKind::LinkDown:
      api.schedule_link_down(a.link, a.at);
      break;
    case FaultKind::LinkUp:
      api.schedule_link_up(a.link, a.at);
      break;
    case FaultKind::SwitchDown:
      api.schedule_node_down(a.node, a.at);
      break;
    case FaultKind::SwitchUp:
      api.schedule_node_up(a.node, a.at);
      break;
    case FaultKind::Degrade:
      api.schedule_link_speed(a.link, a.speed, a.at);
      break;
    }
  }
}

/// The packet network's API with a timed degrade (set_link_speed acts now: called from a timer).
struct PacketFaults {
  eng::Engine& engine;
  pkt::PacketNetwork& net;
  void schedule_link_down(topo::LinkId l, Time t) { net.schedule_link_down(l, t); }
  void schedule_link_up(topo::LinkId l, Time t) { net.schedule_link_up(l, t); }
  void schedule_node_down(topo::NodeId n, Time t) { net.schedule_node_down(n, t); }
  void schedule_node_up(topo::NodeId n, Time t) { net.schedule_node_up(n, t); }
  void schedule_link_speed(topo::LinkId l, topo::LinkSpeed s, Time t) {
    pkt::PacketNetwork* n = &net;
    engine.call_at(t, [n, l, s] { n->set_link_speed(l, s); });
  }
};

} // namespace

bool schedule_timed_faults(eng::Engine& engine, const std::vector<FaultAction>& timed, const FaultSpec& spec,
                           const pkt::PacketConfig& device, const std::string& file) {
  if (timed.empty()) return true;
  // Degrades alone change no route: the SM has nothing to sweep, so they need no reroute (nor static
  // routing).
  const bool reroute = spec.reroute && std::any_of(timed.begin(), timed.end(), [](const FaultAction& a) {
                         return a.kind != FaultKind::Degrade;
                       });
  if (auto* pe = dynamic_cast<pkt::PacketEngine*>(&engine)) {
    pkt::FaultConfig fc;
    fc.sm_sweep_delay = Time::from_us(spec.sm_sweep_delay_us);
    fc.reroute = reroute;
    PacketFaults api{engine, pe->network()};
    schedule(
        timed, file, [&] { pe->network().configure_faults(fc); }, api);
    return true;
  }
  if (auto* fe = dynamic_cast<flow::FlowEngine*>(&engine)) {
    flow::FlowFaultConfig fc;
    fc.sm_sweep_delay = Time::from_us(spec.sm_sweep_delay_us);
    fc.reroute = reroute;
    fc.ack_timeout = device.ack_timeout;
    fc.retry_count = device.retry_count;
    schedule(
        timed, file, [&] { fe->configure_faults(fc); }, *fe);
    return true;
  }
  return false;
}

void cancel_pending_faults(eng::Engine& engine) {
  if (auto* pe = dynamic_cast<pkt::PacketEngine*>(&engine)) pe->network().cancel_pending_faults();
}

std::vector<pkt::QpFailure> qp_failures_of(eng::Engine& engine) {
  if (auto* pe = dynamic_cast<pkt::PacketEngine*>(&engine)) return pe->network().qp_failures();
  if (const auto* fe = dynamic_cast<const flow::FlowEngine*>(&engine)) return fe->qp_failures();
  return {};
}

} // namespace ibn::scen
