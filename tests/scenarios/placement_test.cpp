// Placement: node slots from generated fabrics (rails and single plane), each policy's choice, several jobs
// on the nodes still free, and the errors (over-request, explicit lists).
#include "scenarios/placement.hpp"
#include "sim/error.hpp"
#include "tests/test_util.hpp"
#include "topology/generators.hpp"
#include "topology/rail_optimized.hpp"

#include <doctest/doctest.h>

#include <map>
#include <set>

using namespace ibn;
using namespace ibn::scen;
using ibn::test::error_of;

namespace {

/// 2-tier radix-8 fat-tree at 1:1: 4 hosts per leaf, `hosts` hosts, `rails` planes.
topo::Fabric fat_tree(int hosts, int rails) {
  topo::FatTreeParams p;
  p.tiers = 2;
  p.radix = 8;
  p.hosts = hosts;
  p.rails = rails;
  p.speed = topo::LinkSpeed{topo::Generation::NDR, 4};
  return topo::build_fat_tree(p);
}

/// The leaf switch of an HCA, read from the fabric itself (not from the pool).
topo::NodeId leaf_of(const topo::Fabric& f, HcaIndex h) {
  const auto id = f.hcas()[h];
  return f.link(*f.link_at(id, 1)).other(id);
}

std::size_t leaves_of(const topo::Fabric& f, const JobPlacement& j) {
  std::set<topo::NodeId> s;
  for (const auto& n : j.nodes) s.insert(leaf_of(f, n.front()));
  return s.size();
}

JobPlacementRequest job(const std::string& name, std::uint32_t nodes, const std::string& policy) {
  JobPlacementRequest r;
  r.job = name;
  r.nodes = nodes;
  r.policy = policy;
  return r;
}

void check_disjoint(const std::vector<JobPlacement>& jobs, std::size_t nics) {
  std::set<HcaIndex> all;
  std::size_t count = 0;
  for (const auto& j : jobs)
    for (const auto& n : j.nodes) {
      CHECK(n.size() == nics);
      for (const auto h : n) {
        all.insert(h);
        ++count;
      }
    }
  CHECK(all.size() == count); // no HCA given twice
}

} // namespace

TEST_CASE("placement: a rails fabric groups each host's HCAs into one node, rail i on plane i") {
  const auto f = fat_tree(16, 2);
  const auto pool = NodePool::from_fabric(f, 2);
  REQUIRE(pool.size() == 16);
  const auto hcas = f.hcas();
  std::set<HcaIndex> seen;
  for (std::uint32_t s = 0; s < pool.size(); ++s) {
    const auto& slot = pool.slot(s);
    REQUIRE(slot.hcas.size() == 2);
    const auto& a = f.node(hcas[slot.hcas[0]]);
    const auto& b = f.node(hcas[slot.hcas[1]]);
    CHECK(a.host == b.host);
    CHECK(a.plane == 0);
    CHECK(b.plane == 1);
    CHECK(slot.name == "host-" + std::to_string(a.host));
    seen.insert(slot.hcas.begin(), slot.hcas.end());
  }
  CHECK(seen.size() == 32);
  CHECK(pool.find("host-5") == 5u);
  CHECK(pool.find("host-5-rail-1") == 5u);
  CHECK(!pool.find("host-99"));

  // 1 NIC per node: each host's rail-0 HCA; 3 NICs per node: more than a host has.
  const auto one = NodePool::from_fabric(f, 1);
  REQUIRE(one.size() == 16);
  for (std::uint32_t s = 0; s < 16; ++s) {
    CHECK(one.slot(s).hcas == std::vector<HcaIndex>{pool.slot(s).hcas[0]});
    CHECK(f.node(hcas[one.slot(s).hcas[0]]).plane == 0);
  }
  CHECK(error_of([&] { NodePool::from_fabric(f, 3); })
            .find("no host has 3 HCAs (nics_per_node); the most any host has is 2") != std::string::npos);
}

TEST_CASE("placement: a single-plane fabric forms nodes from consecutive HCAs") {
  const auto f = fat_tree(16, 1);
  const auto pool = NodePool::from_fabric(f, 4);
  REQUIRE(pool.size() == 4);
  for (std::uint32_t s = 0; s < 4; ++s)
    CHECK(pool.slot(s).hcas == std::vector<HcaIndex>{4 * s, 4 * s + 1, 4 * s + 2, 4 * s + 3});
  CHECK(NodePool::from_fabric(f, 3).size() == 5); // 16 / 3: the remainder of 1 HCA is not a node
  CHECK(NodePool::from_fabric(f, 1).slot(7).name == "host-7");
  CHECK(!error_of([&] { NodePool::from_fabric(f, 0); }).empty());
  CHECK(error_of([&] { NodePool::from_fabric(f, 17); }).find("fewer than nics_per_node") !=
        std::string::npos);
}

