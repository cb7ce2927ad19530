#include "models/packet/config.hpp"

#include "sim/error.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <type_traits>

namespace ibn::pkt {

std::string to_string(ArMode m) {
  return choice_name(kArModes, m);
}

ArMode parse_ar_mode(const std::string& s, const std::string& what) {
  return parse_choice(kArModes, s, what, "adaptive-routing mode");
}

CcMode parse_cc_mode(const std::string& s, const std::string& what) {
  return parse_choice(kCcModes, s, what, "congestion control");
}

std::string to_string(LinkLayer l) {
  return choice_name(kLinkLayers, l);
}

std::vector<VlArbEntry> parse_vl_arb(const std::string& text, const std::string& what) {
  std::vector<VlArbEntry> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    const std::size_t colon = item.find(':');
    try {
      if (colon == std::string::npos) throw std::invalid_argument("no colon");
      std::size_t a = 0, b = 0;
      const int vl = std::stoi(item.substr(0, colon), &a);
      const int w = std::stoi(item.substr(colon + 1), &b);
      if (a != colon || b != item.size() - colon - 1) throw std::invalid_argument("trailing text");
      if (vl < 0 || vl > 14)
        throw InputError(what + ": VL " + std::to_string(vl) + " is not a data VL (0..14)");
      if (w < 0 || w > 255) throw InputError(what + ": weight " + std::to_string(w) + " is outside 0..255");
      out.push_back({vl, w});
    } catch (const InputError&) {
      throw;
    } catch (const std::exception&) {
      throw InputError(what + ": cannot read '" + item + "' (expected VL:WEIGHT pairs such as 0:4,1:4)");
    }
    pos = comma + 1;
  }
  return out;
}

std::string to_string(const std::vector<VlArbEntry>& table) {
  std::string s;
  for (const auto& e : table)
    s += (s.empty() ? "" : ",") + std::to_string(e.vl) + ":" + std::to_string(e.weight);
  return s;
}

Time default_switch_latency(const std::string& generation) {
  if (generation == "EDR") return Time::ns(90);
  if (generation == "HDR") return Time::ns(130);
  return Time::ns(200);
}

