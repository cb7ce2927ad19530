#pragma once
// FlowEngine — eng::Engine on SimGrid 3.32 (DESIGN.md §1, §8; docs/flow-engine.md).
//
// A message is a fluid flow: it shares the bandwidth of every link on its route max-min fairly (equal
// shares) with the other flows (SimGrid CM02, cross-traffic off, TCP-gamma off), then arrives a fixed
// delay later. The platform is built from our Fabric: one SimGrid host per HCA (host id == HcaIndex), one
// simplex SimGrid link per cable direction (what SPLITDUPLEX does) with bandwidth = data rate / 8 bytes/s.
// A message carries its WIRE bytes as the packet engine sends them: payload + one header per MTU packet
// (at least one packet) + the RDMA WRITE's RETH once. Routes come from OUR RoutingTables through a NetZone
// of ours (answered on demand, nothing stored per pair), so static ftree/minhop/updn/dragonfly routes equal
// the packet engine's. With adaptive routing on, each message's route is chosen hop by hop at send time
// among the AR group's ports by the fewest active flows on the outgoing link (ties: the static port first,
// then port order).
//
// Timing of one message (alone on its path it is the packet engine's cut-through formula):
//   bandwidth phase: wire bytes / shared rate, starting at the post (or, on a busy QP, when the QP's
//                    previous message has finished ITS bandwidth phase: an RC QP pipelines messages);
//   delivery:        end of the bandwidth phase + nic_tx + route latency + nic_rx (+ latency_offset),
//                    where route latency = sum over links of propagation + fec (+ switch latency when a
//                    switch transmits). Never before the previous delivery of the same QP.
// (The bandwidth phases of all messages are shifted by the constant nic_tx; that changes no interaction.)
// SimGrid's comms carry no latency: CM02 weighs a flow's share by its route latency (sharing penalty), so
// flows of different route lengths would not get equal shares; with zero latency every penalty is 1.
//
// Solvers: by default the max-min sharing is computed by our own FluidNetwork (fluid_network.hpp: the same
// equal-share max-min allocation, re-solved per connected component of flows, integer-ps completion times)
// and the event loop is ours; SimGrid (below) stays the solver of record, used for timed faults, calibrated
// per-size factors, the s4u path, or when FlowConfig::solver asks for it, and the two are checked against
// each other in tests/flow.
//
// SimGrid path: by default a message is one network action started directly on SimGrid's network model
// (NetworkModel::communicate of 3.32, which has no public header: called through its vtable after checks
// at run time, see flow_engine.cpp); finished actions come back through the link signal. When the checks
// fail, or with FlowConfig::s4u_comms, a message is one s4u host-to-host Comm (public API, slower: each
// finishing comm scans a list of every comm in flight). simgrid_path() / report().extra say which ran.
//
// Process-wide singleton: SimGrid keeps its engine, clock and platform in process globals that cannot be
// reset, so ONE FlowEngine may be constructed per process, ever. A second construction (even after the
// first was destroyed) throws std::logic_error. Run further simulations in a child process
// (ibn::run_in_child_process, sim/child_processes.hpp). The engine runs without actors: sends start flows
// from the maestro, completions arrive through SimGrid's link signal, timers through one SimGrid timer.
//
// Limitations: no credit/PFC back-pressure, queues, CC or packet-level AR (fluid max-min instead); AR
// chooses per message, not per packet; the calibrated host latency and noise are added per transfer by the
// layer above (scenarios/executor: ExecOptions::noise), as for the packet engine; time inside SimGrid is
// double seconds (converted to integer ps at the boundary, rounded to the nearest ps).
#include "models/common/device.hpp"
#include "models/common/framing.hpp"
#include "models/engine.hpp"
#include "models/packet/faults.hpp"
#include "models/routing/routing.hpp"
#include "sim/time.hpp"
#include "topology/fabric.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ibn::pkt {
struct PacketConfig;
}

