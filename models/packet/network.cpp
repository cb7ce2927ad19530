// PacketNetwork: the public face of the packet model; the model itself is detail::Core (core.hpp) and the
// components it lists.
#include "models/packet/network.hpp"

#include "models/packet/core.hpp"
#include "models/packet/fault_state.hpp"

#include <stdexcept>

namespace ibn::pkt {

std::string to_string(Verb v) {
  switch (v) {
  case Verb::Write:
    return "write";
  case Verb::WriteImm:
    return "write_imm";
  case Verb::Send:
    return "send";
  case Verb::Read:
    return "read";
  }
  return "?";
}

PacketNetwork::PacketNetwork(Simulation& sim, const topo::Fabric& fabric,
                             const routing::RoutingTables& tables, const PacketConfig& config,
                             EventModel events)
    : impl_(std::make_unique<detail::Core>(sim, fabric, tables, config, events)) {}

PacketNetwork::~PacketNetwork() = default;

MessageId PacketNetwork::post(const MessageSpec& spec) {
  return impl_->post_now(spec);
}

void PacketNetwork::post_at(Time when, const MessageSpec& spec) {
  if (when < impl_->sim.now()) throw std::logic_error("post_at in the past");
  if (when == impl_->sim.now())
    impl_->post_now(spec);
  else
    impl_->poster->add(when, spec);
}

void PacketNetwork::on_delivered(std::function<void(const MessageRecord&)> cb) {
  impl_->delivered_cb = std::move(cb);
}
void PacketNetwork::on_acked(std::function<void(const MessageRecord&)> cb) {
  impl_->acked_cb = std::move(cb);
}

void PacketNetwork::set_qp_next_send_time(HcaIndex src, HcaIndex dst, std::uint32_t slot, Time t) {
  auto& qp = impl_->qp_of(src, dst, slot);
  qp.next_send_time = t;
  qp.send_changed();
  impl_->pacer_of(src).request(t);
}

double PacketNetwork::qp_rate_gbps(HcaIndex src, HcaIndex dst, std::uint32_t slot) const {
  const detail::Qp* qp = impl_->find_qp(src, dst, slot);
  if (qp == nullptr) return 0;
  if (impl_->cc_dcqcn) return qp->rp.rate_bps() / 1e9;
  if (impl_->cc_ibcc) return impl_->ibcc_rate_bps(*qp, qp_ccti(src, dst, slot)) / 1e9;
  return impl_->line_bps(src) / 1e9;
}

int PacketNetwork::qp_ccti(HcaIndex src, HcaIndex dst, std::uint32_t slot) const {
  detail::Qp* qp = impl_->find_qp(src, dst, slot);
  if (qp == nullptr || !impl_->cc_ibcc) return 0;
  IbCcRp st = impl_->ib_state(*qp, 0); // per QP, or SL 0's state with per_sl
  st.advance(impl_->sim.now());
  return st.ccti();
}

const std::vector<QpRateTrace>& PacketNetwork::rate_traces() const {
  return impl_->rate_traces;
}
const std::vector<PortQueueTrace>& PacketNetwork::queue_traces() const {
  return impl_->queue_traces;
}

const MessageRecord& PacketNetwork::message(MessageId id) const {
  return impl_->msgs.at(id).rec;
}
std::size_t PacketNetwork::num_messages() const {
  return impl_->msgs.size();
}
std::size_t PacketNetwork::num_hcas() const {
  return impl_->hcas.size();
}
const NetworkStats& PacketNetwork::stats() const {
  return impl_->stats;
}
void PacketNetwork::recycle_messages(bool on) {
  impl_->recycle_msgs = on;
}
bool PacketNetwork::period_skips_allowed() const {
  return impl_->period_skips_allowed();
}
void PacketNetwork::mark_period() {
  impl_->mark_period();
}
bool PacketNetwork::repeat_periods(std::uint64_t n) {
  return impl_->repeat_periods(n);
}
void PacketNetwork::enable_fluid_skips(std::function<Time()> horizon, std::function<void(Time)> skipped) {
  auto& c = *impl_;
  if (c.fluid_on || !c.period_skips_allowed()) return;
  c.fluid.skipper = &c.sim.make<detail::Core::FluidSkipper>(c);
  c.fluid.horizon = std::move(horizon);
  c.fluid.skipped = std::move(skipped);
  c.fluid.next_probe = c.sim.now();
  c.fluid_on = true;
}
FluidSkipStats PacketNetwork::fluid_skip_stats() const {
  const auto& f = impl_->fluid;
  return {f.skips, f.offset, f.packets_skipped, f.events_skipped};
}
std::uint64_t PacketNetwork::packets_in_flight() const {
  return impl_->pool.in_flight();
}
std::uint64_t PacketNetwork::peak_packets_in_flight() const {
  return impl_->pool.peak_in_flight();
}
std::size_t PacketNetwork::packet_state_bytes() {
  return sizeof(Packet) + sizeof(std::uint32_t) + sizeof(LineItem);
}
const PacketConfig& PacketNetwork::config() const {
  return impl_->cfg;
}
std::vector<PortStats> PacketNetwork::port_stats() const {
  return impl_->port_stats(false);
}
std::vector<PortStats> PacketNetwork::used_port_stats() const {
  return impl_->port_stats(true);
}
std::size_t PacketNetwork::num_ports() const {
  return impl_->txs.size();
}
std::size_t PacketNetwork::materialised_ports() const {
  return impl_->materialised;
}
std::map<std::pair<int, int>, std::uint64_t> PacketNetwork::unused_ports_by_tier() const {
  const detail::Core& c = *impl_;
  std::map<std::pair<int, int>, std::uint64_t> out;
  for (std::size_t k = 0; k < c.site_link.size(); ++k) {
    if (c.txs[2 * k] != nullptr && c.txs[2 * k + 1] != nullptr) continue;
    const topo::Link& l = c.fabric.link(c.site_link[k]);
    const int ta = c.fabric.node(l.a.node).tier, tb = c.fabric.node(l.b.node).tier;
    if (c.txs[2 * k] == nullptr) ++out[{ta, tb}];
    if (c.txs[2 * k + 1] == nullptr) ++out[{tb, ta}];
  }
  return out;
}

} // namespace ibn::pkt
