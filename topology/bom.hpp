#pragma once
// Bill of materials of a fabric (docs/planning.md): switches per tier and model, ports used and free, cables
// per tier by medium class (DAC, ACC, fibre with a transceiver at each end), transceivers (a twin-port OSFP
// cage on a switch takes one module for both its ports), NICs, cost and power, priced from a parts catalog.
//
// Catalog (data/catalog/parts.json, user-editable): lists `switches`, `nics`, `cables`, `transceivers`; every
// numeric figure of an entry has `sources.<figure>` = {source, date[, estimate]}. An entry without a source
// for one of its figures, an unknown key or a negative figure is refused (InputError naming the file and
// entry).
//
// Rules
// - Tiers: a switch's tier is Node::tier (leaf 1, spine 2, core 3). The cables of a tier are those from its
//   switches down: leaf = node-leaf (host) cables, spine = leaf-spine, core = spine-core (the layout of
//   NVIDIA's SuperPOD tables).
// - Cable class by length: the shortest-reach catalog cable whose max_length_m >= the link's length (DAC,
// then
//   ACC, then fibre). A link on the catalog cable `fibre` needs a transceiver at each end: on a switch, one
//   module per cage with any fibre port (ports_per_cage ports share it); on an HCA, one single-port module.
// - Switch model: BomOptions::switch_model when given, else the catalog part of the switch's own
//   Node::switch_model (topology/switch_models.hpp id; the part with the switch's radix first, with at least
//   its cabled ports; none: a warning, then by radix), else the catalog switch with ports == radix at the
//   fabric's rate (then ports >= radix at that rate). NIC model likewise by rate; none found -> NICs are
//   counted, not priced (a warning says so).
// - Ports: the model's. A tier's `ports` = model ports x switches, `ports_free` = model ports - cabled ports
//   (not the fabric's radix); a model with fewer ports than a switch's cables is an InputError.
// - Cost = switches + NICs + cables (+ per metre) + transceivers; power = switches (typical) + NICs +
//   transceivers + active cables.
#include "topology/fabric.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ibn::topo {

struct PartSource {
  std::string source, date;
  bool estimate = false;
};

struct Part {
  std::string kind; ///< switch, nic, cable, transceiver
  std::string model, name, rate;
  int ports = 0, ports_per_cage = 1;
  double power_w = 0, price_usd = 0;
  double max_length_m = 0, price_per_m_usd = 0; ///< cables
  std::map<std::string, PartSource> sources;    ///< figure -> source
  double rate_gbps() const;                     ///< 0 when no rate is given
};

struct Catalog {
  std::string file;
  std::vector<Part> switches, nics, cables, transceivers;

  /// Parses and checks a catalog document; `where` names it in errors.
  static Catalog parse(const nlohmann::json& doc, const std::string& where);
  static Catalog load(const std::string& path);
  const Part* find(const std::vector<Part>& list, const std::string& model) const;
};

/// The default catalog's path: $IBNETSIM_CATALOG, else data/catalog/parts.json next to or above the binary,
/// else in the source tree the binary was built from (`source_dir`).
std::string default_catalog_path(const std::string& exe_path, const std::string& source_dir);

struct BomOptions {
  std::string switch_model; ///< "" = by radix and rate
  std::string nic_model;    ///< "" = by rate
};

struct BomTier {
  std::string tier; ///< leaf, spine, core (or "tier-N")
  int index = 0;
  std::int64_t switches = 0, ports = 0, ports_used = 0, ports_free = 0;
  std::map<std::string, std::int64_t> switches_by_model;
  std::int64_t cables = 0; ///< from this tier down
  std::map<std::string, std::int64_t> cables_by_class;
  double cable_m = 0;
  std::int64_t transceivers = 0; ///< on this tier's switches
};

struct BomLine {
  std::string item, model, tier;
  std::int64_t count = 0;
  double unit_price_usd = 0, cost_usd = 0, unit_power_w = 0, power_w = 0;
  double metres = 0;
  bool estimate = false;
};

struct Bom {
  std::vector<BomTier> tiers;
  std::vector<BomLine> lines;
  std::int64_t switches = 0, cables = 0, transceivers = 0, nics = 0, spare_ports = 0;
  double cost_usd = 0, power_w = 0;
  bool prices_estimated = false;
  std::vector<std::string> warnings;
  std::string catalog;
};

Bom bill_of_materials(const Fabric& f, const Catalog& c, const BomOptions& opt = {});

/// JSON per CLI.md: switches, cables, transceivers, cost_usd, power_w, by_tier[{tier, switches, cables,
/// ...}], lines, warnings.
nlohmann::json bom_to_json(const Bom& b);
std::string bom_to_text(const Bom& b);
std::string bom_to_csv(const Bom& b);

} // namespace ibn::topo
