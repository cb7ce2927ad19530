#pragma once
// Device knobs both engines read (model-reference.md §2, §4): HCA and switch latencies, FEC, and the HCA
// injection cap a calibration profile may set. One definition of where each latency is charged.
//
// A packet (or a flow's last byte) crossing a cable pays the cable's propagation plus FEC; crossing a switch
// it pays the switch's port-to-port latency. The flow engine charges the switch latency on the link the
// switch transmits on, the packet engine when the packet reaches the switch: both sum to one switch latency
// per switch on the route. The HCA pays nic_tx from the post to the first byte leaving and nic_rx from the
// last byte arriving to the completion.
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

namespace ibn::common {

struct DeviceKnobs {
  Time switch_latency = Time::ns(200); ///< cut-through port-to-port latency
  Time fec_latency = Time::ns(0);      ///< extra per-cable latency of FEC
  Time nic_tx_latency = Time::ns(300); ///< post -> first byte on the wire
  Time nic_rx_latency = Time::ns(300); ///< last byte in -> completion
  double hca_rate_gbps = 0;            ///< HCA injection cap (0 = none): e.g. a PCIe-limited NIC
  bool switch_latency_from_model = true; ///< a switch naming a catalog model pays the model's latency

  /// The port-to-port latency of switch (or router) `n`: its model's when it names one and
  /// switch_latency_from_model is on, else switch_latency.
  Time switch_latency_of(const topo::Node& n) const {
    if (switch_latency_from_model && !n.switch_model.empty())
      if (const topo::SwitchModel* m = topo::find_switch_model(n.switch_model)) return m->latency();
    return switch_latency;
  }

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
  /// An RDMA READ's request processing at the responder HCA: its receive path (nic_rx) for the request, then
  /// its transmit path (nic_tx) for the first response packet.
  Time read_responder_latency() const { return nic_rx_latency + nic_tx_latency; }
  /// The HCA's fixed cost of a message: nic_tx + nic_rx.
  Time nic_latency() const { return nic_tx_latency + nic_rx_latency; }
  /// The rate an HCA injects at on a link of `link_gbps`: the cap when set and lower, else the link rate.
  double injection_gbps(double link_gbps) const {
    return hca_rate_gbps > 0 && (link_gbps <= 0 || hca_rate_gbps < link_gbps) ? hca_rate_gbps : link_gbps;
  }
};

} // namespace ibn::common
