// Fabric JSON (schema "ibnetsim.fabric" v1) and Graphviz DOT writers, and the validating JSON reader.
#include "topology/fabric_io.hpp"

#include "sim/error.hpp"
#include "sim/json_text.hpp"
#include "topology/generators.hpp"
#include "topology/switch_models.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <ostream>
#include <sstream>
#include <string_view>

namespace ibn::topo {
namespace {

constexpr const char* kSchemaName = "ibnetsim.fabric";
constexpr int kMaxRadix = 65535;
constexpr int kMaxLid = 49151; // the largest unicast LID (0xBFFF)

// ---------------------------------------------------------------------------------------------------------
// Writing

std::string guid_string(std::uint64_t guid) {
  std::array<char, 24> buf{};
  std::snprintf(buf.data(), buf.size(), "0x%016llx", static_cast<unsigned long long>(guid));
  return buf.data();
}

/// One node as a JSON object, keys in the documented order (J = json or ordered_json).
template <typename J> J node_to_json(const Node& n) {
  J j = J::object();
  j["kind"] = to_string(n.kind);
  j["name"] = n.name;
  j["guid"] = guid_string(n.guid);
  j["radix"] = n.radix;
  j["tier"] = n.tier;
  j["host"] = n.host;
  j["plane"] = n.plane;
  j["group"] = n.group;
  j["lid"] = n.lid;
  j["description"] = n.description;
  if (!n.switch_model.empty()) j["switch_model"] = n.switch_model; // written only when set
  return j;
}

template <typename J> J link_to_json(const Link& l) {
  J j = J::object();
  j["a"] = J::array({l.a.node, l.a.port});
  j["b"] = J::array({l.b.node, l.b.port});
  j["speed"] = l.speed.to_string();
  j["length_m"] = l.length_m;
  j["medium"] = to_string(l.medium);
  j["latency_ps"] = l.latency.count_ps();
  return j;
}

template <typename J> std::string dump_line(const J& j) {
  // Invalid UTF-8 in names must not abort a save; it is replaced by U+FFFD.
  return j.dump(-1, ' ', false, J::error_handler_t::replace);
}

// ---------------------------------------------------------------------------------------------------------
// Reading

/// Reports errors as "SOURCE: PATH: message" and does the type/range checks of one JSON value.
class Reader {
 public:
  explicit Reader(const std::string& source) : source_(source) {}

  [[noreturn]] void fail(const std::string& path, const std::string& msg) const {
    if (path.empty()) throw InputError(source_ + ": " + msg);
    throw InputError(source_ + ": " + path + ": " + msg);
  }

  static std::string field(const std::string& path, std::string_view key) {
    if (path.empty()) return std::string(key);
    return path + "." + std::string(key);
  }

  /// A short rendering of a JSON value for error messages.
  static std::string show(const nlohmann::json& v) {
    std::string s = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (s.size() > 40) s = s.substr(0, 37) + "...";
    return s;
  }

  void expect_object(const nlohmann::json& j, const std::string& path) const {
    if (!j.is_object()) fail(path, "expected a JSON object, got " + show(j));
  }

  /// Rejects keys outside `allowed` and reports the first of `required` that is missing.
  template <std::size_t NA, std::size_t NR>
  void check_keys(const nlohmann::json& obj, const std::string& path,
                  const std::array<std::string_view, NA>& allowed,
                  const std::array<std::string_view, NR>& required) const {
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      if (std::find(allowed.begin(), allowed.end(), std::string_view(it.key())) == allowed.end()) {
        std::string known;
        for (auto k : allowed) known += (known.empty() ? "" : ", ") + std::string(k);
        fail(path, "unknown key '" + it.key() + "' (allowed: " + known + ")");
      }
    }
    for (auto k : required)
      if (!obj.contains(k)) fail(path, "missing key '" + std::string(k) + "'");
  }