TEST_CASE("placement: linear jobs take the first free nodes one after another") {
  const auto f = fat_tree(16, 2);
  const auto pool = NodePool::from_fabric(f, 2);
  Rng rng(1);
  const auto jobs = place_jobs(pool, {job("a", 3, "linear"), job("b", 5, "linear")}, rng);
  REQUIRE(jobs.size() == 2);
  CHECK(jobs[0].slots == std::vector<std::uint32_t>{0, 1, 2});
  CHECK(jobs[1].slots == std::vector<std::uint32_t>{3, 4, 5, 6, 7});
  CHECK(jobs[1].nodes[0] == pool.slot(3).hcas);
  CHECK(jobs[1].all_hcas().size() == 10);
  check_disjoint(jobs, 2);
}

TEST_CASE("placement: spread spans as many leaves as possible, linear packs them") {
  const auto f = fat_tree(16, 1); // 4 leaves of 4 hosts
  const auto pool = NodePool::from_fabric(f, 1);
  Rng rng(1);
  const auto lin = place_jobs(pool, {job("lin", 4, "linear")}, rng);
  CHECK(leaves_of(f, lin[0]) == 1);
  const auto spr = place_jobs(pool, {job("spr", 4, "spread")}, rng);
  CHECK(leaves_of(f, spr[0]) == 4);
  CHECK(leaves_spanned(pool, spr[0]) == 4);
  // Consecutive ranks are on different leaves.
  for (std::size_t i = 1; i < spr[0].nodes.size(); ++i)
    CHECK(leaf_of(f, spr[0].nodes[i][0]) != leaf_of(f, spr[0].nodes[i - 1][0]));
  // After a linear job filled leaf 0 and half of leaf 1, a spread job of 3 still spans 3 leaves.
  const auto two = place_jobs(pool, {job("fill", 6, "linear"), job("spr", 3, "spread")}, rng);
  CHECK(leaves_of(f, two[1]) == 3);
  // 10 nodes: all 4 leaves, no node twice.
  const auto big = place_jobs(pool, {job("big", 10, "spread")}, rng);
  CHECK(leaves_of(f, big[0]) == 4);
  check_disjoint(big, 1);
}

TEST_CASE("placement: fragmented takes every other free node, then the gaps") {
  const auto f = fat_tree(16, 1);
  const auto pool = NodePool::from_fabric(f, 1);
  Rng rng(1);
  const auto jobs = place_jobs(pool, {job("frag", 4, "fragmented"), job("next", 2, "linear")}, rng);
  CHECK(jobs[0].slots == std::vector<std::uint32_t>{0, 2, 4, 6});
  CHECK(jobs[1].slots == std::vector<std::uint32_t>{1, 3});
  const auto big = place_jobs(pool, {job("frag", 10, "fragmented")}, rng);
  CHECK(big[0].slots == std::vector<std::uint32_t>{0, 2, 4, 6, 8, 10, 12, 14, 1, 3});
}

TEST_CASE("placement: random is seeded, distinct, sorted and close to uniform") {
  const auto f = fat_tree(16, 1);
  const auto pool = NodePool::from_fabric(f, 1);
  Rng r1(7), r2(7), r3(8);
  const auto a = place_jobs(pool, {job("r", 5, "random"), job("s", 5, "random")}, r1);
  const auto b = place_jobs(pool, {job("r", 5, "random"), job("s", 5, "random")}, r2);
  const auto c = place_jobs(pool, {job("r", 5, "random"), job("s", 5, "random")}, r3);
  CHECK(a[0].slots == b[0].slots);
  CHECK(a[1].slots == b[1].slots);
  CHECK((a[0].slots != c[0].slots || a[1].slots != c[1].slots));
  check_disjoint(a, 1);
  CHECK(std::is_sorted(a[0].slots.begin(), a[0].slots.end()));
  // 4000 draws of 4 of 16 nodes: each node is chosen 1000 times on average (binomial sd ~27);
  // every count within 12 % of the mean.
  Rng rng(3);
  std::map<std::uint32_t, int> hits;
  for (int i = 0; i < 4000; ++i) {
    const auto placed = place_jobs(pool, {job("u", 4, "random")}, rng);
    for (const auto s : placed[0].slots) ++hits[s];
  }
  REQUIRE(hits.size() == 16);
  for (const auto& [slot, n] : hits) {
    CHECK(n > 880);
    CHECK(n < 1120);
  }
}

