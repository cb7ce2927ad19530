#pragma once
// Device knobs both engines read (model-reference.md §2, §4): HCA and switch latencies, FEC, the HCA
// injection cap a calibration profile may set, and the host path between the GPU and the NIC (PCIe, GPUDirect
// or host staging, cross-NUMA placement, SR-IOV virtual functions). One definition of where each is charged.
//
// A packet (or a flow's last byte) crossing a cable pays the cable's propagation plus FEC; crossing a switch
// it pays the switch's port-to-port latency. The flow engine charges the switch latency on the link the
// switch transmits on, the packet engine when the packet reaches the switch: both sum to one switch latency
// per switch on the route. The HCA pays tx_latency() (nic_tx + the host path's per-message latency) from the
// post to the first byte leaving and nic_rx from the last byte arriving to the completion.
//
// The host path (docs/packet-models.md "Host path") reduces to two figures both engines apply: a rate, folded
// into injection_gbps() (the packet engine paces the HCA's transmitter at it, the flow engine puts one more
// SimGrid link at it first on every route from the HCA), and a per-message latency, host_latency(), added to
// nic_tx. Every host knob's default is neutral: injection_gbps() and tx_latency() are then what they were
// before the host path existed.
//
// Switch models (topology/switch_models.hpp): a switch node that names a catalog model pays that model's
// latency (switch_latency_of), so a fabric can mix models; one that names none pays `switch_latency`. With
// `switch_latency_from_model` off (a calibration profile that measured its switch), `switch_latency` applies
// to every switch.
//
// An RDMA READ's responder (packet engine) answers after read_responder_latency(): its receive path for the
// request plus its transmit path for the response, what a WRITE pays at the receiver and at the sender.
#include "sim/time.hpp"
#include "topology/fabric.hpp"
#include "topology/switch_models.hpp"

#include <algorithm>
#include <limits>

namespace ibn::common {

/// Payload rate of a PCIe link of generation `gen` (1..6) and `lanes` lanes, Gb/s; 0 for an unknown
/// generation. Per lane: the transfer rate (2.5, 5, 8, 16, 32, 64 GT/s) x the encoding (8b/10b for Gen1-2,
/// 128b/130b for Gen3-5; Gen6 is PAM4 with 256-byte FLITs of 236 TLP bytes) x the TLP efficiency with a
/// 256-byte max payload: 256 / (256 + 24) for Gen1-5 (16-byte 4DW header with 64-bit addresses, 4-byte LCRC,
/// 4 bytes of framing and sequence number) times 0.95 for ACK and flow-control DLLPs (an assumption),
/// 256 / (256 + 16) for Gen6 (header only: sequence, CRC and FEC are in the FLIT's own bytes).
/// x16: Gen3 109.5, Gen4 218.9, Gen5 437.9, Gen6 888.5 Gb/s.
inline double pcie_payload_gbps(int gen, int lanes) {
  constexpr double kGts[] = {2.5, 5, 8, 16, 32, 64};
  if (gen < 1 || gen > 6 || lanes <= 0) return 0;
  const double gts = kGts[gen - 1] * lanes;
  if (gen <= 2) return gts * (8.0 / 10.0) * (256.0 / 280.0) * 0.95;
  if (gen <= 5) return gts * (128.0 / 130.0) * (256.0 / 280.0) * 0.95;
  return gts * (236.0 / 256.0) * (256.0 / 272.0);
}

struct DeviceKnobs {
  Time switch_latency = Time::ns(200);   ///< cut-through port-to-port latency
  Time fec_latency = Time::ns(0);        ///< extra per-cable latency of FEC
  Time nic_tx_latency = Time::ns(300);   ///< post -> first byte on the wire
  Time nic_rx_latency = Time::ns(300);   ///< last byte in -> completion
  double hca_rate_gbps = 0;              ///< HCA injection cap (0 = none): e.g. a PCIe-limited NIC
  bool switch_latency_from_model = true; ///< a switch naming a catalog model pays the model's latency

  /// The port-to-port latency of switch (or router) `n`: its model's when it names one and
  /// switch_latency_from_model is on, else switch_latency.
  Time switch_latency_of(const topo::Node& n) const {
    if (switch_latency_from_model && !n.switch_model.empty())
      if (const topo::SwitchModel* m = topo::find_switch_model(n.switch_model)) return m->latency();
    return switch_latency;
  }

