#include "models/engines.hpp"

#include "models/flow/flow_engine.hpp"
#include "models/packet/packet_engine.hpp"
#include "sim/units.hpp"

namespace ibn::eng {

std::vector<std::string> Capabilities::names() const {
  std::vector<std::string> out;
  const std::pair<bool, const char*> all[] = {{credits, "credits"},
                                              {pfc, "pfc"},
                                              {dcqcn, "dcqcn"},
                                              {ib_cc, "ibcc"},
                                              {per_packet_ar, "ar-per-packet"},
                                              {per_message_ar, "ar-per-message"},
                                              {bounded_ar, "ar-bounded"},
                                              {bit_errors, "bit-errors"},
                                              {timed_faults, "timed-faults"},
                                              {vl_arbitration, "vl-arbitration"},
                                              {hca_rate_cap, "hca-rate-cap"},
                                              {host_path, "host-path"},
                                              {queue_traces, "queue-traces"},
                                              {rate_traces, "rate-traces"}};
  for (const auto& [on, name] : all)
    if (on) out.emplace_back(name);
  return out;
}

EngineRegistry builtin_engines() {
  EngineRegistry r("engine");
  Capabilities packet;
  packet.credits = packet.pfc = packet.dcqcn = packet.ib_cc = true;
  packet.per_packet_ar = packet.bounded_ar = true;
  packet.bit_errors = packet.vl_arbitration = packet.hca_rate_cap = packet.host_path = true;
  packet.timed_faults = true;
  packet.queue_traces = packet.rate_traces = true;
  r.add("packet",
        "our packet engine: IB packets hop by hop with credits or PFC, VOQs, VL arbitration, per-packet AR, "
        "RC transport, DCQCN and IB CC (docs/engine.md)",
        EngineKind{packet, [](const EngineInputs& in) -> std::unique_ptr<Engine> {
                     return std::make_unique<pkt::PacketEngine>(in.fabric, in.tables, in.device, in.seed);
                   }});
  Capabilities flow;
  flow.per_message_ar = flow.hca_rate_cap = flow.host_path = flow.timed_faults = true;
  r.add("flow",
        "SimGrid flow engine: messages as max-min shared fluid flows, static or per-message AR, no queues, "
        "credits or congestion control (docs/flow-engine.md)",
        EngineKind{flow, [](const EngineInputs& in) -> std::unique_ptr<Engine> {
                     std::optional<std::vector<routing::HcaIndex>> used;
                     if (in.used_hcas != nullptr) used = *in.used_hcas;
                     auto cfg = flow::flow_config_from(in.device);
                     if (in.flow_simgrid_solver) cfg.solver = flow::FlowConfig::Solver::SimGrid;
                     return std::make_unique<flow::FlowEngine>(in.fabric, in.tables, std::move(cfg),
                                                               std::move(used), in.cable_directions);
                   }});
  return r;
}

std::vector<std::string> ignored_features(const std::string& engine, const Capabilities& caps,
                                          const pkt::PacketConfig& d) {
  std::vector<std::string> what;
  if (d.cc == pkt::CcMode::Dcqcn && !caps.dcqcn)
    what.push_back("cc.algorithm dcqcn (no ECN marking, no rate control)");
  if (d.cc == pkt::CcMode::IbCc && !caps.ib_cc)
    what.push_back("cc.algorithm ibcc (no FECN/BECN, no rate control)");
  if (d.flow_control == pkt::FlowControl::Pfc && !caps.pfc)
    what.push_back("packet.flow_control pfc (no pause frames)");
  if (d.ar_mode == pkt::ArMode::PerPacket && !caps.per_packet_ar)
    what.push_back(caps.per_message_ar ? "routing.adaptive per-packet (chosen once per message instead)"
                                       : "routing.adaptive per-packet (static routes instead)");
  if (d.ar_mode == pkt::ArMode::Bounded && !caps.bounded_ar)
    what.push_back(caps.per_message_ar ? "packet.ar_mode bounded (chosen once per message instead)"
                                       : "packet.ar_mode bounded (static routes instead)");
  if (d.bit_error_rate > 0 && !caps.bit_errors)
    what.push_back("packet.bit_error_rate " + format_g(d.bit_error_rate) + " (no losses, no retransmission)");
  if (!caps.credits) {
    // Without credits no buffer limits a rate: the buffer sizes, the credit return and the ACK cadence change
    // nothing (the latencies still do, once per message, but not through a credit loop).
    const pkt::PacketConfig def;
    std::string keys;
    auto add = [&](bool differs, const char* key) {
      if (differs) keys += std::string(keys.empty() ? "" : ", ") + key;
    };
    add(d.switch_buffer_bytes != def.switch_buffer_bytes, "packet.switch_buffer_bytes");
    add(d.hca_buffer_bytes != def.hca_buffer_bytes, "packet.hca_buffer_bytes");
    add(d.credit_update_delay != def.credit_update_delay, "packet.credit_update_delay_ns");
    add(d.ack_every_packets != def.ack_every_packets, "packet.ack_every_packets");
    if (!keys.empty())
      what.push_back(keys + " (no credits, buffers or ACKs: the latencies count once per message, never "
                            "through a credit loop)");
  }
  if ((d.num_vls > 1 || !d.vl_arb_high.empty() || !d.vl_arb_low.empty()) && !caps.vl_arbitration)
    what.push_back("packet.num_vls / VL arbitration tables (one shared link instead)");
  if (d.hca_rate_gbps > 0 && !caps.hca_rate_cap) what.push_back("packet.hca_rate_gbps (no injection cap)");
  if ((d.host_caps_rate() || d.host_latency() > Time::zero()) && !caps.host_path)
    what.push_back("packet host-path knobs (pcie_gen, gpudirect, cross_numa, sriov: no host path)");
  if (d.trace_interval_ns > 0 && !caps.queue_traces)
    what.push_back("packet.trace_interval_ns (no queue traces)");
  if (d.trace_rates && !caps.rate_traces) what.push_back("packet.trace_rates (no rate traces)");
  if (what.empty()) return {};
  std::string msg = "engine '" + engine + "' ignores what this scenario asks for: ";
  for (std::size_t i = 0; i < what.size(); ++i) msg += (i ? "; " : "") + what[i];
  msg += " (run with --engine packet to model it)";
  return {msg};
}

} // namespace ibn::eng
