// Generator invariants: counts, port use, oversubscription computed from the graph equals the request,
// bisection (max-flow) equals the closed form of model-reference.md §6, and impossible requests are refused.
#include "sim/error.hpp"
#include "topology/describe.hpp"
#include "topology/generators.hpp"

#include "tests/test_util.hpp"

#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>

using namespace ibn;
using namespace ibn::topo;

namespace {

FatTreeParams ft(int tiers, int radix, std::optional<std::int64_t> hosts, const std::string& ratios,
                 const std::string& rate = "NDR", int rails = 1) {
  FatTreeParams p;
  p.tiers = tiers;
  p.radix = radix;
  p.hosts = hosts;
  p.oversubscription = parse_ratios(ratios, "--oversubscription");
  p.speed = parse_link_speed(rate, "--rate");
  p.rails = rails;
  return p;
}

std::map<int, std::size_t> switches_per_tier(const Fabric& f) {
  std::map<int, std::size_t> m;
  for (NodeId n : f.switches()) ++m[f.node(n).tier];
  return m;
}

std::size_t used_ports(const Fabric& f, NodeId n) {
  return f.links_of(n).size();
}

using ibn::test::error_of;

} // namespace

TEST_CASE("fat-tree 2-tier non-blocking radix 64: 2(R/2)^2 hosts, (2L-1)(R/2)^(L-1) switches") {
  // model-reference.md §6.2: R=64, L=2 -> 2048 hosts, 3*32 = 96 switches.
  const Fabric f = build_fat_tree(ft(2, 64, std::nullopt, "1:1"));
  CHECK(f.num_hosts() == 2048);
  CHECK(f.switches().size() == 96);
  auto tiers = switches_per_tier(f);
  CHECK(tiers[1] == 64);
  CHECK(tiers[2] == 32);
  CHECK(f.num_links() == 2048 + 64 * 32);
  for (NodeId n : f.switches()) CHECK(used_ports(f, n) == 64); // every port of every switch is used
  const auto s = describe(f);
  REQUIRE(s.per_tier.size() == 2);
  CHECK(s.per_tier[0].oversubscription.value() == doctest::Approx(1.0));
  CHECK(s.per_tier[0].down_ports == 64 * 32);
  CHECK(s.per_tier[0].up_ports == 64 * 32);
  CHECK_FALSE(s.per_tier[1].oversubscription.has_value());
  // Bisection N*b/2 = 2048 * 400 / 2 Gb/s.
  CHECK(s.bisection_gbps == doctest::Approx(2048 * 400.0 / 2));
  CHECK(s.bisection_closed_form_gbps.value() == doctest::Approx(s.bisection_gbps));
  CHECK(s.diameter_hops == 4);
}

TEST_CASE("fat-tree 2-tier oversubscribed: ratio from the graph equals the request, bisection N*b/(2r)") {
  // Radix 64: 3:1 -> 48 down / 16 up, 7:1 -> 56/8, 1:1 -> 32/32. Four full leaves each.
  for (const auto& [ratio, r, down] :
       std::vector<std::tuple<std::string, double, int>>{{"3:1", 3.0, 48}, {"7:1", 7.0, 56}, {"1:1", 1.0, 32}}) {
    CAPTURE(ratio);
    const std::int64_t hosts = 4 * down;
    const Fabric f = build_fat_tree(ft(2, 64, hosts, ratio, "HDR"));
    const auto s = describe(f);
    CHECK(s.per_tier[0].oversubscription.value() == doctest::Approx(r));
    REQUIRE(f.origin.contains("bisection_closed_form_gbps"));
    CHECK(s.bisection_gbps == doctest::Approx(static_cast<double>(hosts) * 200.0 / (2 * r)));
    CHECK(s.bisection_closed_form_gbps.value() == doctest::Approx(s.bisection_gbps));
  }
}

TEST_CASE("fat-tree partial population matches the DGX SuperPOD H100 component table") {
  // model-reference.md §6.4 (NVIDIA RA Table 4, per rail): leaves and spines of 1, 2, 3 and 4 SUs.
  struct Row {
    std::int64_t hosts;
    std::size_t leaves, spines, leaf_spine_cables;
  };
  for (const Row& row :
       {Row{256, 8, 4, 256}, Row{512, 16, 8, 512}, Row{768, 24, 16, 768}, Row{1024, 32, 16, 1024}}) {
    CAPTURE(row.hosts);
    const Fabric f = build_fat_tree(ft(2, 64, row.hosts, "1:1"));
    auto tiers = switches_per_tier(f);
    CHECK(tiers[1] == row.leaves);
    CHECK(tiers[2] == row.spines);
    CHECK(f.num_links() - static_cast<std::size_t>(row.hosts) == row.leaf_spine_cables);
    const auto s = describe(f);
    CHECK(s.per_tier[0].oversubscription.value() == doctest::Approx(1.0));
    CHECK(s.bisection_gbps == doctest::Approx(row.hosts * 400.0 / 2));
  }
}

