// ibnetdiscover import/export against the real captures in tests/data/ibnetdiscover (see
// tests/data/SOURCES.md) and small hand-written inputs for the edge cases.
#include "sim/error.hpp"
#include "topology/ibnetdiscover.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace {

using ibn::InputError;
using namespace ibn::topo;

const std::string kDir = std::string(IBNETSIM_TEST_DATA) + "/ibnetdiscover/";
const std::string kSx6036 = kDir + "sx6036-qdr-fdr10-2014-ibnetdiscover.txt";
const std::string kQm9700 = kDir + "qm9700-ndr200-redacted-snippet-charlie0129.txt";
const std::string kEdr = kDir + "edr-ports-snippet-treydock-test.out.txt";
const std::string kHdr = kDir + "hdr-ports-snippet-treydock-test2.out.txt";

ImportResult import_text(const std::string& text, const std::string& source = "t.txt") {
  std::istringstream in(text);
  return import_ibnetdiscover(in, source);
}

std::string export_text(const Fabric& f) {
  std::ostringstream out;
  export_ibnetdiscover(f, out);
  return out.str();
}

/// The message of the InputError `fn` throws ("" if it throws none).
template <typename Fn> std::string error_of(Fn fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

bool has_warning(const ImportResult& r, const std::string& part) {
  return std::any_of(r.warnings.begin(), r.warnings.end(),
                     [&](const std::string& w) { return w.find(part) != std::string::npos; });
}

const std::string* warning_with(const ImportResult& r, const std::string& part) {
  for (const auto& w : r.warnings)
    if (w.find(part) != std::string::npos) return &w;
  return nullptr;
}

NodeId node_named(const Fabric& f, const std::string& name) {
  const auto id = f.find_node(name);
  REQUIRE_MESSAGE(id.has_value(), "no node named '" << name << "'");
  return *id;
}

struct CableCounts {
  int hca = 0;
  int sw = 0;
};
CableCounts cables_of(const Fabric& f, NodeId n) {
  CableCounts c;
  for (LinkId l : f.links_of(n)) {
    const NodeKind k = f.node(f.link(l).other(n)).kind;
    if (k == NodeKind::Hca)
      ++c.hca;
    else if (k == NodeKind::Switch || k == NodeKind::Router)
      ++c.sw;
  }
  return c;
}

using CableKey = std::tuple<std::string, int, std::string, int, std::string>;
/// Cables by endpoint names, ports and speed, independent of NodeId/LinkId order.
std::multiset<CableKey> cable_set(const Fabric& f) {
  std::multiset<CableKey> s;
  for (const Link& l : f.links()) {
    auto a = std::make_pair(f.node(l.a.node).name, l.a.port);
    auto b = std::make_pair(f.node(l.b.node).name, l.b.port);
    if (b < a) std::swap(a, b);
    s.insert({a.first, a.second, b.first, b.second, l.speed.to_string()});
  }
  return s;
}

/// import(export(f)) equals f in everything the format (plus our annotations) carries.
void check_same_fabric(const Fabric& a, const Fabric& b) {
  REQUIRE(a.num_nodes() == b.num_nodes());
  REQUIRE(a.num_links() == b.num_links());
  for (const Node& n : a.nodes()) {
    CAPTURE(n.name);
    const NodeId j = node_named(b, n.name);
    const Node& m = b.node(j);
    CHECK(m.kind == n.kind);
    CHECK(m.guid == n.guid);
    CHECK(m.tier == n.tier);
    CHECK(m.description == n.description);
    CHECK(m.host == n.host);
    CHECK(m.plane == n.plane);
    CHECK(m.group == n.group);
    CHECK(m.lid == n.lid);
    CHECK(m.radix == n.radix);
  }
  CHECK(cable_set(a) == cable_set(b));
}

} // namespace

