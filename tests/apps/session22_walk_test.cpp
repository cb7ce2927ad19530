// Defects found by the walk through nccl-tests, validate and calibrate of 2026-12-07 (third round), each with
// the case that showed it.
#include "tests/apps/run_cli.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

namespace {
using ibn::test::has;
const std::string kData = std::string(IBNETSIM_SOURCE_DIR) + "/tests/data/";
} // namespace

TEST_CASE("nccl-tests --fabric FILE: a --set of fabric.* keys is refused, a scenario gets a warning") {
  // The --set was ignored while results.json's manifest described the default fabric with it applied.
  const auto dir = ibn::test::scratch_dir("s22-fabric-set");
  const std::string f = (dir / "small.json").string();
  REQUIRE(
      ibn::test::run_cli("topo generate fat-tree --tiers 2 --radix 8 --hosts 8 --rate HDR -o " + f).code ==
      0);
  auto r = ibn::test::run_cli("nccl-tests all_reduce_perf -q -b 1M -e 1M -n 1 -w 0 -g 1 --nodes 4 --fabric " +
                              f + " --set fabric.params.rate=NDR");
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(has(r.out, "--set fabric.params.rate=NDR: the fabric is --fabric " + f));
  // A scenario holding both: the file runs, the params are reported as inert.
  std::ofstream(dir / "s.json") << R"({"fabric": {"file": "small.json", "params": {"rate": "NDR"}},
    "jobs": [{"name": "a", "nodes": 2, "gpus_per_node": 1, "nics_per_node": 1,
              "workload": {"op": "allreduce", "sizes": ["64K"], "iterations": 2}}]})";
  r = ibn::test::run_cli("run " + (dir / "s.json").string() + " -q -o " + (dir / "o").string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK(has(r.out,
            "warning: no effect: fabric.params is given but fabric.file is set: the file's fabric runs"));
}

TEST_CASE("nccl-tests: the count column is per rank for all_gather, sendrecv prints redop sum, and validate "
          "reads it back") {
  // all_gather printed size/4 (real nccl-tests prints size/4/ranks), so `validate` of the front-end's own
  // output said "the log names all_gather but the table looks like sendrecv".
  const auto dir = ibn::test::scratch_dir("s22-count");
  auto r = ibn::test::run_cli("nccl-tests all_gather_perf -q -g 2 --nodes 2 -b 64K -e 1M -f 4 -n 2 -w 1 > " +
                              (dir / "ag.out").string());
  REQUIRE(r.code == 0);
  std::ifstream in(dir / "ag.out");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(has(text, "       65536          4096     float    none")); // 65536 B / 4 B / 4 ranks
  r = ibn::test::run_cli("validate nccl-tests " + (dir / "ag.out").string() + " -n 2");
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(!has(r.out, "looks like"));
  r = ibn::test::run_cli("nccl-tests sendrecv_perf -q -g 2 -b 1M -e 1M -n 1 -w 0");
  CHECK(has(r.out, "     1048576        262144     float     sum      -1"));
}

TEST_CASE("nccl-tests: errors name the option the user typed, not the scenario key") {
  auto r = ibn::test::run_cli("nccl-tests all_reduce_perf -q -g 2 -b 8 -e 8 -n 1 -w 400000000");
  CHECK(r.code == 2);
  CHECK(has(r.out, "--warmup_iters"));
  CHECK(!has(r.out, "jobs[0]"));
  r = ibn::test::run_cli("nccl-tests all_reduce_perf -q -g 2 -b 8 -e 8 --channels 1000");
  CHECK(r.code == 2);
  CHECK(has(r.out, "--channels"));
  r = ibn::test::run_cli("nccl-tests all_reduce_perf -q -g 2 -b 8 -e 8 --set 'jobs[0].workload.warmup=7'");
  CHECK(r.code == 2);
  CHECK(has(r.out, "'jobs[0].workload.warmup' is set by -w, not by --set"));
  r = ibn::test::run_cli("nccl-tests all_reduce_perf -q -g 2 -b 8 -e 8 --set 'jobs[0].workload.protocol=ll'");
  CHECK(has(r.out, "is set by --proto"));
  const auto dir = ibn::test::scratch_dir("s22-nodes");
  const std::string f = (dir / "small.json").string();
  REQUIRE(ibn::test::run_cli("topo generate fat-tree --tiers 2 --radix 8 --hosts 8 -o " + f).code == 0);
  r = ibn::test::run_cli("nccl-tests all_reduce_perf -q -g 1 --nodes 16 -b 1M -e 1M --fabric " + f);
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(has(r.out, "--nodes 16 (--fabric " + f + "): job 'all_reduce_perf': asks for 16 nodes"));
}

