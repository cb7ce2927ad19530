// `ibnetsim plan` at 16,384 GPUs (issue 18's done-when), through the binary: the plan's workload
// (hierarchical AllReduce on 1,024 nodes, ring AllGather on 256, a neighbour job) is beyond the exact flow
// path's transfer limit, so every design runs on the flow engine's ring-fluid model; the plan says so in a
// note and per design, and every design still gets p50/p99 with their sample counts. A failing design point
// names its own error (exit 2 for an input error), not "internal error".
#include "tests/apps/run_cli.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>

#include <fstream>
#include <string>

using ibn::test::read_json_file;
using ibn::test::run_cli;
using ibn::test::scratch_dir;

TEST_CASE("plan at 16,384 GPUs runs every design on the ring-fluid model and says so") {
  const auto dir = scratch_dir("plan-16k");
  const auto r = run_cli("plan --gpus 16384 --gpus-per-node 8 --nic NDR --switch qm9700 --ratios 1:1,4:1 "
                         "--sizes 1M,64M -n 4 -j 2 -o " +
                         dir.string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("ring-fluid model") != std::string::npos);
  const auto plan = read_json_file((dir / "plan.json").string());
  REQUIRE(plan.at("designs").size() == 2);
  for (const auto& d : plan.at("designs")) {
    CHECK(d.at("engine") == "flow");
    CHECK(d.at("ring_fluid") == true);
    CHECK(d.at("tiers") == 3);
    for (const char* key : {"allreduce 1MiB", "allreduce 64MiB", "allgather 1MiB", "allgather 64MiB"}) {
      const auto& res = d.at("results").at(key);
      CHECK(res.at("n") == 4);
      CHECK(res.at("p50_us").get<double>() > 0);
      CHECK(res.at("p99_us").get<double>() >= res.at("p50_us").get<double>());
    }
    const auto point =
        read_json_file((dir / "points" / d.at("name").get<std::string>() / "results.json").string());
    bool warned = false;
    for (const auto& w : point.at("warnings"))
      warned = warned || w.get<std::string>().find("ring-fluid") != std::string::npos;
    CHECK(warned);
  }
  // A 4:1 leaf tier costs less than 1:1 and cannot be faster for the largest AllReduce.
  const auto& a = plan.at("designs")[0];
  const auto& b = plan.at("designs")[1];
  CHECK(b.at("cost_usd").get<double>() < a.at("cost_usd").get<double>());
  CHECK(b.at("results").at("allreduce 64MiB").at("p50_us").get<double>() >=
        a.at("results").at("allreduce 64MiB").at("p50_us").get<double>());
}

TEST_CASE("plan: a design point that fails names its error and keeps exit 2 for input errors") {
  const auto dir = scratch_dir("plan-point-error");
  // flow.ring_fluid on with an AllToAll job: the point's run refuses it (an input error of the scenario).
  const auto scen = dir / "w.json";
  std::ofstream(scen)
      << (R"({"flow": {"ring_fluid": "on"}, "jobs": [{"name": "a", "nodes": 4, "gpus_per_node": 8,
                            "workload": {"op": "alltoall", "sizes": "1M", "iterations": 2}}]})");
  const auto r = run_cli("plan --gpus 1024 --ratios 1:1 --engine flow --scenario " + scen.string() + " -o " +
                         (dir / "out").string());
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(r.out.find("flow.ring_fluid") != std::string::npos);
  CHECK(r.out.find("internal error") == std::string::npos);
}
