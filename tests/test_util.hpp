#pragma once
// Small helpers shared by the test programs.
#include "sim/error.hpp"

#include "topology/fabric.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>

namespace ibn::test {

/// Runs `fn` and returns the message of the InputError it throws, or "" when it throws none.
template <typename F> std::string error_of(F&& fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

/// Whether `text` holds `part` (a CLI output holds a message).
inline bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// The whole file as bytes; throws std::runtime_error naming a missing file (the test case then fails).
inline std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline nlohmann::json read_json_file(const std::string& path) { return nlohmann::json::parse(read_text_file(path)); }

/// The p50 completion time (us) of the first collective of a results.json.
inline double first_p50_us(const std::string& results_json) {
  return read_json_file(results_json).at("collectives").at(0).at("completion_us").at("p50").get<double>();
}

/// A node for hand-built fabrics in tests.
inline topo::NodeId add_node(topo::Fabric& f, topo::NodeKind kind, const std::string& name, int radix, int tier,
                             int host = -1) {
  topo::Node n;
  n.kind = kind;
  n.name = name;
  n.radix = radix;
  n.tier = tier;
  n.host = host;
  return f.add_node(n);
}

} // namespace ibn::test
