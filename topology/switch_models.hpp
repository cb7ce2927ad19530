#pragma once
// A small catalog of switch models and their port-to-port latency (docs/packet-models.md, "Switch models").
//
// A fabric's switch node may name a model (`Node::switch_model`, the catalog id); both engines then charge
// that model's latency for the switch (common::DeviceKnobs::switch_latency_of), so a fabric can mix models.
// A switch that names none pays the engine's `switch_latency` (the generation default where a front-end
// picks one, e.g. `perftest --fabric`). Every value carries its source; values no datasheet gave are marked
// `assumed` and say what they were taken from.
//
// Models are named on generate (`--switch-model`, generator key `switch-model`) and inferred on ibnetdiscover
// import from the switch's NodeDescription ("MF0;host:MQM9700/U1", "Quantum-2 Mellanox Technologies", ...).
#include "sim/time.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace ibn::topo {

struct SwitchModel {
  const char* id;         ///< catalog id, lower case: "quantum-2"
  const char* name;       ///< "NVIDIA Quantum-2 (NDR 400 Gb/s InfiniBand): QM9700, QM9790"
  const char* link_layer; ///< "ib" or "ethernet" (RoCE)
  const char* generation; ///< link generation or Ethernet rate class: "HDR", "NDR", "XDR", "200GbE", ...
  double latency_ns;      ///< port-to-port (cut-through) latency
  bool assumed;           ///< true when no datasheet value was found: `source` says what it was taken from
  const char* source;     ///< where the value comes from
  /// Lower-case names and part numbers that select this model (`--switch-model`) and that identify it in a
  /// NodeDescription (matched as substrings of the description's model field).
  std::vector<std::string_view> names;

  Time latency() const { return Time::from_ns(latency_ns); }
};

/// Every model, IB first.
const std::vector<SwitchModel>& switch_models();
/// The model `name` selects (its id or one of its names: "quantum-2", "qm9700", "MQM9700", "sn4600";
/// case-insensitive), or nullptr.
const SwitchModel* find_switch_model(std::string_view name);
/// As find_switch_model, but an unknown name is an InputError naming `what` and listing the known models.
const SwitchModel& switch_model_or_throw(std::string_view name, const std::string& what);
/// The model a switch's NodeDescription names, or nullptr. "MF0;host:MODEL/U1" is read by its MODEL field
/// first (a host name is not taken for a model), then the whole description ("Quantum-2 Mellanox
/// Technologies").
const SwitchModel* infer_switch_model(std::string_view description);
/// "quantum, quantum-2, quantum-x800, spectrum-2, spectrum-3, spectrum-4" (for messages).
std::string switch_model_ids();

class Fabric;
/// Per-tier model names: "quantum-2" (every switch) or "leaf=spectrum-3,spine=spectrum-4,core=..." (tiers 1,
/// 2, 3; any subset; tiers not named keep their model). Sets Node::switch_model of the switches (and
/// routers) of `f`; unknown names are InputErrors naming `what` and listing the known models.
void apply_switch_models(Fabric& f, const std::string& spec, const std::string& what);

} // namespace ibn::topo
