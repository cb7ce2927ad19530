// Defects found by the walk through run and nccl-tests of 2026-12-07 (session 24), each with the case that
// showed it.
#include "tests/apps/run_cli.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

namespace {
using ibn::test::has;
/// A 2-node 16 MiB sendrecv on a 16-host 2-tier NDR tree (no NCCL costs), `extra` JSON members appended.
std::string base(const fs::path& dir, const std::string& extra = "") {
  const auto path = dir / "s.json";
  std::ofstream(path) << R"({"name": "fbase",
    "fabric": {"generator": "fat-tree", "params": {"tiers": 2, "radix": 8, "hosts": 16, "rate": "NDR"}},
    "nccl": {"costs": false},
    "jobs": [{"name": "j", "nodes": 2, "gpus_per_node": 1, "nics_per_node": 1, "placement": "spread",
      "workload": {"op": "sendrecv", "sizes": ["16M"], "iterations": 3, "warmup": 0}}])" +
                             extra + "}";
  return path.string();
}
/// The lines of `text` that hold `part`.
std::string line_with(const std::string& text, const std::string& part) {
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (has(l, part)) return l;
  return {};
}
} // namespace

TEST_CASE("nccl-tests: a run that stopped early prints its warning and n/a, not -nan with exit 0") {
  // A QP out of retries (link down, retry_count 0) printed "-nan" in every column and "Avg bus bandwidth :
  // -nan", with no warning.
  auto r = ibn::test::run_cli(
      "nccl-tests all_reduce_perf -b 1M -e 1M --nodes 2 -n 2 -w 0 -q --set 'faults.events[0].kind=link_down' "
      "--set 'faults.events[0].link=leaf-0:1' --set 'faults.events[0].time_us=10' --set "
      "packet.retry_count=0");
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK_FALSE(has(r.out, "nan"));
  CHECK(has(r.out, "warning: 1 QP(s) exhausted their retries"));
  CHECK(has(r.out, "warning: size 1048576 B: 0 out-of-place and 0 in-place of 2 iterations completed"));
  CHECK(has(line_with(r.out, "1048576        262144"), "n/a"));
  CHECK(has(r.out, "# Avg bus bandwidth    : 0 "));
  // run.max_sim_time_ms: one out-of-place sample, so that column has a time and the average is it alone.
  r = ibn::test::run_cli("nccl-tests all_reduce_perf -b 1M -e 1M --nodes 2 -n 2 -w 0 -q --engine flow --set "
                         "run.max_sim_time_ms=0.01");
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(has(r.out, "warning: size 1048576 B: 1 out-of-place and 0 in-place of 2 iterations completed"));
  std::istringstream row(line_with(r.out, "1048576        262144"));
  std::string size, count, type, op, root, t1, algbw, busbw, wrong, t2;
  row >> size >> count >> type >> op >> root >> t1 >> algbw >> busbw >> wrong >> t2;
  CHECK(t1 != "n/a");
  CHECK(t2 == "n/a");
  CHECK(has(r.out, "# Avg bus bandwidth    : " + busbw.substr(0, 4)));
}

TEST_CASE(
    "nccl-tests: each value ends under its header as in nccl-tests, and -o with an op name is refused") {
  // The time was printed in 8 characters, so every column after it ended one character right of its header.
  auto r =
      ibn::test::run_cli("nccl-tests all_reduce_perf -b 4M -e 4M --nodes 2 -g 4 -n 1 -w 0 -q --engine flow");
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto header = line_with(r.out, "#       size");
  const auto row = line_with(r.out, "     4194304");
  REQUIRE_FALSE(row.empty());
  auto ends = [](const std::string& l) { // end column of every word
    std::vector<std::size_t> e;
    for (std::size_t i = 0; i < l.size(); ++i)
      if (l[i] != ' ' && (i + 1 == l.size() || l[i + 1] == ' ')) e.push_back(i);
    return e;
  };
  auto h = ends(header);
  h.erase(h.begin()); // the leading '#'
  CHECK(h == ends(row));
  // nccl-tests' -o is the reduction op: "-o max" created a folder named max (here: the tests' folder).
  r = ibn::test::refused("nccl-tests all_reduce_perf -b 1M -e 1M --nodes 2 -n 1 -w 0 -q -o max",
                         "-o max: -o is the output folder here");
  CHECK_FALSE(fs::exists("max"));
  // A key one of the front-end's options sets is named with that option in any spelling.
  r = ibn::test::refused("nccl-tests all_reduce_perf -b 1M -e 1M --nodes 2 -n 1 -w 0 -q --set "
                         "jobs.0.workload.algorithm=ring",
                         "is set by --algo, not by --set");
  // NCCL_ALGO / NCCL_PROTO are case-insensitive.
  r = ibn::test::run_cli(
      "nccl-tests all_reduce_perf -b 1M -e 1M --nodes 2 -n 1 -w 0 -q --engine flow --algo Ring --proto LL");
  INFO(r.out);
  CHECK(r.code == 0);
}