namespace ibn::flow {

/// What a calibration profile says about a message of a given size (per-size latency/bandwidth factors).
struct FlowFactors {
  Time latency_offset;    ///< added to the route latency (>= 0)
  double bw_factor = 1.0; ///< multiplies the bandwidth the message may get, in (0, 1]
};
/// Message size in bytes -> its factors. Empty: {0, 1}.
using FactorFn = std::function<FlowFactors(std::uint64_t bytes)>;

/// The flow engine's configuration: the framing and device knobs both engines share (models/common), plus
/// the flow engine's own options.
struct FlowConfig : common::Framing, common::DeviceKnobs {
  bool adaptive_routing = false; ///< per-message least-loaded choice in the AR groups
  FactorFn factors;              ///< per-size latency offset and bandwidth factor (empty: none)
  bool s4u_comms = false; ///< force the s4u Comm path (else SimGrid's network model directly when possible)
  /// Who computes the max-min sharing: our FluidNetwork (fluid_network.hpp; the default wherever it models
  /// the run: no timed faults, no calibrated per-size factors, not the s4u path) or SimGrid (the solver of
  /// record; scenario key flow.solver). solver() says which one ran.
  enum class Solver : std::uint8_t { Native, SimGrid };
  Solver solver = Solver::Native;
  /// Per LinkId residual bit-error rate (pkt::PacketConfig::link_bit_error_rate; empty: none): the cable's
  /// capacity is scaled by the delivered fraction of full-MTU packets, (1 - b)^(8 W), W = their wire bytes.
  std::vector<double> link_bit_error_rate;

  /// Bytes on the wire for a message of `payload` bytes, as the packet engine sends an RDMA WRITE
  /// (common::Framing::write_wire_bytes).
  std::uint64_t wire_bytes(std::uint64_t payload) const { return write_wire_bytes(payload); }
  /// Checks ranges; throws InputError naming the key.
  void validate() const;
  nlohmann::json to_json() const;
};

/// The knobs the two engines share, taken from a packet-engine configuration (same framing and device knobs:
/// MTU, header, RETH, switch, FEC and NIC latencies, HCA rate cap; AR on unless the packet engine's AR is
/// off).
FlowConfig flow_config_from(const pkt::PacketConfig& p);

/// Timed faults (FlowEngine::configure_faults): the packet engine's FaultConfig (SM sweep delay, reroute,
/// routing options) and its RC retry limit. A transfer whose route stays dead fails, with its QP, after
/// (retry_count + 1) x ack_timeout without progress, as a QP whose ACK timeout fires that often.
struct FlowFaultConfig : pkt::FaultConfig {
  Time ack_timeout = Time::ps(4'294'967'296'000); ///< 4.096 us x 2^20 (NCCL_IB_TIMEOUT 20)
  int retry_count = 7;
};

class FlowEngine final : public eng::Engine {
 public:
  /// Builds the SimGrid platform. `fabric` and `tables` must outlive the engine. Throws std::logic_error
  /// when a FlowEngine was already constructed in this process, InputError on a bad config.
  ///
  /// `used_hcas`: the HCAs that will send or receive, when known (else every HCA may). The platform then
  /// holds a SimGrid host for each of them only, and SimGrid links only for the cable directions their
  /// routes can take (platform_subset()): the static routes between every pair of them, or with adaptive
  /// routing every port of the AR groups on the way. A send from or to another HCA, or a route onto a link
  /// not made, is std::logic_error (an internal error, never a silent mis-simulation); so are timed faults
  /// (the SM's reroute may take any cable): build those runs without `used_hcas`. Links not made report as
  /// idle links, exactly as made links that carried nothing, so results do not depend on the subset.
  /// `cable_directions`: topo::cable_directions_by_tier(fabric), when the caller holds it (it must outlive
  /// the engine); else report() counts the fabric's cables itself.
  FlowEngine(const topo::Fabric& fabric, const routing::RoutingTables& tables, FlowConfig config = {},
             std::optional<std::vector<routing::HcaIndex>> used_hcas = std::nullopt,
             const topo::CableDirections* cable_directions = nullptr);
  ~FlowEngine() override;
  FlowEngine(const FlowEngine&) = delete;
  FlowEngine& operator=(const FlowEngine&) = delete;

  std::string name() const override { return "flow"; }
  Time now() const override;
  std::size_t num_hcas() const override;
  void send(const eng::TransferSpec& spec, eng::DeliveredFn on_delivered) override;
  void call_at(Time t, std::function<void()> fn) override;
  void run() override;
  eng::EngineReport report() const override;

