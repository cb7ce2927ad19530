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
using ibn::test::has;
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

TEST_CASE(
    "plan: no design says why the generator refused the exact splits, and a cost tie goes to the lower p99") {
  const auto dir = ibn::test::scratch_dir("s23-plan");
  auto r = ibn::test::run_cli("plan --gpus 16384 --tiers 2 --no-sim -o " + (dir / "a").string());
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(has(r.out, "exact split(s) refused by the generator, e.g. rail-optimized:"));
  CHECK(has(r.out, "use --tiers 3"));
  // Two designs of one cost (4:1 with and without DCQCN): the recommendation is the one on the Pareto front.
  r = ibn::test::run_cli("plan --gpus 512 --ratios 1:1,4:1 --cc none,dcqcn --sizes 4M -n 3 -j 1 -o " +
                         (dir / "b").string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto plan = ibn::test::read_json_file((dir / "b" / "plan.json").string());
  const std::string rec = plan["recommendation"];
  bool on_front = false;
  for (const auto& name : plan["pareto"])
    on_front |= rec.find("(" + name.get<std::string>() + ")") != std::string::npos;
  CHECK(on_front);
}

TEST_CASE("topo bom: a cable longer than the catalog spans and parts of another rate are warnings") {
  const auto dir = ibn::test::scratch_dir("s23-bom");
  const std::string far = (dir / "far.json").string(), ro = (dir / "ro.json").string();
  REQUIRE(ibn::test::run_cli("topo generate fat-tree --radix 8 --cable-m host=600 -o " + far).code == 0);
  auto r = ibn::test::run_cli("topo bom " + far);
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(has(r.out, "warning: 32 cable(s) longer than any catalog cable spans (up to 600 m"));
  REQUIRE(ibn::test::run_cli("topo generate rail-optimized --nodes 32 -o " + ro).code == 0);
  r = ibn::test::run_cli("topo bom " + ro + " --switch q3400 --nic-model connectx-8");
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(has(r.out, "--switch q3400 runs 800 Gb/s ports but the fabric's links run 400 Gb/s"));
  CHECK(has(r.out, "--nic-model connectx-8 runs 800 Gb/s ports"));
  r = ibn::test::run_cli("topo bom " + ro);
  CHECK(!has(r.out, "warning"));
  // A catalog's bad rate names the entry; a missing $IBNETSIM_CATALOG names the variable.
  auto cat = ibn::test::read_json_file(std::string(IBNETSIM_SOURCE_DIR) + "/data/catalog/parts.json");
  cat["switches"][0]["rate"] = "FOO";
  std::ofstream(dir / "cat.json") << cat.dump();
  r = ibn::test::run_cli("topo bom " + ro + " --catalog " + (dir / "cat.json").string());
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(has(r.out, "cat.json: switches[0]"));
  CHECK(has(r.out, "key 'rate'"));
  r = ibn::test::run_cli("topo bom " + ro + " 2>&1; IBNETSIM_CATALOG=/nonexistent.json " +
                         std::string(IBNETSIM_BINARY) + " topo bom " + ro);
  CHECK(has(r.out, "IBNETSIM_CATALOG=/nonexistent.json: no such parts catalog file"));
}

TEST_CASE("an unknown command word is named with the commands of its level") {
  auto r = ibn::test::run_cli("topo describe x.json");
  CHECK(r.code == 2);
  CHECK(has(r.out, "'describe' is not a command of ibnetsim topo (commands: generate, import, info"));
  r = ibn::test::run_cli("frobnicate");
  CHECK(r.code == 2);
  CHECK(has(r.out, "'frobnicate' is not a command of ibnetsim (commands: topo,"));
  const auto dir = ibn::test::scratch_dir("s23-report-empty-o");
  REQUIRE(ibn::test::run_cli("run " + tiny(dir) + " -q -o " + (dir / "r").string()).code == 0);
  r = ibn::test::run_cli("report " + (dir / "r").string() + " -o ''");
  CHECK(r.code == 2);
  CHECK(has(r.out, "-o: the output path is empty"));
  CHECK(!fs::exists(dir / "r" / "report.html"));
}

TEST_CASE(
    "report of a sweep folder: ratios compared per seed, only the sweep's own points, mixed engines said") {
  const auto dir = ibn::test::scratch_dir("s23-report-sweep");
  const auto s = tiny(dir);
  const std::string sw = (dir / "sw").string();
  REQUIRE(ibn::test::run_cli("sweep " + s +
                             " --vary fabric.params.oversubscription=1:1,3:1 --seeds 2 -j 1 -q -o " + sw)
              .code == 0);
  auto r = ibn::test::run_cli("report " + sw + " -o -");
  REQUIRE(r.code == 0);
  CHECK(has(r.out, "static seed=2 at 3:1")); // was: every point its own curve, 3:1 rows marked "reference"
  // The same folder reused by a one-point sweep: the report reads that sweep's point only.
  REQUIRE(ibn::test::run_cli("sweep " + s + " --vary 'jobs[0].workload.sizes=64K' -j 1 -q -o " + sw).code ==
          0);
  r = ibn::test::run_cli("report " + sw + " -o -");
  REQUIRE(r.code == 0);
  CHECK(has(r.out, "sweep of 1 points (4 other point folder(s) not in its summary.json left out)"));
  const std::string mixed = (dir / "mixed").string();
  REQUIRE(ibn::test::run_cli("sweep " + s + " --vary engine=packet,flow -j 1 -q -o " + mixed).code == 0);
  r = ibn::test::run_cli("report " + mixed + " -o -");
  REQUIRE(r.code == 0);
  CHECK(has(r.out, "mixed (flow, packet)"));
}

TEST_CASE("sweep: two spellings of one fabric are one point, and whatif names the ratio the user wrote") {
  const auto dir = ibn::test::scratch_dir("s23-spellings");
  const auto s = tiny(dir);
  for (const std::string vary :
       {"fabric.params.oversubscription=1:1,2:2", "fabric.params.rate=NDR,400Gbps"}) {
    const auto r =
        ibn::test::run_cli("sweep " + s + " --vary " + vary + " -j 1 -q -o " + (dir / "o").string());
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK(has(r.out, "the same scenario (two spellings of one value)"));
  }
  const auto r = ibn::test::run_cli("whatif " + s + " --oversubscription 1:1,2:2 -o " + (dir / "w").string());
  CHECK(r.code == 2);
  CHECK(has(r.out, "--oversubscription: 2:2 and 1:1 are the same ratio"));
}

TEST_CASE("topo generate: spine= of --cable-m on a 2-tier design is refused, on 3 tiers it sets the cables") {
  const auto dir = ibn::test::scratch_dir("s23-cable-spine");
  auto r = ibn::test::run_cli("topo generate fat-tree --tiers 2 --radix 8 --cable-m host=3,spine=7 -o " +
                              (dir / "a.json").string());
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(has(r.out, "--cable-m spine=: a 2-tier tree has no spine-to-core cables"));
  r = ibn::test::run_cli("topo generate rail-optimized --nodes 8 --su-nodes 8 --cable-m spine=7 -o " +
                         (dir / "b.json").string());
  CHECK(r.code == 2);
  CHECK(has(r.out, "this design has 2 tiers"));
  r = ibn::test::run_cli("topo generate fat-tree --tiers 3 --radix 8 --cable-m spine=7 -o " +
                         (dir / "c.json").string());
  REQUIRE(r.code == 0);
  const auto f = ibn::test::read_json_file((dir / "c.json").string());
  bool seven = false;
  for (const auto& l : f["links"]) seven |= l.value("length_m", 0.0) == 7.0;
  CHECK(seven);
}

TEST_CASE("a folder where a command writes one of its files is refused before the command runs") {
  // plan wrote plan.json, then failed on a report.html folder (with a hint to write inside it).
  const auto dir = ibn::test::scratch_dir("s23-folder-outputs");
  fs::create_directories(dir / "p" / "report.html");
  auto r = ibn::test::run_cli("plan --gpus 64 --no-sim -o " + (dir / "p").string());
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(has(r.out, "report.html is a folder, where this command writes its report.html"));
  CHECK(!fs::exists(dir / "p" / "plan.json"));
  fs::create_directories(dir / "r" / "results.csv");
  r = ibn::test::run_cli("run " + tiny(dir) + " -q -o " + (dir / "r").string());
  CHECK(r.code == 2);
  CHECK(!fs::exists(dir / "r" / "results.json"));
}