TEST_CASE(
    "run: a packet run that deadlocks on a routing with a credit loop is exit 2 naming routing.algorithm") {
  // minhop on a dragonfly, all-to-all: "internal error: deadlock at t=..." with exit 1.
  const auto dir = ibn::test::scratch_dir("s24-deadlock");
  const auto path = dir / "df.json";
  std::ofstream(path) << R"({"name": "dfdl",
    "fabric": {"generator": "dragonfly", "params": {"a": 4, "p": 2, "h": 2, "g": 9, "rate": "HDR"}},
    "routing": {"algorithm": "minhop"}, "nccl": {"costs": false},
    "jobs": [{"name": "j", "nodes": 72, "gpus_per_node": 1, "nics_per_node": 1,
      "workload": {"op": "alltoall", "sizes": ["4M"], "iterations": 2, "warmup": 0}}]})";
  const auto r = ibn::test::refused("run " + path.string() + " -q -o " + (dir / "o").string(),
                                    "key 'routing.algorithm': the packet run deadlocked: routing 'minhop'");
  CHECK(has(r.out, "credit loop"));
  CHECK(has(r.out, "wait-for cycle"));
  CHECK_FALSE(has(r.out, "internal error"));
}

TEST_CASE("run: nodes are groups of the most NICs a job asks for, said in a warning and in the refusal") {
  // A 1-NIC job beside an 8-NIC job took whole 8-HCA nodes without a word; "only 0 of 8 nodes are free"
  // when 24 HCAs were asked of 64.
  const auto dir = ibn::test::scratch_dir("s24-mixed-nics");
  auto doc = [&](int a_nodes) {
    const auto p = dir / ("mix" + std::to_string(a_nodes) + ".json");
    std::ofstream(p)
        << R"({"fabric": {"generator": "fat-tree", "params": {"tiers": 2, "radix": 16, "hosts": 64}},
      "nccl": {"costs": false},
      "jobs": [{"name": "a", "nodes": )" +
               std::to_string(a_nodes) +
               R"(, "gpus_per_node": 1, "nics_per_node": 1,
                 "workload": {"op": "allreduce", "sizes": ["1M"], "iterations": 1, "warmup": 0}},
               {"name": "b", "nodes": 2, "gpus_per_node": 8, "nics_per_node": 8,
                 "workload": {"op": "allreduce", "sizes": ["1M"], "iterations": 1, "warmup": 0}}]})";
    return p.string();
  };
  auto r = ibn::test::run_cli("run " + doc(4) + " --engine flow -q -o " + (dir / "o4").string());
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(has(r.out, "warning: key 'jobs[0].nics_per_node': job 'a' asks for 1 NIC(s) per node, but nodes are "
                   "groups of 8 HCAs"));
  r = ibn::test::refused("run " + doc(8) + " --engine flow -q -o " + (dir / "o8").string(),
                         "only 0 of 8 nodes are free (a node is 8 HCAs");
  // whatif and sweep print it too, before the points run (it was only in the points' results.json).
  r = ibn::test::run_cli("sweep " + doc(4) + " -j 1 -q --vary 'jobs[0].workload.sizes=1M,2M' -o " +
                         (dir / "sw").string());
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(has(r.out, "job 'a' asks for 1 NIC(s) per node, but nodes are groups of 8 HCAs"));
  // Where hosts own several HCAs (rails) a node is a host whatever the job asks for: no warning.
  const auto rails = dir / "rails.json";
  std::ofstream(rails)
      << R"({"fabric": {"generator": "fat-tree", "params": {"tiers": 2, "radix": 16, "hosts": 8,
      "rails": 8}}, "nccl": {"costs": false},
    "jobs": [{"name": "a", "nodes": 2, "gpus_per_node": 1, "nics_per_node": 1,
               "workload": {"op": "allreduce", "sizes": ["1M"], "iterations": 1, "warmup": 0}},
             {"name": "b", "nodes": 2, "gpus_per_node": 8, "nics_per_node": 8,
               "workload": {"op": "allreduce", "sizes": ["1M"], "iterations": 1, "warmup": 0}}]})";
  r = ibn::test::run_cli("run " + rails.string() + " --engine flow -q -o " + (dir / "rails").string());
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK_FALSE(has(r.out, "nodes are groups of"));
}