  // Host path (issue 16 item 5). Defaults are neutral.
  int pcie_gen = 0;                        ///< NIC's PCIe generation 1..6 (0 = no PCIe cap)
  int pcie_lanes = 16;                     ///< NIC's PCIe width: 1, 2, 4, 8, 16
  bool gpudirect = true;                   ///< false: data staged through host memory
  double host_copy_gbps = 0;               ///< staging copy rate (0 = the HCA's rate without staging)
  Time host_staging_latency = Time::us(1); ///< per message, when gpudirect is off
  bool cross_numa = false;                 ///< GPU and NIC on different sockets
  double cross_numa_bw_factor = 0.5;       ///< rate factor of the GPU <-> NIC path when cross_numa
  Time cross_numa_latency = Time::ns(200); ///< per message, when cross_numa
  bool sriov = false;                      ///< the NIC is an SR-IOV virtual function
  double sriov_rate_factor = 1.0;          ///< rate factor when sriov
  Time sriov_latency = Time::ns(100);      ///< per message, when sriov

  /// What crossing cable `link` costs a packet or a flow: propagation + FEC.
  Time cable_latency(const topo::Link& link) const { return link.latency + fec_latency; }
  /// Latency charged on a directed link: the cable's, plus the switch latency when a switch transmits on it.
  Time link_latency(const topo::Link& link, bool switch_transmits) const {
    return cable_latency(link) + (switch_transmits ? switch_latency : Time::zero());
  }
  /// Latency charged on a directed link transmitted by node `from`: the cable's, plus `from`'s switch latency
  /// when it is a switch or router.
  Time link_latency(const topo::Link& link, const topo::Node& from) const {
    const bool sw = from.kind == topo::NodeKind::Switch || from.kind == topo::NodeKind::Router;
    return cable_latency(link) + (sw ? switch_latency_of(from) : Time::zero());
  }
  /// The host path's latency per message: host staging (gpudirect off) + cross-NUMA + SR-IOV.
  Time host_latency() const {
    return (gpudirect ? Time::zero() : host_staging_latency) +
           (cross_numa ? cross_numa_latency : Time::zero()) + (sriov ? sriov_latency : Time::zero());
  }
  /// Post -> first byte on the wire: nic_tx + host_latency().
  Time tx_latency() const { return nic_tx_latency + host_latency(); }
  /// The HCA's fixed cost of a message: tx_latency() + nic_rx.
  Time nic_latency() const { return tx_latency() + nic_rx_latency; }
  /// An RDMA READ's request processing at the responder HCA: its receive path (nic_rx) for the request, then
  /// its transmit path (tx_latency()) for the first response packet.
  Time read_responder_latency() const { return nic_rx_latency + tx_latency(); }
  /// True when a host knob (PCIe, staging, cross-NUMA, SR-IOV rate) may lower the injection rate.
  bool host_caps_rate() const {
    return pcie_gen > 0 || !gpudirect || cross_numa || (sriov && sriov_rate_factor != 1.0);
  }
  /// The rate an HCA injects at on a link of `link_gbps` (wire Gb/s; <= 0: unknown), `wire_per_payload` the
  /// framing's wire bytes per payload byte (PCIe and host copies carry payload only):
  ///   r = min(link, hca_rate_gbps, PCIe payload rate x wire_per_payload) x (sriov ? sriov_rate_factor : 1)
  ///   gpudirect on:  r x (cross_numa ? cross_numa_bw_factor : 1)
  ///   gpudirect off: 1 / (1/r + 1/h), h = (host_copy_gbps x wire_per_payload, else r)
  ///                  x (cross_numa ? cross_numa_bw_factor : 1): each byte is copied GPU -> host memory and
  ///                  then sent, over the same host path, one after the other (docs/packet-models.md).
  /// With every host knob neutral: the cap when set and lower than the link, else the link rate.
  double injection_gbps(double link_gbps, double wire_per_payload = 1.0) const {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    double r = link_gbps > 0 ? link_gbps : kInf;
    if (hca_rate_gbps > 0 && hca_rate_gbps < r) r = hca_rate_gbps;
    if (pcie_gen > 0) r = std::min(r, pcie_payload_gbps(pcie_gen, pcie_lanes) * wire_per_payload);
    if (sriov) r *= sriov_rate_factor;
    const double numa = cross_numa ? cross_numa_bw_factor : 1.0;
    if (gpudirect) {
      r *= numa;
    } else {
      const double h = (host_copy_gbps > 0 ? host_copy_gbps * wire_per_payload : r) * numa;
      r = r == kInf || h == kInf ? kInf : 1.0 / (1.0 / r + 1.0 / h);
    }
    return r == kInf ? link_gbps : r;
  }
};

} // namespace ibn::common