TEST_CASE(
    "ibnetdiscover: sx6036 fabric (8 SX6036, 144 CAs, QDR hosts, FDR10 trunks) imports with its structure") {
  const ImportResult r = import_ibnetdiscover_file(kSx6036);
  const Fabric& f = r.fabric;

  // 8 "Switch 36" blocks, 144 "Ca" blocks; tank1's CA has both ports cabled (to ib7 ports 9 and 12), so 145
  // HCA nodes of 144 servers.
  CHECK(f.switches().size() == 8);
  for (NodeId s : f.switches()) {
    CHECK(f.node(s).kind == NodeKind::Switch);
    CHECK(f.node(s).radix == 36);
  }
  CHECK(f.hcas().size() == 145);
  CHECK(f.num_hosts() == 144);
  CHECK(f.num_nodes() == 153);

  // Each cable appears twice in the file: 290 "4xQDR" and 94 "4xFDR10" port lines (grep -c) -> 145 + 47.
  REQUIRE(f.num_links() == 192);
  int qdr = 0, fdr10 = 0;
  for (const Link& l : f.links()) {
    const bool host_cable = f.node(l.a.node).kind == NodeKind::Hca || f.node(l.b.node).kind == NodeKind::Hca;
    if (host_cable) {
      CHECK(l.speed == LinkSpeed{Generation::QDR, 4});
      CHECK(l.medium == Medium::Dac);
      CHECK(l.length_m == doctest::Approx(3.0));
      ++qdr;
    } else {
      CHECK(l.speed == LinkSpeed{Generation::FDR10, 4});
      CHECK(l.medium == Medium::Fiber);
      CHECK(l.length_m == doctest::Approx(30.0));
      ++fdr10;
    }
  }
  CHECK(qdr == 145);
  CHECK(fdr10 == 47);

  // Leaves as cabled in this capture: ib2..ib5 24 hosts + 8 uplinks; ib1 has only 7 uplinks (its port 25 is
  // not listed) and ib6 22 hosts (ports 9, 13, 17 and 19 empty).
  const std::map<std::string, CableCounts> expected{{"ib1", {24, 7}}, {"ib2", {24, 8}}, {"ib3", {24, 8}},
                                                    {"ib4", {24, 8}}, {"ib5", {24, 8}}, {"ib6", {22, 8}},
                                                    {"ib7", {3, 24}}, {"ib8", {0, 23}}};
  for (const auto& [sw, counts] : expected) {
    CAPTURE(sw);
    const NodeId s = node_named(f, "MF0;" + sw + ":SX6036/U1");
    const CableCounts c = cables_of(f, s);
    CHECK(c.hca == counts.hca);
    CHECK(c.sw == counts.sw);
    CHECK(f.node(s).tier == (sw == "ib7" || sw == "ib8" ? 2 : 1));
  }
  CHECK(f.max_tier() == 2);

  // ib7 has HCAs but acts as a spine: placed at tier 2, with a warning naming it.
  const std::string* w = warning_with(r, "MF0;ib7:SX6036/U1");
  REQUIRE(w != nullptr);
  CHECK(w->find("spine") != std::string::npos);
  CHECK(w->find("tier 2") != std::string::npos);
  CHECK_FALSE(has_warning(r, "not connected"));
  CHECK_FALSE(has_warning(r, "truncated"));

  // GUIDs, LIDs, descriptions, hosts.
  const NodeId ib5 = node_named(f, "MF0;ib5:SX6036/U1");
  CHECK(f.node(ib5).guid == 0xf4521403001165a0ull);
  CHECK(f.node(ib5).lid == 128);
  CHECK(f.node(ib5).host == -1);
  const NodeId stage97 = node_named(f, "stage97 mlx4_0");
  CHECK(f.node(stage97).kind == NodeKind::Hca);
  CHECK(f.node(stage97).guid == 0x24be05ffff985d90ull);
  CHECK(f.node(stage97).lid == 121);
  CHECK(f.node(stage97).radix == 1);
  CHECK(f.node(stage97).tier == 0);
  // stage97 is on ib5 port 32 (seen from both ends).
  const auto l97 = f.link_at(ib5, 32);
  REQUIRE(l97.has_value());
  CHECK(f.link(*l97).other(ib5) == stage97);
  CHECK(f.link_at(stage97, 1) == l97);

  // tank1: one dual-port CA, both ports cabled -> two nodes, one host, names told apart by GUID and port.
  const NodeId t1p1 = node_named(f, "tank1 mlx4_0 (0xf452140300081a20) port 1");
  const NodeId t1p2 = node_named(f, "tank1 mlx4_0 (0xf452140300081a20) port 2");
  CHECK(f.node(t1p1).host == f.node(t1p2).host);
  CHECK(f.node(t1p1).guid == f.node(t1p2).guid);
  CHECK(f.node(t1p1).lid == 13);
  CHECK(f.node(t1p2).lid == 10);
  const NodeId ib7 = node_named(f, "MF0;ib7:SX6036/U1");
  REQUIRE(f.link_at(ib7, 12).has_value());
  CHECK(f.link(*f.link_at(ib7, 12)).other(ib7) == t1p1);
  REQUIRE(f.link_at(ib7, 9).has_value());
  CHECK(f.link(*f.link_at(ib7, 9)).other(ib7) == t1p2);
  CHECK(f.node(node_named(f, "tank2 mlx4_0")).host != f.node(t1p1).host);

  // booster1 is cabled on CA port 2: still one node, cabled on its port 1, on ib6 port 5.
  const NodeId booster1 = node_named(f, "booster1 mlx4_0");
  const NodeId ib6 = node_named(f, "MF0;ib6:SX6036/U1");
  REQUIRE(f.link_at(booster1, 1).has_value());
  CHECK(f.link(*f.link_at(booster1, 1)).other(booster1) == ib6);
  CHECK(f.link_at(ib6, 5) == f.link_at(booster1, 1));
}