  std::int64_t get_int(const nlohmann::json& obj, const std::string& path, std::string_view key,
                       std::int64_t lo, std::int64_t hi, const char* expected) const {
    const nlohmann::json& v = obj.find(key).value();
    if (v.is_number_unsigned()) {
      const auto u = v.get<std::uint64_t>();
      if (u <= static_cast<std::uint64_t>(hi) && static_cast<std::int64_t>(u) >= lo)
        return static_cast<std::int64_t>(u);
    } else if (v.is_number_integer()) {
      const auto i = v.get<std::int64_t>();
      if (i >= lo && i <= hi) return i;
    }
    fail(field(path, key), std::string("expected ") + expected + ", got " + show(v));
  }

  double get_number(const nlohmann::json& obj, const std::string& path, std::string_view key, double lo,
                    const char* expected) const {
    const nlohmann::json& v = obj.find(key).value();
    if (v.is_number()) {
      const double d = v.get<double>();
      if (std::isfinite(d) && d >= lo) return d;
    }
    fail(field(path, key), std::string("expected ") + expected + ", got " + show(v));
  }

  const std::string& get_string(const nlohmann::json& obj, const std::string& path,
                                std::string_view key) const {
    const nlohmann::json& v = obj.find(key).value();
    if (!v.is_string()) fail(field(path, key), "expected a string, got " + show(v));
    return v.get_ref<const std::string&>();
  }

  const std::string& source() const { return source_; }