TEST_CASE("run: an imported fabric's hosts with fewer HCAs are left out of the nodes, not a refusal") {
  // sx6036: tank1 has 2 HCAs, stage97 1; "nodes must all have the same number of HCAs" refused every job.
  const auto dir = ibn::test::scratch_dir("s24-ibd-hosts");
  fs::copy_file(std::string(IBNETSIM_TEST_DATA) + "/ibnetdiscover/sx6036-qdr-fdr10-2014-ibnetdiscover.txt",
                dir / "sx.txt");
  auto scen = [&](int nodes, int nics) {
    const auto p = dir / ("s" + std::to_string(nics) + ".json");
    std::ofstream(p) << R"({"fabric": {"file": "sx.txt"}, "nccl": {"costs": false},
      "jobs": [{"name": "a", "nodes": )" +
                            std::to_string(nodes) + R"(, "gpus_per_node": )" + std::to_string(nics) +
                            R"(, "nics_per_node": )" + std::to_string(nics) + R"(,
        "workload": {"op": "allreduce", "sizes": ["1M"], "algorithm": "ring", "iterations": 1, "warmup": 0}}]})";
    return p.string();
  };
  auto r = ibn::test::run_cli("run " + scen(16, 1) + " --engine flow -q -o " + (dir / "o1").string());
  INFO(r.out);
  CHECK(r.code == 0);
  r = ibn::test::run_cli("run " + scen(1, 2) + " --engine flow -q -o " + (dir / "o2a").string());
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(has(r.out, "143 host(s) own fewer than 2 HCAs (the most NICs per node a job asks for) and are not "
                   "nodes jobs are placed on, e.g. 'stage97' (1 HCA); 1 host(s) are"));
  r = ibn::test::refused("run " + scen(2, 2) + " --engine flow -q -o " + (dir / "o2").string(),
                         "only 1 of 1 node are free");
  CHECK(has(r.out, "143 host(s) with fewer HCAs are not nodes, e.g. 'stage97' (1 HCA)"));
}

TEST_CASE("run: the flow engine names the buffer and credit keys it ignores, and a bit-error rate in full") {
  // switch_buffer_bytes 8192 made the packet run 7x slower and the flow run not at all, without a warning;
  // a BER of 1e-7 was printed as 0.000000.
  const auto dir = ibn::test::scratch_dir("s24-flow-ignores");
  const auto r =
      ibn::test::run_cli("run " + base(dir) +
                         " --engine flow --set packet.switch_buffer_bytes=8192 --set "
                         "packet.credit_update_delay_ns=5000 --set packet.bit_error_rate=1e-7 -q -o " +
                         (dir / "o").string());
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(has(r.out, "packet.bit_error_rate 1e-07"));
  CHECK(has(r.out, "packet.switch_buffer_bytes, packet.credit_update_delay_ns (no credits"));
  // The dragonfly's automatic 2 VLs are the packet engine's: no VL warning on the flow engine.
  const auto df = ibn::test::run_cli("run " + std::string(IBNETSIM_SOURCE_DIR) +
                                     "/scenarios/examples/dragonfly-allgather.json --engine flow -q -o " +
                                     (dir / "df").string());
  INFO(df.out);
  CHECK(df.code == 0);
  CHECK_FALSE(has(df.out, "num_vls"));
}

