#include "models/packet/config.hpp"

#include "sim/error.hpp"

#include <cmath>

namespace ibn::pkt {

std::string to_string(ArMode m) {
  switch (m) {
  case ArMode::Off:
    return "off";
  case ArMode::PerPacket:
    return "per-packet";
  case ArMode::Bounded:
    return "bounded";
  }
  return "?";
}

ArMode parse_ar_mode(const std::string& s, const std::string& what) {
  if (s == "off" || s == "static") return ArMode::Off;
  if (s == "per-packet" || s == "free") return ArMode::PerPacket;
  if (s == "bounded") return ArMode::Bounded;
  throw InputError(what + ": unknown adaptive-routing mode '" + s +
                   "' (expected off, per-packet or bounded)");
}

std::string to_string(LinkLayer l) {
  return l == LinkLayer::InfiniBand ? "ib" : "rocev2";
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

void PacketConfig::validate() const {
  auto bad = [](const std::string& key, const std::string& msg) {
    throw InputError("packet." + key + ": " + msg);
  };
  if (mtu_bytes != 256 && mtu_bytes != 512 && mtu_bytes != 1024 && mtu_bytes != 2048 && mtu_bytes != 4096)
    bad("mtu_bytes", "must be 256, 512, 1024, 2048 or 4096, got " + std::to_string(mtu_bytes));
  if (header_bytes == 0 || header_bytes > 512) bad("header_bytes", "must be 1..512");
  if (num_vls < 1 || num_vls > 15) bad("num_vls", "must be 1..15");
  const std::uint32_t max_pkt = mtu_bytes + header_bytes + reth_bytes;
  if (switch_buffer_bytes < max_pkt)
    bad("switch_buffer_bytes", "must hold at least one full packet (" + std::to_string(max_pkt) + " bytes)");
  if (hca_buffer_bytes < max_pkt)
    bad("hca_buffer_bytes", "must hold at least one full packet (" + std::to_string(max_pkt) + " bytes)");
  if (ack_every_packets == 0) bad("ack_every_packets", "must be at least 1");
  if (switch_latency < Time::zero() || nic_tx_latency < Time::zero() || nic_rx_latency < Time::zero() ||
      fec_latency < Time::zero() || credit_update_delay < Time::zero())
    bad("latency", "latencies must not be negative");
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
  if (vl_high_limit < 0 || vl_high_limit > 255)
    bad("vl_high_limit", "must be 0..255 (4096-byte units, 255 = no limit)");
  if (!(bit_error_rate >= 0.0 && bit_error_rate < 1e-3)) bad("bit_error_rate", "must be in [0, 1e-3)");
  if (retry_count < 0 || retry_count > 7) bad("retry_count", "must be 0..7");
  if (max_rd_atomic == 0) bad("max_rd_atomic", "must be at least 1");
  if (!(hca_rate_gbps >= 0.0 && hca_rate_gbps <= 1e6))
    bad("hca_rate_gbps", "must be in [0, 1e6] (0 = no cap)");
  dcqcn.validate("packet.dcqcn");
  ibcc.validate("packet.ibcc");
  pfc.validate("packet.pfc");
  if (flow_control == FlowControl::Pfc && pfc.buffer_bytes < 2 * max_pkt)
    bad("pfc.buffer_bytes",
        "must hold at least two full packets (" + std::to_string(2 * max_pkt) + " bytes)");
  if (!(trace_interval_ns >= 0)) bad("trace_interval_ns", "must be >= 0");
}

nlohmann::json PacketConfig::to_json() const {
  return {{"link_layer", to_string(link_layer)},
          {"mtu_bytes", mtu_bytes},
          {"header_bytes", header_bytes},
          {"reth_bytes", reth_bytes},
          {"ack_payload_bytes", ack_payload_bytes},
          {"switch_latency_ns", switch_latency.to_ns()},
          {"fec_latency_ns", fec_latency.to_ns()},
          {"nic_tx_latency_ns", nic_tx_latency.to_ns()},
          {"nic_rx_latency_ns", nic_rx_latency.to_ns()},
          {"switch_buffer_bytes", switch_buffer_bytes},
          {"hca_buffer_bytes", hca_buffer_bytes},
          {"num_vls", num_vls},
          {"vl_arb_high", to_string(vl_arb_high)},
          {"vl_arb_low", to_string(vl_arb_low)},
          {"vl_high_limit", vl_high_limit},
          {"ack_every_packets", ack_every_packets},
          {"ar_mode", to_string(ar_mode)},
          {"ar_bound_window_ns", ar_bound_window.to_ns()},
          {"credit_update_delay_ns", credit_update_delay.to_ns()},
          {"ack_timeout_us", ack_timeout.to_us()},
          {"retry_count", retry_count},
          {"max_rd_atomic", max_rd_atomic},
          {"bit_error_rate", bit_error_rate},
          {"hca_rate_gbps", hca_rate_gbps},
          {"flow_control", to_string(flow_control)},
          {"cc", to_string(cc)},
          {"dcqcn", dcqcn.to_json()},
          {"ibcc", ibcc.to_json()},
          {"pfc", pfc.to_json()},
          {"trace_interval_ns", trace_interval_ns},
          {"trace_rates", trace_rates}};
}

void PacketConfig::apply_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) throw InputError(where + ": expected an object of packet-engine settings");
  for (const auto& [key, v] : j.items()) {
    const std::string path = where + "." + key;
    auto num = [&]() {
      if (!v.is_number()) throw InputError(path + ": expected a number");
      const double d = v.get<double>();
      if (d < 0) throw InputError(path + ": must not be negative");
      return d;
    };
    auto u32 = [&]() {
      const double d = num();
      if (d != std::floor(d) || d > 4e9) throw InputError(path + ": expected a whole number");
      return static_cast<std::uint32_t>(d);
    };
    if (key == "link_layer") {
      const std::string s = v.is_string() ? v.get<std::string>() : "";
      if (s == "ib")
        link_layer = LinkLayer::InfiniBand, header_bytes = common::kIbHeaderBytes;
      else if (s == "rocev2")
        link_layer = LinkLayer::RoCEv2, header_bytes = common::kRoceV2HeaderBytes;
      else
        throw InputError(path + ": expected \"ib\" or \"rocev2\"");
    } else if (key == "mtu_bytes")
      mtu_bytes = u32();
    else if (key == "header_bytes")
      header_bytes = u32();
    else if (key == "reth_bytes")
      reth_bytes = u32();
    else if (key == "ack_payload_bytes")
      ack_payload_bytes = u32();
    else if (key == "switch_latency_ns")
      switch_latency = Time::from_ns(num());
    else if (key == "fec_latency_ns")
      fec_latency = Time::from_ns(num());
    else if (key == "nic_tx_latency_ns")
      nic_tx_latency = Time::from_ns(num());
    else if (key == "nic_rx_latency_ns")
      nic_rx_latency = Time::from_ns(num());
    else if (key == "switch_buffer_bytes")
      switch_buffer_bytes = u32();
    else if (key == "hca_buffer_bytes")
      hca_buffer_bytes = u32();
    else if (key == "num_vls")
      num_vls = static_cast<int>(u32());
    else if (key == "vl_arb_high" || key == "vl_arb_low") {
      if (!v.is_string()) throw InputError(path + ": expected a string such as \"0:4,1:4\"");
      (key == "vl_arb_high" ? vl_arb_high : vl_arb_low) = parse_vl_arb(v.get<std::string>(), path);
    } else if (key == "vl_high_limit")
      vl_high_limit = static_cast<int>(u32());
    else if (key == "ack_every_packets")
      ack_every_packets = u32();
    else if (key == "ar_mode") {
      if (!v.is_string()) throw InputError(path + ": expected a string");
      ar_mode = parse_ar_mode(v.get<std::string>(), path);
    } else if (key == "ar_bound_window_ns")
      ar_bound_window = Time::from_ns(num());
    else if (key == "credit_update_delay_ns")
      credit_update_delay = Time::from_ns(num());
    else if (key == "ack_timeout_us")
      ack_timeout = Time::from_us(num());
    else if (key == "retry_count")
      retry_count = static_cast<int>(u32());
    else if (key == "max_rd_atomic")
      max_rd_atomic = u32();
    else if (key == "bit_error_rate")
      bit_error_rate = num();
    else if (key == "hca_rate_gbps")
      hca_rate_gbps = num();
    else if (key == "flow_control") {
      const std::string s = v.is_string() ? v.get<std::string>() : "";
      if (s == "credits")
        flow_control = FlowControl::Credits;
      else if (s == "pfc")
        flow_control = FlowControl::Pfc;
      else
        throw InputError(path + ": expected \"credits\" or \"pfc\"");
    } else if (key == "cc") {
      const std::string s = v.is_string() ? v.get<std::string>() : "";
      if (s == "none")
        cc = CcMode::None;
      else if (s == "dcqcn")
        cc = CcMode::Dcqcn;
      else if (s == "ibcc")
        cc = CcMode::IbCc;
      else
        throw InputError(path + ": expected \"none\", \"dcqcn\" or \"ibcc\"");
    } else if (key == "dcqcn")
      dcqcn.apply_json(v, path);
    else if (key == "ibcc")
      ibcc.apply_json(v, path);
    else if (key == "pfc")
      pfc.apply_json(v, path);
    else if (key == "trace_interval_ns")
      trace_interval_ns = num();
    else if (key == "trace_rates") {
      if (!v.is_boolean()) throw InputError(path + ": expected true or false");
      trace_rates = v.get<bool>();
    } else
      throw InputError(path + ": unknown key");
  }
  validate();
}

} // namespace ibn::pkt
