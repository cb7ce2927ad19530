// Defects found by the walk through sweep, whatif, routes and plan of 2026-12-07 (session 23), each with the
// case that showed it.
#include "tests/apps/run_cli.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;

namespace {
bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}
/// A 4-node ring AllReduce on a 16-host 2-tier tree, 3 iterations of 64 KiB and 1 MiB.
std::string tiny(const fs::path& dir, const std::string& extra = "") {
  const auto path = dir / "s.json";
  std::ofstream(path) << R"({"name": "tiny", "seed": 1,
    "fabric": {"generator": "fat-tree", "params": {"tiers": 2, "radix": 8, "hosts": 16, "rate": "NDR"}},
    "routing": {"algorithm": "ftree", "adaptive": "off"})" +
                             extra + R"(,
    "jobs": [{"name": "j", "nodes": 4, "gpus_per_node": 1, "nics_per_node": 1,
      "workload": {"op": "allreduce", "sizes": ["64K", "1M"], "algorithm": "ring", "iterations": 3,
                   "warmup": 1}}]})";
  return path.string();
}
} // namespace

TEST_CASE("whatif and sweep: what a point's engine ignores is printed before the points run") {
  // cc.algorithm dcqcn on the flow engine ran without CC, rows labelled dcqcn, the warning only in the
  // points' results.json.
  const auto dir = ibn::test::scratch_dir("s23-ignored");
  const auto s = tiny(dir, R"(, "cc": {"algorithm": "dcqcn"})");
  auto r =
      ibn::test::run_cli("whatif " + s + " --engine flow --oversubscription 1:1 --routing off -j 1 -q -o " +
                         (dir / "w").string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK(has(r.out,
            "warning: no effect: engine 'flow' ignores what this scenario asks for: cc.algorithm dcqcn"));
  r = ibn::test::run_cli("sweep " + tiny(dir) +
                         " --vary engine=packet,flow --vary routing.adaptive=off,per-packet "
                         "-j 1 -q -o " +
                         (dir / "sw").string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK(has(r.out, "warning: no effect on 1 of 4 points: engine 'flow' ignores what this scenario asks for: "
                   "routing.adaptive per-packet"));
}

TEST_CASE("whatif and sweep: a collective with no completed iteration is a warning, not a silent gap") {
  const auto dir = ibn::test::scratch_dir("s23-cut");
  const auto s = tiny(dir);
  auto r = ibn::test::run_cli("whatif " + s + " --oversubscription 1:1 --routing off -j 1 -q -o " +
                              (dir / "w").string() + " --set run.max_sim_time_ms=0.01");
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK(has(r.out, "warning: point 1t1-static: job j, allreduce 1MiB: no measured iteration completed "
                   "(run.max_sim_time_ms reached"));
  const auto w = ibn::test::read_json_file((dir / "w" / "whatif.json").string());
  CHECK(w["rows"].empty());
  CHECK(w["manifest"]["warnings"].size() == 2);
  r = ibn::test::run_cli("sweep " + s + " --vary run.max_sim_time_ms=0.15,0.01 -j 1 -q -o " +
                         (dir / "sw").string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto sum = ibn::test::read_json_file((dir / "sw" / "summary.json").string());
  // Every collective is either a row or a warning.
  CHECK(sum["rows"].size() + sum["manifest"]["warnings"].size() == 4);
  CHECK(sum["manifest"]["warnings"].size() >= 2);
}

TEST_CASE("sweep: bounds, bad values and routings the engines cannot run are refused before anything runs") {
  const auto dir = ibn::test::scratch_dir("s23-sweep-refuse");
  const auto s = tiny(dir);
  auto r = ibn::test::run_cli("sweep " + s + " --vary routing.adaptive=off --seeds 4000000000 -j 1 -o " +
                              (dir / "a").string());
  CHECK(r.code == 2);
  CHECK(has(r.out, "4000000000 points"));
  r = ibn::test::run_cli("sweep " + s + " --vary routing.algorithm=ftree,df-valiant -j 1 -q -o " +
                         (dir / "b").string());
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(has(r.out, "'df-valiant' is not implemented in the engines"));
  CHECK(!fs::exists(dir / "b")); // nothing written: the check runs before the first point
  for (const auto& bad : {"-1", "nan", "0"}) {
    r = ibn::test::run_cli("sweep " + s + " --vary routing.adaptive=off -j 1 -q --wait-s " + bad + " -o " +
                           (dir / "c").string());
    CHECK(r.code == 2);
    CHECK(has(r.out, "--wait-s"));
  }
}

TEST_CASE("--set of one key twice is refused, and routes refuses --roots outside updn") {
  const auto dir = ibn::test::scratch_dir("s23-set-twice");
  const auto s = tiny(dir);
  for (const std::string& cmd : {"whatif " + s + " -j 1", "run " + s}) {
    const auto r = ibn::test::run_cli(cmd + " -q -o " + (dir / "o").string() +
                                      " --set 'jobs[0].workload.sizes=1M' --set 'jobs[0].workload.sizes=4M'");
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK(has(r.out, "key 'jobs[0].workload.sizes' is already set by --set jobs[0].workload.sizes=1M"));
  }
  const std::string f = (dir / "f.json").string();
  REQUIRE(ibn::test::run_cli("topo generate fat-tree --tiers 2 --radix 8 --hosts 16 -o " + f).code == 0);
  auto r =
      ibn::test::run_cli("topo routes " + f + " --routing minhop --roots leaf-0 -o " + (dir / "m").string());
  CHECK(r.code == 2);
  CHECK(has(r.out, "--roots: only updn takes root switches, not 'minhop'"));
  r = ibn::test::run_cli("topo routes " + f + " --routing updn --roots spine-0,spine-0 -o " +
                         (dir / "m").string());
  CHECK(r.code == 2);
  r = ibn::test::run_cli("topo routes " + f + " --routing updn --roots spine-0 -o " + (dir / "m").string());
  CHECK(r.code == 0);
}

TEST_CASE("plan -o that cannot be a folder is exit 2 naming it, not an internal error") {
  const auto dir = ibn::test::scratch_dir("s23-plan-o");
  std::ofstream(dir / "afile") << "x";
  const auto r = ibn::test::run_cli("plan --gpus 64 --no-sim -o " + (dir / "afile" / "sub").string());
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(has(r.out, "cannot create folder"));
  CHECK(!has(r.out, "internal error"));
}
