// Defects a walk through the product as a new user found (2026-12-07), each with the case that showed it.
#include "tests/apps/run_cli.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

TEST_CASE("topo generate rail-optimized: a UFM that opens an SU of its own is named in a note") {
  const auto dir = ibn::test::scratch_dir("walk-ufm");
  // 128 nodes fill 4 SUs of 32: the UFM's slot makes a fifth (72 switches instead of 48). Before, silently.
  const auto full =
      ibn::test::run_cli("topo generate rail-optimized --nodes 128 --nics-per-node 8 --su-nodes 32 "
                         "--ufm-ports 4 --rate NDR -o " +
                         (dir / "a.json").string());
  INFO(full.out);
  REQUIRE(full.code == 0);
  CHECK(full.out.find("note: the UFM appliance's ports take the slot of a node") != std::string::npos);
  CHECK(full.out.find("need 5 SUs of 32") != std::string::npos);
  CHECK(full.out.find("--nodes 127") != std::string::npos);
  // The SuperPOD layout (127 nodes + UFM in 4 SUs) gets no note.
  const auto pod =
      ibn::test::run_cli("topo generate rail-optimized --nodes 127 --nics-per-node 8 --su-nodes 32 "
                         "--ufm-ports 4 --rate NDR -o " +
                         (dir / "b.json").string());
  REQUIRE(pod.code == 0);
  CHECK(pod.out.find("note:") == std::string::npos);
}

TEST_CASE("experiment: start_us with fewer (or more) values than senders is refused, naming the key") {
  const auto dir = ibn::test::scratch_dir("walk-experiment");
  const auto def = dir / "three.json";
  {
    std::ofstream f(def);
    f << R"({"name": "three", "senders": 3, "start_us": [0, 100], "bytes_per_sender": "1M"})";
  }
  const auto r = ibn::test::run_cli("experiment " + def.string() + " -o " + (dir / "out").string());
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(r.out.find("start_us: 2 start times for 3 senders") != std::string::npos);
  CHECK(!std::filesystem::exists(dir / "out" / "summary.json"));
}

TEST_CASE("nccl-tests: the time column keeps nccl-tests' adaptive precision") {
  // nccl-tests prints 2 decimals below 100 us, 1 below 10,000 us and none above ("27.73", "1150.9", "12234"
  // in the real logs); the front-end printed 2 decimals up to 10 ms and 1 above.
  const auto r =
      ibn::test::run_cli("nccl-tests all_reduce_perf -b 64K -e 4G -f 256 -g 8 --nodes 2 --engine flow -n 1 "
                         "-w 0 2>/dev/null");
  INFO(r.out);
  REQUIRE(r.code == 0);
  std::istringstream in(r.out);
  int rows = 0;
  bool below_100 = false, mid = false, above_10ms = false;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream f(line);
    std::string size, count, type, redop, root, time;
    if (!(f >> size >> count >> type >> redop >> root >> time)) continue;
    if (size.find_first_not_of("0123456789") != std::string::npos) continue; // a progress line (stderr)
    ++rows;
    const double us = std::stod(time);
    const auto dot = time.find('.');
    const std::size_t decimals = dot == std::string::npos ? 0 : time.size() - dot - 1;
    const std::size_t want = us < 100 ? 2 : us < 10000 ? 1 : 0;
    CHECK(decimals == want);
    below_100 |= us < 100;
    mid |= us >= 100 && us < 10000;
    above_10ms |= us >= 10000;
  }
  CHECK(rows == 3); // 64 KiB, 16 MiB, 4 GiB
  CHECK(below_100);
  CHECK(mid);
  CHECK(above_10ms);
}

TEST_CASE("sweep: a point whose jobs do not fit its fabric is refused before any point runs") {
  // The dragonfly example has 72 nodes: the point with 100,000 failed only when its turn came, after the
  // other points had run.
  const auto dir = ibn::test::scratch_dir("walk-sweep-fit");
  const auto r =
      ibn::test::run_cli("sweep " + std::string(IBNETSIM_SOURCE_DIR) +
                         "/scenarios/examples/dragonfly-allgather.json --vary 'jobs[0].nodes=2,100000' -o " +
                         (dir / "out").string());
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(r.out.find("point jobs_0_.nodes=100000-seed=1: ") != std::string::npos);
  CHECK(r.out.find("dragonfly-allgather.json: key 'jobs[0].nodes': job 'job': asks for 100000 nodes") !=
        std::string::npos);
  CHECK(r.out.find("done in") == std::string::npos); // no point ran
  CHECK(!std::filesystem::exists(dir / "out"));
}

