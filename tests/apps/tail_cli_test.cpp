// Honest percentiles through the binary: `ibnetsim run` writes, per measured collective, the sample count, 95
// % order-statistic intervals of p50 and p99 and the percentiles its samples cannot support (issue 17 item
// 3).
#include "tests/apps/run_cli.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

TEST_CASE("run: completion_us carries n, ci.p50/p99 and the unsupported percentiles") {
  const auto dir = ibn::test::scratch_dir("tail-ci");
  const nlohmann::json scenario = {
      {"name", "tail-ci"},
      {"seed", 3},
      {"fabric",
       {{"generator", "fat-tree"},
        {"params",
         {{"tiers", 2}, {"radix", 8}, {"hosts", 16}, {"oversubscription", "1:1"}, {"rate", "NDR"}}}}},
      {"jobs",
       {{{"name", "a"},
         {"nodes", 4},
         {"gpus_per_node", 1},
         {"nics_per_node", 1},
         {"placement", "linear"},
         {"workload",
          {{"op", "allreduce"},
           {"sizes", {"64K"}},
           {"iterations", 120},
           {"warmup", 0},
           {"jitter", {{"distribution", "lognormal"}, {"scale_us", 2.0}}}}}}}}};
  const auto path = (dir / "scenario.json").string();
  std::ofstream(path) << scenario.dump(2);
  const auto r = ibn::test::run_cli("run " + path + " -q -o " + (dir / "out").string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto res = ibn::test::read_json_file((dir / "out" / "results.json").string());
  const auto& c = res.at("collectives").at(0).at("completion_us");
  INFO(c.dump());
  CHECK(c.at("n") == 120);
  CHECK(c.at("ci").at("level") == 0.95);
  const auto& p50 = c.at("ci").at("p50");
  REQUIRE(p50.at(0).is_number());
  REQUIRE(p50.at(1).is_number());
  CHECK(p50.at(0).get<double>() <= c.at("p50").get<double>());
  CHECK(p50.at(1).get<double>() >= c.at("p50").get<double>());
  // 120 samples cannot bound p99 from above at 95 %: P(all 120 below the true p99) = 0.99^120 = 30 % > 2.5 %.
  CHECK(c.at("ci").at("p99").at(1).is_null());
  CHECK(c.at("ci").at("p99").at(0).get<double>() <= c.at("p99").get<double>());
  REQUIRE(c.at("unsupported").size() == 1);
  CHECK(c.at("unsupported").at(0) == "p99.9 needs >= 1,000 samples; have 120");
}
