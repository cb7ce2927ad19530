// Fabric JSON round trip and validation, DOT export.
#include "hand_fabrics.hpp"

#include "sim/error.hpp"
#include "topology/describe.hpp"
#include "topology/fabric_io.hpp"
#include "topology/generators.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace ibn::topo {
namespace {

using testing::Cabler;
using testing::make_hca;
using testing::make_switch;

/// A small fabric that uses every field: guids, lids, descriptions, groups, planes, a router, an
/// aggregator, parallel cables, both media, and a latency that does not follow from the length.
Fabric sample_fabric() {
  Fabric f;
  f.name = "sample \"quoted\" fabric";
  f.origin = {{"generator", "hand"},
              {"params", {{"leaves", 2}, {"ratio", "2:1"}}},
              {"bisection_closed_form_gbps", 800.0}};
  Node l0 = make_switch("leaf0", 8, 1);
  l0.guid = 0x0002c90300a1b2c3ull;
  l0.lid = 17;
  l0.description = "MF0;leaf0:MQM9700/U1";
  l0.group = 0;
  const NodeId leaf0 = f.add_node(l0);
  Node l1 = make_switch("leaf1", 8, 1);
  l1.guid = 0xffffffffffffffffull;
  l1.group = 1;
  const NodeId leaf1 = f.add_node(l1);
  Node sp = make_switch("spine0", 8, 2);
  const NodeId spine = f.add_node(sp);
  Node rt = make_switch("router0", 4, 3);
  rt.kind = NodeKind::Router;
  const NodeId router = f.add_node(rt);
  Node agg;
  agg.kind = NodeKind::Aggregator;
  agg.name = "leaf0-sharp";
  const NodeId an = f.add_node(agg);
  std::vector<NodeId> h;
  for (int i = 0; i < 4; ++i) {
    Node n = make_hca("host" + std::to_string(i / 2) + "-mlx5_" + std::to_string(i % 2), i / 2);
    n.plane = i % 2;
    n.guid = 0x1000 + static_cast<std::uint64_t>(i);
    n.description = "host" + std::to_string(i / 2) + " mlx5_" + std::to_string(i % 2);
    h.push_back(f.add_node(n));
  }
  Cabler c(f);
  c.cable(h[0], leaf0, LinkSpeed{Generation::NDR, 4}, 2.5);
  c.cable(h[1], leaf0, LinkSpeed{Generation::NDR, 2}, 3);
  c.cable(h[2], leaf1, LinkSpeed{Generation::HDR, 4}, 0.5);
  c.cable(h[3], leaf1, LinkSpeed{Generation::NDR, 4}, 3);
  c.cable(leaf0, spine, LinkSpeed{Generation::NDR, 4}, 30);
  c.cable(leaf0, spine, LinkSpeed{Generation::NDR, 4}, 30); // parallel cable
  c.cable(leaf1, spine, LinkSpeed{Generation::NDR, 4}, 30.25);
  c.cable(spine, router, LinkSpeed{Generation::FDR, 4}, 100);
  c.cable(an, leaf0, LinkSpeed{Generation::NDR, 4}, 0.1);
  return f;
}

/// The same fabric but with a calibrated latency on one cable (not length x ps/m).
Fabric sample_fabric_with_calibrated_latency() {
  Fabric f;
  const Fabric base = sample_fabric();
  f.name = base.name;
  f.origin = base.origin;
  for (const Node& n : base.nodes()) f.add_node(n);
  for (LinkId i = 0; i < base.num_links(); ++i) {
    Link l = base.link(i);
    if (i == 4) l.latency = Time::ps(123457);
    f.add_link(l);
  }
  return f;
}

std::string save(const Fabric& f) {
  std::ostringstream s;
  save_fabric_json(f, s);
  return s.str();
}

void check_same(const Fabric& a, const Fabric& b) {
  CHECK(a.name == b.name);
  CHECK(a.origin == b.origin);
  REQUIRE(a.num_nodes() == b.num_nodes());
  REQUIRE(a.num_links() == b.num_links());
  for (NodeId i = 0; i < a.num_nodes(); ++i) {
    CAPTURE(i);
    const Node &x = a.node(i), &y = b.node(i);
    CHECK(x.kind == y.kind);
    CHECK(x.name == y.name);
    CHECK(x.guid == y.guid);
    CHECK(x.radix == y.radix);
    CHECK(x.tier == y.tier);
    CHECK(x.host == y.host);
    CHECK(x.plane == y.plane);
    CHECK(x.group == y.group);
    CHECK(x.lid == y.lid);
    CHECK(x.description == y.description);
  }
  for (LinkId i = 0; i < a.num_links(); ++i) {
    CAPTURE(i);
    const Link &x = a.link(i), &y = b.link(i);
    CHECK(x.a == y.a);
    CHECK(x.b == y.b);
    CHECK(x.speed == y.speed);
    CHECK(x.length_m == y.length_m); // exact: doubles are written with round-trip precision
    CHECK(x.medium == y.medium);
    CHECK(x.latency == y.latency);
  }
}

/// A temporary file removed at scope exit.
struct TempFile {
  std::filesystem::path path;
  explicit TempFile(const std::string& stem) {
    path = std::filesystem::temp_directory_path() /
           (stem + "-" + std::to_string(reinterpret_cast<std::uintptr_t>(this)) + ".json");
  }
  void write(const std::string& text) const {
    std::ofstream out(path, std::ios::binary);
    out << text;
  }
  ~TempFile() {
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
};

/// fabric_from_json(j, "f.json") must throw an InputError starting with "f.json: " and containing `needle`.
void check_rejected(const nlohmann::json& j, const std::string& needle) {
  CAPTURE(needle);
  try {
    (void)fabric_from_json(j, "f.json");
    FAIL("accepted: " << needle);
  } catch (const InputError& e) {
    const std::string msg = e.what();
    CAPTURE(msg);
    CHECK(msg.rfind("f.json: ", 0) == 0);
    CHECK(msg.find(needle) != std::string::npos);
  }
}

} // namespace

TEST_CASE("fabric JSON: save/load round trip keeps every field, re-save is byte-identical") {
  const Fabric f = sample_fabric_with_calibrated_latency();
  const std::string text = save(f);

  SUBCASE("through text") {
    const Fabric g = fabric_from_json(nlohmann::json::parse(text), "mem.json");
    check_same(f, g);
    CHECK(save(g) == text);
  }
  SUBCASE("through a file") {
    TempFile tmp("ibnetsim-io-roundtrip");
    tmp.write(text);
    const Fabric g = load_fabric_json(tmp.path.string());
    check_same(f, g);
    CHECK(save(g) == text);
  }
  SUBCASE("through fabric_to_json") {
    const Fabric g = fabric_from_json(fabric_to_json(f), "mem.json");
    check_same(f, g);
    CHECK(fabric_to_json(g) == fabric_to_json(f));
    CHECK(fabric_to_json(f) == nlohmann::json::parse(text)); // the file and the DOM agree
  }
}

TEST_CASE("fabric JSON: documented layout") {
  const Fabric f = sample_fabric_with_calibrated_latency();
  const nlohmann::json j = fabric_to_json(f);
  CHECK(j["schema"] == "ibnetsim.fabric");
  CHECK(j["schema_version"] == kFabricSchemaVersion);
  CHECK(j["origin"]["params"]["ratio"] == "2:1");
  CHECK(j["nodes"].size() == f.num_nodes());
  CHECK(j["links"].size() == f.num_links());
  CHECK(j["nodes"][0]["guid"] == "0x0002c90300a1b2c3");
  CHECK(j["nodes"][1]["guid"] == "0xffffffffffffffff");
  CHECK(j["nodes"][2]["guid"] == "0x0000000000000000");
  CHECK(j["nodes"][3]["kind"] == "router");
  CHECK(j["nodes"][4]["kind"] == "aggregator");
  CHECK(j["nodes"][5]["kind"] == "hca");
  // 2.5 m of DAC = 2.5 x 4760 ps; cable 4 keeps its calibrated latency.
  CHECK(j["links"][0]["latency_ps"] == 11900);
  CHECK(j["links"][0]["a"] == nlohmann::json::array({5, 1}));
  CHECK(j["links"][0]["speed"] == "4xNDR");
  CHECK(j["links"][1]["speed"] == "2xNDR");
  CHECK(j["links"][4]["latency_ps"] == 123457);
  CHECK(j["links"][4]["medium"] == "fiber");

  // One node or link per line, keys in the documented order, header keys first.
  const std::string text = save(f);
  CHECK(text.rfind("{\n  \"schema\": \"ibnetsim.fabric\",\n  \"schema_version\": 1,\n  \"name\": ", 0) == 0);
  CHECK(text.find(
            "\n    {\"kind\":\"switch\",\"name\":\"leaf0\",\"guid\":\"0x0002c90300a1b2c3\",\"radix\":8,") !=
        std::string::npos);
  CHECK(text.find("\n    {\"a\":[5,1],\"b\":[0,1],\"speed\":\"4xNDR\",\"length_m\":2.5,\"medium\":\"dac\","
                  "\"latency_ps\":11900}") != std::string::npos);
  CHECK(text.back() == '\n');
}

TEST_CASE("fabric JSON: optional keys take the documented defaults") {
  const nlohmann::json j = nlohmann::json::parse(R"({
    "schema": "ibnetsim.fabric", "schema_version": 1,
    "nodes": [{"kind": "switch", "name": "sw", "radix": 4, "tier": 1},
              {"kind": "hca", "name": "a", "radix": 1, "tier": 0},
              {"kind": "hca", "name": "b", "radix": 1, "tier": 0}],
    "links": [{"a": [1, 1], "b": [0, 1], "speed": "NDR"},
              {"a": [2, 1], "b": [0, 4], "speed": "HDR100", "length_m": 20}]})");
  const Fabric f = fabric_from_json(j, "mini.json");
  CHECK(f.name.empty());
  CHECK(f.origin == nlohmann::json::object());
  CHECK(f.node(0).guid == 0);
  CHECK(f.node(0).host == -1);
  CHECK(f.node(0).group == -1);
  CHECK(f.node(1).description.empty());
  CHECK(f.link(0).length_m == 1.0);
  CHECK(f.link(0).medium == Medium::Dac);
  CHECK(f.link(0).latency == Time::ps(4760)); // 1 m DAC
  CHECK(f.link(1).speed == LinkSpeed{Generation::HDR, 2});
  CHECK(f.link(1).medium == Medium::Fiber);     // longer than 5 m
  CHECK(f.link(1).latency == Time::ps(102600)); // 20 m x 5130 ps/m
  CHECK(f.link_at(0, 4) == LinkId{1});
}