TEST_CASE("output paths: -o '' and -o - are refused for folder outputs, report and calibrate nvlink never "
          "overwrite their input") {
  const std::string ex = std::string(IBNETSIM_SOURCE_DIR) + "/scenarios/examples/small-allreduce.json";
  // `run -o ''` wrote /results.json; `run -o -` made a folder called '-'.
  for (const char* o : {"''", "-"}) {
    const auto r = ibn::test::run_cli("run " + ex + " -q -o " + o);
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK(r.out.find("--output") != std::string::npos);
  }
  const auto dir = ibn::test::scratch_dir("walk-outputs");
  REQUIRE(ibn::test::run_cli("run " + ex + " -q -o " + (dir / "r").string()).code == 0);
  const std::string results = (dir / "r" / "results.json").string();
  const auto before = ibn::test::read_text_file(results);
  const auto rep = ibn::test::run_cli("report " + (dir / "r").string() + " -o " + results);
  CHECK(rep.code == 2);
  CHECK(rep.out.find("would overwrite it") != std::string::npos);
  CHECK(ibn::test::read_text_file(results) == before);
  // calibrate nvlink -o naming its log replaced the measurement with the fit.
  const auto log = dir / "nv.log";
  std::filesystem::copy_file(std::string(IBNETSIM_TEST_DATA) +
                                 "/nccl-tests/h100-1node-8gpu-nvlink-xxrjun-cluster01-single.log",
                             log, std::filesystem::copy_options::overwrite_existing);
  const auto text = ibn::test::read_text_file(log.string());
  const auto nv =
      ibn::test::run_cli("calibrate nvlink " + log.string() + " --test all_gather_perf -o " + log.string());
  CHECK(nv.code == 2);
  CHECK(ibn::test::read_text_file(log.string()) == text);
  // calibrate fit -o - writes the profile to standard output (it wrote a file called '-'), JSON only.
  const auto fit = ibn::test::run_cli("calibrate fit " + std::string(IBNETSIM_TEST_DATA) +
                                      "/perftest/cx3-mt4099-qdr40g-ib-ib_write_bw-a.txt -o - 2>/dev/null");
  REQUIRE(fit.code == 0);
  CHECK(nlohmann::json::parse(fit.out).contains("bandwidth"));
}

TEST_CASE("run: gaps that would carry the clock past its 64-bit picoseconds are refused, not wrapped") {
  // 20 iterations x 1e12 us of compute gap: the clock wrapped and the samples came out negative, exit 0.
  const auto dir = ibn::test::scratch_dir("walk-clock");
  const auto scen = dir / "s.json";
  {
    std::ofstream f(scen);
    f << R"({"fabric": {"generator": "fat-tree", "params": {"tiers": 2, "radix": 8, "hosts": 16}},
             "jobs": [{"name": "j", "nodes": 4, "gpus_per_node": 1, "nics_per_node": 1,
                       "workload": {"sizes": ["64K"], "algorithm": "ring", "iterations": 20,
                                    "compute_gap_us": 1e12}}]})";
  }
  for (const char* engine : {"packet", "flow"}) {
    const auto r = ibn::test::run_cli("run " + scen.string() + " --engine " + engine + " -q -o " +
                                      (dir / engine).string());
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK(r.out.find("job 'j' would start an iteration at") != std::string::npos);
    CHECK(!std::filesystem::exists(dir / engine / "results.json"));
  }
}

