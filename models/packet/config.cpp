#include "models/packet/config.hpp"

#include "sim/error.hpp"

#include <cmath>

namespace ibn::pkt {

std::string to_string(ArMode m) {
  switch (m) {
  case ArMode::Off: return "off";
  case ArMode::PerPacket: return "per-packet";
  case ArMode::Bounded: return "bounded";
  }
  return "?";
}

ArMode parse_ar_mode(const std::string& s, const std::string& what) {
  if (s == "off" || s == "static") return ArMode::Off;
  if (s == "per-packet" || s == "free") return ArMode::PerPacket;
  if (s == "bounded") return ArMode::Bounded;
  throw InputError(what + ": unknown adaptive-routing mode '" + s + "' (expected off, per-packet or bounded)");
}

std::string to_string(LinkLayer l) { return l == LinkLayer::InfiniBand ? "ib" : "rocev2"; }

Time default_switch_latency(const std::string& generation) {
  if (generation == "EDR") return Time::ns(90);
  if (generation == "HDR") return Time::ns(130);
  return Time::ns(200);
}

void PacketConfig::validate() const {
  auto bad = [](const std::string& key, const std::string& msg) { throw InputError("packet." + key + ": " + msg); };
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
  if (!(bit_error_rate >= 0.0 && bit_error_rate < 1e-3)) bad("bit_error_rate", "must be in [0, 1e-3)");
  if (retry_count < 0 || retry_count > 7) bad("retry_count", "must be 0..7");
  if (max_rd_atomic == 0) bad("max_rd_atomic", "must be at least 1");
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
          {"ack_every_packets", ack_every_packets},
          {"ar_mode", to_string(ar_mode)},
          {"ar_bound_window_ns", ar_bound_window.to_ns()},
          {"credit_update_delay_ns", credit_update_delay.to_ns()},
          {"ack_timeout_us", ack_timeout.to_us()},
          {"retry_count", retry_count},
          {"max_rd_atomic", max_rd_atomic},
          {"bit_error_rate", bit_error_rate}};
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
      if (s == "ib") link_layer = LinkLayer::InfiniBand, header_bytes = 26;
      else if (s == "rocev2") link_layer = LinkLayer::RoCEv2, header_bytes = 82;
      else throw InputError(path + ": expected \"ib\" or \"rocev2\"");
    } else if (key == "mtu_bytes") mtu_bytes = u32();
    else if (key == "header_bytes") header_bytes = u32();
    else if (key == "reth_bytes") reth_bytes = u32();
    else if (key == "ack_payload_bytes") ack_payload_bytes = u32();
    else if (key == "switch_latency_ns") switch_latency = Time::from_ns(num());
    else if (key == "fec_latency_ns") fec_latency = Time::from_ns(num());
    else if (key == "nic_tx_latency_ns") nic_tx_latency = Time::from_ns(num());
    else if (key == "nic_rx_latency_ns") nic_rx_latency = Time::from_ns(num());
    else if (key == "switch_buffer_bytes") switch_buffer_bytes = u32();
    else if (key == "hca_buffer_bytes") hca_buffer_bytes = u32();
    else if (key == "num_vls") num_vls = static_cast<int>(u32());
    else if (key == "ack_every_packets") ack_every_packets = u32();
    else if (key == "ar_mode") {
      if (!v.is_string()) throw InputError(path + ": expected a string");
      ar_mode = parse_ar_mode(v.get<std::string>(), path);
    } else if (key == "ar_bound_window_ns") ar_bound_window = Time::from_ns(num());
    else if (key == "credit_update_delay_ns") credit_update_delay = Time::from_ns(num());
    else if (key == "ack_timeout_us") ack_timeout = Time::from_us(num());
    else if (key == "retry_count") retry_count = static_cast<int>(u32());
    else if (key == "max_rd_atomic") max_rd_atomic = u32();
    else if (key == "bit_error_rate") bit_error_rate = num();
    else throw InputError(path + ": unknown key");
  }
  validate();
}

} // namespace ibn::pkt