namespace {

using J = nlohmann::json;
constexpr double kNoMax = 1e300;
constexpr double kU32Max = 4294967295.0;

// Knob builders: the accessors come from the member pointer, so a knob is one line of the table below.
template <auto M>
PacketKnob integer_knob(const char* name, const char* unit, double min, double max, const char* doc) {
  return {name, KnobKind::Integer, unit, min, max, doc, {},
          [](const PacketConfig& c) -> J { return c.*M; },
          [](PacketConfig& c, const J& v, const std::string&) {
            c.*M = static_cast<std::remove_reference_t<decltype(c.*M)>>(v.get<double>());
          }};
}
template <auto M>
PacketKnob number_knob(const char* name, const char* unit, double min, double max, const char* doc) {
  return {name, KnobKind::Number, unit, min, max, doc, {},
          [](const PacketConfig& c) -> J { return c.*M; },
          [](PacketConfig& c, const J& v, const std::string&) { c.*M = v.get<double>(); }};
}
template <auto M> PacketKnob time_ns_knob(const char* name, const char* doc) {
  return {name, KnobKind::Number, "ns", 0, kNoMax, doc, {},
          [](const PacketConfig& c) -> J { return (c.*M).to_ns(); },
          [](PacketConfig& c, const J& v, const std::string&) { c.*M = Time::from_ns(v.get<double>()); }};
}
template <auto M> PacketKnob bool_knob(const char* name, const char* doc) {
  return {name, KnobKind::Bool, "", 0, 0, doc, {}, [](const PacketConfig& c) -> J { return c.*M; },
          [](PacketConfig& c, const J& v, const std::string&) { c.*M = v.get<bool>(); }};
}
template <auto M, auto& Table> PacketKnob choice_knob(const char* name, const char* doc) {
  return {name, KnobKind::Choice, "", 0, 0, doc, choice_names(Table),
          [](const PacketConfig& c) -> J { return choice_name(Table, c.*M); },
          [](PacketConfig& c, const J& v, const std::string& path) {
            c.*M = parse_choice(Table, v.get<std::string>(), path, "value");
          }};
}

std::vector<PacketKnob> make_knobs() {
  using C = PacketConfig;
  return {
      {"link_layer", KnobKind::Choice, "", 0, 0,
       "Link-layer framing: ib or rocev2; setting it also sets header_bytes (26 or 82).",
       choice_names(kLinkLayers), [](const C& c) -> J { return to_string(c.link_layer); },
       [](C& c, const J& v, const std::string& path) {
         c.link_layer = parse_choice(kLinkLayers, v.get<std::string>(), path, "link layer");
         c.header_bytes = c.link_layer == LinkLayer::InfiniBand ? common::kIbHeaderBytes : common::kRoceV2HeaderBytes;
       }},
      integer_knob<&C::mtu_bytes>("mtu_bytes", "bytes", 256, 4096,
                                  "Path MTU (payload per packet): 256, 512, 1024, 2048 or 4096."),
      integer_knob<&C::header_bytes>("header_bytes", "bytes", 1, 512,
                                     "Per-packet overhead on the wire (IB 26, RoCEv2 82)."),
      integer_knob<&C::reth_bytes>("reth_bytes", "bytes", 0, kU32Max,
                                   "Extra on the first packet of an RDMA WRITE and on a READ request."),
      integer_knob<&C::ack_payload_bytes>("ack_payload_bytes", "bytes", 0, kU32Max, "AETH on ACK/NAK packets."),
      time_ns_knob<&C::switch_latency>("switch_latency_ns",
                                       "Cut-through port-to-port latency of a switch that names no model (NDR "
                                       "200, HDR 130, EDR 90)."),
      {"switch_latency_from_model", KnobKind::Bool, "", 0, 0,
       "A switch whose fabric node names a catalog model (switch_model) pays that model's latency; false: "
       "switch_latency_ns for every switch.",
       {}, [](const C& c) -> J { return c.switch_latency_from_model; },
       [](C& c, const J& v, const std::string&) { c.switch_latency_from_model = v.get<bool>(); }},
      time_ns_knob<&C::fec_latency>("fec_latency_ns", "Extra per-hop latency of FEC, added to every cable."),
      time_ns_knob<&C::nic_tx_latency>("nic_tx_latency_ns", "From a post to the first packet leaving the HCA."),
      time_ns_knob<&C::nic_rx_latency>("nic_rx_latency_ns",
                                       "From a message's last byte arriving to its completion."),
      integer_knob<&C::switch_buffer_bytes>("switch_buffer_bytes", "bytes", 0, kU32Max,
                                            "Input buffer per switch port and data VL (64-byte credits)."),
      integer_knob<&C::hca_buffer_bytes>("hca_buffer_bytes", "bytes", 0, kU32Max,
                                         "HCA receive buffer per data VL."),
      integer_knob<&C::num_vls>("num_vls", "", 1, 15, "Data VLs."),
      {"vl_arb_high", KnobKind::Text, "", 0, 0,
       "High-priority VL arbitration table, OpenSM syntax VL:WEIGHT,... (weights in 64-byte units).", {},
       [](const C& c) -> J { return to_string(c.vl_arb_high); },
       [](C& c, const J& v, const std::string& path) { c.vl_arb_high = parse_vl_arb(v.get<std::string>(), path); }},
      {"vl_arb_low", KnobKind::Text, "", 0, 0,
       "Low-priority VL arbitration table (\"\": every data VL with weight 4).", {},
       [](const C& c) -> J { return to_string(c.vl_arb_low); },
       [](C& c, const J& v, const std::string& path) { c.vl_arb_low = parse_vl_arb(v.get<std::string>(), path); }},
      integer_knob<&C::vl_high_limit>("vl_high_limit", "4096 B", 0, 255,
                                      "High-priority data before one low-priority packet may go (255 = no limit)."),
      integer_knob<&C::ack_every_packets>("ack_every_packets", "packets", 1, kU32Max,
                                          "The responder ACKs every N packets and every message's last."),
      choice_knob<&C::ar_mode, kArModes>("ar_mode",
                                         "Adaptive routing at switches; prefer the scenario key routing.adaptive."),
      time_ns_knob<&C::ar_bound_window>("ar_bound_window_ns",
                                        "Bounded AR: how long a destination keeps its chosen port."),
      time_ns_knob<&C::credit_update_delay>("credit_update_delay_ns",
                                            "Credit return delay beyond the cable propagation."),
      {"ack_timeout_us", KnobKind::Number, "us", 0, kNoMax,
       "Local ACK timeout (4.096 us x 2^20 = NCCL_IB_TIMEOUT 20).", {},
       [](const C& c) -> J { return c.ack_timeout.to_us(); },
       [](C& c, const J& v, const std::string&) { c.ack_timeout = Time::from_us(v.get<double>()); }},
      integer_knob<&C::retry_count>("retry_count", "", 0, 7, "Retransmissions before a QP gives up."),
      integer_knob<&C::max_rd_atomic>("max_rd_atomic", "", 1, kU32Max, "Outstanding RDMA READs per QP."),
      number_knob<&C::bit_error_rate>("bit_error_rate", "per bit", 0, 1e-3,
                                      "A corrupted packet is dropped at its receiver; below 1e-3."),
      number_knob<&C::hca_rate_gbps>("hca_rate_gbps", "Gb/s", 0, 1e6,
                                     "HCA injection cap (0 = none), e.g. a PCIe-limited NIC."),
      // The host path (common::DeviceKnobs, docs/packet-models.md "Host path"); both engines apply it.
      integer_knob<&C::pcie_gen>("pcie_gen", "", 0, 6,
                                 "Host path: the NIC's PCIe generation 1..6, a rate cap with pcie_lanes (0 = none)."),
      integer_knob<&C::pcie_lanes>("pcie_lanes", "lanes", 1, 16, "Host path: the NIC's PCIe width: 1, 2, 4, 8 or 16."),
      bool_knob<&C::gpudirect>("gpudirect",
                               "Host path: GPUDirect RDMA; false stages data through host memory (copy + latency)."),
      number_knob<&C::host_copy_gbps>("host_copy_gbps", "Gb/s", 0, 1e6,
                                      "Host path, gpudirect off: staging copy rate (0 = the HCA's rate)."),
      time_ns_knob<&C::host_staging_latency>("host_staging_latency_ns",
                                             "Host path, gpudirect off: added latency per message."),
      bool_knob<&C::cross_numa>("cross_numa", "Host path: the GPU and the NIC sit on different sockets."),
      number_knob<&C::cross_numa_bw_factor>("cross_numa_bw_factor", "", 0.01, 1,
                                            "Host path, cross_numa: rate factor of the GPU <-> NIC path."),
      time_ns_knob<&C::cross_numa_latency>("cross_numa_latency_ns", "Host path, cross_numa: added latency per message."),
      bool_knob<&C::sriov>("sriov", "Host path: the NIC is an SR-IOV virtual function."),
      number_knob<&C::sriov_rate_factor>("sriov_rate_factor", "", 0.01, 1, "Host path, sriov: rate factor."),
      time_ns_knob<&C::sriov_latency>("sriov_latency_ns", "Host path, sriov: added latency per message."),
      choice_knob<&C::flow_control, kFlowControls>("flow_control",
                                                   "Link-level flow control: credits (IB) or pfc (RoCE lossless)."),
      choice_knob<&C::cc, kCcModes>("cc", "End-to-end congestion control; prefer the scenario key cc.algorithm."),
      {"dcqcn", KnobKind::Object, "", 0, 0, "DCQCN parameters (docs/congestion-control.md).", {},
       [](const C& c) -> J { return c.dcqcn.to_json(); },
       [](C& c, const J& v, const std::string& path) { c.dcqcn.apply_json(v, path); }},
      {"ibcc", KnobKind::Object, "", 0, 0, "IB CC parameters (docs/congestion-control.md).", {},
       [](const C& c) -> J { return c.ibcc.to_json(); },
       [](C& c, const J& v, const std::string& path) { c.ibcc.apply_json(v, path); }},
      {"pfc", KnobKind::Object, "", 0, 0, "PFC parameters (docs/congestion-control.md).", {},
       [](const C& c) -> J { return c.pfc.to_json(); },
       [](C& c, const J& v, const std::string& path) { c.pfc.apply_json(v, path); }},
      number_knob<&C::trace_interval_ns>("trace_interval_ns", "ns", 0, kNoMax,
                                         "Queue traces: output-port queues sampled at this period (0 = off)."),
      {"trace_rates", KnobKind::Bool, "", 0, 0, "Rate traces: record every change of a QP's CC rate.", {},
       [](const C& c) -> J { return c.trace_rates; },
       [](C& c, const J& v, const std::string&) { c.trace_rates = v.get<bool>(); }},
      bool_knob<&C::fast_forward>("fast_forward", "Skips: a collective whose steps repeat in shape and run "
                                                  "steadily skips whole periods, steady flows the middle of long "
                                                  "messages, a job the executions that repeat its last ones "
                                                  "exactly (docs/engine.md \"Fast-forward\"); false: exact."),
  };
}

std::string num_text(double x) {
  std::ostringstream o;
  o << x;
  return o.str();
}

void check_range(const PacketKnob& k, double x, const std::string& path) {
  if (x < k.min)
    throw InputError(path + ": " + (k.min == 0 ? std::string("must not be negative") : "must be at least " + num_text(k.min)) +
                     ", got " + num_text(x));
  if (x > k.max) throw InputError(path + ": must be at most " + num_text(k.max) + ", got " + num_text(x));
}

} // namespace

