// Typed results: PointResult summarises a run once, carries the fabric's summary from when its world was
// built, and results.json is its exact to_json/from_json pair.
#include "analysis/results.hpp"
#include "scenarios/runner.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>

#include <cmath>

using namespace ibn;
using namespace ibn::analysis;
using J = nlohmann::json;

namespace {

scen::Scenario small_study_point() {
  // Radix 8 at 3:1: leaves of 6 down-ports and 2 up-ports; 12 hosts fill two leaves exactly.
  const J fabric = {{"generator", "fat-tree"},
                    {"params", {{"tiers", 2}, {"radix", 8}, {"hosts", 12}, {"oversubscription", "3:1"}, {"rate", "NDR"}}}};
  const J job = {{"name", "j"},
                 {"nodes", 4},
                 {"gpus_per_node", 1},
                 {"nics_per_node", 1},
                 {"placement", "spread"},
                 {"workload",
                  {{"sizes", "64K,1M"}, {"algorithm", "ring"}, {"protocol", "simple"}, {"channels", 1},
                   {"iterations", 3}, {"warmup", 0}}}};
  return scen::make_scenario(J{{"fabric", fabric}, {"jobs", J::array({job})}}, "t.json", "");
}

} // namespace

TEST_CASE("results: a PointResult round-trips through results.json exactly, with the fabric's summary") {
  const auto s = small_study_point();
  const auto w = scen::build_world(s);
  CHECK(w.facts.hcas == 12);
  CHECK(w.facts.leaf_oversubscription() == doctest::Approx(3.0)); // from the graph, not the request
  const auto r = scen::run_scenario(s, w);
  const auto p = point_result(r);
  CHECK(p.fabric == w.facts);
  REQUIRE(p.collectives.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& c = p.collectives[i];
    REQUIRE(c.completion_us.has_value());
    CHECK(c.iterations() == 3);
    CHECK(c.measured());
    const auto raw = percentiles(r.collectives[i].samples_us);
    CHECK(std::abs(c.completion_us->p50 - raw.p50) <= 0.5e-4 + 1e-12); // rounded to 1e-4 us, once
    CHECK(c.busbw_gbps.p50 == doctest::Approx(c.algbw_gbps.p50 * 1.5).epsilon(1e-3)); // 4 ranks: 2(n-1)/n
  }
  const auto j = to_json(p);
  CHECK(j.at("fabric").at("oversubscription").at(0).get<double>() == doctest::Approx(3.0));
  CHECK(j.at("fabric").at("oversubscription").at(1).is_null()); // the top tier has no up-links
  // Written as text and read back: the same document, field for field.
  const auto back = point_result_from_json(J::parse(j.dump(2)), "t/results.json");
  CHECK(to_json(back) == j);
  CHECK(back.manifest == p.manifest);
  CHECK(back.fabric == p.fabric);
  CHECK(back.links_by_tier == p.links_by_tier);
  CHECK(back.collectives[1].samples_us == p.collectives[1].samples_us);
  CHECK(back.collectives[1].completion_us == p.collectives[1].completion_us);
  // results_json() is the same summary.
  CHECK(results_json(r).at("collectives") == j.at("collectives"));
}

TEST_CASE("results: a document that is not a results.json is an InputError naming the file") {
  CHECK(test::error_of([] { point_result_from_json(J{{"manifest", 1}}, "old/results.json"); })
            .find("old/results.json: not a results.json of this version") == 0);
  auto j = to_json(point_result(scen::run_scenario(small_study_point())));
  j.erase("fabric"); // written before results carried the fabric: a study runs such a point again
  CHECK(test::error_of([&] { point_result_from_json(j, "r.json"); }).find("r.json") == 0);
}