TEST_CASE("fabric JSON: every bad input is an InputError naming the file and the JSON path") {
  const nlohmann::json good = fabric_to_json(sample_fabric());
  REQUIRE_NOTHROW((void)fabric_from_json(good, "f.json"));
  auto with = [&](auto edit) {
    nlohmann::json j = good;
    edit(j);
    return j;
  };

  check_rejected(with([](auto& j) { j["schema_version"] = 2; }),
                 "f.json: schema_version 2 is not supported (this build reads 1)");
  check_rejected(with([](auto& j) { j["schema_version"] = "1"; }), "schema_version: expected an integer");
  check_rejected(with([](auto& j) { j["schema"] = "other"; }),
                 "f.json: schema: expected \"ibnetsim.fabric\"");
  check_rejected(with([](auto& j) { j.erase("schema"); }), "f.json: missing key 'schema'");
  check_rejected(with([](auto& j) { j.erase("links"); }), "f.json: missing key 'links'");
  check_rejected(with([](auto& j) { j["extra"] = 1; }), "f.json: unknown key 'extra'");
  check_rejected(with([](auto& j) { j["origin"] = 3; }), "f.json: origin: expected a JSON object");
  check_rejected(with([](auto& j) { j["nodes"] = nlohmann::json::object(); }),
                 "f.json: nodes: expected an array");
  check_rejected(nlohmann::json::array(), "expected a JSON object at the top level");

  // Nodes.
  check_rejected(with([](auto& j) { j["nodes"][3]["radix"] = "64"; }),
                 "f.json: nodes[3].radix: expected a positive integer");
  check_rejected(with([](auto& j) { j["nodes"][3]["radix"] = 0; }),
                 "f.json: nodes[3].radix: expected a positive integer");
  check_rejected(with([](auto& j) { j["nodes"][3]["radix"] = 4.5; }),
                 "nodes[3].radix: expected a positive integer");
  check_rejected(with([](auto& j) { j["nodes"][2]["colour"] = "red"; }),
                 "f.json: nodes[2]: unknown key 'colour'");
  check_rejected(with([](auto& j) { j["nodes"][0].erase("kind"); }), "f.json: nodes[0]: missing key 'kind'");
  check_rejected(with([](auto& j) { j["nodes"][0]["kind"] = "bridge"; }),
                 "nodes[0].kind: unknown node kind 'bridge'");
  check_rejected(with([](auto& j) { j["nodes"][0]["guid"] = "0xzz"; }),
                 "nodes[0].guid: expected a hexadecimal GUID");
  check_rejected(with([](auto& j) { j["nodes"][0]["guid"] = 17; }), "nodes[0].guid: expected a string");
  check_rejected(with([](auto& j) { j["nodes"][0]["guid"] = "0x12345678901234567"; }), "nodes[0].guid");
  check_rejected(with([](auto& j) { j["nodes"][0]["lid"] = 70000; }),
                 "nodes[0].lid: expected an integer in 0..49151");
  check_rejected(with([](auto& j) { j["nodes"][5]["host"] = -2; }),
                 "nodes[5].host: expected an integer >= -1");
  check_rejected(with([](auto& j) { j["nodes"][5]["tier"] = -1; }),
                 "nodes[5].tier: expected a non-negative integer");
  check_rejected(with([](auto& j) { j["nodes"][1]["name"] = ""; }),
                 "nodes[1].name: expected a non-empty string");
  check_rejected(with([](auto& j) { j["nodes"][1]["name"] = "leaf0"; }), "node name 'leaf0' is used twice");
  check_rejected(with([](auto& j) { j["nodes"][1] = 5; }), "f.json: nodes[1]: expected a JSON object");

  // Links.
  check_rejected(with([](auto& j) { j["links"][12 % j["links"].size()]["colour"] = "red"; }),
                 "f.json: links[3]: unknown key 'colour'");
  check_rejected(with([](auto& j) {
                   j["links"][4]["a"] = nlohmann::json::array({0, 70});
                 }),
                 "f.json: links[4].a: port 70 is outside 1..8 of node 'leaf0'");
  check_rejected(with([](auto& j) {
                   j["links"][4]["a"] = nlohmann::json::array({0, 0});
                 }),
                 "links[4].a: port 0 is outside 1..8");
  check_rejected(with([](auto& j) {
                   j["links"][4]["b"] = nlohmann::json::array({99, 1});
                 }),
                 "links[4].b: node 99 does not exist");
  check_rejected(with([](auto& j) { j["links"][4]["b"] = nlohmann::json::array({2}); }),
                 "links[4].b: expected [node, port]");
  check_rejected(with([](auto& j) { j["links"][1]["b"] = j["links"][0]["b"]; }),
                 "f.json: links[1].b: port 1 of node 'leaf0' is already cabled by links[0]");
  check_rejected(with([](auto& j) {
                   j["links"][4]["b"] = nlohmann::json::array({0, 7});
                 }),
                 "links[4]: both ends are on node 'leaf0' (self-loop cable)");
  check_rejected(with([](auto& j) { j["links"][2]["latency_ps"] = -5; }),
                 "f.json: links[2].latency_ps: expected a non-negative integer");
  check_rejected(with([](auto& j) { j["links"][2]["length_m"] = -1.0; }),
                 "links[2].length_m: expected a non-negative number");
  check_rejected(with([](auto& j) { j["links"][2]["speed"] = "GDR"; }),
                 "f.json: links[2].speed: unknown link generation 'GDR'");
  check_rejected(with([](auto& j) { j["links"][2]["speed"] = 400; }), "links[2].speed: expected a string");
  check_rejected(with([](auto& j) { j["links"][2]["medium"] = "carrier-pigeon"; }),
                 "links[2].medium: unknown cable medium 'carrier-pigeon'");
  check_rejected(with([](auto& j) { j["links"][2].erase("speed"); }),
                 "f.json: links[2]: missing key 'speed'");
  // The file parses but describes a broken fabric: validate() runs after loading.
  check_rejected(with([](auto& j) { j["links"].erase(7); }), "fabric is not connected");
}