TEST_CASE(
    "run and whatif: a key set twice in two spellings, inside a whole object, or by a flag is refused") {
  const auto dir = ibn::test::scratch_dir("s24-set-twice");
  const auto s = base(dir);
  auto r = ibn::test::refused("run " + s + " -q -o " + (dir / "a").string() +
                                  " --set 'jobs[0].nodes=4' --set jobs.0.nodes=5",
                              "key 'jobs[0].nodes' is already set by --set jobs[0].nodes=4");
  r = ibn::test::refused(
      "run " + s + " -q -o " + (dir / "b").string() +
          " --set fabric.params.radix=8 --set 'fabric.params={\"tiers\":2,\"radix\":16,\"hosts\":64}'",
      "it sets 'fabric.params' whole, which drops 'fabric.params.radix'");
  // The other order refines the object: kept. A spelling the key parser reads as the same key is refused.
  r = ibn::test::run_cli(
      "run " + s + " -q --engine flow -o " + (dir / "b2").string() +
      " --set 'fabric.params={\"tiers\":2,\"radix\":16,\"hosts\":64}' --set fabric.params.radix=32");
  CHECK(r.code == 0);
  r = ibn::test::refused("run " + s + " -q -o " + (dir / "b3").string() +
                             " --set 'jobs[0].nodes=2' --set 'jobs[00]nodes=3'",
                         "key 'jobs[0].nodes' is already set");
  // An item without '=' gets the set's own error, not a duplicate's.
  r = ibn::test::run_cli("run " + s + " -q -o " + (dir / "b4").string() + " --set engine --engine flow");
  CHECK(r.code == 2);
  CHECK_FALSE(has(r.out, "also set by --engine"));
  r = ibn::test::refused("run " + s + " -q -o " + (dir / "c").string() + " --engine flow --set engine=packet",
                         "key 'engine' is also set by --engine");
  r = ibn::test::refused("whatif " + s + " -q -o " + (dir / "d").string() +
                             " --engine flow --set engine=packet",
                         "key 'engine' is also set by --engine");
  CHECK_FALSE(fs::exists(dir / "d" / "whatif.json"));
}

TEST_CASE("run: settings that change nothing are warned, conflicting CC parameters refused") {
  const auto dir = ibn::test::scratch_dir("s24-no-effect");
  // A fault due after the run was listed in the results with no word.
  auto r = ibn::test::run_cli(
      "run " +
      base(dir,
           R"(, "faults": {"events": [{"time_us": 1e9, "kind": "link_down", "link": "leaf-0/spine-0"}]})") +
      " --engine flow -q -o " + (dir / "late").string());
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(has(r.out, "warning: no effect: fault 'link_down leaf-0:5 (leaf-0/spine-0) at 1e+09 us' is due after "
                   "the last collective ended"));
  // In segments: one warning, not one per segment.
  r = ibn::test::run_cli(
      "run " +
      base(dir,
           R"(, "faults": {"events": [{"time_us": 1e9, "kind": "link_down", "link": "leaf-0/spine-0"}]})") +
      " --engine flow -q --set run.segment_iterations=1 -o " + (dir / "late-seg").string());
  INFO(r.out);
  CHECK(r.code == 0);
  const auto first = r.out.find("is due after the last collective ended");
  REQUIRE(first != std::string::npos);
  CHECK(r.out.find("is due after the last collective ended", first + 1) == std::string::npos);
  const auto s = base(dir);
  r = ibn::test::run_cli("run " + s + " --engine flow -q -o " + (dir / "a").string() +
                         " --set variability.stragglers.count=1 --set packet.sriov_rate_factor=0.5 --set "
                         "nccl.max_channels=4 --set 'jobs[0].workload.channels=2'");
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(has(r.out, "no effect: variability.stragglers.count is 1 but rate_factor is 1 and delay_us 0"));
  CHECK(has(r.out, "no effect: packet.sriov_rate_factor is given but packet.sriov is false"));
  CHECK(has(r.out, "no effect: nccl.max_channels is given but every job's workload.channels fixes"));
  // A service level on one VL.
  r = ibn::test::run_cli("run " + s + " -q -o " + (dir / "sl").string() + " --set 'jobs[0].sl=1'");
  CHECK(r.code == 0);
  CHECK(has(r.out, "no effect: key 'jobs[0].sl' is 1 but packet.num_vls is 1"));
  r = ibn::test::run_cli("run " + s + " -q -o " + (dir / "sl2").string() +
                         " --set 'jobs[0].sl=1' --set packet.num_vls=2");
  CHECK(r.code == 0);
  CHECK_FALSE(has(r.out, "no effect"));
  // cc.params and packet.dcqcn both given: cc.params won silently, the manifest showed packet.dcqcn.
  r = ibn::test::refused("run " + s + " -q -o " + (dir / "b").string() +
                             " --set cc.algorithm=dcqcn --set 'packet.dcqcn={\"profile\":\"paper\"}' --set "
                             "'cc.params={\"profile\":\"nvidia-default\"}'",
                         "keys 'cc.params' and 'packet.dcqcn' both set dcqcn's parameters");
  // background[].stop_us before start_us: the error named neither the file nor the key.
  r = ibn::test::refused("run " + s + " -q -o " + (dir / "c").string() +
                             " --set 'background=[{\"start_us\": 100, \"stop_us\": 50}]'",
                         "s.json: key 'background[0].stop_us': 50 us is not after start_us (100 us)");
}

