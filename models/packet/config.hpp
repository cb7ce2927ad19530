#pragma once
// PacketConfig: every knob of the packet engine's device models, declared once with its unit and default
// (model-reference.md §1, §2.3, §4, §8). The effective values are written into every result's manifest.
#include "models/common/device.hpp"
#include "models/common/framing.hpp"
#include "models/packet/cc.hpp"
#include "sim/choice.hpp"
#include "sim/time.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ibn::pkt {

/// Adaptive routing at switches: off (LFT port only), per-packet least-loaded port of the AR group, or
/// bounded (a destination keeps its port for `ar_bound_window` after a choice, as LIDBindTime in
/// Mellanox's flit model).
enum class ArMode : std::uint8_t { Off, PerPacket, Bounded };
inline constexpr Choice<ArMode> kArModes[] = {
    {ArMode::Off, "off"}, {ArMode::PerPacket, "per-packet"}, {ArMode::Bounded, "bounded"}};
std::string to_string(ArMode m);
/// "off", "per-packet" or "bounded"; InputError naming `what` otherwise.
ArMode parse_ar_mode(const std::string& s, const std::string& what);

inline constexpr Choice<CcMode> kCcModes[] = {
    {CcMode::None, "none"}, {CcMode::Dcqcn, "dcqcn"}, {CcMode::IbCc, "ibcc"}};
/// "none", "dcqcn" or "ibcc"; InputError naming `what` otherwise.
CcMode parse_cc_mode(const std::string& s, const std::string& what);
inline constexpr Choice<FlowControl> kFlowControls[] = {{FlowControl::Credits, "credits"},
                                                         {FlowControl::Pfc, "pfc"}};

/// Link layer framing: InfiniBand (common::kIbHeaderBytes, 26 B per packet: LRH 8 + BTH 12 + ICRC 4 + VCRC 2)
/// or RoCEv2 (common::kRoceV2HeaderBytes, 82 B on the wire: Eth 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 +
/// FCS 4 + preamble/SFD 8 + IFG 12).
enum class LinkLayer : std::uint8_t { InfiniBand, RoCEv2 };
inline constexpr Choice<LinkLayer> kLinkLayers[] = {{LinkLayer::InfiniBand, "ib"}, {LinkLayer::RoCEv2, "rocev2"}};
std::string to_string(LinkLayer l);

/// One entry of a VL arbitration table (IBA §7.6.9): a data VL and its weight in 64-byte units (0 skips).
struct VlArbEntry {
  int vl = 0;
  int weight = 4;
  bool operator==(const VlArbEntry&) const = default;
};
/// "0:4,1:4" (OpenSM's qos_vlarb_low syntax) -> entries; throws InputError naming `what`.
std::vector<VlArbEntry> parse_vl_arb(const std::string& text, const std::string& what);
std::string to_string(const std::vector<VlArbEntry>& table);