TEST_CASE("calibrate measure and check: a value or a file given twice is refused") {
  // measure ran --qps 1,1 twice into one raw output file (the first lost); check counted a file twice.
  const auto dir = ibn::test::scratch_dir("s22-measure");
  const std::string base = "calibrate measure --server a --client b -o " + (dir / "m").string();
  for (const auto& [flags, says] :
       {std::pair<std::string, std::string>{"--qps 1,1", "--qps: '1' is listed twice"},
        {"--sizes 64K,65536", "--sizes: '65536' (the same as '64K') is listed twice"},
        {"--tools ib_write_bw,ib_write_bw", "--tools: 'ib_write_bw' is listed twice"},
        {"--timeout-s 0", "--timeout-s"},
        {"--iters 0", "--iters"}}) {
    const auto r = ibn::test::run_cli(base + " " + flags);
    INFO(flags);
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK(has(r.out, says));
  }
  CHECK(!std::filesystem::exists(dir / "m"));
  const std::string lat = kData + "perftest/cx3-mt4099-qdr40g-ib-ib_send_lat-a.txt";
  const std::string prof = (dir / "p.json").string();
  REQUIRE(ibn::test::run_cli("calibrate fit " + lat + " --link-rate QDR -o " + prof).code == 0);
  const auto r = ibn::test::run_cli("calibrate check " + prof + " " + lat + " " + lat + " --iters 10");
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(has(r.out, "given twice"));
}

TEST_CASE("validate osu: a time that no measurement gives is refused at its line, a 0.00 row is noted") {
  const auto dir = ibn::test::scratch_dir("s22-osu");
  auto write = [&](const std::string& name, const std::string& first) {
    std::ofstream(dir / name)
        << "# OSU MPI Latency Test v7.5\n# Datatype: MPI_CHAR.\n# Size       Avg Latency(us)\n"
        << first << "\n2 1.6\n4 1.7\n";
    return (dir / name).string();
  };
  for (const char* bad : {"1 nan", "1 -1.5"}) {
    const auto r = ibn::test::run_cli("validate osu " + write("bad.txt", bad) + " --nodes 2 --ppn 1");
    INFO(bad);
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK(has(r.out, "bad.txt:4: column 'Avg Latency(us)' is"));
  }
  auto r = ibn::test::run_cli("validate osu " + write("zero.txt", "1 0.00") + " --nodes 2 --ppn 1");
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(has(r.out, "zero.txt:4: 1 B: no latency above 0 measured; row skipped"));
  r = ibn::test::run_cli("validate osu " + write("twice.txt", "2 1.5") + " --nodes 2 --ppn 1");
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(has(r.out, "twice.txt:5: size 2 appears again (first at line 4)"));
}

TEST_CASE("validate --json: the manifest records the options that shape the rows") {
  const auto r = ibn::test::run_cli("validate nccl-tests " + kData +
                                    "nccl-tests/h100-ndr200-ib-2node-8gpu-all_gather-snellius-odissei.log "
                                    "--engine flow -n 2 --max-bytes 64K --json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out.substr(r.out.find('{')));
  const auto& m = j.at("manifest");
  CHECK(m.at("iterations") == 2);
  CHECK(m.at("max_bytes") == 65536);
  CHECK(m.at("nodes") == 2); // in effect, from the log's rank lines (it printed 0, "from the log", before)
  CHECK(m.at("nodes_from") == "the log");
}

namespace {
/// Four 1-NIC nodes on a 4-host NDR fat-tree, a 64 MiB sendrecv crossing leaves, flow engine, no NCCL costs:
/// 64 MiB at 400 Gb/s (less headers) is 1,352 us.
std::filesystem::path four_node_sendrecv(const std::filesystem::path& dir) {
  std::ofstream(dir / "base.json") << R"({"name": "base", "seed": 1, "engine": "flow",
    "fabric": {"generator": "fat-tree", "params": {"tiers": 2, "radix": 4, "hosts": 4, "rate": "NDR"}},
    "nccl": {"costs": false},
    "jobs": [{"name": "j", "nodes": 4, "gpus_per_node": 1, "nics_per_node": 1, "placement": "explicit",
              "hosts": ["0", "2", "1", "3"],
              "workload": {"op": "sendrecv", "sizes": ["64M"], "iterations": 2, "warmup": 0}}]})";
  return dir / "base.json";
}
double p50_of(const std::filesystem::path& out) {
  return ibn::test::first_p50_us((out / "results.json").string());
}
} // namespace