TEST_CASE("fat-tree --leaf-ports leaves ports unused so radix 64 can run 4:1 and 2:1") {
  auto p = ft(2, 64, 480, "4:1"); // 60 leaf ports: 48 down / 12 up; 10 leaves
  p.leaf_ports = 60;
  const Fabric f = build_fat_tree(p);
  CHECK(switches_per_tier(f)[1] == 10);
  for (NodeId n : f.switches())
    if (f.node(n).tier == 1) CHECK(used_ports(f, n) == 60);
  const auto s = describe(f);
  CHECK(s.per_tier[0].oversubscription.value() == doctest::Approx(4.0));
  CHECK(s.bisection_gbps == doctest::Approx(480 * 400.0 / 8));
  p.oversubscription = parse_ratios("2:1", "r");
  p.leaf_ports = 66;
  CHECK(error_of([&] { build_fat_tree(p); }).find("--leaf-ports must be between 2 and the radix 64") !=
        std::string::npos);
}

TEST_CASE("fat-tree partially filled last leaf: hosts fill leaves in order") {
  const Fabric f = build_fat_tree(ft(2, 8, 10, "1:1", "EDR"));
  CHECK(f.num_hosts() == 10);
  CHECK(switches_per_tier(f)[1] == 3); // 4 + 4 + 2 hosts
  const auto s = describe(f);
  // The partial leaf has 2 hosts and 4 uplinks, so the tier's bandwidth ratio is 10:12.
  CHECK(s.per_tier[0].oversubscription.value() == doctest::Approx(10.0 / 12.0));
}

TEST_CASE("fat-tree 3-tier matches the DGX SuperPOD B200 16-SU counts and the closed-form bisection") {
  // 4096 hosts at radix 64, 1:1,1:1 -> 128 leaves, 128 spines, 64 cores, 4096 cables per tier (§6.4).
  const Fabric f = build_fat_tree(ft(3, 64, 4096, "1:1,1:1"));
  auto tiers = switches_per_tier(f);
  CHECK(tiers[1] == 128);
  CHECK(tiers[2] == 128);
  CHECK(tiers[3] == 64);
  CHECK(f.num_links() == 3 * 4096);
  const auto s = describe(f);
  REQUIRE(s.per_tier.size() == 3);
  CHECK(s.per_tier[0].oversubscription.value() == doctest::Approx(1.0));
  CHECK(s.per_tier[1].oversubscription.value() == doctest::Approx(1.0));
  CHECK(s.bisection_gbps == doctest::Approx(4096 * 400.0 / 2));
  CHECK(s.diameter_hops == 6);
}

TEST_CASE("fat-tree 3-tier with oversubscription at two tiers: BB = N*b/(2*r1*r2)") {
  // Radix 16 at 3:1 on both tiers: leaf 12 down / 4 up, pod spine 12 down / 4 up; a pod holds 12 leaves x 12
  // hosts, so 288 hosts fill exactly 2 pods and the core cut is 144 * 100 Gb/s / (3*3) = 1600 Gb/s.
  const Fabric f = build_fat_tree(ft(3, 16, 288, "3:1,3:1", "EDR"));
  const auto s = describe(f);
  CHECK(s.per_tier[0].oversubscription.value() == doctest::Approx(3.0));
  CHECK(s.per_tier[1].oversubscription.value() == doctest::Approx(3.0));
  CHECK(s.bisection_gbps == doctest::Approx(288 * 100.0 / (2 * 3 * 3)));
  CHECK(s.bisection_closed_form_gbps.value() == doctest::Approx(s.bisection_gbps));
}

TEST_CASE("fat-tree rails: K planes, HCA i of every host on plane i") {
  const Fabric f = build_fat_tree(ft(2, 16, 64, "1:1", "NDR", 4));
  CHECK(f.num_hosts() == 64);
  CHECK(f.hcas().size() == 256);
  std::map<int, std::set<int>> planes_of_host;
  for (NodeId h : f.hcas()) {
    const Node& n = f.node(h);
    planes_of_host[n.host].insert(n.plane);
    const Link& l = f.link(f.links_of(h).front());
    CHECK(f.node(l.other(h)).plane == n.plane); // HCA i is cabled to a switch of plane i
  }
  for (const auto& [host, planes] : planes_of_host) CHECK(planes == std::set<int>{0, 1, 2, 3});
  CHECK(describe(f).bisection_gbps == doctest::Approx(4 * 64 * 400.0 / 2));
}

