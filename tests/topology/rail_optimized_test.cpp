// Rail-optimized fat-trees against NVIDIA's published DGX SuperPOD component counts, the rail layout itself
// (NIC i of every node of an SU on leaf i of that SU), ratios, 3 tiers, planes, placement as rails of one
// node, and the port-split helper behind the fat-tree hints.
//
// Reference counts (read 2026-12-03):
// - H100: "NVIDIA DGX SuperPOD: Next Generation Scalable Infrastructure for AI Leadership, Reference
//   Architecture featuring DGX H100" (RA-11333-001), section Network Fabrics, Table 4 "Compute fabric
//   component count",
//   https://docs.nvidia.com/dgx-superpod/reference-architecture-scalable-infrastructure-h100/latest/
//   network-fabrics.html: 1 SU 31 nodes 8 leaf / 4 spine, 252 compute+UFM / 256 spine-leaf cables; 2 SU 63
//   nodes 16/8 (508/512); 3 SU 95 nodes 24/16 (764/768); 4 SU 127 nodes 32/16 (1020/1024). Footnote: 32 node
//   slots per SU, one DGX removed for UFM connectivity (the 4 extra cables are the UFM appliance's).
// - B200: "DGX SuperPOD Reference Architecture, DGX B200", section DGX SuperPOD Architecture, table of larger
//   configurations, https://docs.nvidia.com/dgx-superpod/reference-architecture-scalable-infrastructure-b200/
//   latest/dgx-superpod-architecture.html: 2 SU 16/8, 4 SU 32/16, 8 SU 64/32 (2 tiers); 16 SU 512 nodes
//   128/128/64 with 4096 node-leaf, leaf-spine and spine-core cables; 64 SU 2048 nodes 512/512/256, 16384
//   each.
#include "scenarios/placement.hpp"
#include "sim/error.hpp"
#include "topology/describe.hpp"
#include "topology/port_split.hpp"
#include "topology/rail_optimized.hpp"

#include "tests/test_util.hpp"

#include <doctest/doctest.h>

#include <map>
#include <set>

using namespace ibn;
using namespace ibn::topo;
using ibn::test::error_of;

namespace {

struct Counts {
  std::map<int, std::size_t> switches; // tier -> switches
  std::size_t node_leaf = 0, leaf_spine = 0, spine_core = 0;
};

Counts count(const Fabric& f) {
  Counts c;
  for (NodeId n : f.switches()) ++c.switches[f.node(n).tier];
  for (const Link& l : f.links()) {
    const int a = f.node(l.a.node).tier, b = f.node(l.b.node).tier;
    const int lo = std::min(a, b), hi = std::max(a, b);
    if (lo == 0)
      ++c.node_leaf;
    else if (lo == 1 && hi == 2)
      ++c.leaf_spine;
    else if (lo == 2 && hi == 3)
      ++c.spine_core;
  }
  return c;
}

RailOptimizedParams superpod(std::int64_t nodes, int ufm_ports) {
  RailOptimizedParams p;
  p.nodes = nodes;
  p.nics_per_node = 8;
  p.su_nodes = 32;
  p.radix = 64; // QM9700: 64 NDR ports
  p.ufm_ports = ufm_ports;
  p.speed = parse_link_speed("NDR", "rate");
  return p;
}

} // namespace

TEST_CASE("rail-optimized reproduces the DGX SuperPOD H100 compute fabric counts (Table 4)") {
  struct Row {
    std::int64_t nodes;
    std::size_t leaf, spine, node_leaf, leaf_spine;
  };
  for (const Row r : {Row{31, 8, 4, 252, 256}, Row{63, 16, 8, 508, 512}, Row{95, 24, 16, 764, 768},
                      Row{127, 32, 16, 1020, 1024}}) {
    CAPTURE(r.nodes);
    const Fabric f = build_rail_optimized(superpod(r.nodes, 4));
    Counts c = count(f);
    CHECK(c.switches[1] == r.leaf);
    CHECK(c.switches[2] == r.spine);
    CHECK(c.switches.count(3) == 0);
    CHECK(c.node_leaf == r.node_leaf);
    CHECK(c.leaf_spine == r.leaf_spine);
    CHECK(f.num_hosts() == static_cast<std::size_t>(r.nodes));
  }
}

TEST_CASE("rail-optimized reproduces the DGX SuperPOD B200 counts, 2 and 3 tiers") {
  struct Row {
    std::int64_t nodes;
    std::size_t leaf, spine, core, cables;
  };
  for (const Row r : {Row{64, 16, 8, 0, 512}, Row{128, 32, 16, 0, 1024}, Row{256, 64, 32, 0, 2048},
                      Row{512, 128, 128, 64, 4096}, Row{2048, 512, 512, 256, 16384}}) {
    CAPTURE(r.nodes);
    const Fabric f = build_rail_optimized(superpod(r.nodes, 0));
    Counts c = count(f);
    CHECK(c.switches[1] == r.leaf);
    CHECK(c.switches[2] == r.spine);
    CHECK((c.switches.count(3) ? c.switches[3] : 0) == r.core);
    CHECK(c.node_leaf == r.cables);
    CHECK(c.leaf_spine == r.cables);
    CHECK(c.spine_core == (r.core ? r.cables : 0));
    CHECK(f.origin.at("tiers") == (r.core ? 3 : 2));
  }
}