TEST_CASE("stragglers: a NIC at a tenth of its rate makes a large transfer ten times slower") {
  // The slowdown was one chunk's extra serialization (posted later), whatever the size: 64 MiB took 1,376 us
  // instead of ~13,500 with every node at 0.1 (the chunks in flight hid it).
  const auto dir = ibn::test::scratch_dir("s22-stragglers");
  const auto scen = four_node_sendrecv(dir).string();
  REQUIRE(ibn::test::run_cli("run " + scen + " -q -o " + (dir / "a").string()).code == 0);
  const auto r = ibn::test::run_cli("run " + scen + " -q -o " + (dir / "b").string() +
                                    " --set variability.stragglers.count=4"
                                    " --set variability.stragglers.rate_factor=0.1");
  INFO(r.out);
  REQUIRE(r.code == 0);
  const double healthy = p50_of(dir / "a"), slow = p50_of(dir / "b");
  CHECK(healthy == doctest::Approx(1352.4).epsilon(0.01));
  // Closed form: every sender's NIC carries 64 MiB at 40 Gb/s: 10x the healthy time.
  CHECK(slow / healthy == doctest::Approx(10.0).epsilon(0.02));
}

TEST_CASE("flow engine: a cable whose bit errors let no packet through is refused, not run unconstrained") {
  // At pre-FEC 5e-3 the capacity factor underflowed and the link ran unconstrained: 49 us, 27x the link rate.
  const auto dir = ibn::test::scratch_dir("s22-ber");
  const auto scen = four_node_sendrecv(dir).string();
  auto r = ibn::test::run_cli("run " + scen + " -q -o " + (dir / "a").string() +
                              " --set 'faults={\"ber\":[{\"tier\":1,\"pre_fec_ber\":5e-3}]}'");
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(has(r.out, "key 'faults.ber': the cable leaf-0/spine-0 delivers a full packet with probability"));
  CHECK(has(r.out, "use --engine packet"));
  // Where packets get through the run goes on, slower than healthy (capacity x P(through)).
  r = ibn::test::run_cli("run " + scen + " -q -o " + (dir / "b").string() +
                         " --set 'faults={\"ber\":[{\"tier\":1,\"pre_fec_ber\":2e-3}]}'");
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK(p50_of(dir / "b") > 1352.4);
}

TEST_CASE("dragonfly: df-min runs on 2 VLs by default, 1 VL and df-valiant or df-ugal are refused") {
  // With the default single VL the packet engine deadlocked ("internal error", exit 1) on this dragonfly;
  // df-valiant and df-ugal ran as df-min (the engines never call their path choice).
  const auto dir = ibn::test::scratch_dir("s22-dragonfly");
  std::ofstream(dir / "df.json") << R"({"name": "dfd", "seed": 1, "engine": "packet",
    "fabric": {"generator": "dragonfly", "params": {"a": 4, "p": 2, "h": 1, "g": 5, "rate": "HDR"}},
    "nccl": {"costs": false},
    "jobs": [{"name": "job", "nodes": 40, "gpus_per_node": 1, "nics_per_node": 1, "placement": "random",
              "workload": {"op": "alltoall", "sizes": ["4M"], "iterations": 1, "warmup": 0}}]})";
  const std::string scen = (dir / "df.json").string();
  auto r = ibn::test::run_cli("run " + scen + " -q -o " + (dir / "a").string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK(ibn::test::read_json_file((dir / "a" / "results.json").string())
            .at("manifest")
            .at("packet")
            .at("num_vls") == 2);
  r = ibn::test::run_cli("run " + scen + " -q -o " + (dir / "b").string() + " --set packet.num_vls=1");
  CHECK(r.code == 2);
  CHECK(has(r.out, "key 'packet.num_vls': 1 VL with 'df-min' routing"));
  for (const char* algo : {"df-valiant", "df-ugal"}) {
    r = ibn::test::run_cli("run " + scen + " -q -o " + (dir / "c").string() +
                           " --set routing.algorithm=" + algo);
    CHECK(r.code == 2);
    CHECK(
        has(r.out, std::string("key 'routing.algorithm': '") + algo + "' is not implemented in the engines"));
  }
}