TEST_CASE("fat-tree cable lengths per tier set length, medium and propagation latency") {
  auto p = ft(2, 8, 8, "1:1");
  p.cables = parse_cable_lengths("host=2,leaf=40", "--cable-m");
  const Fabric f = build_fat_tree(p);
  for (const Link& l : f.links()) {
    const bool host_cable = f.node(l.a.node).kind == NodeKind::Hca || f.node(l.b.node).kind == NodeKind::Hca;
    if (host_cable) {
      CHECK(l.length_m == 2.0);
      CHECK(l.medium == Medium::Dac);
      CHECK(l.latency.count_ps() == 2 * 4760); // 4.76 ns/m DAC
    } else {
      CHECK(l.length_m == 40.0);
      CHECK(l.medium == Medium::Fiber);
      CHECK(l.latency.count_ps() == 40 * 5130); // 5.13 ns/m fibre
    }
  }
}

TEST_CASE("fat-tree refuses impossible requests with the reason and nearest valid choices") {
  const std::string e = error_of([] { build_fat_tree(ft(2, 64, std::nullopt, "4:1")); });
  CHECK(e.find("51.2 down-ports per leaf") != std::string::npos);
  CHECK(e.find("--oversubscription 3:1") != std::string::npos);
  CHECK(e.find("--oversubscription 7:1") != std::string::npos);
  CHECK(e.find("--radix 60") != std::string::npos);
  CHECK(e.find("--leaf-ports 60 (4 ports unused)") != std::string::npos);
  // The exact splits nearest 4:1 on either side come first: 51:13 (51/13) and 13:3 (52/12).
  CHECK(e.find("--oversubscription 51:13 (51 down/13 up)") != std::string::npos);
  CHECK(e.find("--oversubscription 13:3 (52 down/12 up)") != std::string::npos);
  // Radix 7 (prime) at 1:1: the nearest splits are 3:4 and 4:3; 1:6 and 6:1 are 6x away and not offered.
  const std::string p7 = error_of([] { build_fat_tree(ft(2, 7, std::nullopt, "1:1")); });
  CHECK(p7.find("--oversubscription 3:4 (3 down/4 up)") != std::string::npos);
  CHECK(p7.find("--oversubscription 4:3 (4 down/3 up)") != std::string::npos);
  CHECK(p7.find("1:6") == std::string::npos);
  CHECK(p7.find("6:1") == std::string::npos);
  CHECK(p7.find("(1 port unused)") != std::string::npos);
  CHECK(error_of([] { build_fat_tree(ft(2, 64, 5000, "1:1")); }).find("at most 2048 hosts") !=
        std::string::npos);
  CHECK(error_of([] { build_fat_tree(ft(4, 64, 10, "1:1")); }).find("--tiers must be 2 or 3") !=
        std::string::npos);
  CHECK(error_of([] { build_fat_tree(ft(2, 64, 10, "1:1,1:1")); }).find("2 ratios") != std::string::npos);
  CHECK(error_of([] { parse_ratios("2-1", "--oversubscription"); }).find("expected down:up") !=
        std::string::npos);
  CHECK(error_of([] { parse_ratios("0:1", "--oversubscription"); }).find("must be positive") !=
        std::string::npos);
  CHECK(error_of([] { build_fat_tree(ft(2, 64, -3, "1:1")); }).find("--hosts must be at least 1") !=
        std::string::npos);
  CHECK(error_of([] { parse_cable_lengths("core=3", "--cable-m"); }).find("unknown cable tier") !=
        std::string::npos);
  CHECK(error_of([] { parse_cable_lengths("host=-3", "--cable-m"); }).find("negative") != std::string::npos);
}

TEST_CASE("k-ary n-tree: k^n hosts, n*k^(n-1) switches, full bisection") {
  KaryNTreeParams p;
  p.k = 4;
  p.n = 3;
  const Fabric f = build_kary_ntree(p);
  CHECK(f.num_hosts() == 64);
  CHECK(f.switches().size() == 3 * 16);
  for (NodeId n : f.switches()) CHECK(used_ports(f, n) == (f.node(n).tier == 3 ? 4u : 8u));
  const auto s = describe(f);
  CHECK(s.bisection_gbps == doctest::Approx(64 * 400.0 / 2));
  CHECK(s.diameter_hops == 6);
  CHECK(s.per_tier[0].oversubscription.value() == doctest::Approx(1.0));
  CHECK(s.per_tier[1].oversubscription.value() == doctest::Approx(1.0));
}