TEST_CASE("fabric JSON files: missing file and malformed JSON with line and column") {
  CHECK_THROWS_WITH_AS((void)load_fabric_json("/nonexistent/dir/fabric.json"),
                       doctest::Contains("/nonexistent/dir/fabric.json: cannot open"), InputError);

  const std::string dir = std::filesystem::temp_directory_path().string();
  CHECK_THROWS_WITH_AS((void)load_fabric_json(dir), doctest::Contains("is a directory"), InputError);

  TempFile tmp("ibnetsim-io-bad");
  const std::string p = tmp.path.string();
  // Line 4, column 23 is the second comma.
  tmp.write("{\n  \"schema\": \"ibnetsim.fabric\",\n  \"nodes\": [\n    {\"kind\": \"switch\",, \"name\": "
            "\"x\"}\n");
  try {
    (void)load_fabric_json(p);
    FAIL("malformed JSON accepted");
  } catch (const InputError& e) {
    const std::string msg = e.what();
    CAPTURE(msg);
    CHECK(msg.rfind(p + ":4:23: invalid JSON: ", 0) == 0);
    CHECK(msg.find("[json.exception") == std::string::npos);
  }
  // Truncated file: the error is at the end.
  tmp.write("{\n  \"schema\": \"ibnetsim.fabric\",\n");
  const std::string truncated = p + ":3:1: invalid JSON";
  CHECK_THROWS_WITH_AS((void)load_fabric_json(p), doctest::Contains(truncated.c_str()), InputError);
  // Well-formed JSON with a bad value names the file and the path.
  Fabric f = sample_fabric();
  nlohmann::json j = fabric_to_json(f);
  j["nodes"][3]["radix"] = -4;
  tmp.write(j.dump(2));
  const std::string bad_radix = p + ": nodes[3].radix: expected a positive integer (at most 65535), got -4";
  CHECK_THROWS_WITH_AS((void)load_fabric_json(p), doctest::Contains(bad_radix.c_str()), InputError);
}