TEST_CASE("run: a fault names an imported switch by NODE:PORT though its name holds '/' and ':'") {
  // "MF0;CNTSN-POD229-QM97-IB-02:MQM9700/U1:1" was split at '/' and refused: no node 'MF0;...:MQM9700'.
  const auto dir = ibn::test::scratch_dir("s24-port-names");
  fs::copy_file(std::string(IBNETSIM_TEST_DATA) +
                    "/ibnetdiscover/qm9700-ndr200-redacted-snippet-charlie0129.txt",
                dir / "qm.txt");
  const auto p = dir / "s.json";
  std::ofstream(p) << R"({"fabric": {"file": "qm.txt"}, "nccl": {"costs": false},
    "jobs": [{"nodes": 2, "gpus_per_node": 1, "nics_per_node": 1,
      "workload": {"op": "sendrecv", "sizes": ["16M"], "iterations": 2, "warmup": 0}}],
    "faults": {"events": [{"time_us": 0, "kind": "degrade", "link": "MF0;CNTSN-POD229-QM97-IB-02:MQM9700/U1:1",
      "width": 1}]}})";
  auto r = ibn::test::run_cli("run " + p.string() + " --engine flow -q -o " + (dir / "o").string());
  INFO(r.out);
  CHECK(r.code == 0);
  const auto res = ibn::test::read_json_file((dir / "o" / "results.json").string());
  CHECK(res.at("engine").at("counters").at("faults").dump().find("degrade") != std::string::npos);
  // The switch's name alone is a node, not a cable.
  auto doc = ibn::test::read_json_file(p.string());
  doc["faults"]["events"][0]["link"] = "MF0;CNTSN-POD229-QM97-IB-02:MQM9700/U1";
  std::ofstream(dir / "s2.json") << doc.dump();
  r = ibn::test::refused("run " + (dir / "s2.json").string() + " --engine flow -q -o " +
                             (dir / "o2").string(),
                         "'MF0;CNTSN-POD229-QM97-IB-02:MQM9700/U1' is a node, not a cable: add :PORT");
}

TEST_CASE("run: --trace to a folder or an empty path is refused before the run") {
  // The folder was found only after the whole simulation, with results already written.
  const auto dir = ibn::test::scratch_dir("s24-trace");
  fs::create_directories(dir / "t");
  auto r = ibn::test::refused("run " + base(dir) + " -q --trace " + (dir / "t").string() + " -o " +
                                  (dir / "o").string(),
                              "is a folder; give a file name");
  CHECK_FALSE(fs::exists(dir / "o" / "results.json"));
  r = ibn::test::refused("run " + base(dir) + " -q --trace '' -o " + (dir / "o").string(),
                         "--trace: empty path");
}
