// Defects found by a walk through the product as a new user (2026-12-06, late): each test runs the command
// that went wrong and checks the behaviour that replaced it.
#include "tests/apps/run_cli.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

const std::string kData = IBNETSIM_TEST_DATA;
const std::string kSmall = std::string(IBNETSIM_SOURCE_DIR) + "/scenarios/examples/small-allreduce.json";

bool says(const ibn::test::CliResult& r, const std::string& text) {
  return r.out.find(text) != std::string::npos;
}

} // namespace

TEST_CASE("plan refuses what it used to take silently: 0 NICs, a 0-byte size, a value twice, -o a file") {
  const auto dir = ibn::test::scratch_dir("review-plan");
  const std::string out = " --no-sim -o " + (dir / "p").string();
  auto r = ibn::test::run_cli("plan --gpus 64 --nics-per-node 0" + out);
  CHECK(r.code == 2);
  CHECK(says(r, "--nics-per-node"));
  r = ibn::test::run_cli("plan --gpus 64 --sizes 1M,0" + out);
  CHECK(r.code == 2);
  CHECK(says(r, "--sizes"));
  for (const char* dup : {"--ratios 1:1,1:1", "--switch qm9700,qm9700", "--sizes 1M,1M"}) {
    r = ibn::test::run_cli("plan --gpus 64 " + std::string(dup) + out);
    CHECK(r.code == 2);
    CHECK(says(r, "listed twice"));
  }
  { std::ofstream((dir / "afile").string()) << "x"; }
  r = ibn::test::run_cli("plan --gpus 64 --no-sim -o " + (dir / "afile").string());
  CHECK(r.code == 2);
  CHECK(says(r, "is a file, not a folder"));
  // With --scenario the workload's sizes and iterations are the scenario's: --sizes / -n would be ignored.
  r = ibn::test::run_cli("plan --gpus 64 --scenario " + kSmall + " --sizes 2M" + out);
  CHECK(r.code == 2);
  CHECK(says(r, "--scenario"));
  r = ibn::test::run_cli("plan --gpus 64 --scenario " + kSmall + " -n 5" + out);
  CHECK(r.code == 2);
}