/// The framing (mtu_bytes, header_bytes, reth_bytes: payload per packet 256..4096, per-packet overhead IB 26,
/// RoCEv2 82; RETH on a WRITE's first packet and a READ request) and the device knobs (switch_latency: NDR
/// default, HDR 130, EDR 90; fec_latency per cable; nic_tx/nic_rx_latency; hca_rate_gbps) are the ones both
/// engines share, declared once in models/common/{framing,device}.hpp; the rest is the packet engine's own.
struct PacketConfig : common::Framing, common::DeviceKnobs {
  LinkLayer link_layer = LinkLayer::InfiniBand;
  std::uint32_t ack_payload_bytes = 4;        ///< AETH on ACK/NAK packets
  std::uint32_t switch_buffer_bytes = 131072; ///< input buffer per port and data VL (64-byte credits)
  std::uint32_t hca_buffer_bytes = 131072;    ///< HCA receive buffer per data VL
  int num_vls = 1;                            ///< data VLs
  /// VL arbitration per output port: the high-priority table is served first, but after `vl_high_limit`
  /// x 4096 bytes of high-priority data one low-priority packet may go if one is waiting (255 = no limit,
  /// 0 = one packet). Empty low table: every data VL with weight 4 (one MTU packet per turn).
  std::vector<VlArbEntry> vl_arb_high;
  std::vector<VlArbEntry> vl_arb_low;
  int vl_high_limit = 255;
  std::uint32_t ack_every_packets = 16; ///< responder ACKs every N packets and every message's last
  ArMode ar_mode = ArMode::Off;
  Time ar_bound_window = Time::us(2);             ///< bounded AR: how long a destination keeps its port
  Time credit_update_delay = Time::zero();        ///< credit return delay beyond the cable propagation
  Time ack_timeout = Time::ps(4'294'967'296'000); ///< local ACK timeout: 4.096 us x 2^20 (NCCL_IB_TIMEOUT 20)
  int retry_count = 7;
  std::uint32_t max_rd_atomic = 16; ///< outstanding RDMA READs per QP
  double bit_error_rate = 0.0;      ///< per bit; a corrupted packet is dropped at its receiver
  /// Per LinkId residual (post-FEC) bit-error rate replacing bit_error_rate on that cable; empty: none. Not a
  /// knob: set from a scenario's `faults.ber` (scenarios/faults.hpp).
  std::vector<double> link_bit_error_rate;
  // hca_rate_gbps (common::DeviceKnobs): an HCA's transmitter starts packets no faster than
  // wire_bytes x 8 / cap apart (remainders carried exactly like serialization), e.g. a PCIe-limited NIC.
  /// Link-level flow control: "credits" (IB, the default) or "pfc" (RoCE lossless, `pfc` below).
  FlowControl flow_control = FlowControl::Credits;
  /// End-to-end congestion control: "none" (default), "dcqcn" (ECN marking + `dcqcn`) or "ibcc" (FECN/BECN
  /// + `ibcc`).
  CcMode cc = CcMode::None;
  DcqcnParams dcqcn;
  IbCcParams ibcc;
  PfcParams pfc;
  /// Queue traces: every output port's queued bytes sampled at this period in ns (0 = off).
  double trace_interval_ns = 0;
  /// Rate traces: every change of a QP's congestion-control rate is recorded (off by default).
  bool trace_rates = false;
  /// Skips (docs/engine.md "Fast-forward"): a collective whose steps repeat in shape (same transfers,
  /// dependencies shifted by a step) and whose progress is steady (each of 4 windows of 16 steps within 1 %
  /// of their mean) skips whole periods, the time skipped being the measured period's; and while every
  /// active QP sends the middle of a long message at a steady rate, PacketEngine's network moves each stream
  /// ahead by rate x time (fluid skips, models/packet/fluid_skip.cpp); and a job whose executions repeat
  /// exactly skips the rest of them (repeat skips, scenarios/repeat_skip.hpp). false: exact.
  bool fast_forward = true;

  /// Credits (64-byte blocks) a packet of `wire_bytes` needs.
  static std::uint32_t credits_for(std::uint32_t wire_bytes) { return (wire_bytes + 63) / 64; }
  /// Checks every knob's declared range, then the rules between knobs; throws InputError naming the key.
  void validate() const;
  /// Every knob by its declared name (what manifests record); apply_json() takes it back.
  nlohmann::json to_json() const;
  /// Applies the keys present in `j` (unknown keys are an InputError naming `where`.key), each checked
  /// against its declaration, then validate().
  void apply_json(const nlohmann::json& j, const std::string& where);
};

/// What a knob's JSON value is: a whole number, a number, true/false, one of `choices`, free text, or an
/// object handed to its own parser (dcqcn, ibcc, pfc).
enum class KnobKind : std::uint8_t { Integer, Number, Bool, Choice, Text, Object };

/// One PacketConfig knob, declared once: this table drives validate() (ranges), to_json(), apply_json()
/// and the scenario keys `packet.<name>` (their --set parsing and `ibnetsim list --keys`).
struct PacketKnob {
  const char* name;
  KnobKind kind;
  const char* unit; ///< "bytes", "ns", "us", "Gb/s", "" ...
  double min, max;  ///< Integer and Number: the allowed range (inclusive)
  const char* doc;
  std::vector<std::string> choices;                  ///< Choice: the accepted names
  nlohmann::json (*get)(const PacketConfig&);        ///< the value as to_json() writes it
  void (*set)(PacketConfig&, const nlohmann::json&, const std::string& path); ///< a value already checked
};
/// Every knob, in the order of the struct.
const std::vector<PacketKnob>& packet_knobs();
/// The host-path knobs among packet_knobs() (common::DeviceKnobs: pcie_gen ... sriov_latency_ns), in table
/// order: what a calibration profile's `host` section may set (docs/packet-models.md "Host path").
const std::vector<std::string>& host_knob_names();
/// The knob named `name`, or nullptr.
const PacketKnob* find_packet_knob(const std::string& name);
/// Checks `v` against `k`'s kind, range and choices; InputError "PATH: ..." otherwise.
void check_knob_value(const PacketKnob& k, const nlohmann::json& v, const std::string& path);

/// Defaults for a link generation's switch latency: EDR 90 ns, HDR 130 ns, NDR/XDR 200 ns, older 200 ns.
Time default_switch_latency(const std::string& generation);

} // namespace ibn::pkt
