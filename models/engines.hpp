#pragma once
// The engine registry: every eng::Engine the scenarios can run on, by name, with what it models.
//
// Each entry states its capabilities; ignored_features() compares them with what a scenario's effective
// device configuration asks for and returns one warning naming every feature the chosen engine would
// silently ignore (e.g. `--engine flow` with cc.algorithm dcqcn or packet.flow_control pfc). The runner
// prints it and records it in results.json (`manifest.warnings`). Built by builtin_engines() like the
// other registries (sim/registry.hpp); `ibnetsim list` prints it.
#include "models/engine.hpp"
#include "models/packet/config.hpp"
#include "models/routing/routing.hpp"
#include "sim/registry.hpp"
#include "topology/fabric.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ibn::eng {

/// What an engine models. A feature a scenario asks for and the engine lacks is a warning, not an error.
struct Capabilities {
  bool credits = false;        ///< IB link-level credits per VL (back-pressure, buffers)
  bool pfc = false;            ///< PFC pause frames (RoCE lossless)
  bool dcqcn = false;          ///< ECN marking at switches + DCQCN rate control
  bool ib_cc = false;          ///< IB congestion control (FECN/BECN, CCTI)
  bool per_packet_ar = false;  ///< adaptive routing decided per packet (else per message at most)
  bool per_message_ar = false; ///< adaptive routing decided once per message
  bool bounded_ar = false;     ///< AR with a bind window per destination
  bool bit_errors = false;     ///< faults: bit errors, dropped packets, RC retransmission
  bool timed_faults = false;   ///< faults at t > 0: links/switches down and up, SM reroute, degraded links
  bool vl_arbitration = false; ///< several data VLs and VL arbitration tables
  bool hca_rate_cap = false;   ///< HCA injection cap (calibration profile's hca_rate_gbps)
  bool host_path = false;      ///< host-path knobs (PCIe cap, GPUDirect/staging, cross-NUMA, SR-IOV)
  bool queue_traces = false;   ///< per-port queue traces (packet.trace_interval_ns)
  bool rate_traces = false;    ///< CC rate traces (packet.trace_rates)

  /// The names of the features set, for `ibnetsim list` and the docs.
  std::vector<std::string> names() const;
};

/// What an engine is built from: the world of one run. Must outlive the engine.
struct EngineInputs {
  const topo::Fabric& fabric;
  const routing::RoutingTables& tables;
  const pkt::PacketConfig& device; ///< effective device configuration (after calibration and `packet` keys)
  std::uint64_t seed = 1;
  /// The HCAs any transfer of the run will use (every job's and background pattern's), when known: an engine
  /// may build only what they need (the flow engine's SimGrid platform). nullptr: any HCA may be used.
  const std::vector<routing::HcaIndex>* used_hcas = nullptr;
  /// The flow engine's sharing by SimGrid instead of its native solver (scenario key flow.solver).
  bool flow_simgrid_solver = false;
  /// topo::cable_directions_by_tier(fabric), computed once with the world; nullptr: the engine counts.
  const topo::CableDirections* cable_directions = nullptr;
};

struct EngineKind {
  Capabilities capabilities;
  std::function<std::unique_ptr<Engine>(const EngineInputs&)> make;
};

using EngineRegistry = Registry<EngineKind>;

/// "packet" and "flow".
EngineRegistry builtin_engines();

/// What `device` asks for that an engine with `caps` ignores: empty, or ONE warning naming each such
/// feature with the key that asks for it (e.g. "engine 'flow' ignores: cc.algorithm dcqcn (...), ...").
std::vector<std::string> ignored_features(const std::string& engine, const Capabilities& caps,
                                          const pkt::PacketConfig& device);

} // namespace ibn::eng
