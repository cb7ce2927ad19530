// `ibnetsim plan --cc`: congestion control as a plan dimension (issue 18), through the binary. Every design
// runs once per setting, named with it; each point's scenario really carries the setting (its results.json
// manifest); a design on the flow engine, which has no CC model, is refused instead of silently running
// without it.
#include "tests/apps/run_cli.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>

#include <string>

using ibn::test::read_json_file;
using ibn::test::run_cli;
using ibn::test::scratch_dir;

TEST_CASE("plan --cc none,dcqcn: each design twice, named and run with its setting") {
  const auto dir = scratch_dir("plan-cc");
  // 4 nodes x 8 GPUs, 32 HCAs: the packet engine.
  const auto r =
      run_cli("plan --gpus 32 --ratios 1:1 --cc none,dcqcn --sizes 256K -n 4 -j 2 -o " + dir.string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("qm9700-1to1-2tier-dcqcn") != std::string::npos); // the table names both
  const auto plan = read_json_file((dir / "plan.json").string());
  REQUIRE(plan.at("designs").size() == 2);
  CHECK(plan.at("request").at("cc") == nlohmann::json::array({"none", "dcqcn"}));
  const auto& none = plan.at("designs")[0];
  const auto& dcqcn = plan.at("designs")[1];
  CHECK(none.at("cc") == "none");
  CHECK(dcqcn.at("cc") == "dcqcn");
  const std::string base = none.at("name").get<std::string>();
  REQUIRE(base.size() > 5);
  CHECK(base.substr(base.size() - 5) == "-none");
  CHECK(dcqcn.at("name") == base.substr(0, base.size() - 5) + "-dcqcn");
  // Same hardware, so the same bill of materials.
  CHECK(none.at("cost_usd") == dcqcn.at("cost_usd"));
  CHECK(none.at("switches") == dcqcn.at("switches"));
  // Deltas are against the first setting's design.
  CHECK(none.at("results").at("allreduce 256KiB").at("delta_p99_pct") == 0.0);
  CHECK(dcqcn.at("results").at("allreduce 256KiB").contains("delta_p99_pct"));
  // The point's own manifest says which CC it ran with.
  for (const auto& d : plan.at("designs")) {
    const auto res =
        read_json_file((dir / "points" / d.at("name").get<std::string>() / "results.json").string());
    CHECK(res.at("manifest").at("config").at("cc").at("algorithm") == d.at("cc"));
  }
}

TEST_CASE("plan --cc refusals name the flag and the reason") {
  // 128 nodes x 8 NICs: 1,024 HCAs, the flow engine under --engine auto.
  auto r = run_cli("plan --gpus 1024 --cc none,dcqcn --no-sim -o " + scratch_dir("plan-cc-flow").string());
  CHECK(r.code == 2);
  CHECK(r.out.find("--cc dcqcn") != std::string::npos);
  CHECK(r.out.find("flow engine") != std::string::npos);
  r = run_cli("plan --gpus 32 --cc none,fancy --no-sim -o " + scratch_dir("plan-cc-bad").string());
  CHECK(r.code == 2);
  CHECK(r.out.find("--cc") != std::string::npos);
  CHECK(r.out.find("fancy") != std::string::npos);
  r = run_cli("plan --gpus 32 --cc dcqcn,dcqcn --no-sim -o " + scratch_dir("plan-cc-twice").string());
  CHECK(r.code == 2);
  CHECK(r.out.find("listed twice") != std::string::npos);
}
