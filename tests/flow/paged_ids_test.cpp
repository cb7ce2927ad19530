// What a run on a large fabric no longer rebuilds per run (issue 19 item 3): the flow engine's paged id
// index (models/flow/paged_ids.hpp), the cable directions per tier pair and the node pool the world holds.
#include "models/flow/paged_ids.hpp"
#include "scenarios/runner.hpp"
#include "scenarios/scenario.hpp"
#include "topology/fabric.hpp"
#include "topology/generators.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstdint>

using namespace ibn;

namespace {
struct Rec {
  std::uint32_t id = 0;
  int value = 0;
};
} // namespace

TEST_CASE("flow: paged ids make records in order and answer made and slot across pages") {
  flow::PagedIds<Rec> ids;
  ids.add_ids(5000); // five pages of 1,024 ids
  CHECK(ids.ids() == 5000);
  CHECK_FALSE(ids.made(0));
  CHECK_FALSE(ids.made(4999));
  CHECK_FALSE(ids.made(5000)); // beyond the range: not made, no page looked up
  CHECK(ids.slot(3000) == flow::PagedIds<Rec>::kNone);
  ids.make(4000).value = 40;
  ids.make(7).value = 7; // (any order)
  ids.make(1023).value = 1023;
  ids.make(1024).value = 1024; // first id of the next page
  CHECK(ids.made(4000));
  CHECK(ids.made(1023));
  CHECK(ids.made(1024));
  CHECK_FALSE(ids.made(1025));
  CHECK(ids.slot(4000) == 0);
  CHECK(ids.slot(7) == 1);
  CHECK(ids.slot(1024) == 3);
  CHECK(ids[1023].value == 1023);
  CHECK(ids.made_links().size() == 4);
  ids.add_ids(1); // one more id (an injection link): not made until made
  CHECK(ids.ids() == 5001);
  CHECK_FALSE(ids.made(5000));
  ids.make(5000).value = 5;
  CHECK(ids[5000].value == 5);
}

TEST_CASE("topology: cable directions per tier pair count each cable once each way") {
  topo::FatTreeParams p;
  p.tiers = 3;
  p.radix = 8; // 128 hosts; 128 cables host-leaf, 128 leaf-spine, 128 spine-core
  const topo::Fabric f = topo::build_fat_tree(p);
  const auto d = topo::cable_directions_by_tier(f);
  std::uint64_t total = 0;
  for (const auto& [tiers, n] : d) {
    CHECK(std::abs(tiers.first - tiers.second) == 1); // a fat-tree cables adjacent tiers only
    CHECK(n == 128);
    total += n;
  }
  CHECK(d.size() == 6);
  CHECK(total == 2 * f.num_links());
}

TEST_CASE("scenarios: the world holds the node pool and the cable directions a run uses") {
  const nlohmann::json sj = {
      {"name", "pool"},
      {"fabric", {{"generator", "fat-tree"}, {"params", {{"tiers", 2}, {"radix", 8}}}}},
      {"jobs",
       {{{"name", "a"},
         {"nodes", 4},
         {"nics_per_node", 1},
         {"workload", {{"op", "allreduce"}, {"sizes", {"1M"}}, {"iterations", 1}, {"warmup", 0}}}}}}};
  const scen::Scenario s = scen::make_scenario(sj, "test", ".");
  const scen::World w = scen::build_world(s);
  REQUIRE(w.pool);
  CHECK(w.pool->size() == w.fabric.hcas().size());
  CHECK(w.pool->nics_per_node() == scen::placement_nics(s));
  REQUIRE(w.cable_directions);
  CHECK(*w.cable_directions == topo::cable_directions_by_tier(w.fabric));
}