TEST_CASE("JSON inputs nested beyond 256 levels are refused with file, line and column, not a crash") {
  // 70,000 nested objects crashed `run` (exit 139); `report` on a number past a double named no file.
  const auto dir = ibn::test::scratch_dir("walk-deep-json");
  const auto deep = dir / "deep.json";
  {
    std::ofstream f(deep);
    for (int i = 0; i < 70000; ++i) f << "{\"a\":";
    f << "1";
    for (int i = 0; i < 70000; ++i) f << "}";
  }
  const auto r = ibn::test::run_cli("run " + deep.string() + " -o " + (dir / "out").string());
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(r.out.find(deep.string() + ":1:1281: malformed JSON: nested more than 256 levels deep") !=
        std::string::npos);
  std::filesystem::create_directories(dir / "rep");
  {
    std::ofstream f(dir / "rep" / "results.json");
    f << R"({"collectives": [{"completion_us": {"p50": 1e309}}]})";
  }
  const auto rep = ibn::test::run_cli("report " + (dir / "rep").string());
  INFO(rep.out);
  CHECK(rep.code == 2);
  CHECK(rep.out.find((dir / "rep" / "results.json").string() + ":1:") != std::string::npos);
}

TEST_CASE("--set may not change the job a front-end or a measured log defines") {
  // nccl-tests --set engine=flow ran the flow engine under a "(packet engine)" header; validate --set
  // jobs[0].nodes=1 simulated one node while its rows said 2 x 4; calibrate fit --nccl-set moved the fit.
  const std::string log = std::string(IBNETSIM_TEST_DATA) +
                          "/nccl-tests/h100-ndr200-ib-2node-8gpu-all_gather-snellius-odissei.log";
  struct Case {
    std::string args, names;
  };
  const Case cases[] = {
      {"nccl-tests all_reduce_perf --nodes 2 -g 2 -n 1 -w 0 -q -b 8 -e 8 --set engine=flow",
       "'engine' is set by --engine"},
      {"nccl-tests all_reduce_perf --nodes 2 -g 2 -n 1 -w 0 -q -b 8 -e 8 --set seed=5",
       "'seed' is set by --seed"},
      {"validate nccl-tests " + log + " --max-bytes 1K -n 1 --set jobs[0].nodes=1",
       "'jobs[0].nodes' is set by the log"},
      {"validate nccl-tests " + log + " --max-bytes 1K -n 1 --set engine=flow",
       "'engine' is set by --engine"},
      {"validate nccl-tests " + log + " --max-bytes 1K -n 1 --set jobs[0].workload.sizes=1M",
       "'jobs[0].workload.sizes' is set by the log"},
      {"calibrate fit " + log + " --nccl-set jobs[0].gpus_per_node=8 -o /dev/null",
       "'jobs[0].gpus_per_node' is set by the logs"},
  };
  for (const auto& c : cases) {
    const auto r = ibn::test::run_cli(c.args);
    INFO(c.args);
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK(r.out.find(c.names) != std::string::npos);
  }
}

TEST_CASE(
    "topo generate rail-optimized is held to the generated-fabric bound (--max-hosts) like the others") {
  // 33,000 nodes x 8 NICs = 264,000 HCAs went through (728 MB); 4.2 M HCAs ran out of memory.
  const auto dir = ibn::test::scratch_dir("walk-ro-bound");
  const auto big =
      ibn::test::run_cli("topo generate rail-optimized --nodes 33000 --nics-per-node 8 --radix 4096 -o " +
                         (dir / "a.json").string());
  INFO(big.out);
  CHECK(big.code == 2);
  CHECK(big.out.find("264,000 HCAs") != std::string::npos);
  CHECK(big.out.find("--max-hosts") != std::string::npos);
  CHECK(!std::filesystem::exists(dir / "a.json"));
  const auto raised =
      ibn::test::run_cli("topo generate rail-optimized --nodes 64 --nics-per-node 8 --max-hosts 100 -o " +
                         (dir / "b.json").string());
  CHECK(raised.code == 2); // 512 HCAs above a limit of 100
  CHECK(ibn::test::run_cli("topo generate rail-optimized --nodes 64 --nics-per-node 8 --max-hosts 512 -o " +
                           (dir / "c.json").string())
            .code == 0);
}