 private:
  const std::string& source_;
};

std::optional<std::uint64_t> parse_guid(const std::string& s) {
  if (s.size() < 3 || s.size() > 18 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) return std::nullopt;
  std::uint64_t v = 0;
  for (std::size_t i = 2; i < s.size(); ++i) {
    const char c = s[i];
    int d = 0;
    if (c >= '0' && c <= '9')
      d = c - '0';
    else if (c >= 'a' && c <= 'f')
      d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      d = c - 'A' + 10;
    else
      return std::nullopt;
    v = (v << 4) | static_cast<std::uint64_t>(d);
  }
  return v;
}

std::optional<NodeKind> parse_kind(const std::string& s) {
  for (NodeKind k : {NodeKind::Hca, NodeKind::Switch, NodeKind::Router, NodeKind::Aggregator})
    if (to_string(k) == s) return k;
  return std::nullopt;
}

constexpr std::array<std::string_view, 6> kTopKeys{"schema", "schema_version", "name",
                                                   "origin", "nodes",          "links"};
constexpr std::array<std::string_view, 4> kTopRequired{"schema", "schema_version", "nodes", "links"};
constexpr std::array<std::string_view, 11> kNodeKeys{"kind", "name",  "guid",  "radix",       "tier",
                                                     "host", "plane", "group", "lid",         "description",
                                                     "switch_model"};
constexpr std::array<std::string_view, 4> kNodeRequired{"kind", "name", "radix", "tier"};
constexpr std::array<std::string_view, 6> kLinkKeys{"a", "b", "speed", "length_m", "medium", "latency_ps"};
constexpr std::array<std::string_view, 3> kLinkRequired{"a", "b", "speed"};

Node read_node(const Reader& r, const nlohmann::json& j, const std::string& path) {
  r.expect_object(j, path);
  r.check_keys(j, path, kNodeKeys, kNodeRequired);
  Node n;
  const std::string& kind = r.get_string(j, path, "kind");
  const auto k = parse_kind(kind);
  if (!k)
    r.fail(Reader::field(path, "kind"),
           "unknown node kind '" + kind + "' (expected hca, switch, router or aggregator)");
  n.kind = *k;
  n.name = r.get_string(j, path, "name");
  if (n.name.empty()) r.fail(Reader::field(path, "name"), "expected a non-empty string");
  n.radix = static_cast<int>(r.get_int(j, path, "radix", 1, kMaxRadix, "a positive integer (at most 65535)"));
  n.tier = static_cast<int>(r.get_int(j, path, "tier", 0, 64, "a non-negative integer (at most 64)"));
  if (j.contains("guid")) {
    const std::string& g = r.get_string(j, path, "guid");
    const auto v = parse_guid(g);
    if (!v)
      r.fail(Reader::field(path, "guid"),
             "expected a hexadecimal GUID like \"0x0002c90300a1b2c3\", got \"" + g + "\"");
    n.guid = *v;
  }
  constexpr auto kIntMax = std::numeric_limits<int>::max();
  if (j.contains("host"))
    n.host = static_cast<int>(r.get_int(j, path, "host", -1, kIntMax, "an integer >= -1"));
  if (j.contains("plane"))
    n.plane = static_cast<int>(r.get_int(j, path, "plane", 0, kIntMax, "a non-negative integer"));
  if (j.contains("group"))
    n.group = static_cast<int>(r.get_int(j, path, "group", -1, kIntMax, "an integer >= -1"));
  if (j.contains("lid"))
    n.lid = static_cast<int>(r.get_int(j, path, "lid", 0, kMaxLid, "an integer in 0..49151 (unicast LIDs)"));
  if (j.contains("description")) n.description = r.get_string(j, path, "description");
  if (j.contains("switch_model")) {
    const std::string& m = r.get_string(j, path, "switch_model");
    const SwitchModel* sm = find_switch_model(m);
    if (!sm)
      r.fail(Reader::field(path, "switch_model"),
             "unknown switch model '" + m + "' (known: " + switch_model_ids() + ")");
    n.switch_model = sm->id;
  }
  return n;
}

PortRef read_end(const Reader& r, const Fabric& f, const nlohmann::json& link, const std::string& path,
                 std::string_view key) {
  const nlohmann::json& v = link.find(key).value();
  const std::string p = Reader::field(path, key);
  if (!v.is_array() || v.size() != 2 || !v[0].is_number_integer() || !v[1].is_number_integer())
    r.fail(p, "expected [node, port] (two integers), got " + Reader::show(v));
  const auto node = v[0].get<std::int64_t>();
  const auto port = v[1].get<std::int64_t>();
  if (node < 0 || static_cast<std::uint64_t>(node) >= f.num_nodes())
    r.fail(p, "node " + std::to_string(node) + " does not exist (nodes are 0.." +
                  std::to_string(f.num_nodes()) + " exclusive)");
  const Node& n = f.node(static_cast<NodeId>(node));
  if (port < 1 || port > n.radix)
    r.fail(p, "port " + std::to_string(port) + " is outside 1.." + std::to_string(n.radix) + " of node '" +
                  n.name + "'");
  const PortRef ref{static_cast<NodeId>(node), static_cast<int>(port)};
  if (const auto other = f.link_at(ref.node, ref.port))
    r.fail(p, "port " + std::to_string(port) + " of node '" + n.name + "' is already cabled by links[" +
                  std::to_string(*other) + "]");
  return ref;
}

Link read_link(const Reader& r, const Fabric& f, const nlohmann::json& j, const std::string& path) {
  r.expect_object(j, path);
  r.check_keys(j, path, kLinkKeys, kLinkRequired);
  const PortRef a = read_end(r, f, j, path, "a");
  const PortRef b = read_end(r, f, j, path, "b");
  if (a.node == b.node) r.fail(path, "both ends are on node '" + f.node(a.node).name + "' (self-loop cable)");
  const LinkSpeed speed =
      parse_link_speed(r.get_string(j, path, "speed"), r.source() + ": " + Reader::field(path, "speed"));
  double length_m = 1.0;
  if (j.contains("length_m"))
    length_m = r.get_number(j, path, "length_m", 0.0, "a non-negative number of metres");
  if (length_m > kMaxCableLengthM)
    r.fail(Reader::field(path, "length_m"), "a cable of " + Reader::show(j["length_m"]) + " m is longer than " +
                                                "the longest modelled (" + std::to_string(static_cast<int>(kMaxCableLengthM)) + " m)");
  Medium medium = length_m <= kDacMaxLengthM ? Medium::Dac : Medium::Fiber;
  if (j.contains("medium"))
    medium = parse_medium(r.get_string(j, path, "medium"), r.source() + ": " + Reader::field(path, "medium"));
  Link l = make_link(a, b, speed, length_m, medium);
  // latency_ps is kept as given (it may come from a calibration); only its sign is checked.
  if (j.contains("latency_ps"))
    l.latency = Time::ps(r.get_int(j, path, "latency_ps", 0, std::numeric_limits<std::int64_t>::max(),
                                   "a non-negative integer (picoseconds)"));
  return l;
}

// DOT identifiers and labels: double-quoted with '"' and '\' escaped; control characters become spaces.
std::string dot_quote(const std::string& s) {
  std::string r = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') r += '\\';
    r += (static_cast<unsigned char>(c) < 0x20) ? ' ' : c;
  }
  r += '"';
  return r;
}

} // namespace