const std::vector<PacketKnob>& packet_knobs() {
  static const std::vector<PacketKnob> knobs = make_knobs(); // immutable after construction
  return knobs;
}

const std::vector<std::string>& host_knob_names() {
  static const std::vector<std::string> names = {
      "pcie_gen",   "pcie_lanes",           "gpudirect",             "host_copy_gbps",
      "host_staging_latency_ns", "cross_numa", "cross_numa_bw_factor", "cross_numa_latency_ns",
      "sriov",      "sriov_rate_factor",    "sriov_latency_ns"};
  return names;
}

const PacketKnob* find_packet_knob(const std::string& name) {
  for (const auto& k : packet_knobs())
    if (name == k.name) return &k;
  return nullptr;
}

void check_knob_value(const PacketKnob& k, const nlohmann::json& v, const std::string& path) {
  switch (k.kind) {
  case KnobKind::Integer:
    if (!v.is_number() || v.get<double>() != std::floor(v.get<double>()))
      throw InputError(path + ": expected a whole number, got " + v.dump());
    check_range(k, v.get<double>(), path);
    return;
  case KnobKind::Number:
    if (!v.is_number() || !std::isfinite(v.get<double>()))
      throw InputError(path + ": expected a number, got " + v.dump());
    check_range(k, v.get<double>(), path);
    return;
  case KnobKind::Bool:
    if (!v.is_boolean()) throw InputError(path + ": expected true or false, got " + v.dump());
    return;
  case KnobKind::Choice: {
    std::string known;
    for (std::size_t i = 0; i < k.choices.size(); ++i)
      known += (i == 0 ? "" : i + 1 == k.choices.size() ? " or " : ", ") + ("\"" + k.choices[i] + "\"");
    if (!v.is_string()) throw InputError(path + ": expected " + known + ", got " + v.dump());
    for (const auto& c : k.choices)
      if (c == v.get<std::string>()) return;
    throw InputError(path + ": expected " + known + ", got " + v.dump());
  }
  case KnobKind::Text:
    if (!v.is_string()) throw InputError(path + ": expected a string such as \"0:4,1:4\", got " + v.dump());
    return;
  case KnobKind::Object:
    if (!v.is_object()) throw InputError(path + ": expected an object, got " + v.dump());
    return;
  }
}