TEST_CASE("fabric DOT: tiers on one rank, HCAs as boxes, one edge per cable") {
  const Fabric f = sample_fabric();
  std::ostringstream s;
  save_fabric_dot(f, s);
  const std::string dot = s.str();
  CHECK(dot.rfind("graph \"sample \\\"quoted\\\" fabric\" {\n", 0) == 0);
  CHECK(dot.back() == '\n');
  std::size_t edges = 0, ranks = 0;
  for (std::size_t p = dot.find(" -- "); p != std::string::npos; p = dot.find(" -- ", p + 1)) ++edges;
  for (std::size_t p = dot.find("rank=same"); p != std::string::npos; p = dot.find("rank=same", p + 1))
    ++ranks;
  CHECK(edges == f.num_links()); // the two parallel leaf0-spine0 cables are two edges
  CHECK(ranks == 4);             // tiers 0, 1, 2, 3
  CHECK(dot.find("n5 [label=\"host0-mlx5_0\", shape=box") != std::string::npos);
  CHECK(dot.find("n0 [label=\"leaf0\", shape=ellipse") != std::string::npos);
  CHECK(dot.find("n0 -- n2 [label=\"4xNDR\"];\n  n0 -- n2 [label=\"4xNDR\"];") != std::string::npos);
  CHECK(dot.find("n2 -- n3 [label=\"4xFDR\"]") != std::string::npos);
}

TEST_CASE("fabric JSON: generated fabrics survive save/load with the same description") {
  std::vector<Fabric> fabrics;
  FatTreeParams ft3;
  ft3.tiers = 3;
  ft3.radix = 8;
  ft3.oversubscription = {{3, 1}, {1, 1}};
  fabrics.push_back(build_fat_tree(ft3));
  FatTreeParams ft2;
  ft2.radix = 16;
  ft2.hosts = 40;
  ft2.oversubscription = {{1, 1}};
  ft2.speed = {Generation::HDR, 2};
  fabrics.push_back(build_fat_tree(ft2));
  DragonflyParams df;
  df.a = 4;
  df.p = 2;
  df.h = 2;
  df.g = 9;
  fabrics.push_back(build_dragonfly(df));
  for (const Fabric& f : fabrics) {
    CAPTURE(f.name);
    const std::string text = save(f);
    const Fabric g = fabric_from_json(nlohmann::json::parse(text), "gen.json");
    check_same(f, g);
    CHECK(save(g) == text);
    CHECK(summary_to_json(describe(g)) == summary_to_json(describe(f)));
  }
}

} // namespace ibn::topo
