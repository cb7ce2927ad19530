// describe(): per-tier oversubscription, bisection by max-flow, diameter and path diversity on hand-built
// fabrics whose answers have closed forms (model-reference.md §6).
#include "hand_fabrics.hpp"

#include "sim/error.hpp"
#include "topology/describe.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

namespace ibn::topo {
namespace {

using testing::Cabler;
using testing::make_hca;
using testing::make_switch;
using testing::three_tier;
using testing::two_tier;
using testing::TwoTierSpec;

constexpr double kNdrGbps = 400.0; // 4x NDR data rate

/// A copy of `f` with the speed of link `id` replaced.
Fabric with_speed(const Fabric& f, LinkId id, LinkSpeed speed) {
  Fabric g;
  g.name = f.name;
  g.origin = f.origin;
  for (const Node& n : f.nodes()) g.add_node(n);
  for (LinkId i = 0; i < f.num_links(); ++i) {
    Link l = f.link(i);
    if (i == id) l.speed = speed;
    g.add_link(l);
  }
  return g;
}

/// `n` switches in a ring, one HCA on each.
Fabric ring(int n) {
  Fabric f;
  f.name = "ring";
  std::vector<NodeId> sw;
  for (int i = 0; i < n; ++i) sw.push_back(f.add_node(make_switch("s" + std::to_string(i), 3, 1)));
  Cabler c(f);
  for (int i = 0; i < n; ++i) {
    const NodeId h = f.add_node(make_hca("h" + std::to_string(i), i));
    c.cable(h, sw[static_cast<std::size_t>(i)], {Generation::NDR, 4});
  }
  for (int i = 0; i < n; ++i)
    c.cable(sw[static_cast<std::size_t>(i)], sw[static_cast<std::size_t>((i + 1) % n)], {Generation::NDR, 4});
  return f;
}

const TierSummary& tier(const FabricSummary& s, int t) {
  const auto it =
      std::find_if(s.per_tier.begin(), s.per_tier.end(), [&](const TierSummary& x) { return x.tier == t; });
  REQUIRE(it != s.per_tier.end());
  return *it;
}

} // namespace

TEST_CASE("describe: 2-tier 2:1 tree, 4 leaves x 4 hosts, 2 spines") {
  // d = 4 hosts and u = 2 uplinks per leaf at b = 400 Gb/s: r = d/u = 2.
  // Bisection (§6.2) = N·b/(2r) = 16·400/4 = 1600 Gb/s; diameter HCA-leaf-spine-leaf-HCA = 4 cables;
  // minimal paths between leaves = spines x (parallel cables per leaf-spine pair)^2 = 2.
  const FabricSummary s = describe(two_tier({}));
  CHECK(s.name == "two-tier");
  CHECK(s.hosts == 16);
  CHECK(s.hcas == 16);
  CHECK(s.switches == 6);
  CHECK(s.links == 24);
  CHECK(s.tiers == 2);
  REQUIRE(s.per_tier.size() == 2);
  CHECK(s.per_tier[0].tier == 1);
  CHECK(s.per_tier[0].switches == 4);
  CHECK(s.per_tier[0].down_ports == 16);
  CHECK(s.per_tier[0].up_ports == 8);
  CHECK(s.per_tier[0].lateral_ports == 0);
  REQUIRE(s.per_tier[0].oversubscription.has_value());
  CHECK(*s.per_tier[0].oversubscription == doctest::Approx(2.0));
  CHECK(s.per_tier[1].tier == 2);
  CHECK(s.per_tier[1].switches == 2);
  CHECK(s.per_tier[1].down_ports == 8);
  CHECK(s.per_tier[1].up_ports == 0);
  CHECK_FALSE(s.per_tier[1].oversubscription.has_value());
  CHECK(s.bisection_gbps == doctest::Approx(1600.0));
  CHECK_FALSE(s.bisection_closed_form_gbps.has_value());
  CHECK(s.diameter_hops == 4);
  CHECK(s.path_diversity_min == 2);
  CHECK(s.path_diversity_mean == doctest::Approx(2.0));
  CHECK(s.path_diversity_max == 2);
  CHECK(s.degraded_links == 0);
  CHECK(s.connected);
}

TEST_CASE("describe: 2-tier trees match the closed form N·b/(2·max(r,1)), diversity = spines x cables^2") {
  struct Case {
    int leaves, hosts, spines, cables;
  };
  for (const Case& c : {Case{4, 4, 2, 2}, Case{2, 8, 2, 1}, Case{6, 6, 3, 1}, Case{4, 3, 3, 1},
                        Case{8, 2, 4, 1}, Case{2, 5, 1, 3}, Case{6, 12, 4, 2}}) {
    TwoTierSpec spec;
    spec.leaves = c.leaves;
    spec.hosts_per_leaf = c.hosts;
    spec.spines = c.spines;
    spec.cables_per_pair = c.cables;
    CAPTURE(c.leaves);
    CAPTURE(c.hosts);
    CAPTURE(c.spines);
    CAPTURE(c.cables);
    const FabricSummary s = describe(two_tier(spec));
    const double n = c.leaves * c.hosts, up = c.spines * c.cables, r = c.hosts / up;
    CHECK(s.bisection_gbps == doctest::Approx(n * kNdrGbps / (2 * std::max(r, 1.0))));
    CHECK(*tier(s, 1).oversubscription == doctest::Approx(r));
    CHECK(tier(s, 1).up_ports == static_cast<std::size_t>(c.leaves * up));
    CHECK(tier(s, 2).down_ports == static_cast<std::size_t>(c.leaves * up));
    CHECK(s.diameter_hops == 4);
    // Distinct cable sequences leaf -> spine -> leaf: c up cables x c down cables per spine.
    CHECK(s.path_diversity_min == c.spines * c.cables * c.cables);
    CHECK(s.path_diversity_max == c.spines * c.cables * c.cables);
  }
}

TEST_CASE("describe: one slower cable is counted as degraded and changes oversubscription and bisection") {
  // Link 16 is the first leaf-spine cable (leaf0-spine0), after the 16 host cables.
  const Fabric base = two_tier({});
  REQUIRE(base.node(base.link(16).a.node).name == "leaf0");
  const FabricSummary s = describe(with_speed(base, 16, {Generation::HDR, 4}));
  CHECK(s.degraded_links == 1);
  // Tier 1: 16 x 400 down / (7 x 400 + 200) up = 6400 / 3000.
  CHECK(*tier(s, 1).oversubscription == doctest::Approx(6400.0 / 3000.0));
  CHECK(*tier(s, 1).oversubscription_max == doctest::Approx(1600.0 / 600.0)); // leaf0 alone
  // The first half (leaves 0, 1) can only send 600 + 800 Gb/s up.
  CHECK(s.bisection_gbps == doctest::Approx(1400.0));

  // A narrower host cable (2x instead of 4x) is degraded too.
  const FabricSummary h = describe(with_speed(base, 3, {Generation::NDR, 2}));
  CHECK(h.degraded_links == 1);
  CHECK(*tier(h, 1).oversubscription == doctest::Approx(6200.0 / 3200.0));
  CHECK(*tier(h, 1).oversubscription_max == doctest::Approx(2.0)); // leaves 1..3; leaf0 is 1400/800
  CHECK(h.bisection_gbps == doctest::Approx(1600.0));
}

TEST_CASE("describe: partly populated last leaf lowers the tier ratio but not the worst switch's") {
  // Leaves of 4 down : 2 up, the last leaf with only 2 hosts: tier = (4 + 4 + 2) x 400 / (6 x 400) = 10/6.
  Fabric f;
  std::vector<NodeId> leaves;
  for (int l = 0; l < 3; ++l) leaves.push_back(f.add_node(make_switch("leaf" + std::to_string(l), 6, 1)));
  const NodeId s0 = f.add_node(make_switch("spine0", 3, 2)), s1 = f.add_node(make_switch("spine1", 3, 2));
  Cabler c(f);
  for (int h = 0; h < 10; ++h)
    c.cable(f.add_node(make_hca("h" + std::to_string(h), h)), leaves[static_cast<std::size_t>(h / 4)],
            {Generation::NDR, 4});
  for (NodeId l : leaves)
    for (NodeId sp : {s0, s1}) c.cable(l, sp, {Generation::NDR, 4});
  const FabricSummary s = describe(f);
  CHECK(*tier(s, 1).oversubscription == doctest::Approx(10.0 / 6.0));
  CHECK(*tier(s, 1).oversubscription_max == doctest::Approx(2.0));
  CHECK_FALSE(tier(s, 2).oversubscription_max.has_value());
  // First half h0..h4 = leaf0 + h4 on leaf1: leaf0 sends 800 up, h4 400 (leaf1 has 800 up) = 1200.
  CHECK(s.bisection_gbps == doctest::Approx(1200.0));
}

TEST_CASE("describe: separate rail planes are not counted as disconnected") {
  // Two planes, each 2 leaves x 2 hosts under one spine (2:1); host h has HCA h-p0 on plane 0 and h-p1 on
  // plane 1 (host-major NodeId order, as the generator does). Per plane the first half of hosts sits on
  // leaf0, whose one 400 Gb/s uplink is the cut: 2 planes x 400 = 800 Gb/s.
  Fabric f;
  std::vector<NodeId> leaf;
  for (int p = 0; p < 2; ++p)
    for (int l = 0; l < 2; ++l) {
      Node n = make_switch("p" + std::to_string(p) + "-leaf" + std::to_string(l), 3, 1);
      n.plane = p;
      leaf.push_back(f.add_node(n));
    }
  std::vector<NodeId> spine;
  for (int p = 0; p < 2; ++p)
    spine.push_back(f.add_node(make_switch("p" + std::to_string(p) + "-spine", 2, 2)));
  Cabler c(f);
  for (int h = 0; h < 4; ++h)
    for (int p = 0; p < 2; ++p) {
      Node n = make_hca("h" + std::to_string(h) + "-p" + std::to_string(p), h);
      n.plane = p;
      c.cable(f.add_node(n), leaf[static_cast<std::size_t>(2 * p + h / 2)], {Generation::NDR, 4});
    }
  for (int p = 0; p < 2; ++p)
    for (int l = 0; l < 2; ++l)
      c.cable(leaf[static_cast<std::size_t>(2 * p + l)], spine[static_cast<std::size_t>(p)],
              {Generation::NDR, 4});
  const FabricSummary s = describe(f);
  CHECK(s.hosts == 4);
  CHECK(s.hcas == 8);
  CHECK(s.connected);
  CHECK(s.diameter_hops == 4);
  CHECK(s.path_diversity_min == 1);
  CHECK(s.path_diversity_max == 1);
  CHECK(s.bisection_gbps == doctest::Approx(800.0));
}

TEST_CASE("describe: ring of 4 switches") {
  // Opposite HCAs are 4 cables apart over 2 minimal paths, neighbours 3 cables over 1.
  // Per HCA: 2 neighbours (1 path) + 1 opposite (2 paths): mean = (2·1 + 2) / 3 = 4/3.
  // Bisection {h0,h1} | {h2,h3} cuts two ring cables: 800 Gb/s.
  const FabricSummary s = describe(ring(4));
  CHECK(s.diameter_hops == 4);
  CHECK(s.path_diversity_min == 1);
  CHECK(s.path_diversity_max == 2);
  CHECK(s.path_diversity_mean == doctest::Approx(4.0 / 3.0));
  CHECK(s.bisection_gbps == doctest::Approx(2 * kNdrGbps));
  REQUIRE(s.per_tier.size() == 1);
  CHECK(s.per_tier[0].lateral_ports == 8);
  CHECK(s.per_tier[0].down_ports == 4);
  CHECK_FALSE(s.per_tier[0].oversubscription.has_value());

  // Ring of 5: diameter 2 + 2 = 4; first half {h0,h1} | {h2,h3,h4} still cuts two cables.
  const FabricSummary s5 = describe(ring(5));
  CHECK(s5.diameter_hops == 4);
  CHECK(s5.path_diversity_max == 1);
  CHECK(s5.bisection_gbps == doctest::Approx(2 * kNdrGbps));
}

TEST_CASE("describe: parallel cables between two switches") {
  // Two HCAs on each of A and B; A-B joined by 3 parallel 4x HDR cables (600 Gb/s).
  // Bisection = min(2 x 400 host side, 600) = 600; every cross pair has 3 minimal paths of 3 cables.
  Fabric f;
  const NodeId a = f.add_node(make_switch("A", 8, 1)), b = f.add_node(make_switch("B", 8, 1));
  Cabler c(f);
  for (int i = 0; i < 4; ++i)
    c.cable(f.add_node(make_hca("h" + std::to_string(i), i)), i < 2 ? a : b, {Generation::NDR, 4});
  for (int i = 0; i < 3; ++i) c.cable(a, b, {Generation::HDR, 4});
  const FabricSummary s = describe(f);
  CHECK(s.bisection_gbps == doctest::Approx(600.0));
  CHECK(s.diameter_hops == 3);
  CHECK(s.path_diversity_min == 3);
  CHECK(s.path_diversity_max == 3);
  CHECK(s.per_tier[0].lateral_ports == 6);
  CHECK(s.degraded_links == 0); // the three lateral cables are all equally fast
}

TEST_CASE("describe: all HCAs on one switch, odd count") {
  // First half {h0,h1}, second half {h2,h3,h4} (the middle HCA goes second): 2 x 400 Gb/s.
  Fabric f;
  const NodeId sw = f.add_node(make_switch("sw", 8, 1));
  Cabler c(f);
  for (int i = 0; i < 5; ++i)
    c.cable(f.add_node(make_hca("h" + std::to_string(i), i)), sw, {Generation::NDR, 4});
  const FabricSummary s = describe(f);
  CHECK(s.bisection_gbps == doctest::Approx(800.0));
  CHECK(s.diameter_hops == 2);
  CHECK(s.path_diversity_min == 1);
  CHECK(s.path_diversity_mean == 1);
  CHECK(s.path_diversity_max == 1);
  CHECK(s.tiers == 1);
}

TEST_CASE("describe: back-to-back HCAs without a switch") {
  Fabric f;
  const NodeId a = f.add_node(make_hca("a", 0)), b = f.add_node(make_hca("b", 1));
  Cabler(f).cable(a, b, {Generation::HDR, 4});
  const FabricSummary s = describe(f);
  CHECK(s.hosts == 2);
  CHECK(s.switches == 0);
  CHECK(s.tiers == 0);
  CHECK(s.per_tier.empty());
  CHECK(s.bisection_gbps == doctest::Approx(200.0));
  CHECK(s.diameter_hops == 1);
  CHECK(s.path_diversity_min == 1);
  CHECK(s.path_diversity_max == 1);
  CHECK(s.connected);
}

TEST_CASE("describe: disconnected fabric") {
  Fabric f;
  const NodeId a = f.add_node(make_switch("A", 4, 1)), b = f.add_node(make_switch("B", 4, 1));
  Cabler c(f);
  for (int i = 0; i < 4; ++i)
    c.cable(f.add_node(make_hca("h" + std::to_string(i), i)), i < 2 ? a : b, {Generation::NDR, 4});
  const FabricSummary s = describe(f);
  CHECK_FALSE(s.connected);
  CHECK(s.bisection_gbps == 0);
  CHECK(s.diameter_hops == 2); // over reachable pairs
  CHECK(s.path_diversity_min == 0);
  CHECK(s.path_diversity_max == 0);
  CHECK(summary_to_json(s)["connected"] == false);
  CHECK(summary_to_text(s).find("some HCA pairs have no path") != std::string::npos);
}

TEST_CASE("describe: dual-homed HCA and aggregation node") {
  // Leaves L0, L1, L2 under spine S. w is cabled to L0 and L1, z to L2: w reaches z over
  // L0-S-L2 and L1-S-L2, 2 minimal paths of 4 cables. The SHARP aggregator on L2 is not a port of the tier.
  Fabric f;
  const NodeId l0 = f.add_node(make_switch("L0", 4, 1)), l1 = f.add_node(make_switch("L1", 4, 1)),
               l2 = f.add_node(make_switch("L2", 4, 1)), sp = f.add_node(make_switch("S", 4, 2));
  Node w = make_hca("w", 0);
  w.radix = 2;
  const NodeId hw = f.add_node(w), hz = f.add_node(make_hca("z", 1));
  Node agg;
  agg.kind = NodeKind::Aggregator;
  agg.name = "L2-an";
  const NodeId an = f.add_node(agg);
  Cabler c(f);
  c.cable(hw, l0, {Generation::NDR, 4});
  c.cable(hw, l1, {Generation::NDR, 4});
  c.cable(hz, l2, {Generation::NDR, 4});
  c.cable(an, l2, {Generation::NDR, 4});
  for (NodeId l : {l0, l1, l2}) c.cable(l, sp, {Generation::NDR, 4});
  const FabricSummary s = describe(f);
  CHECK(s.diameter_hops == 4);
  CHECK(s.path_diversity_min == 2);
  CHECK(s.path_diversity_max == 2);
  CHECK(s.bisection_gbps == doctest::Approx(400.0)); // z's single cable
  CHECK(tier(s, 1).down_ports == 3);                 // w twice, z; not the aggregator
  CHECK(*tier(s, 1).oversubscription == doctest::Approx(1.0));
}

TEST_CASE("describe: hand-built 3-tier radix-8 fat-tree") {
  // k = 4: 8 pods x 4 leaves x 4 hosts = 128 HCAs, 80 switches, 384 cables, non-blocking:
  // bisection N·b/2 = 25600 Gb/s, diameter 6. Minimal paths: same pod k = 4, across pods k^2 = 16.
  // Per HCA: 3 x 4 same-pod peers on other leaves, 7 x 16 in other pods: mean = (12·4 + 112·16) / 124.
  const FabricSummary s = describe(three_tier(8));
  CHECK(s.hcas == 128);
  CHECK(s.switches == 80);
  CHECK(s.links == 384);
  CHECK(s.tiers == 3);
  CHECK(s.bisection_gbps == doctest::Approx(128 * kNdrGbps / 2));
  CHECK(s.diameter_hops == 6);
  CHECK(s.path_diversity_min == 4);
  CHECK(s.path_diversity_max == 16);
  CHECK(s.path_diversity_mean == doctest::Approx((12.0 * 4 + 112.0 * 16) / 124.0));
  for (int t : {1, 2}) {
    CAPTURE(t);
    CHECK(tier(s, t).down_ports == 128);
    CHECK(tier(s, t).up_ports == 128);
    CHECK(*tier(s, t).oversubscription == doctest::Approx(1.0));
  }
  CHECK(tier(s, 3).switches == 16);
  CHECK(tier(s, 3).down_ports == 128);
  CHECK_FALSE(tier(s, 3).oversubscription.has_value());
}

TEST_CASE("max_flow_bps: switches as terminals, empty and overlapping sets") {
  const Fabric f = two_tier({});
  const NodeId spine0 = *f.find_node("spine0"), spine1 = *f.find_node("spine1"),
               leaf0 = *f.find_node("leaf0");
  // spine0 -> every leaf -> spine1: 4 x 400 Gb/s.
  CHECK(max_flow_bps(f, {spine0}, {spine1}) == doctest::Approx(4 * 400e9));
  // leaf0's 4 HCAs to spine0: leaf0's two uplinks, the second one reaching spine0 via spine1 and another
  // leaf.
  const std::vector<NodeId> hcas = f.hcas();
  const std::vector<NodeId> leaf0_hcas(hcas.begin(), hcas.begin() + 4);
  CHECK(max_flow_bps(f, leaf0_hcas, {spine0}) == doctest::Approx(2 * 400e9));
  CHECK(max_flow_bps(f, {}, {spine1}) == 0);
  CHECK(max_flow_bps(f, {spine0}, {}) == 0);
  CHECK_THROWS_AS(max_flow_bps(f, {leaf0, spine0}, {spine0}), InputError);
}

TEST_CASE("describe: closed form copied from origin, JSON and text output") {
  Fabric f = two_tier({});
  f.origin["bisection_closed_form_gbps"] = 1600.0;
  const FabricSummary s = describe(f);
  REQUIRE(s.bisection_closed_form_gbps.has_value());
  CHECK(*s.bisection_closed_form_gbps == 1600.0);

  const nlohmann::json j = summary_to_json(s);
  for (const char* key :
       {"hosts", "hcas", "switches", "links", "tiers", "per_tier", "bisection_gbps",
        "bisection_closed_form_gbps", "diameter_hops", "path_diversity", "degraded_links", "name"})
    CHECK_MESSAGE(j.contains(key), key);
  CHECK(j["hosts"] == 16);
  CHECK(j["tiers"] == 2);
  CHECK(j["per_tier"].size() == 2);
  CHECK(j["per_tier"][0]["tier"] == 1);
  CHECK(j["per_tier"][0]["down_ports"] == 16);
  CHECK(j["per_tier"][0]["up_ports"] == 8);
  CHECK(j["per_tier"][0]["lateral_ports"] == 0);
  CHECK(j["per_tier"][0]["oversubscription"].get<double>() == doctest::Approx(2.0));
  CHECK(j["per_tier"][0]["oversubscription_max"].get<double>() == doctest::Approx(2.0));
  CHECK(j["per_tier"][1]["oversubscription"].is_null());
  CHECK(j["per_tier"][1]["oversubscription_max"].is_null());
  CHECK(j["bisection_gbps"].get<double>() == doctest::Approx(1600.0));
  CHECK(j["diameter_hops"] == 4);
  CHECK(j["path_diversity"]["min"] == 2.0);
  CHECK(j["path_diversity"]["mean"] == 2.0);
  CHECK(j["path_diversity"]["max"] == 2.0);
  CHECK_FALSE(summary_to_json(describe(two_tier({}))).contains("bisection_closed_form_gbps"));

  const std::string text = summary_to_text(s);
  CHECK(text.find("bisection         1600 Gb/s per direction (closed form 1600 Gb/s)") != std::string::npos);
  CHECK(text.find("diameter          4 hops") != std::string::npos);
  CHECK(text.find("path diversity    min 2, mean 2, max 2") != std::string::npos);
  CHECK(text.find("oversubscription") != std::string::npos);
  CHECK(text.find("2:1           2:1\n") != std::string::npos);
}

} // namespace ibn::topo