TEST_CASE("placement: explicit lists by index, host name or HCA name, in order") {
  const auto f = fat_tree(16, 2);
  const auto pool = NodePool::from_fabric(f, 2);
  Rng rng(1);
  auto ex = job("ex", 3, "explicit");
  ex.explicit_nodes = {"host-3", "5", "host-7-rail-1"};
  const auto jobs = place_jobs(pool, {ex, job("rest", 13, "linear")}, rng);
  CHECK(jobs[0].slots == std::vector<std::uint32_t>{3, 5, 7});
  CHECK(jobs[1].slots.size() == 13);
  check_disjoint(jobs, 2);

  auto bad = ex;
  bad.explicit_nodes = {"host-3", "nowhere", "1"};
  CHECK(error_of([&] { place_jobs(pool, {bad}, rng); }) ==
        "job 'ex': explicit node 'nowhere' is neither a node index below 16 nor a host or HCA name of the "
        "fabric");
  bad.explicit_nodes = {"host-3", "3", "1"};
  CHECK(error_of([&] { place_jobs(pool, {bad}, rng); }) == "job 'ex': explicit node '3' is listed twice");
  bad.explicit_nodes = {"2", "16", "1"};
  CHECK(error_of([&] { place_jobs(pool, {bad}, rng); }).find("'16' is neither") != std::string::npos);
  bad.explicit_nodes = {"host-3", "4"};
  CHECK(error_of([&] { place_jobs(pool, {bad}, rng); }) ==
        "job 'ex': asks for 3 nodes but lists 2 explicit nodes");
  auto after = ex;
  after.job = "late";
  after.explicit_nodes = {"host-0", "host-1", "host-2"};
  CHECK(error_of([&] {
          place_jobs(pool, {job("first", 2, "linear"), after}, rng);
        }) == "job 'late': explicit node 'host-0' (node 0, host-0) is already used by an earlier job");
  auto with_list = job("lin", 2, "linear");
  with_list.explicit_nodes = {"1", "2"};
  CHECK(error_of([&] {
          place_jobs(pool, {with_list}, rng);
        }).find("only allowed with placement 'explicit'") != std::string::npos);
}

TEST_CASE("placement: asking for more nodes than are free names the job and the counts") {
  const auto f = fat_tree(16, 2);
  const auto pool = NodePool::from_fabric(f, 2);
  Rng rng(1);
  CHECK(error_of([&] {
          place_jobs(pool, {job("a", 8, "linear"), job("b", 9, "spread")}, rng);
        }) == "job 'b': asks for 9 nodes but only 8 of 16 nodes are free (a node is 2 HCAs: the most NICs per node "
            "any job or background asks for)");
  CHECK(error_of([&] { place_jobs(pool, {job("a", 17, "random")}, rng); }) ==
        "job 'a': asks for 17 nodes but only 16 of 16 nodes are free (a node is 2 HCAs: the most NICs per "
            "node any job or background asks for)");
  CHECK(error_of([&] { place_jobs(pool, {job("a", 0, "linear")}, rng); }) ==
        "job 'a': nodes must be at least 1");
  CHECK(error_of([&] { place_jobs(pool, {job("a", 2, "scattered")}, rng); })
            .find("job 'a': unknown placement policy "
                  "'scattered' (known: linear") != std::string::npos);
}

TEST_CASE("placement: a job may use fewer NICs than its nodes have (rails 0..n-1)") {
  const auto f = fat_tree(8, 2);
  const auto pool = NodePool::from_fabric(f, 2);
  Rng rng(1);
  auto one = job("one", 2, "linear");
  one.nics_per_node = 1;
  const auto jobs = place_jobs(pool, {one}, rng);
  CHECK(jobs[0].nodes == std::vector<std::vector<HcaIndex>>{{pool.slot(0).hcas[0]}, {pool.slot(1).hcas[0]}});
  one.nics_per_node = 3;
  CHECK(error_of([&] { place_jobs(pool, {one}, rng); }) ==
        "job 'one': asks for 3 NICs per node but the fabric's nodes have 2");
}

TEST_CASE("placement: the policies are a registry") {
  const auto r = builtin_placement_policies();
  for (const char* name : {"linear", "random", "spread", "fragmented", "explicit"}) CHECK(r.contains(name));
  CHECK(r.entries().size() == 5);
}

TEST_CASE("placement: leaves_spanned counts every rail's leaf on a rail-optimized fabric") {
  // 2 SUs of 4 nodes x 8 NICs: NIC i of every node of an SU is on leaf i of that SU. A 4-node job inside
  // SU 0 touches its 8 leaves (it counted 1, the rail-0 leaf, before); across both SUs, 16. With 2 NICs per
  // node only rails 0 and 1 are used: 2 leaves per SU.
  topo::RailOptimizedParams p;
  p.nodes = 8;
  p.nics_per_node = 8;
  p.su_nodes = 4;
  p.radix = 16;
  p.speed = topo::LinkSpeed{topo::Generation::NDR, 4};
  const auto f = topo::build_rail_optimized(p);
  const auto pool = NodePool::from_fabric(f, 8);
  REQUIRE(pool.size() == 8);
  Rng rng(1);
  const auto one_su = place_jobs(pool, {job("a", 4, "linear")}, rng);
  CHECK(leaves_spanned(pool, one_su[0]) == 8);
  std::set<topo::NodeId> direct; // the same count read from the fabric
  for (const auto& node : one_su[0].nodes)
    for (const auto h : node) direct.insert(leaf_of(f, h));
  CHECK(direct.size() == 8);
  const auto both = place_jobs(pool, {job("b", 8, "linear")}, rng);
  CHECK(leaves_spanned(pool, both[0]) == 16);
  auto two_nics = job("c", 4, "linear");
  two_nics.nics_per_node = 2;
  CHECK(leaves_spanned(pool, place_jobs(pool, {two_nics}, rng)[0]) == 2);
}