nlohmann::json fabric_to_json(const Fabric& f) {
  nlohmann::json j = nlohmann::json::object();
  j["schema"] = kSchemaName;
  j["schema_version"] = kFabricSchemaVersion;
  j["name"] = f.name;
  j["origin"] = f.origin;
  nlohmann::json nodes = nlohmann::json::array();
  nodes.get_ref<nlohmann::json::array_t&>().reserve(f.num_nodes());
  for (const Node& n : f.nodes()) nodes.push_back(node_to_json<nlohmann::json>(n));
  nlohmann::json links = nlohmann::json::array();
  links.get_ref<nlohmann::json::array_t&>().reserve(f.num_links());
  for (const Link& l : f.links()) links.push_back(link_to_json<nlohmann::json>(l));
  j["nodes"] = std::move(nodes);
  j["links"] = std::move(links);
  return j;
}

Fabric fabric_from_json(const nlohmann::json& j, const std::string& source, std::vector<std::string>* warnings) {
  const Reader r(source);
  if (!j.is_object()) r.fail("", "expected a JSON object at the top level, got " + Reader::show(j));
  // Schema and version first: a newer file may legitimately carry keys this build does not know.
  if (!j.contains("schema"))
    r.fail("", "missing key 'schema' (expected \"" + std::string(kSchemaName) + "\")");
  if (!j["schema"].is_string() || j["schema"].get_ref<const std::string&>() != kSchemaName)
    r.fail("schema", "expected \"" + std::string(kSchemaName) + "\", got " + Reader::show(j["schema"]));
  if (!j.contains("schema_version")) r.fail("", "missing key 'schema_version'");
  const nlohmann::json& ver = j["schema_version"];
  if (!ver.is_number_integer()) r.fail("schema_version", "expected an integer, got " + Reader::show(ver));
  if (ver.get<std::int64_t>() != kFabricSchemaVersion)
    r.fail("", "schema_version " + std::to_string(ver.get<std::int64_t>()) +
                   " is not supported (this build reads " + std::to_string(kFabricSchemaVersion) + ")");
  r.check_keys(j, "", kTopKeys, kTopRequired);

  Fabric f;
  if (j.contains("name")) f.name = r.get_string(j, "", "name");
  if (j.contains("origin")) {
    if (!j["origin"].is_object())
      r.fail("origin", "expected a JSON object, got " + Reader::show(j["origin"]));
    f.origin = j["origin"];
  }
  const nlohmann::json& nodes = j["nodes"];
  if (!nodes.is_array()) r.fail("nodes", "expected an array, got " + Reader::show(nodes));
  const nlohmann::json& links = j["links"];
  if (!links.is_array()) r.fail("links", "expected an array, got " + Reader::show(links));

  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const std::string path = "nodes[" + std::to_string(i) + "]";
    try {
      f.add_node(read_node(r, nodes[i], path));
    } catch (const InputError& e) {
      if (std::string_view(e.what()).starts_with(source + ": ")) throw;
      r.fail(path, e.what());
    }
  }
  for (std::size_t i = 0; i < links.size(); ++i) {
    const std::string path = "links[" + std::to_string(i) + "]";
    try {
      f.add_link(read_link(r, f, links[i], path));
    } catch (const InputError& e) {
      if (std::string_view(e.what()).starts_with(source + ": ")) throw;
      r.fail(path, e.what());
    }
  }
  try {
    f.validate();
  } catch (const InputError& e) {
    // Connectivity is validate()'s last check: a fabric with down cables or from a partial discovery
    // loads with a warning when the caller takes warnings, as an ibnetdiscover import does.
    if (warnings && std::string_view(e.what()).starts_with("fabric is not connected"))
      warnings->push_back(source + ": " + e.what());
    else
      r.fail("", e.what());
  }
  return f;
}