TEST_CASE("background: a node count asked for is not called what the jobs left free") {
  const auto dir = ibn::test::scratch_dir("s22-background");
  const auto scen = four_node_sendrecv(dir).string();
  const auto r = ibn::test::run_cli("run " + scen + " -q -o " + (dir / "a").string() +
                                    " --set 'background=[{\"nodes\":1}]'");
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(has(r.out, "key 'background[0].nodes': 1 node(s) asked for; background traffic needs at least 2"));
}

TEST_CASE("trace replay: a timed call listed after a later one is refused") {
  // The 2 MiB call "at_us": 0 ran after the 1 MiB call at 1,000 us without a word.
  const auto dir = ibn::test::scratch_dir("s22-trace");
  const auto scen = four_node_sendrecv(dir).string();
  std::ofstream(dir / "tr.json") << R"({"jobs": [{"name": "j", "calls": [
    {"op": "sendrecv", "size_bytes": "1M", "at_us": 1000}, {"op": "sendrecv", "size_bytes": "2M", "at_us": 0}]}]})";
  auto r = ibn::test::run_cli("run " + scen + " -q -o " + (dir / "a").string() +
                              " --set 'jobs[0].workload.trace=tr.json'");
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(has(r.out, "tr.json: /jobs/0/calls/1/at_us: starts before the job's earlier call at 1000"));
  // In time order it runs.
  std::ofstream(dir / "ok.json") << R"({"jobs": [{"name": "j", "calls": [
    {"op": "sendrecv", "size_bytes": "2M", "at_us": 0}, {"op": "sendrecv", "size_bytes": "1M", "at_us": 1000}]}]})";
  r = ibn::test::run_cli("run " + scen + " -q -o " + (dir / "b").string() +
                         " --set 'jobs[0].workload.trace=ok.json'");
  INFO(r.out);
  CHECK(r.code == 0);
}

TEST_CASE(
    "timed faults: a reroute the routing algorithm refuses is exit 2 before the run, naming the fault") {
  // df-min with a group pair's only global cable down failed mid-run (results lost), with a hint naming a
  // flag `run` does not have.
  const auto dir = ibn::test::scratch_dir("s22-df-fault");
  std::ofstream(dir / "df.json") << R"({"name": "dff", "seed": 1, "engine": "flow",
    "fabric": {"generator": "dragonfly", "params": {"a": 4, "p": 2, "h": 1, "g": 5, "rate": "HDR"}},
    "nccl": {"costs": false},
    "faults": {"sm_sweep_delay_us": 10,
               "events": [{"time_us": 100, "kind": "link_down", "link": "g0-r0/g1-r0"}]},
    "jobs": [{"name": "job", "nodes": 2, "gpus_per_node": 1, "nics_per_node": 1, "placement": "explicit",
              "hosts": ["0", "8"], "workload": {"op": "sendrecv", "sizes": ["8M"], "iterations": 2, "warmup": 0}}]})";
  const auto r = ibn::test::run_cli("run " + (dir / "df.json").string() + " -o " + (dir / "o").string());
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(has(r.out,
            "df.json: key 'faults': after link_down g0-r0:6 (g0-r0/g1-r0) at 100 us: reroute with 'df-min'"));
  CHECK(has(r.out, "routing.algorithm in a scenario"));
  CHECK(!has(r.out, "%")); // no progress line: nothing ran
}