  /// How messages reach SimGrid: "network-model" (actions on SimGrid's network model) or "s4u-comm".
  std::string simgrid_path() const;
  /// "native" (FluidNetwork) or "simgrid": decided at the first send or run() (FlowConfig::solver, and SimGrid
  /// for timed faults, calibrated factors and the s4u path); before that, what would be chosen now.
  std::string solver() const;
  /// The route SimGrid itself returns for src -> dst (Host::route_to through our NetZone), as LinkIds:
  /// what a message takes with adaptive routing off. For tests and `topo routes`-style checks.
  std::vector<topo::LinkId> simgrid_route(routing::HcaIndex src, routing::HcaIndex dst) const;
  /// The route latency SimGrid reports for src -> dst.
  Time simgrid_route_latency(routing::HcaIndex src, routing::HcaIndex dst) const;
  /// SimGrid links made: directed cables that can carry traffic (+ HCA injection links), and SimGrid hosts
  /// made; without `used_hcas` every directed cable and every HCA. Not in report(): results are the same.
  std::size_t links_made() const;
  std::size_t hosts_made() const;
  /// Whether the platform holds only what `used_hcas` needs (false without it, or when walking the routes
  /// would cost more than making every link: then every link and host is made).
  bool platform_subset() const;
  /// Whether a FlowEngine was constructed in this process (then no other may be).
  static bool constructed_in_this_process();

  /// A static route as this engine moves a message on it, for callers that compute a flow's timing
  /// themselves (the symmetric-steps shortcut, scenarios/ring_shortcut.hpp): its directed links (2 * LinkId
  /// + direction; an HCA injection link first when the HCA rate cap binds, numbered after the cables), the
  /// rate a lone flow gets on it (the smallest link bandwidth, wire bytes per second) and the fixed delay
  /// from the end of the bandwidth phase to the delivery (nic_tx + route latency + nic_rx).
  struct StaticPath {
    std::vector<std::uint32_t> links;
    double bytes_per_s = 0;
    Time delay;
  };
  StaticPath static_path(routing::HcaIndex src, routing::HcaIndex dst) const;
  /// Bandwidth of a directed link of a StaticPath (wire bytes per second).
  double link_bytes_per_s(std::uint32_t link) const;
  /// Counts, in report(), traffic whose timing a caller computed without SimGrid on `path`: `payload` and
  /// `wire` bytes on each of its links and `messages` delivered transfers.
  void account(const StaticPath& path, std::uint64_t payload, std::uint64_t wire, std::uint64_t messages);
  const FlowConfig& config() const;

  // --- Timed faults (flow_faults.cpp; docs/flow-engine.md "Faults"), the packet engine's semantics in fluid
  // form. Link down at t: every flow crossing the cable stops at t with its remaining bytes (the other flows
  // re-share the capacity it leaves); with AR a stopped flow takes a live port of its AR group at once.
  // sm_sweep_delay after each state change (reroute on) the routes are recomputed around the dead
  // switch-to-switch cables (routing::reroute, same algorithm): flows in their bandwidth phase whose route
  // changed move to the new one with their remaining bytes, stopped flows restart, later transfers take the
  // new routes. A flow that cannot move (reroute off, an HCA's cable, no other path) waits; after
  // (retry_count + 1) x ack_timeout without progress its QP fails (qp_failures()) and the run stops. Link up:
  // stopped flows whose route is alive again restart at once; reroute after the delay. Link speed at t: both
  // directions' capacity changes at t (SimGrid re-shares the flows on it).
  /// Call before the first send (std::logic_error after). InputError: reroute with adaptive routing on (as
  /// the packet engine: reroute needs static routes), or the s4u Comm path (faults need network actions).
  void configure_faults(const FlowFaultConfig& cfg);
  void schedule_link_down(topo::LinkId link, Time at);
  void schedule_link_up(topo::LinkId link, Time at);
  void schedule_node_down(topo::NodeId node, Time at); ///< every cable of the node
  void schedule_node_up(topo::NodeId node, Time at);
  void schedule_link_speed(topo::LinkId link, topo::LinkSpeed speed, Time at);
  bool link_up(topo::LinkId link) const;
  /// QPs that exhausted their retries (messages: the sequence numbers of their transfers not delivered).
  const std::vector<pkt::QpFailure>& qp_failures() const;
  /// dropped_packets stays 0 (no packets); link_downs, link_ups, reroutes, qp_errors as the packet engine.
  pkt::FaultStats fault_stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace ibn::flow