TEST_CASE(
    "rail-optimized: NIC i of every node of an SU is on leaf i of that SU, nodes are hosts of 8 rails") {
  const Fabric f = build_rail_optimized(superpod(64, 0));
  std::map<NodeId, std::set<int>> hosts_per_leaf;
  for (NodeId h : f.hcas()) {
    const Node& n = f.node(h);
    const NodeId leaf = f.link(*f.link_at(h, 1)).other(h);
    const std::string rail = n.name.substr(n.name.rfind('-') + 1);
    const std::string want = "su" + std::to_string(n.host / 32) + "-leaf-" + rail;
    CHECK(f.node(leaf).name == want);
    hosts_per_leaf[leaf].insert(n.host);
  }
  CHECK(hosts_per_leaf.size() == 16);
  for (const auto& [leaf, hosts] : hosts_per_leaf) CHECK(hosts.size() == 32);

  // Placement groups a node's 8 HCAs into one slot in rail order: GPU i of a job uses NIC i, on leaf i.
  const auto pool = scen::NodePool::from_fabric(f, 8);
  REQUIRE(pool.size() == 64);
  const auto hcas = f.hcas();
  for (std::uint32_t s : {0u, 33u}) {
    const auto& slot = pool.slot(s);
    REQUIRE(slot.hcas.size() == 8);
    for (std::size_t i = 0; i < 8; ++i) {
      const NodeId h = hcas[slot.hcas[i]];
      CHECK(f.node(h).host == static_cast<int>(s));
      const NodeId leaf = f.link(*f.link_at(h, 1)).other(h);
      CHECK(f.node(leaf).name == "su" + std::to_string(s / 32) + "-leaf-" + std::to_string(i));
    }
  }
}

TEST_CASE(
    "rail-optimized: per-tier ratio from the graph, UFM ports are not endpoints, planes double the fabric") {
  auto p = superpod(64, 0);
  p.oversubscription = parse_ratios("2:1", "r");
  const Fabric f = build_rail_optimized(p);
  const auto s = describe(f);
  REQUIRE(!s.per_tier.empty());
  CHECK(s.per_tier[0].oversubscription.value_or(0) == doctest::Approx(2.0));
  CHECK(count(f).leaf_spine == 16 * 16);
  CHECK(f.origin.at("leaf_ports") == 48);

  const Fabric u = build_rail_optimized(superpod(31, 4));
  CHECK(u.hcas().size() == 31 * 8);
  CHECK(u.find_node("ufm-port-3"));

  auto pl = superpod(32, 0);
  pl.planes = 2;
  const Fabric two = build_rail_optimized(pl);
  CHECK(count(two).switches[1] == 16);
  CHECK(two.hcas().size() == 32 * 16);
  CHECK(scen::NodePool::from_fabric(two, 16).size() == 32);
}

TEST_CASE("rail-optimized refuses impossible designs with a reason") {
  auto p = superpod(32, 0);
  p.oversubscription = parse_ratios("3:1", "r");
  CHECK(error_of([&] { build_rail_optimized(p); }).find("must be whole") != std::string::npos);
  p = superpod(32, 4); // 32 nodes fill the SU: no slot for UFM -> a second SU
  CHECK(count(build_rail_optimized(p)).switches[1] == 16);
  p = superpod(1024, 0);
  p.tiers = 2;
  CHECK(error_of([&] { build_rail_optimized(p); }).find("--tiers 3") != std::string::npos);
  p = superpod(32, 0);
  p.su_nodes = 40;
  CHECK(error_of([&] { build_rail_optimized(p); }).find("--su-nodes") != std::string::npos);
  CHECK(error_of([] {
          build_rail_optimized_from_params({{"hosts", "3"}});
        }).find("unknown parameter 'hosts'") != std::string::npos);
}

TEST_CASE("port splits: 1024 hosts at 2:1 on radix 64 -> --leaf-ports 48 (every leaf full, 40 switches)") {
  const auto best = cheapest_leaf_ports(2, 64, 1024, Ratio{2, 1});
  REQUIRE(best);
  CHECK(best->leaf_ports == 48);
  CHECK(best->switches == 40); // 32 leaves + 8 spines, against 25 + 21 = 46 with the largest split (63)
  CHECK(best->exact);
  const auto all = leaf_port_splits(2, 64, 1024, Ratio{2, 1});
  bool saw63 = false;
  for (const auto& s : all)
    if (s.leaf_ports == 63) {
      saw63 = true;
      CHECK(s.switches == 46);
    }
  CHECK(saw63);
  CHECK(leaf_port_hints(2, 64, 1024, Ratio{2, 1}).find("--leaf-ports 48") != std::string::npos);

  FatTreeParams ft;
  ft.radix = 64;
  ft.hosts = 1024;
  ft.oversubscription = parse_ratios("2:1", "r");
  CHECK(error_of([&] { build_fat_tree(ft); }).find("--leaf-ports 48 (32 down/16 up, 40 switches") !=
        std::string::npos);
  ft.leaf_ports = 48;
  const Fabric f = build_fat_tree(ft);
  CHECK(f.switches().size() == 40);
}