TEST_CASE("packet engine: a fault due after the workload ends is not applied or counted") {
  // RC timers keep the packet engine's clock going after the last delivery: a link_down at 1 s (the run's
  // traffic ends at ~2.7 ms) was applied, rerouted and reported as link_downs 1, reroutes 1.
  const auto dir = ibn::test::scratch_dir("s22-late-fault");
  const auto scen = four_node_sendrecv(dir).string();
  const std::string fault =
      " --engine packet --set 'faults={\"events\":[{\"time_us\":%T%,\"kind\":\"link_down\","
      "\"link\":\"leaf-0/spine-0\"}]}'";
  auto with_time = [&](const std::string& t) {
    std::string f = fault;
    f.replace(f.find("%T%"), 3, t);
    return f;
  };
  auto r = ibn::test::run_cli("run " + scen + " -q -o " + (dir / "late").string() + with_time("1000000"));
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto late = ibn::test::read_json_file((dir / "late" / "results.json").string()).dump();
  CHECK(!has(late, "\"link_downs\""));
  CHECK(!has(late, "\"reroutes\""));
  // The same fault during the traffic is applied and counted.
  r = ibn::test::run_cli("run " + scen + " -q -o " + (dir / "early").string() + with_time("100"));
  REQUIRE(r.code == 0);
  const auto early = ibn::test::read_json_file((dir / "early" / "results.json").string()).dump();
  CHECK(has(early, "\"link_downs\":1"));
  CHECK(has(early, "\"reroutes\":1"));
}

TEST_CASE("faults: an up of something not down is refused, a degrade needs no reroute") {
  const auto dir = ibn::test::scratch_dir("s22-fault-up");
  const auto scen = four_node_sendrecv(dir).string();
  // link_up of a cable never down was accepted and changed nothing.
  auto r =
      ibn::test::run_cli("run " + scen + " -q -o " + (dir / "a").string() +
                         " --set 'faults={\"events\":[{\"time_us\":10,\"kind\":\"link_up\",\"link\":\"leaf-0/"
                         "spine-0\"}]}'");
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(has(r.out, "key 'faults': link_up leaf-0:3 (leaf-0/spine-0) at 10 us: the cable is not down then"));
  // A timed degrade alone with adaptive routing was refused as "reroute needs static routing"; on the packet
  // engine the quarter-rate cable (4x -> 1x) now slows the crossing flows.
  r = ibn::test::run_cli(
      "run " + scen + " -q --engine packet -o " + (dir / "b").string() +
      " --set routing.adaptive=per-packet --set 'faults={\"events\":[{\"time_us\":10,\"kind\":"
      "\"degrade\",\"link\":\"leaf-0/spine-0\",\"speed\":\"1xNDR\"}]}'");
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK(p50_of(dir / "b") > 1.3 * 1352.4);
}

TEST_CASE("background beyond the free nodes names the file and key, and perftest bounds its messages") {
  const auto dir = ibn::test::scratch_dir("s22-bg-perftest");
  const auto scen = four_node_sendrecv(dir).string();
  auto r = ibn::test::run_cli("run " + scen + " -q -o " + (dir / "a").string() +
                              " --set 'background=[{\"nodes\":20}]'");
  CHECK(r.code == 2);
  CHECK(has(r.out, "base.json: key 'background[0].nodes': job 'background0': asks for 20 nodes"));
  // -n 1e8 grew past 4 GB in 20 s, -q 16384 past 8 GB: refused before anything is allocated.
  r = ibn::test::run_cli("perftest ib_write_lat -n 100000000");
  CHECK(r.code == 2);
  CHECK(has(r.out, "-n x -q: 100000000 messages per size; at most 10000000"));
  r = ibn::test::run_cli("perftest ib_write_bw -q 16384 -s 2");
  CHECK(r.code == 2);
  CHECK(has(r.out, "81920000 messages per size"));
}

TEST_CASE("report: the run page's configuration shows calibration and packet once") {
  // manifest.config.calibration ("" -> "(none)") and manifest.calibration were both listed, and
  // config.packet "(none)" above the packet.* values in effect.
  const auto dir = ibn::test::scratch_dir("s22-report-config");
  REQUIRE(ibn::test::run_cli("run " + std::string(IBNETSIM_SOURCE_DIR) +
                             "/scenarios/examples/small-allreduce.json -q -o " + (dir / "r").string())
              .code == 0);
  REQUIRE(ibn::test::run_cli("report " + (dir / "r").string() + " -o " + (dir / "r.html").string()).code ==
          0);
  std::ifstream in(dir / "r.html");
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::size_t n = 0;
  for (auto at = html.find("<td>calibration</td>"); at != std::string::npos;
       at = html.find("<td>calibration</td>", at + 1))
    ++n;
  CHECK(n == 1);
  CHECK(!has(html, "<td>packet</td><td>(none)"));
  CHECK(has(html, "<td>packet.mtu_bytes</td>"));
}