TEST_CASE("ibnetdiscover: QM9700 snippet with redacted GUIDs and '...omitted'") {
  const ImportResult r = import_ibnetdiscover_file(kQm9700);
  const Fabric& f = r.fabric;
  REQUIRE(f.switches().size() == 1);
  const NodeId sw = f.switches().front();
  CHECK(f.node(sw).name == "MF0;CNTSN-POD229-QM97-IB-02:MQM9700/U1");
  CHECK(f.node(sw).radix == 129);
  CHECK(f.node(sw).guid == 0); // redacted
  CHECK(f.node(sw).lid == 1);
  CHECK(f.node(sw).tier == 1);

  // The five listed hosts, at 2xNDR on ports 1, 2, 3, 4 and 6 (port 5 is not listed).
  const std::map<int, std::pair<std::string, int>> hosts{{1, {"tj01-4090-node005 mlx5_2", 22}},
                                                         {2, {"tj01-4090-node004 mlx5_2", 27}},
                                                         {3, {"tj01-4090-node006 mlx5_2", 10}},
                                                         {4, {"tj01-4090-node007 mlx5_2", 12}},
                                                         {6, {"tj01-4090-node009 mlx5_2", 11}}};
  CHECK(f.hcas().size() == 5);
  CHECK(f.num_hosts() == 5);
  CHECK(f.num_links() == 5);
  CHECK_FALSE(f.link_at(sw, 5).has_value());
  for (const auto& [port, host] : hosts) {
    CAPTURE(port);
    const auto l = f.link_at(sw, port);
    REQUIRE(l.has_value());
    const NodeId h = f.link(*l).other(sw);
    CHECK(f.node(h).name == host.first);
    CHECK(f.node(h).lid == host.second);
    CHECK(f.node(h).guid == 0);
    CHECK(f.node(h).kind == NodeKind::Hca);
    CHECK(f.link(*l).speed == LinkSpeed{Generation::NDR, 2});
  }
  // "H-946d<redacted>" is printed for three different adapters: they stay three nodes.
  std::set<NodeId> redacted946d;
  for (int port : {2, 4, 6}) redacted946d.insert(f.link(*f.link_at(sw, port)).other(sw));
  CHECK(redacted946d.size() == 3);

  // The same cable seen again from the adapter's own block (redacted on both ends) is not a second cable.
  std::ifstream in(kQm9700, std::ios::binary);
  const std::string fixture((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string more = fixture +
                           "\ncaguid=0xb83f<redacted>\nCa\t1 \"H-b83f<redacted>\"\t\t# \"tj01-4090-node005 "
                           "mlx5_2\"\n[1](b83f<redacted>) \t\"S-9c05<redacted>\"[1]\t\t# lid 22 lmc 0 "
                           "\"MF0;CNTSN-POD229-QM97-IB-02:MQM9700/U1\" lid 1 2xNDR\n";
  const ImportResult both = import_text(more, "qm.txt");
  CHECK(both.fabric.num_nodes() == 6);
  CHECK(both.fabric.num_links() == 5);
  CHECK(has_warning(both, "4 node(s) have no block of their own"));

  // The prompt line before the output is prose; "...omitted" (line 17) is reported as truncation.
  const std::string* w = warning_with(r, kQm9700 + ":17:");
  REQUIRE(w != nullptr);
  CHECK(w->find("...omitted") != std::string::npos);
  CHECK(w->find("truncated") != std::string::npos);
  CHECK_FALSE(has_warning(r, "not connected"));
}

TEST_CASE("ibnetdiscover: EDR ports-format snippet (two islands, unconnected and down ports)") {
  const ImportResult r = import_ibnetdiscover_file(kEdr);
  const Fabric& f = r.fabric;
  // 9 lines: 3 cables seen from both ends, 1 seen once, 2 unconnected ports ("???" and a down SDR port).
  CHECK(f.num_links() == 4);
  for (const Link& l : f.links()) CHECK(l.speed == LinkSpeed{Generation::EDR, 4});
  CHECK(f.hcas().size() == 3);
  CHECK(f.switches().size() == 4);
  CHECK(f.num_hosts() == 3);

  const NodeId l1 = node_named(f, "ib-i1l1s01");
  CHECK(f.node(l1).lid == 1719);
  CHECK(f.node(l1).guid == 0x7cfe9003009ce5b0ull);
  CHECK(f.node(l1).radix == 11); // ports format: the highest port seen
  CHECK(f.node(l1).tier == 1);
  CHECK(f.node(node_named(f, "ib-i1l2s01")).tier == 2);
  const NodeId o1 = node_named(f, "o0001 HCA-1");
  CHECK(f.node(o1).lid == 134);
  CHECK(f.node(o1).guid == 0x7cfe9003003b4bdeull);
  REQUIRE(f.link_at(l1, 10).has_value());
  CHECK(f.link(*f.link_at(l1, 10)).other(l1) == o1);
  CHECK(f.node(o1).host != f.node(node_named(f, "o0002 HCA-1")).host);

  // The "???" port 37 and the down port 80 exist (radix) but are no cables.
  const NodeId i4 = node_named(f, "ib-i4l1s01");
  CHECK(f.node(i4).radix == 37);
  CHECK_FALSE(f.link_at(i4, 37).has_value());
  CHECK(f.link_at(i4, 35).has_value());
  const NodeId i7 = node_named(f, "ib-i7l2s01");
  CHECK(f.node(i7).radix == 80);
  CHECK(f.links_of(i7).empty());

  // Islands {o0001, o0002, i1l1, i1l2}, {p0001, i4l1} and the lone switch i7l2: a warning, not an error.
  const std::string* w = warning_with(r, "not connected");
  REQUIRE(w != nullptr);
  CHECK(w->find("3 connected components") != std::string::npos);
  CHECK(has_warning(r, "no path to an HCA"));
}

TEST_CASE("ibnetdiscover: HDR ports-format snippet (SHARP aggregation node, padded names)") {
  const ImportResult r = import_ibnetdiscover_file(kHdr);
  const Fabric& f = r.fabric;
  // Names are trimmed: '5FB0405-leaf-IB01 ', ' 5FB0406-spine-IB02 ', ' 5FB0406-spine-IB03 '.
  const NodeId leaf = node_named(f, "5FB0405-leaf-IB01");
  const NodeId spine3 = node_named(f, "5FB0406-spine-IB03");
  CHECK(f.find_node("5FB0406-spine-IB01").has_value());
  CHECK(f.find_node("5FB0406-spine-IB02").has_value());
  CHECK(f.node(node_named(f, "Infiniscale-IV Mellanox Technologies")).radix == 22);
  CHECK(f.switches().size() == 5);

  // The SHARP aggregation node is not a host; worker20 is.
  const NodeId worker = node_named(f, "worker20 mlx5_3");
  CHECK(f.node(worker).kind == NodeKind::Hca);
  CHECK(f.node(worker).host >= 0);
  CHECK(f.hcas().size() == 1);
  CHECK(f.num_hosts() == 1);
  REQUIRE(f.link_at(leaf, 79).has_value());
  CHECK(f.link(*f.link_at(leaf, 79)).other(leaf) == worker);
  CHECK(f.link(*f.link_at(leaf, 79)).speed == LinkSpeed{Generation::HDR, 4});
  CHECK(f.node(leaf).tier == 1);

  // CA 0x946dae0300630bfe port 1 is reported on leaf port 81 (line 1) and on spine-IB03 port 81 (line 5):
  // a warning, and the second cable is kept on a second aggregation node with the same GUID.
  REQUIRE(f.link_at(leaf, 81).has_value());
  REQUIRE(f.link_at(spine3, 81).has_value());
  const NodeId agg1 = f.link(*f.link_at(leaf, 81)).other(leaf);
  const NodeId agg2 = f.link(*f.link_at(spine3, 81)).other(spine3);
  CHECK(agg1 != agg2);
  for (NodeId a : {agg1, agg2}) {
    CHECK(f.node(a).kind == NodeKind::Aggregator);
    CHECK(f.node(a).host == -1);
    CHECK(f.node(a).tier == 0);
    CHECK(f.node(a).guid == 0x946dae0300630bfeull);
    CHECK(f.node(a).description == "Mellanox Technologies Aggregation Node");
  }
  CHECK(f.node(agg1).lid == 78);
  CHECK(f.node(agg2).lid == 60);
  const std::string* w = warning_with(r, kHdr + ":5:");
  REQUIRE(w != nullptr);
  CHECK(w->find("already cabled") != std::string::npos);
  CHECK(f.num_links() == 3);
}

TEST_CASE("ibnetdiscover: export then import gives the same fabric (sx6036)") {
  const Fabric f = import_ibnetdiscover_file(kSx6036).fabric;
  const std::string text = export_text(f);
  // Plain ibnetdiscover format: switch headers and CA port lines as the tool prints them.
  CHECK(text.find(
            "Switch\t36 \"S-f4521403001165a0\"\t\t# \"MF0;ib5:SX6036/U1\" enhanced port 0 lid 128 lmc 0") !=
        std::string::npos);
  CHECK(text.find("caguid=0xf452140300081a20") != std::string::npos);
  CHECK(text.find("Ca\t2 \"H-f452140300081a20\"") != std::string::npos); // tank1: one CA with 2 ports

  const ImportResult back = import_text(text, "export.txt");
  check_same_fabric(f, back.fabric);
  CHECK(back.fabric.node(node_named(back.fabric, "MF0;ib7:SX6036/U1")).tier == 2);

  // Without our annotation comments it is still the same topology: kinds, GUIDs, tiers and cables.
  std::istringstream lines(text);
  std::string plain, line;
  while (std::getline(lines, line))
    if (line.rfind("# ibnetsim-node:", 0) != 0) plain += line + "\n";
  const Fabric g = import_text(plain, "plain.txt").fabric;
  check_same_fabric(f, g);
}

TEST_CASE("ibnetdiscover: every fixture survives export and re-import") {
  // Including redacted GUIDs (exported with synthetic ones, re-imported as 0), the duplicated aggregation
  // node of the HDR snippet, unconnected switches and disconnected islands.
  for (const std::string& path : {kSx6036, kQm9700, kEdr, kHdr}) {
    CAPTURE(path);
    const Fabric f = import_ibnetdiscover_file(path).fabric;
    const ImportResult back = import_text(export_text(f), "export.txt");
    check_same_fabric(f, back.fabric);
    CHECK_FALSE(has_warning(back, "already cabled"));
  }
}

TEST_CASE("ibnetdiscover: a generated-style fabric without GUIDs round trips") {
  // leaf-0/leaf-1 under spine-0, a router, two hosts with one HCA per rail, an aggregation node.
  Fabric f;
  f.name = "hand-built";
  auto sw = [&](const std::string& name, int tier) {
    Node n;
    n.kind = NodeKind::Switch;
    n.name = name;
    n.radix = 8;
    n.tier = tier;
    return f.add_node(n);
  };
  auto hca = [&](const std::string& name, int host, int plane) {
    Node n;
    n.kind = NodeKind::Hca;
    n.name = name;
    n.host = host;
    n.plane = plane;
    n.lid = 10 + host * 2 + plane;
    return f.add_node(n);
  };
  const NodeId leaf0 = sw("leaf-0", 1), leaf1 = sw("leaf-1", 1), spine0 = sw("spine-0", 2);
  Node rt;
  rt.kind = NodeKind::Router;
  rt.name = "router-0";
  rt.radix = 4;
  rt.tier = 3;
  rt.group = 5;
  rt.description = "gateway \"A\"";
  const NodeId router = f.add_node(rt);
  Node agg;
  agg.kind = NodeKind::Aggregator;
  agg.name = "sharp-0";
  const NodeId aggr = f.add_node(agg);
  const NodeId h0r0 = hca("host-0-hca-0", 0, 0), h0r1 = hca("host-0-hca-1", 0, 1);
  const NodeId h1r0 = hca("host-1-hca-0", 1, 0), h1r1 = hca("host-1-hca-1", 1, 1);
  const LinkSpeed ndr{Generation::NDR, 4}, hdr2{Generation::HDR, 2};
  f.add_link(make_link({h0r0, 1}, {leaf0, 1}, ndr, 3, Medium::Dac));
  f.add_link(make_link({h0r1, 1}, {leaf1, 1}, ndr, 3, Medium::Dac));
  f.add_link(make_link({h1r0, 1}, {leaf0, 2}, hdr2, 3, Medium::Dac)); // degraded host cable
  f.add_link(make_link({h1r1, 1}, {leaf1, 2}, ndr, 3, Medium::Dac));
  f.add_link(make_link({leaf0, 7}, {spine0, 1}, ndr, 30, Medium::Fiber));
  f.add_link(make_link({leaf0, 8}, {spine0, 2}, ndr, 30, Medium::Fiber)); // parallel cable
  f.add_link(make_link({leaf1, 8}, {spine0, 3}, ndr, 30, Medium::Fiber));
  f.add_link(make_link({spine0, 8}, {router, 4}, ndr, 30, Medium::Fiber));
  f.add_link(make_link({aggr, 1}, {spine0, 7}, ndr, 1, Medium::Dac));

  const std::string text = export_text(f);
  // Every device got a distinct synthetic GUID in the export.
  std::set<std::string> ids;
  for (const char* kind : {"Switch\t", "Ca\t", "Rt\t"}) {
    for (std::size_t p = text.find(kind); p != std::string::npos; p = text.find(kind, p + 1)) {
      const std::size_t q = text.find('"', p);
      ids.insert(text.substr(q + 1, 18));
    }
  }
  CHECK(ids.size() == f.num_nodes());
  CHECK(ids.count("S-0200000000000001") == 1);

  const ImportResult back = import_text(text, "gen.txt");
  check_same_fabric(f, back.fabric);
  CHECK(back.fabric.node(node_named(back.fabric, "leaf-0")).guid == 0);
  CHECK(back.fabric.node(node_named(back.fabric, "router-0")).description == "gateway \"A\"");
  CHECK(back.fabric.node(node_named(back.fabric, "sharp-0")).kind == NodeKind::Aggregator);
  CHECK_FALSE(has_warning(back, "not connected"));

  // And a second export of the re-imported fabric is byte-identical to the first (the fabric name in the
  // header comment is the import source, so align it first).
  Fabric again = back.fabric;
  again.name = f.name;
  CHECK(export_text(again) == text);
}

TEST_CASE("ibnetdiscover: tiers inferred from the distance to hosts") {
  // One host on leaf L; L - spine P - core C: tiers 1, 2, 3.
  const std::string text = "Switch 4 \"S-0000000000000001\" # \"L\" enhanced port 0 lid 1 lmc 0\n"
                           "[1] \"H-00000000000000a0\"[1](a1) # \"h1 mlx5_0\" lid 5 4xEDR\n"
                           "[2] \"S-0000000000000002\"[1] # \"P\" lid 2 4xEDR\n"
                           "\n"
                           "Switch 4 \"S-0000000000000002\" # \"P\" enhanced port 0 lid 2 lmc 0\n"
                           "[1] \"S-0000000000000001\"[2] # \"L\" lid 1 4xEDR\n"
                           "[2] \"S-0000000000000003\"[4] # \"C\" lid 3 4xEDR\n"
                           "\n";
  const ImportResult r = import_text(text);
  const Fabric& f = r.fabric;
  CHECK(f.node(node_named(f, "L")).tier == 1);
  CHECK(f.node(node_named(f, "P")).tier == 2);
  CHECK(f.node(node_named(f, "C")).tier == 3);
  CHECK(f.node(node_named(f, "h1 mlx5_0")).tier == 0);
  // C and h1 have no block of their own: created from the port lines (C's radix: the port seen, 4).
  CHECK(f.node(node_named(f, "C")).kind == NodeKind::Switch);
  CHECK(f.node(node_named(f, "C")).radix == 4);
  CHECK(has_warning(r, "2 node(s) have no block of their own"));
  CHECK(f.num_links() == 3);
}

TEST_CASE("ibnetdiscover: prose, CRLF, routers, degraded links, blocks cut short") {
  const std::string body = "user@login01:~$ sudo ibnetdiscover\n"
                           "Here is the output:\n"
                           "\n"
                           "switchguid=0x10(10)\n"
                           "Switch 8 \"S-0000000000000010\" # \"  sw-a  \" enhanced port 0 lid 7 lmc 0\n"
                           "[1] \"H-0000000000000100\"[1](101) # \"node1 mlx5_0\" lid 21 4xHDR\n"
                           "[2] \"H-0000000000000200\"[1](201) # \"node2 mlx5_0\" lid 22 1xHDR\n"
                           "[3] \"R-0000000000000300\"[2] # \"rt-1\" lid 30 4xHDR\n"
                           "# a comment inside the block\n"
                           "[4]\t\"S-0000000000000020\"[1]\t\t# \"sw-b\" lid 8 4x HDR\n"
                           "```\n"
                           "That was all.\n"
                           "\n"
                           "Switch 8 \"S-0000000000000020\" # \"sw-b\" enhanced port 0 lid 8 lmc 0\n";
  std::string crlf;
  for (char c : body) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  for (const std::string& text : {body, crlf}) {
    const ImportResult r = import_text(text, "p.txt");
    const Fabric& f = r.fabric;
    const NodeId a = node_named(f, "sw-a"); // trimmed
    CHECK(f.node(a).lid == 7);
    CHECK(f.num_links() == 4);
    // The degraded 1xHDR cable keeps its own speed beside its 4xHDR siblings.
    const NodeId n2 = node_named(f, "node2 mlx5_0");
    CHECK(f.link(*f.link_at(n2, 1)).speed == LinkSpeed{Generation::HDR, 1});
    CHECK(f.link(*f.link_at(a, 4)).speed == LinkSpeed{Generation::HDR, 4}); // "4x HDR"
    const NodeId rt = node_named(f, "rt-1");
    CHECK(f.node(rt).kind == NodeKind::Router);
    CHECK(f.node(rt).radix == 2);
    CHECK(f.link(*f.link_at(rt, 2)).other(rt) == a);
    // sw-b's block has no port lines: kept, with a warning naming its header line (14).
    const std::string* w = warning_with(r, "p.txt:14:");
    REQUIRE(w != nullptr);
    CHECK(w->find("no port lines") != std::string::npos);
    CHECK(f.link_at(node_named(f, "sw-b"), 1).has_value());
  }

  // A file cut off in the middle of its last line: the partial line is a warning, not an error.
  const std::string cut = "Switch 8 \"S-0000000000000010\" # \"sw-a\" enhanced port 0 lid 7 lmc 0\n"
                          "[1] \"H-0000000000000100\"[1](101) # \"node1 mlx5_0\" lid 21 4xHDR\n"
                          "[2] \"H-00000000000";
  const ImportResult r = import_text(cut, "cut.txt");
  CHECK(r.fabric.num_links() == 1);
  CHECK(has_warning(r, "cut.txt:3: last line is cut off"));
}

TEST_CASE("ibnetdiscover: bad input is an InputError naming the file and line") {
  const std::string good_header =
      "Switch 36 \"S-f4521403001165a0\"\t\t# \"sw\" enhanced port 0 lid 1 lmc 0\n";
  const std::string good_port =
      "[1]\t\"H-24be05ffff980030\"[1](24be05ffff980031) \t\t# \"h mlx4_0\" lid 105 4xQDR\n";

  SUBCASE("garbage line inside a Switch block") {
    const std::string msg = error_of(
        [&] { import_text("# comment\n" + good_header + good_port + "this is not a port\n", "bad.txt"); });
    CHECK(msg.find("bad.txt:4: cannot parse") != std::string::npos);
    CHECK(msg.find("this is not a port") != std::string::npos);
  }
  SUBCASE("malformed port line") {
    const std::string msg =
        error_of([&] { import_text(good_header + "[2] \"H-24be\"[x] # oops\n", "bad.txt"); });
    CHECK(msg.find("bad.txt:2: cannot parse port line") != std::string::npos);
  }
  SUBCASE("unknown speed names the line") {
    const std::string msg = error_of([&] {
      import_text(good_header + good_port + "[2]\t\"H-24be05ffff980040\"[1] # \"g mlx4_0\" lid 9 4xZZZ\n",
                  "s.txt");
    });
    CHECK(msg.find("s.txt:3:") != std::string::npos);
    CHECK(msg.find("ZZZ") != std::string::npos);
  }
  SUBCASE("unknown speed in the ports format") {
    const std::string msg =
        error_of([&] { import_text("CA 1 1 0x10 4x ZZZ - SW 2 3 0x20 ( 'h mlx5_0' - 'sw' )\n", "p.txt"); });
    CHECK(msg.find("p.txt:1:") != std::string::npos);
    CHECK(msg.find("ZZZ") != std::string::npos);
  }
  SUBCASE("empty input") {
    const std::string msg = error_of([&] { import_text("", "empty.txt"); });
    CHECK(msg.find("empty.txt") != std::string::npos);
    CHECK(msg.find("empty") != std::string::npos);
    CHECK(error_of([&] { import_text("\n  \r\n", "blank.txt"); }).find("blank.txt") != std::string::npos);
  }
  SUBCASE("text without any topology") {
    const std::string msg =
        error_of([&] { import_text("$ ibnetdiscover\nibwarn: no fabric\n", "none.txt"); });
    CHECK(msg.find("none.txt: no ibnetdiscover topology") != std::string::npos);
  }
  SUBCASE("missing file") {
    const std::string path = kDir + "does-not-exist.txt";
    const std::string msg = error_of([&] { import_ibnetdiscover_file(path); });
    CHECK(msg.find(path) != std::string::npos);
  }
}