TEST_CASE(
    "whatif: a fabric without a ratio keeps its own, explicit ratios name the flag, flow refuses CC rows") {
  const std::string df = std::string(IBNETSIM_SOURCE_DIR) + "/scenarios/examples/dragonfly-allgather.json";
  const auto dir = ibn::test::scratch_dir("walk-whatif-df");
  // The shipped dragonfly example failed with the default ratios: "unknown parameter 'oversubscription'".
  const auto r = ibn::test::run_cli("whatif " + df + " -q -j 1 --routing off -o " + (dir / "a").string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("has no oversubscription ratio to vary") != std::string::npos);
  CHECK(r.out.find("as built") != std::string::npos);
  CHECK(ibn::test::run_cli("report " + (dir / "a").string()).code == 0);
  const auto x = ibn::test::run_cli("whatif " + df + " -q --oversubscription 2:1 -o " + (dir / "b").string());
  CHECK(x.code == 2);
  CHECK(x.out.find("--oversubscription 2:1: the scenario's fabric (generator 'dragonfly')") !=
        std::string::npos);
  // --engine flow with --cc dcqcn printed dcqcn rows identical to 'none' without a word.
  const auto f = ibn::test::run_cli(
      "whatif " + std::string(IBNETSIM_SOURCE_DIR) +
      "/scenarios/examples/small-allreduce.json --engine flow --cc none,dcqcn -o " + (dir / "c").string());
  CHECK(f.code == 2);
  CHECK(f.out.find("does not model congestion control") != std::string::npos);
}

TEST_CASE(
    "scenario: two jobs of one name, a size listed twice and a one-rank job are refused, 0 bytes print 0") {
  const auto dir = ibn::test::scratch_dir("walk-jobs");
  const std::string fabric =
      R"("fabric": {"generator": "fat-tree", "params": {"tiers": 2, "radix": 8, "hosts": 16}})";
  auto job = [](const std::string& name, int nodes, const std::string& sizes) {
    return R"({"name": ")" + name + R"(", "nodes": )" + std::to_string(nodes) +
           R"(, "gpus_per_node": 1, "nics_per_node": 1, "workload": {"sizes": )" + sizes +
           R"(, "algorithm": "ring", "iterations": 3}})";
  };
  struct Case {
    std::string jobs, says;
  };
  const Case cases[] = {
      {job("x", 2, R"(["64K"])") + "," + job("x", 2, R"(["64K"])"),
       "key 'jobs[1].name': 'x' names an earlier job too"},
      {job("x", 2, R"(["4K", "4096"])"), "key 'jobs[0].workload.sizes': 4096 bytes is listed twice"},
      {job("x", 1, R"(["64K"])"), "key 'jobs[0].nodes': 1 node(s) x 1 GPU(s) is one rank"},
  };
  int k = 0;
  for (const auto& c : cases) {
    const auto file = dir / ("s" + std::to_string(k++) + ".json");
    {
      std::ofstream f(file);
      f << "{" << fabric << R"(, "jobs": [)" << c.jobs << "]}";
    }
    const auto r = ibn::test::run_cli("run " + file.string() + " -q -o " + (dir / "out").string());
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK(r.out.find(c.says) != std::string::npos);
  }
  // 0 bytes: nothing to move, 0 us; the table and the CSV said -nan for its bandwidth.
  const auto zero = dir / "zero.json";
  {
    std::ofstream f(zero);
    f << "{" << fabric << R"(, "jobs": [)" << job("z", 4, R"(["0"])") << "]}";
  }
  const auto r = ibn::test::run_cli("run " + zero.string() + " -q -o " + (dir / "z").string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("nan") == std::string::npos);
  CHECK(ibn::test::read_text_file((dir / "z" / "results.csv").string()).find("nan") == std::string::npos);
}