TEST_CASE("dragonfly: counts, one global cable per group pair, every arrangement") {
  for (auto arr : {GlobalArrangement::Absolute, GlobalArrangement::Relative, GlobalArrangement::Circulant}) {
    CAPTURE(to_string(arr));
    DragonflyParams p;
    p.p = 2; // balanced: a = 4, h = 2, g = a*h+1 = 9
    p.arrangement = arr;
    const Fabric f = build_dragonfly(p);
    CHECK(f.switches().size() == 36);
    CHECK(f.num_hosts() == 72);
    std::map<std::pair<int, int>, int> pair_cables;
    std::size_t local = 0;
    for (const Link& l : f.links()) {
      const Node &a = f.node(l.a.node), &b = f.node(l.b.node);
      if (a.kind != NodeKind::Switch || b.kind != NodeKind::Switch) continue;
      if (a.group == b.group)
        ++local;
      else
        ++pair_cables[{std::min(a.group, b.group), std::max(a.group, b.group)}];
    }
    CHECK(local == 9 * 4 * 3 / 2);
    CHECK(pair_cables.size() == 9 * 8 / 2);
    for (const auto& [pair, n] : pair_cables) CHECK(n == 1);
    for (NodeId r : f.switches()) CHECK(used_ports(f, r) == 2u + 3u + 2u); // p + (a-1) + h: all ports used
    CHECK(describe(f).diameter_hops == 5);                                 // host, local, global, local, host
  }
}

TEST_CASE("dragonfly: even g bisection equals the group-aligned closed form") {
  DragonflyParams p;
  p.a = 4;
  p.p = 2;
  p.h = 2;
  p.g = 5; // a*h = 8 global links per group over 4 other groups: l = 2 cables per pair
  const Fabric odd = build_dragonfly(p);
  CHECK_FALSE(odd.origin.contains("bisection_closed_form_gbps"));
  p.g = 3; // l = 4 cables per pair
  CHECK(build_dragonfly(p).num_hosts() == 4 * 2 * 3);
  DragonflyParams e;
  e.a = 3;
  e.p = 2;
  e.h = 2;
  e.g = 4; // a*h = 6 over 3 other groups: l = 2; cut 2x2 pairs x 2 cables x 400 = 3200 Gb/s < hosts 12*400
  const Fabric f = build_dragonfly(e);
  const auto s = describe(f);
  CHECK(s.bisection_closed_form_gbps.value() == doctest::Approx(3200.0));
  CHECK(s.bisection_gbps == doctest::Approx(3200.0));
}

TEST_CASE("dragonfly refuses g > a*h+1 and uneven global spreads") {
  DragonflyParams p;
  p.a = 4;
  p.p = 2;
  p.h = 2;
  p.g = 10;
  CHECK(error_of([&] { build_dragonfly(p); }).find("more than a*h+1 = 9") != std::string::npos);
  p.g = 4; // 8 global links over 3 groups
  const std::string e = error_of([&] { build_dragonfly(p); });
  CHECK(e.find("cannot be spread evenly") != std::string::npos);
  CHECK(e.find("valid --g: 2, 3, 5, 9") != std::string::npos);
  DragonflyParams none;
  CHECK(error_of([&] { build_dragonfly(none); }).find("give at least one of") != std::string::npos);
}

TEST_CASE("generator registry builds by name and rejects unknown keys") {
  const auto reg = builtin_generators();
  const Fabric f =
      reg.get("fat-tree").factory({{"radix", "8"}, {"hosts", "16"}, {"oversubscription", "3:1"}});
  CHECK(f.num_hosts() == 16);
  CHECK(error_of([&] {
          reg.get("fat-tree").factory({{"colour", "red"}});
        }).find("unknown parameter 'colour'") != std::string::npos);
  CHECK(error_of([&] { reg.get("torus"); }).find("unknown topology generator 'torus'") != std::string::npos);
}

TEST_CASE("link speeds: names, widths and plain rates") {
  CHECK(parse_link_speed("NDR", "r").rate_bps() == 400'000'000'000ull);
  CHECK(parse_link_speed("NDR200", "r") == LinkSpeed{Generation::NDR, 2});
  CHECK(parse_link_speed("4xFDR10", "r").rate_bps() == 40'000'000'000ull);
  CHECK(parse_link_speed("200Gbps", "r") == LinkSpeed{Generation::HDR, 4});
  CHECK(parse_link_speed("4x QDR", "r").rate_bps() == 32'000'000'000ull);
  CHECK(error_of([] { parse_link_speed("4xZZZ", "--rate"); }).find("unknown link generation") !=
        std::string::npos);
  CHECK(error_of([] { parse_link_speed("123Gbps", "--rate"); }).find("no InfiniBand link") !=
        std::string::npos);
}