TEST_CASE("plan and topo bom: modules of the link's rate only, one per twin cage, and the warning reaches "
          "the plan") {
  // XDR Quantum-X800 (twin cages) and no XDR twin module in the catalog: 1,024 cages of fibre on the 1:1
  // design, counted once each and not priced (before: 2,048 NDR twin modules, one per port, priced).
  const auto dir = ibn::test::scratch_dir("review-bom");
  const auto r = ibn::test::run_cli("plan --gpus 1024 --nic XDR --switch q3400 --ratios 1:1 --no-sim -o " +
                                    (dir / "p").string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto plan = ibn::test::read_json_file((dir / "p" / "plan.json").string());
  std::int64_t modules = 0;
  for (const auto& l : plan.at("designs").at(0).at("bom").at("lines"))
    if (l.at("item") == "transceiver") {
      modules += l.at("count").get<std::int64_t>();
      CHECK(l.at("cost_usd").get<double>() == 0);
      CHECK(l.at("model").get<std::string>().find("not in catalog") != std::string::npos);
    }
  CHECK(modules == 1024);
  bool noted = false;
  for (const auto& n : plan.at("notes"))
    noted = noted || n.get<std::string>().find("not priced") != std::string::npos;
  CHECK(noted);
  // Two planes: each NIC has a port in both, so 32 nodes x 8 rails buy 256 NICs, not 512.
  const auto fab = (dir / "ro2.json").string();
  REQUIRE(ibn::test::run_cli("topo generate rail-optimized --nodes 32 --planes 2 -o " + fab).code == 0);
  const auto bom = ibn::test::run_cli("topo bom " + fab);
  INFO(bom.out);
  CHECK(says(bom, "256 NICs"));
  // CSV in fixed notation (a spreadsheet read 3.80926e+06 as a rounded number).
  const auto csv = ibn::test::run_cli("topo bom " + fab + " --csv");
  CHECK(csv.out.find("e+") == std::string::npos);
  CHECK(says(csv, ".00,"));
}

TEST_CASE("topo routes -o the input fabric is refused (it used to overwrite it)") {
  const auto dir = ibn::test::scratch_dir("review-routes");
  const auto fab = (dir / "ft.json").string();
  REQUIRE(ibn::test::run_cli("topo generate fat-tree --tiers 2 --radix 8 --hosts 16 -o " + fab).code == 0);
  const auto before = ibn::test::read_text_file(fab);
  const auto r = ibn::test::run_cli("topo routes " + fab + " -o " + fab);
  CHECK(r.code == 2);
  CHECK(ibn::test::read_text_file(fab) == before);
}

TEST_CASE(
    "sweep and whatif: a value twice, seed varied beside --seeds, bad counts are refused before running") {
  const auto dir = ibn::test::scratch_dir("review-sweep");
  const std::string out = " -o " + (dir / "o").string();
  auto r = ibn::test::run_cli("sweep " + kSmall + " --vary seed=1,2" + out);
  CHECK(r.code == 2);
  CHECK(says(r, "--seeds"));
  r = ibn::test::run_cli("sweep " + kSmall + " --vary routing.adaptive=off,off" + out);
  CHECK(r.code == 2);
  CHECK(says(r, "listed twice"));
  r = ibn::test::run_cli("sweep " + kSmall + " --vary bogus.key=1,2" + out);
  CHECK(r.code == 2);
  CHECK(says(r, "--vary bogus.key"));
  r = ibn::test::run_cli("sweep " + kSmall + " --vary routing.adaptive=off --seeds 0" + out);
  CHECK(r.code == 2);
  CHECK(says(r, "--seeds"));
  for (const char* dup : {"--faults none,none", "--routing off,off", "--oversubscription 1:1,1:1"}) {
    r = ibn::test::run_cli("whatif " + kSmall + " " + dup + out);
    CHECK(r.code == 2);
    CHECK(says(r, "listed twice"));
    CHECK_FALSE(std::filesystem::exists(dir / "o" / "whatif.json")); // refused before any point ran
  }
  r = ibn::test::run_cli("run " + kSmall + " --tail-precision 5% --max-iters -3" + out);
  CHECK(r.code == 2);
  r = ibn::test::run_cli("run " + kSmall + " --max-iters 30" + out);
  CHECK(r.code == 2);
  CHECK(says(r, "--tail-precision"));
}

TEST_CASE("sweep summary rows carry the sample count and intervals of their percentiles") {
  const auto dir = ibn::test::scratch_dir("review-sweep-n");
  const auto ok = ibn::test::run_cli("sweep " + kSmall + " --vary jobs[0].workload.iterations=5 -q -o " +
                                     (dir / "o").string());
  INFO(ok.out);
  REQUIRE(ok.code == 0);
  const auto s = ibn::test::read_json_file((dir / "o" / "summary.json").string());
  REQUIRE(!s.at("rows").empty());
  for (const auto& row : s.at("rows")) {
    CHECK(row.at("completion_us").at("n") == 5);
    CHECK(row.at("completion_us").contains("ci"));
    CHECK(row.at("completion_us").contains("unsupported"));
  }
}

TEST_CASE(
    "run: a launch-jitter tail too heavy for the clock is held at 1,000 s with a warning, never negative") {
  const auto dir = ibn::test::scratch_dir("review-launch");
  const auto r =
      ibn::test::run_cli("run " + kSmall +
                         " --set jobs[0].workload.iterations=5 --set variability.launch.median_us=1000000"
                         " --set variability.launch.sigma=10 -o " +
                         (dir / "o").string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK(says(r, "charged as 1,000 s"));
  const auto res = ibn::test::read_json_file((dir / "o" / "results.json").string());
  for (const auto& c : res.at("collectives")) CHECK(c.at("completion_us").at("min").get<double>() > 0);
}

TEST_CASE("faults: a degradation that would make a cable faster, or leave it as it is, is refused") {
  const auto dir = ibn::test::scratch_dir("review-degrade");
  const std::string base = "run " + kSmall + " --set jobs[0].workload.iterations=2 -o " +
                           (dir / "o").string() + " --set faults.random.degraded_fraction=1";
  auto r = ibn::test::run_cli(
      base + " --set faults.random.degraded_width=12 --set faults.random.degraded_speed=XDR");
  CHECK(r.code == 2);
  CHECK(says(r, "faster than"));
  r = ibn::test::run_cli(base +
                         " --set faults.random.degraded_width=4 --set faults.random.degraded_speed=NDR");
  CHECK(r.code == 2);
  CHECK(says(r, "leaves it as it is"));
}

TEST_CASE("nccl-tests: one rank and an -n that overflows are refused") {
  auto r = ibn::test::run_cli("nccl-tests all_reduce_perf -b 1M -e 1M -g 1 --nodes 1 -n 1");
  CHECK(r.code == 2);
  CHECK(says(r, "at least two"));
  CHECK_FALSE(says(r, "nan"));
  r = ibn::test::run_cli("nccl-tests all_reduce_perf -b 1M -e 1M -g 2 --nodes 1 -n 2147483648");
  CHECK(r.code == 2);
  CHECK(says(r, "-n"));
}

TEST_CASE(
    "validate nccl-tests: a cut table is noted, a test not in the log is named, NCCL_ALGO from mpirun -x") {
  const auto dir = ibn::test::scratch_dir("review-validate");
  const std::string log = kData + "/nccl-tests/h100-ndr200-ib-2node-8gpu-all_gather-snellius-odissei.log";
  // The log cut in the middle of its 16 KiB row.
  const std::string text = ibn::test::read_text_file(log);
  const auto row = text.find("\n       16384 ");
  REQUIRE(row != std::string::npos);
  const auto cut = (dir / "cut.log").string();
  { std::ofstream(cut) << text.substr(0, row + 40); }
  auto r = ibn::test::run_cli("validate nccl-tests " + cut + " -n 1 --max-bytes 64K --json 2>/dev/null");
  REQUIRE(r.code == 0);
  const auto v = nlohmann::json::parse(r.out);
  bool truncated = false;
  for (const auto& n : v.at("notes"))
    truncated = truncated || n.get<std::string>().find("truncated") != std::string::npos;
  CHECK(truncated);
  r = ibn::test::run_cli("validate nccl-tests " + log + " --test all_reduce_perf -n 1");
  CHECK(r.code == 2);
  CHECK(says(r, "holds all_gather_perf"));
  // issue 309's last run: "mpirun ... -x NCCL_ALGO=Ring ... ./build/all_reduce_perf" (no NCCL INFO line says
  // it).
  r = ibn::test::run_cli("validate nccl-tests " + kData +
                         "/nccl-tests/h100-ndr400x8-ib-2node-4node-8node-all_reduce-nccl-tests-issue309.md "
                         "--engine flow -n 1 --max-bytes 1M --json 2>/dev/null");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  bool ring = false;
  for (const auto& run : j.at("runs"))
    if (run.at("line") == 580) ring = run.at("algorithm") == "ring";
  CHECK(ring);
}

TEST_CASE("profiles and fits: a bad $.nccl.version, --nccl-set without a log, a run given twice") {
  const auto dir = ibn::test::scratch_dir("review-profile");
  const std::string snel =
      kData + "/nccl-tests/h100-ndr200-ib-2node-8gpu-all_reduce-repeat-n100-snellius-odissei.log";
  const auto prof = (dir / "p.json").string();
  REQUIRE(ibn::test::run_cli("calibrate fit " + snel + " -o " + prof).code == 0);
  auto p = ibn::test::read_json_file(prof);
  p["nccl"]["version"] = "7.1";
  const auto bad = (dir / "bad.json").string();
  { std::ofstream(bad) << p.dump(2); }
  auto r = ibn::test::run_cli("nccl-tests all_reduce_perf -b 1M -e 1M -g 4 --nodes 2 -n 1 --profile " + bad);
  CHECK(r.code == 2);
  CHECK(says(r, "$.nccl.version"));
  r = ibn::test::run_cli(
      "calibrate fit " + kData +
      "/perftest/cx3-mt4099-qdr40g-ib-ib_send_lat-a.txt --nccl-set nccl.version=2.8.4 -o " +
      (dir / "x.json").string());
  CHECK(r.code == 2);
  CHECK(says(r, "no nccl-tests log"));
  const std::string abci =
      kData + "/nccl-tests/a100-hdr200x4-ib-2node-16gpu-all_reduce-4B-32M-abci-aist-job7194279.log";
  const auto copy = (dir / "copy.log").string();
  std::filesystem::copy_file(abci, copy, std::filesystem::copy_options::overwrite_existing);
  r = ibn::test::run_cli("validate repeats " + abci + " " + copy + " " + snel + " --leave-one-out");
  CHECK(r.code == 2);
  CHECK(says(r, "a copy of one run is not a repeat"));
  r = ibn::test::run_cli("calibrate fit --base " + prof + " --repeats " + abci + " " + abci + " -o " +
                         (dir / "y.json").string());
  CHECK(r.code == 2);
  CHECK(says(r, "given twice"));
}

TEST_CASE("nccl-tests: broadcast_perf and reduce_perf run (root 0), and --set of a key the table reports is "
          "refused") {
  for (const char* t : {"broadcast_perf", "reduce_perf"}) {
    const auto r = ibn::test::run_cli(std::string("nccl-tests ") + t + " -b 1M -e 1M -g 4 --nodes 2 -n 2 -q");
    INFO(r.out);
    REQUIRE(r.code == 0);
    CHECK(ibn::test::busbw_of(r.out) > 0);
    CHECK(says(r, "       0 ")); // the root column
  }
  const auto r =
      ibn::test::run_cli("nccl-tests all_reduce_perf -b 1M -e 1M -g 2 --set jobs[0].workload.op=allgather");
  CHECK(r.code == 2);
  CHECK(says(r, "jobs[0].workload.op"));
}

TEST_CASE(
    "run: a collective none of whose iterations completed keeps its row, and thin percentiles carry a star") {
  const auto dir = ibn::test::scratch_dir("review-missing");
  // host-0's only cable fails at 5 us: its QP exhausts its retries and no iteration completes.
  auto r = ibn::test::run_cli(
      "run " + kSmall +
      " --set jobs[0].workload.iterations=5 --set "
      "'faults.events=[{\"kind\":\"link_down\",\"link\":\"host-0:1\",\"time_us\":5}]' -o " +
      (dir / "a").string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK(says(r, "no iteration of this collective completed"));
  const auto csv = ibn::test::read_text_file((dir / "a" / "results.csv").string());
  CHECK(csv.find("train,allreduce,ring,ll,262144,32,0,") != std::string::npos);
  // 5 samples: p99 and p99.9 are the largest sample, starred and explained.
  r = ibn::test::run_cli("run " + kSmall + " --set jobs[0].workload.iterations=5 -o " + (dir / "b").string());
  REQUIRE(r.code == 0);
  CHECK(says(r, "* from fewer samples than the percentile needs"));
}

TEST_CASE("validate JSON carries a manifest, validate osu rows their sample count, and one ratio spelled "
          "twice is refused") {
  const std::string log = kData + "/nccl-tests/h100-ndr200-ib-2node-8gpu-all_gather-snellius-odissei.log";
  auto r = ibn::test::run_cli("validate nccl-tests " + log + " -n 1 --max-bytes 4K --json 2>/dev/null");
  REQUIRE(r.code == 0);
  const auto v = nlohmann::json::parse(r.out);
  CHECK(v.at("manifest").at("version").is_string());
  CHECK(v.at("manifest").contains("build"));
  CHECK(v.at("manifest").at("engine") == "packet");
  r = ibn::test::run_cli("validate osu " + kData +
                         "/osu/oci-bm.optimized3.36-roce100g-osu_latency-bw-allreduce4node-alltoall1node.txt "
                         "--rate EDR --test osu_latency --max-bytes 64 --samples 50 --json 2>/dev/null");
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto o = nlohmann::json::parse(r.out);
  CHECK(o.at("manifest").at("samples_per_size") == 50);
  REQUIRE(!o.at("rows").empty());
  for (const auto& row : o.at("rows")) {
    CHECK(row.at("predicted_n") == 50);
    CHECK(row.contains("predicted_unsupported")); // p99 from 50 samples
  }
  const auto dir = ibn::test::scratch_dir("review-ratio");
  r = ibn::test::run_cli("plan --gpus 64 --ratios 1:1,2:2 --no-sim -o " + (dir / "p").string());
  CHECK(r.code == 2);
  CHECK(says(r, "same ratio"));
  r = ibn::test::run_cli("whatif " + kSmall + " --faults 1-link,1-link@leaf-spine -o " +
                         (dir / "w").string());
  CHECK(r.code == 2);
  CHECK(says(r, "same setting"));
}

TEST_CASE("small refusals and messages: --nics 0, a file twice, a 1e9 m cable, --gpus-per-node, JSON arrays, "
          "list") {
  const auto dir = ibn::test::scratch_dir("review-small");
  auto r = ibn::test::run_cli("nccl-tests all_reduce_perf -b 1M -e 1M -g 2 --nodes 2 --nics 0");
  CHECK(r.code == 2);
  CHECK(says(r, "--nics"));
  const std::string snel =
      kData + "/nccl-tests/h100-ndr200-ib-2node-8gpu-all_reduce-repeat-n100-snellius-odissei.log";
  r = ibn::test::run_cli("calibrate fit " + snel + " " + snel + " -o " + (dir / "p.json").string());
  CHECK(r.code == 2);
  CHECK(says(r, "given twice"));
  r = ibn::test::run_cli("calibrate fit " + snel + " --nccl-set foo.bar=1 -o " + (dir / "p.json").string());
  CHECK(r.code == 2);
  CHECK(says(r, "--nccl-set foo.bar"));
  r = ibn::test::run_cli("perftest ib_write_lat --cable-m 1e9");
  CHECK(r.code == 2);
  CHECK(says(r, "100,000 m"));
  r = ibn::test::run_cli("plan --gpus 2048 --gpus-per-node 1024 --no-sim -o " + (dir / "plan").string());
  CHECK(r.code == 2);
  CHECK(says(r, "--gpus-per-node 1024"));
  { std::ofstream((dir / "arr.json").string()) << "[1, 2]"; }
  r = ibn::test::run_cli("topo info " + (dir / "arr.json").string());
  CHECK(r.code == 2);
  CHECK(says(r, "a JSON array"));
  r = ibn::test::run_cli("list");
  CHECK(says(r, "placement policies:"));
  CHECK_FALSE(says(r, "policys"));
  // calibrate check with a profile fitted from nccl-tests logs only says what it compares.
  REQUIRE(ibn::test::run_cli("calibrate fit " + snel + " -o " + (dir / "p.json").string()).code == 0);
  r = ibn::test::run_cli("calibrate check " + (dir / "p.json").string() + " " + kData +
                         "/perftest/cx3-mt4099-qdr40g-ib-ib_send_lat-a.txt --iters 20");
  CHECK(says(r, "no perftest-fitted device settings"));
}

TEST_CASE("run records which nodes straggle, and whatif says whether --tail-precision was reached") {
  const auto dir = ibn::test::scratch_dir("review-straggle");
  const std::string scen = std::string(IBNETSIM_SOURCE_DIR) + "/scenarios/examples/stragglers-small.json";
  auto r =
      ibn::test::run_cli("run " + scen +
                         " --set variability.stragglers.count=1 --set variability.stragglers.rate_factor=0.5 "
                         "--set jobs[0].workload.iterations=3 -q -o " +
                         (dir / "r").string());
  REQUIRE(r.code == 0);
  const auto res = ibn::test::read_json_file((dir / "r" / "results.json").string());
  for (const auto& p : res.at("placement")) {
    REQUIRE(p.contains("straggler_nodes"));
    CHECK(p.at("straggler_nodes").size() == 1);
  }
  r = ibn::test::run_cli("whatif " + kSmall +
                         " --oversubscription 1:1 --routing off --set jobs[0].workload.iterations=8 "
                         "--tail-precision 0.01% --max-iters 16 -q -o " +
                         (dir / "w").string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK(says(r, "short of the target"));
  const auto w = ibn::test::read_json_file((dir / "w" / "whatif.json").string());
  CHECK(w.at("rows").at(0).at("tail_precision").at("reached") == false);
}

TEST_CASE("faults from t = 0 that split the fabric are named as such, with the key, before routing") {
  // small-allreduce: 6 leaves under 2 spines; both spines down leaves every leaf alone.
  const auto dir = ibn::test::scratch_dir("review-split");
  const auto r =
      ibn::test::run_cli("run " + kSmall + " --set faults.random.switches_down=2 -o " + (dir / "o").string());
  CHECK(r.code == 2);
  CHECK(says(r, "key 'faults'"));
  CHECK(says(r, "split the fabric"));
  CHECK(says(r, "switch_down spine-"));
  // One spine down: the other carries everything, and the run goes on.
  const auto ok = ibn::test::run_cli(
      "run " + kSmall + " --set faults.random.switches_down=1 --set jobs[0].workload.iterations=2 -q -o " +
      (dir / "p").string());
  INFO(ok.out);
  CHECK(ok.code == 0);
}

TEST_CASE(
    "BOM JSON money to the cent, and an OSU bandwidth table given as a repeat says why it has no time") {
  const auto dir = ibn::test::scratch_dir("review-cents");
  const auto fab = (dir / "ro.json").string();
  REQUIRE(ibn::test::run_cli("topo generate rail-optimized --nodes 32 -o " + fab).code == 0);
  const auto r = ibn::test::run_cli("topo bom " + fab + " --json 2>/dev/null");
  REQUIRE(r.code == 0);
  const auto b = nlohmann::json::parse(r.out);
  for (const auto& l : b.at("lines")) {
    const double c = l.at("cost_usd").get<double>();
    CHECK(std::abs(c * 100 - std::round(c * 100)) < 1e-6);
  }
  const auto prof = (dir / "p.json").string();
  REQUIRE(ibn::test::run_cli(
              "calibrate fit " + kData +
              "/nccl-tests/h100-ndr200-ib-2node-8gpu-all_reduce-repeat-n100-snellius-odissei.log -o " + prof)
              .code == 0);
  const auto o = ibn::test::run_cli(
      "calibrate fit --base " + prof + " --repeats " + kData +
      "/osu/a100node-hdr200-ib-2node-1pair-osu_mbw_mr-host-abci-aist-job7249071.txt " + kData +
      "/osu/a100-hdr200-ib-2node-1pair-osu_mbw_mr-gpu-D-D-abci-aist-job7249071.txt -o " +
      (dir / "q.json").string());
  CHECK(o.code == 2);
  CHECK(says(o, "bandwidth or message-rate table"));
}