void PacketConfig::validate() const {
  // Every knob's declared range.
  for (const auto& k : packet_knobs())
    if (k.kind == KnobKind::Integer || k.kind == KnobKind::Number)
      check_range(k, k.get(*this).get<double>(), std::string("packet.") + k.name);
  // The rules between knobs (and the MTU's allowed values).
  auto bad = [](const std::string& key, const std::string& msg) {
    throw InputError("packet." + key + ": " + msg);
  };
  if (mtu_bytes != 256 && mtu_bytes != 512 && mtu_bytes != 1024 && mtu_bytes != 2048 && mtu_bytes != 4096)
    bad("mtu_bytes", "must be 256, 512, 1024, 2048 or 4096, got " + std::to_string(mtu_bytes));
  const std::uint32_t max_pkt = mtu_bytes + header_bytes + reth_bytes;
  if (switch_buffer_bytes < max_pkt)
    bad("switch_buffer_bytes", "must hold at least one full packet (" + std::to_string(max_pkt) + " bytes)");
  if (hca_buffer_bytes < max_pkt)
    bad("hca_buffer_bytes", "must hold at least one full packet (" + std::to_string(max_pkt) + " bytes)");
  for (const auto* table : {&vl_arb_high, &vl_arb_low})
    for (const auto& e : *table) {
      if (e.vl < 0 || e.vl >= num_vls)
        bad(table == &vl_arb_high ? "vl_arb_high" : "vl_arb_low",
            "VL " + std::to_string(e.vl) + " is not one of the " + std::to_string(num_vls) + " data VLs");
      if (e.weight < 0 || e.weight > 255) bad("vl_arb", "weights are 0..255 (64-byte units)");
    }
  if (!vl_arb_low.empty() || !vl_arb_high.empty())
    for (int v = 0; v < num_vls; ++v) {
      bool served = false;
      for (const auto* table : {&vl_arb_high, &vl_arb_low})
        for (const auto& e : *table) served |= e.vl == v && e.weight > 0;
      if (!served)
        bad("vl_arb_low", "data VL " + std::to_string(v) +
                              " has no entry with a weight above 0: its packets would never leave");
    }
  if (!(bit_error_rate < 1e-3)) bad("bit_error_rate", "must be in [0, 1e-3)");
  if (pcie_gen == 1 || pcie_gen == 2 || pcie_gen > 6 || pcie_gen < 0)
    bad("pcie_gen", "must be 3, 4, 5 or 6 (0 = no PCIe cap), got " + std::to_string(pcie_gen));
  if (pcie_lanes != 1 && pcie_lanes != 2 && pcie_lanes != 4 && pcie_lanes != 8 && pcie_lanes != 16)
    bad("pcie_lanes", "must be 1, 2, 4, 8 or 16, got " + std::to_string(pcie_lanes));
  dcqcn.validate("packet.dcqcn");
  ibcc.validate("packet.ibcc");
  pfc.validate("packet.pfc");
  if (flow_control == FlowControl::Pfc && pfc.buffer_bytes < 2 * max_pkt)
    bad("pfc.buffer_bytes",
        "must hold at least two full packets (" + std::to_string(2 * max_pkt) + " bytes)");
}

nlohmann::json PacketConfig::to_json() const {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& k : packet_knobs()) j[k.name] = k.get(*this);
  return j;
}

void PacketConfig::apply_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) throw InputError(where + ": expected an object of packet-engine settings");
  const auto& knobs = packet_knobs();
  for (const auto& item : j.items()) { // no structured binding: clang before 16 cannot capture one
    const std::string& key = item.key();
    const auto& v = item.value();
    const std::string path = where + "." + key;
    const auto it = std::find_if(knobs.begin(), knobs.end(), [&](const PacketKnob& k) { return key == k.name; });
    if (it == knobs.end()) throw InputError(path + ": unknown key");
    check_knob_value(*it, v, path);
    it->set(*this, v, path);
  }
  validate();
}

} // namespace ibn::pkt