void save_fabric_json(const Fabric& f, std::ostream& out) {
  using OJ = nlohmann::ordered_json;
  std::string buf;
  buf.reserve(256 + 200 * (f.num_nodes() + f.num_links()));
  buf += "{\n  \"schema\": \"";
  buf += kSchemaName;
  buf += "\",\n  \"schema_version\": " + std::to_string(kFabricSchemaVersion) + ",\n";
  buf += "  \"name\": " + dump_line(nlohmann::json(f.name)) + ",\n";
  buf += "  \"origin\": " + dump_line(f.origin) + ",\n";
  buf += "  \"nodes\": [";
  for (std::size_t i = 0; i < f.num_nodes(); ++i) {
    buf += i == 0 ? "\n    " : ",\n    ";
    buf += dump_line(node_to_json<OJ>(f.nodes()[i]));
  }
  buf += f.num_nodes() == 0 ? "],\n" : "\n  ],\n";
  buf += "  \"links\": [";
  for (std::size_t i = 0; i < f.num_links(); ++i) {
    buf += i == 0 ? "\n    " : ",\n    ";
    buf += dump_line(link_to_json<OJ>(f.links()[i]));
  }
  buf += f.num_links() == 0 ? "]\n}\n" : "\n  ]\n}\n";
  out << buf;
}

Fabric load_fabric_json(const std::string& path, std::vector<std::string>* warnings) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(path + ": is a directory, not a fabric file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open fabric file");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw InputError(path + ": read error");
  const std::string text = std::move(ss).str();
  const nlohmann::json j = parse_json_text(text, path);
  return fabric_from_json(j, path, warnings);
}

void save_fabric_dot(const Fabric& f, std::ostream& out) {
  std::string buf;
  buf.reserve(256 + 64 * (f.num_nodes() + f.num_links()));
  buf += "graph " + dot_quote(f.name.empty() ? "fabric" : f.name) + " {\n";
  buf += "  graph [rankdir=BT, ranksep=1.2, nodesep=0.1, splines=false];\n";
  buf += "  node [fontsize=10];\n";
  buf += "  edge [fontsize=7, color=\"#555555\"];\n";
  // Nodes grouped by tier (tier 0 at the bottom), each group on one rank.
  std::vector<NodeId> order(f.num_nodes());
  for (NodeId i = 0; i < f.num_nodes(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](NodeId x, NodeId y) { return f.node(x).tier < f.node(y).tier; });
  for (std::size_t i = 0; i < order.size();) {
    const int tier = f.node(order[i]).tier;
    buf += "  subgraph \"tier" + std::to_string(tier) + "\" {\n    rank=same;\n";
    for (; i < order.size() && f.node(order[i]).tier == tier; ++i) {
      const NodeId id = order[i];
      const Node& n = f.node(id);
      buf += "    n" + std::to_string(id) + " [label=" + dot_quote(n.name);
      switch (n.kind) {
      case NodeKind::Hca:
        buf += ", shape=box, width=0.3, height=0.2, fontsize=7";
        break;
      case NodeKind::Switch:
        buf += ", shape=ellipse";
        break;
      case NodeKind::Router:
        buf += ", shape=hexagon";
        break;
      case NodeKind::Aggregator:
        buf += ", shape=box, style=dashed, width=0.3, height=0.2, fontsize=7";
        break;
      }
      buf += "];\n";
    }
    buf += "  }\n";
  }
  // One edge per cable: parallel cables stay separate edges.
  for (const Link& l : f.links())
    buf += "  n" + std::to_string(l.a.node) + " -- n" + std::to_string(l.b.node) +
           " [label=" + dot_quote(l.speed.to_string()) + "];\n";
  buf += "}\n";
  out << buf;
}

} // namespace ibn::topo