TEST_CASE("flag values: seeds, counts and -j are checked with plain messages, plan says why no design fits") {
  const std::string ex = std::string(IBNETSIM_SOURCE_DIR) + "/scenarios/examples/small-allreduce.json";
  const auto dir = ibn::test::scratch_dir("walk-flags");
  struct Case {
    std::string args, says;
  };
  const Case cases[] = {
      // perftest --seed -1 ran with seed 18446744073709551615; run --seed -3 printed a 309-digit bound.
      {"perftest ib_write_bw --seed -1", "a seed is a whole number from 0 to 9200000000000000000"},
      {"run " + ex + " --seed -3 -o " + (dir / "a").string(), "a seed is a whole number"},
      {"run " + ex + " --seed 9223372036854775807 -o " + (dir / "a").string(), "a seed is a whole number"},
      {"validate osu " + std::string(IBNETSIM_TEST_DATA) +
           "/osu/a100node-hdr200-ib-2node-1pair-osu_multi_lat-host-abci-aist-job7249071.txt --nodes 0 --ppn "
           "1",
       "--nodes: '0': expected a whole number from 1"},
      // -j 0 fell back to the default on sweep and plan (whatif refused it).
      {"sweep " + ex + " --vary jobs[0].workload.iterations=2 -j 0 -o " + (dir / "s").string(),
       "-j: at least 1"},
      {"plan --gpus 256 --no-sim -j 0 -o " + (dir / "p").string(), "-j: at least 1"},
      // plan printed "see the notes above" and no note.
      {"plan --gpus 256 --ratios 100:1 --no-sim -o " + (dir / "q").string(),
       "100:1 on qm9700: no exact design"},
  };
  for (const auto& c : cases) {
    const auto r = ibn::test::run_cli(c.args);
    INFO(c.args);
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK(r.out.find(c.says) != std::string::npos);
    CHECK(r.out.find("179769313486231570814527") == std::string::npos);
  }
}

TEST_CASE("plan: the table marks p99s from too few samples and states n") {
  // `plan -n 2` printed 196.9/199.5 with nothing saying the p99 was one of two samples.
  const auto dir = ibn::test::scratch_dir("walk-plan-n");
  const auto r = ibn::test::run_cli("plan --gpus 256 --sizes 1M -n 2 -j 1 --ratios 1:1 -o " +
                                    (dir / "p").string() + " 2>/dev/null");
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("n = 2 measured iterations per design and size") != std::string::npos);
  CHECK(r.out.find("* p99 from fewer than the 100 samples it needs") != std::string::npos);
  CHECK(r.out.find("*  (+0.0%)") == std::string::npos); // the star sits on the p99
  CHECK(r.out.find("* (+0.0%)") != std::string::npos);
}

TEST_CASE("report shows the run's own warnings beside its manifest") {
  // A run that stopped early (a QP out of retries) wrote its warning into results.json's top-level
  // "warnings"; the page said "warnings (none)".
  const auto dir = ibn::test::scratch_dir("walk-report-warn");
  std::filesystem::create_directories(dir / "r");
  {
    std::ofstream f(dir / "r" / "results.json");
    f << R"({"manifest": {"version": "0.1.0", "engine": "packet", "seed": 1, "config": {}, "warnings": []},
             "collectives": [], "warnings": ["1 QP(s) exhausted their retries: the run stopped there"]})";
  }
  const auto r = ibn::test::run_cli("report " + (dir / "r").string() + " -o " + (dir / "r.html").string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto html = ibn::test::read_text_file((dir / "r.html").string());
  CHECK(html.find("warnings of the run") != std::string::npos);
  CHECK(html.find("1 QP(s) exhausted their retries") != std::string::npos);
}

TEST_CASE("sweep: two spellings of one value are refused before any point runs") {
  // --vary jobs[0].workload.sizes=1M,1024K ran the same point twice under two names.
  const auto dir = ibn::test::scratch_dir("walk-sweep-same");
  const auto r = ibn::test::run_cli(
      "sweep " + std::string(IBNETSIM_SOURCE_DIR) +
      "/scenarios/examples/small-allreduce.json --vary 'jobs[0].workload.sizes=1M,1024K' -o " +
      (dir / "out").string());
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(r.out.find("the same scenario (two spellings of one value)") != std::string::npos);
  CHECK(!std::filesystem::exists(dir / "out"));
}

TEST_CASE("whatif: two tokens of one setting are refused before any point runs") {
  // --stragglers 1x0.5,1x0.50 ran two identical points.
  const auto dir = ibn::test::scratch_dir("walk-whatif-same");
  const auto r =
      ibn::test::run_cli("whatif " + std::string(IBNETSIM_SOURCE_DIR) +
                         "/scenarios/examples/small-allreduce.json --routing off --oversubscription '' "
                         "--stragglers 1x0.5,1x0.50 -o " +
                         (dir / "out").string());
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(r.out.find("are the same scenario (two tokens of one setting)") != std::string::npos);
  CHECK(!std::filesystem::exists(dir / "out" / "whatif.json"));
}
