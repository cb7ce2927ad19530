#pragma once
// Fabric serialisation: JSON (lossless round trip, with a schema version) and Graphviz DOT (for viewing).
//
// JSON layout (schema "ibnetsim.fabric", schema_version 1):
//   {"schema": "ibnetsim.fabric", "schema_version": 1, "name": "...", "origin": {...generator params...},
//    "nodes": [{"kind": "switch", "name": "...", "guid": "0x...", "radix": 64, "tier": 1, "host": -1,
//               "plane": 0, "group": -1, "lid": 0, "description": ""}, ...],   // index in the array = NodeId
//    "links": [{"a": [node, port], "b": [node, port], "speed": "4xNDR", "length_m": 3.0,
//               "medium": "dac", "latency_ps": 14280}, ...]}                      // index = LinkId
// Reading rejects unknown keys, missing keys, wrong types and inconsistent values with an InputError
// naming the file and the JSON path (e.g. "fabric.json: links[12].a: port 70 is outside 1..64").
// Required keys: top level schema, schema_version, nodes, links; node kind, name, radix, tier; link a, b,
// speed. The others default as in Node/Link: name "", origin {}, guid 0, host -1, plane 0, group -1, lid 0,
// description "", length_m 1, medium dac up to kDacMaxLengthM and fiber beyond, latency_ps from length and
// medium. A latency_ps that is given is kept as is (it may come from a calibration); it must be >= 0.
// schema_version is checked before anything else, so a newer file gets "schema_version N is not supported".
// After loading, Fabric::validate() runs; its errors are prefixed with the file name.
// Writing is deterministic (same fabric, same bytes): header keys in the order above, then one node or
// link per line with keys in the documented order; GUIDs as "0x%016x".
#include "topology/fabric.hpp"

#include <iosfwd>
#include <string>
#include <vector>

namespace ibn::topo {

inline constexpr int kFabricSchemaVersion = 1;

nlohmann::json fabric_to_json(const Fabric& f);
/// `source` names the file in error messages. With `warnings`, a fabric that is not connected loads and the
/// reason is added there (as an ibnetdiscover import does); without, it is refused.
Fabric fabric_from_json(const nlohmann::json& j, const std::string& source,
                        std::vector<std::string>* warnings = nullptr);

void save_fabric_json(const Fabric& f, std::ostream& out);
/// Reads a fabric JSON file; malformed JSON is reported with its line and column. `warnings`: as
/// fabric_from_json.
Fabric load_fabric_json(const std::string& path, std::vector<std::string>* warnings = nullptr);

/// Graphviz DOT: one node per switch/HCA (shape by kind, rank by tier), one edge per cable labelled by speed.
void save_fabric_dot(const Fabric& f, std::ostream& out);

} // namespace ibn::topo
