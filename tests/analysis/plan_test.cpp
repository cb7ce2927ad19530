// Capacity planning: the designs enumerated for a request (exact ratios, cheapest port split), the
// order-statistic confidence intervals, and a small plan run end to end on the packet engine.
#include "analysis/plan.hpp"
#include "analysis/report.hpp"
#include "sim/error.hpp"

#include "tests/test_util.hpp"

#include <doctest/doctest.h>

#include <filesystem>

using namespace ibn;
using namespace ibn::analysis;
using ibn::test::error_of;

namespace {

const std::string kCatalog = std::string(IBNETSIM_SOURCE_DIR) + "/data/catalog/parts.json";

PlanOptions request(std::int64_t gpus) {
  PlanOptions o;
  o.gpus = gpus;
  o.catalog_path = kCatalog;
  return o;
}

} // namespace

TEST_CASE("plan: 1024 GPUs on QM9700 at 1:1, 2:1, 4:1 -> SU of 32 nodes, leaf ports 64/48/40") {
  const auto c = topo::Catalog::load(kCatalog);
  std::vector<std::string> notes;
  const auto d = plan_designs(request(1024), c, &notes);
  REQUIRE(d.size() == 3);
  CHECK(d[0].ratio == "1:1");
  CHECK(d[0].leaf_ports == 64);
  CHECK(d[0].bom.switches == 48); // 32 leaves + 16 spines (SuperPOD 4 SU)
  CHECK(d[1].ratio == "2:1");
  CHECK(d[1].leaf_ports == 48);
  CHECK(d[1].bom.switches == 40); // 32 leaves + 8 spines
  CHECK(d[2].leaf_ports == 40);
  CHECK(d[2].bom.switches == 36); // 32 leaves + 4 spines
  for (const auto& x : d) {
    CHECK(x.su_nodes == 32);
    CHECK(x.engine == "flow"); // 1,024 HCAs: above the packet engine's limit
    CHECK(x.tiers == 2);
  }
  CHECK(d[0].bom.cost_usd > d[1].bom.cost_usd);
  CHECK(d[1].bom.cost_usd > d[2].bom.cost_usd);
  CHECK(d[0].bisection_gbps == doctest::Approx(1024 * 400.0 / 2));
  CHECK(d[1].bisection_gbps == doctest::Approx(1024 * 400.0 / 4));
}

TEST_CASE("plan: refusals name the flag") {
  const auto c = topo::Catalog::load(kCatalog);
  auto o = request(1000);
  o.gpus_per_node = 8;
  o.gpus = 1004;
  CHECK(error_of([&] { plan_designs(o, c); }).find("not a multiple of --gpus-per-node") != std::string::npos);
  o = request(1024);
  o.switches = {"nosuch"};
  CHECK(error_of([&] { plan_designs(o, c); }).find("--switch: 'nosuch'") != std::string::npos);
  o = request(1024);
  o.nic_rate = "HDR";
  CHECK(error_of([&] { plan_designs(o, c); }).find("runs NDR ports but --nic is HDR") != std::string::npos);
  o = request(1024);
  o.ratios = {{3, 1}}; // 32-node SUs cannot split 3:1; smaller SUs would leave one partly filled
  CHECK(error_of([&] { plan_designs(o, c); }).find("no valid design") != std::string::npos);
}

TEST_CASE("plan: a small plan runs end to end (packet engine), with results, CIs, Pareto and a report") {
  auto o = request(64); // 8 nodes x 8 GPUs
  o.ratios = {{1, 1}, {2, 1}};
  o.sizes = {"256K"};
  o.iterations = 8;
  o.jobs = 2;
  o.out_dir = (std::filesystem::temp_directory_path() / "ibnetsim-plan-test").string();
  std::filesystem::remove_all(o.out_dir);
  const auto plan = run_plan(o);
  REQUIRE(plan.at("designs").size() == 2);
  for (const auto& d : plan.at("designs")) {
    CHECK(d.at("engine") == "packet");
    for (const char* k :
         {"name", "ratio", "switches", "cables", "transceivers", "cost_usd", "power_w", "bisection_gbps"})
      CHECK(d.contains(k));
    REQUIRE(d.at("results").contains("allreduce 256KiB"));
    const auto& r = d.at("results").at("allreduce 256KiB");
    CHECK(r.at("p50_us").get<double>() > 0);
    CHECK(r.at("p99_us").get<double>() >= r.at("p50_us").get<double>());
    CHECK(r.at("n") == 8);
  }
  CHECK(plan.at("designs")[0].at("ratio") == "1:1");
  CHECK(plan.at("designs")[0].at("results").at("allreduce 256KiB").at("delta_p99_pct") == 0.0);
  CHECK(!plan.at("pareto").empty());
  CHECK(!plan.at("recommendation").get<std::string>().empty());
  CHECK(std::filesystem::exists(o.out_dir + "/plan.json"));
  const auto html = render_plan_report(plan);
  CHECK(html.find("class=\"headline\"") < html.find("<table"));
  CHECK(html.find("Configuration") > html.find("Bill of materials"));
  // A second run reuses every point (resume) and gives the same designs and numbers.
  const auto again = run_plan(o);
  CHECK(again.at("designs") == plan.at("designs"));
}
