// NVLS (NVLink SHARP) and CollNet with InfiniBand SHARP (docs/collectives.md, "nvls", "collnet"): bytes per
// GPU and per NIC against the closed forms, the DAG's shape, NCCL's tuning rows (hand-computed from
// src/graph/tuning.cc at the table's tags), the choice only where the system offers them, NCCL_ALGO names,
// and the busbw closed forms through the binary (`ibnetsim nccl-tests`) on both engines.
#include "scenarios/collectives.hpp"
#include "scenarios/nccl_cost.hpp"
#include "scenarios/scenario.hpp"
#include "scenarios/tuning.hpp"

#include "sim/error.hpp"
#include "tests/apps/run_cli.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <string>

using namespace ibn;
using namespace ibn::scen;

namespace {

constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;

CollectiveSpec ar(std::uint64_t size, std::uint32_t nodes, std::uint32_t gpn, std::uint32_t nics,
                  const std::string& algo) {
  CollectiveSpec s;
  s.op = CollOp::AllReduce;
  s.size_bytes = size;
  s.ranks = nodes * gpn;
  s.gpus_per_node = gpn;
  s.nics_per_node = nics;
  s.algorithm = algo;
  return s;
}

/// Bytes rank r sends to other nodes (through its NIC) and receives from them.
std::uint64_t net_sent(const TransferDag& d, std::uint32_t r, std::uint32_t gpn) {
  std::uint64_t b = 0;
  for (const auto& t : d.transfers())
    if (t.src == r && t.src / gpn != t.dst / gpn) b += t.bytes;
  return b;
}
std::uint64_t net_received(const TransferDag& d, std::uint32_t r, std::uint32_t gpn) {
  std::uint64_t b = 0;
  for (const auto& t : d.transfers())
    if (t.dst == r && t.src / gpn != t.dst / gpn) b += t.bytes;
  return b;
}

const TuningEstimate& find(const std::vector<TuningEstimate>& table, const std::string& algo) {
  for (const auto& e : table)
    if (e.algorithm == algo && e.protocol == "simple") return e;
  FAIL("no row for " << algo);
  return table.front();
}

} // namespace

TEST_CASE("nvls on one node: each GPU's NVLink egress carries S (g+1)/g, nothing crosses nodes") {
  // g = 8, S = 64 MiB = 4 loops of 16 channels x 8 shards x 128 KiB. Per GPU: the switch reads its copy of
  // the 7 other GPUs' shards (7 S/8) and of its own (S/8), and it stores its reduced shard once (S/8):
  // S (g + 1)/g = 72 MiB. A ring sends 2 (g - 1)/g S = 112 MiB.
  const auto d = build_collective(ar(64 * MiB, 1, 8, 8, "nvls"));
  CHECK(d.algorithm == "nvls");
  CHECK(d.protocol == "simple");
  CHECK(d.channels == 16);
  for (std::uint32_t r = 0; r < 8; ++r) CHECK(bytes_sent_by(d, r) == 72 * MiB);
  const auto ring = build_collective(ar(64 * MiB, 1, 8, 8, "ring"));
  CHECK(bytes_sent_by(ring, 0) == 112 * MiB);
  // The multicast stores (step 3) carry each GPU's shard once, S/g = 8 MiB, and each waits for the g
  // reads of its shard.
  std::uint64_t stored[8] = {};
  for (TransferId i = 0; i < d.size(); ++i)
    if (d[i].step == 3) {
      stored[d[i].src] += d[i].bytes;
      CHECK(d.deps_of(i).size() >= 8);
    }
  for (auto b : stored) CHECK(b == 8 * MiB);
}

TEST_CASE("nvls across nodes (NVLS_TREE): a tree over nodes per shard through the shard GPU's NIC") {
  // 4 nodes x 8 GPUs x 8 NICs, S = 64 MiB: shard j goes through NIC j. Over the double binary tree each node
  // sends its shard's partial sum up once (the root none) and the result down once per child: over all
  // ranks of one local index the network carries 2 (m - 1) x S/g.
  const std::uint32_t m = 4, g = 8;
  const auto d = build_collective(ar(64 * MiB, m, g, 8, "nvls"));
  for (std::uint32_t j = 0; j < g; ++j) {
    std::uint64_t sent = 0;
    for (std::uint32_t x = 0; x < m; ++x) sent += net_sent(d, x * g + j, g);
    CHECK(sent == 2 * (m - 1) * 64 * MiB / g);
  }
  for (const auto& t : d.transfers())
    if (t.src / g != t.dst / g) {
      CHECK(t.src % g == t.dst % g);
      CHECK(t.rail == static_cast<std::int32_t>(t.src % g));
    }
}

TEST_CASE("collnet: each NIC sends and receives S/nics once, NVLink gathers to and broadcasts from heads") {
  // 4 nodes x 8 GPUs x 8 NICs: head r = local GPU r owns S/8. Per GPU: 7 parts of S/8 to the other heads,
  // 7 copies of its own part to the others, S/8 through its NIC: 15 S/8. Ring: 2 (n - 1)/n S over NICs
  // and NVLink together.
  const std::uint32_t m = 4, g = 8;
  const std::uint64_t S = 64 * MiB;
  const auto d = build_collective(ar(S, m, g, 8, "collnet"));
  CHECK(d.algorithm == "collnet");
  for (std::uint32_t r = 0; r < m * g; ++r) {
    CHECK(net_sent(d, r, g) == S / 8);
    CHECK(net_received(d, r, g) == S / 8);
    CHECK(bytes_sent_by(d, r) == 15 * S / 8);
  }
  // 2 NICs for 8 GPUs: heads 0 and 1 each carry S/2 through their NIC; the others none.
  const auto d2 = build_collective(ar(S, m, g, 2, "collnet"));
  for (std::uint32_t r = 0; r < g; ++r) CHECK(net_sent(d2, r, g) == (r < 2 ? S / 2 : 0));
  // A broadcast waits for every node's trip through the switches (the reduction needs them all).
  for (TransferId i = 0; i < d.size(); ++i)
    if (d[i].step == 2) CHECK(d.deps_of(i).size() >= m);
  CHECK_THROWS_AS(build_collective(ar(S, 1, 8, 8, "collnet")), InputError); // one node: nothing to reduce
  CHECK_THROWS_AS(build_collective(ar(S, 2, 1, 1, "nvls")), InputError);    // one GPU per node
  auto ll = ar(S, 2, 8, 8, "collnet");
  ll.protocol = "ll";
  CHECK_THROWS_AS(build_collective(ll), InputError); // Simple only
  auto ag = ar(S, 2, 8, 8, "nvls");
  ag.op = CollOp::AllGather;
  CHECK_THROWS_AS(build_collective(ag), InputError); // AllReduce only
}

TEST_CASE("nvls and collnet tuning rows: NCCL's latencies and bandwidths per release") {
  // bus inputs: NVLink 3600 Gb/s = 450 GB/s per GPU; NDR NICs 400 Gb/s = 50 GB/s each.
  auto s = ar(GiB, 1, 8, 8, "auto");
  s.nvls = s.collnet = true;
  s.nccl_costs = true;
  s.nccl_version = "2.23.4";
  // One node, 2.23.4: NVLS latency = hwLat[NVLINK][NVLS] = 25 us; algBw = 450 x 5/6 = 375 GB/s.
  auto t = tuning_table(tuning_inputs(s));
  CHECK(find(t, "nvls").available);
  CHECK(find(t, "nvls").latency_us == doctest::Approx(25.0));
  CHECK(find(t, "nvls").algbw_GBps == doctest::Approx(375.0));
  CHECK_FALSE(find(t, "collnet").available); // one node
  // 2.19.3: 23 us; 2.18.3: baseLat 23 us.
  s.nccl_version = "2.19.3";
  CHECK(find(tuning_table(tuning_inputs(s)), "nvls").latency_us == doctest::Approx(23.0));
  s.nccl_version = "2.18.3";
  CHECK(find(tuning_table(tuning_inputs(s)), "nvls").latency_us == doctest::Approx(23.0));
  // Before 2.18 the table has no rows: not offered whatever the flag says.
  s.nccl_version = "2.12.12";
  CHECK_FALSE(find(tuning_table(tuning_inputs(s)), "nvls").available);

  // 4 nodes x 8 GPUs x 4 NICs, 2.23.4. NVLS_TREE: 25 + 2 log2(4) x 14 = 81 us; bw = min(450, 200/2) x 5/6.
  // CollNet Direct: 2 (min(1, 7) x 3.7 + 7 x 0.4) + 31 = 44 us; f = 8/4 - (8/4 - 1)/2 = 1.5, busBw =
  // 450/1.5 x 0.85 = 255, algBw = 127.5 GB/s.
  s = ar(GiB, 4, 8, 4, "auto");
  s.nvls = s.collnet = true;
  s.nccl_costs = true;
  s.nccl_version = "2.23.4";
  t = tuning_table(tuning_inputs(s));
  CHECK(find(t, "nvls").latency_us == doctest::Approx(81.0));
  CHECK(find(t, "nvls").algbw_GBps == doctest::Approx(100.0 * 5 / 6));
  CHECK(find(t, "collnet").latency_us == doctest::Approx(44.0));
  CHECK(find(t, "collnet").algbw_GBps == doctest::Approx(127.5));
  // 2.18.3: NVLS_TREE latency 23 + 2 (m - 1) x 19 = 137 us, algBw = 100 x 0.70 x 4 / 6; CollNet 2 (8.0 +
  // 7 x 0.5) + 10.7 = 33.7 us.
  s.nccl_version = "2.18.3";
  t = tuning_table(tuning_inputs(s));
  CHECK(find(t, "nvls").latency_us == doctest::Approx(137.0));
  CHECK(find(t, "nvls").algbw_GBps == doctest::Approx(100.0 * 0.70 * 4 / 6));
  CHECK(find(t, "collnet").latency_us == doctest::Approx(33.7));
}

TEST_CASE("auto picks nvls and collnet only where the system offers them, and only when faster") {
  // One node x 8 GPUs, 1 GiB: ring Simple algBw = 450 x 8/14 = 257 GB/s, NVLS 375 GB/s.
  auto s = ar(GiB, 1, 8, 8, "auto");
  CHECK(build_collective(s).algorithm == "ring");
  s.nvls = true;
  CHECK(build_collective(s).algorithm == "nvls");
  // 1 KiB: NVLS's 23 us latency loses to the ring's LL.
  s.size_bytes = KiB;
  CHECK(build_collective(s).algorithm != "nvls");
  // 4 nodes x 8 GPUs x 4 NICs, 1 GiB (2.20.3 reference): ring algBw = 200 x 32/62 = 103 GB/s; CollNet
  // 450/1.5 x 0.85 / 2 = 127.5 GB/s; NVLS_TREE (offered too) min(450, 100) x 5/6 = 83 GB/s.
  s = ar(GiB, 4, 8, 4, "auto");
  CHECK(build_collective(s).algorithm == "ring");
  s.nvls = true;
  CHECK(build_collective(s).algorithm == "ring");
  s.collnet = true;
  CHECK(build_collective(s).algorithm == "collnet");
  // An NCCL_ALGO list restricts the choice and forces what it names.
  s = ar(GiB, 1, 8, 8, "ring,nvls");
  CHECK(build_collective(s).algorithm == "nvls");
  s.algorithm = "Ring,Tree";
  CHECK(build_collective(s).algorithm == "ring");
  s.algorithm = "NVLSTree";
  CHECK(build_collective(s).algorithm == "nvls");
}

TEST_CASE("NCCL_ALGO names map onto the modelled algorithms") {
  CHECK(algorithm_names("NVLS") == std::vector<std::string>{"nvls"});
  CHECK(algorithm_names("NVLSTree,Ring") == std::vector<std::string>{"nvls", "ring"});
  CHECK(algorithm_names("COLLNET_DIRECT") == std::vector<std::string>{"collnet"});
  CHECK(algorithm_names("CollNetChain, collnetdirect") == std::vector<std::string>{"collnet"});
  CHECK(algorithm_names("halving-doubling") == std::vector<std::string>{"halving-doubling"});
  CHECK_THROWS_AS(algorithm_names("ring,pat"), InputError);
}

TEST_CASE("nvls and collnet software costs per release") {
  NcclCostInputs in;
  in.algorithm = "nvls";
  in.ranks = 8;
  in.nodes = 1;
  // One node: the whole NVLS latency at launch (2.23.4: hwLat[NVLINK][NVLS] = 25 us), no per-step cost.
  auto c = nccl_step_costs(nccl_cost_table("2.26.2"), in);
  CHECK(c.base_us == doctest::Approx(25.0));
  CHECK(c.intra_us == 0);
  // NVLS_TREE: hwLat[NET][NVLSTree] = 14 us per inter-node tree step.
  in.ranks = 32;
  in.nodes = 4;
  CHECK(nccl_step_costs(nccl_cost_table("2.26.2"), in).net_us == doctest::Approx(14.0));
  // CollNet Direct on 8 GPUs per node: 2 (3.7 + 7 x 0.4) = 13 us at launch, 31 us for the SHARP trip.
  in.algorithm = "collnet";
  c = nccl_step_costs(nccl_cost_table("2.26.2"), in);
  CHECK(c.base_us == doctest::Approx(13.0));
  CHECK(c.net_us == doctest::Approx(31.0));
  CHECK_THROWS_AS(nccl_step_costs(nccl_cost_table("2.12.12"), in), InputError);
  // The DAG carries them.
  auto s = ar(64 * MiB, 4, 8, 8, "collnet");
  s.nccl_costs = true;
  s.nccl_version = "2.26.2";
  const auto d = build_collective(s);
  CHECK(d.launch_latency == Time::from_us(13.0));
  for (const auto& t : d.transfers())
    CHECK(t.local_delay == (t.src / 8 != t.dst / 8 ? Time::from_us(31.0) : Time::zero()));
}

TEST_CASE("nvls busbw on one node through the binary: 2 (g-1)/(g+1) x NVLink, both engines") {
  // Closed form: every GPU's NVLink egress carries S (g + 1)/g (see above), so t = S (g + 1)/(g B) and
  // busbw = 2 (g - 1)/g x S/t = 2 (g - 1)/(g + 1) x B = 14/9 x 450 GB/s = 700 GB/s for g = 8 at the default
  // 3600 Gb/s. The ring's egress carries 2 (g - 1)/g S: busbw = B = 450 GB/s. 1 GiB keeps the per-copy
  // latencies (0.7 us) below 0.5 %. Costs off: the hardware alone.
  const std::string base = "nccl-tests all_reduce_perf -b 1G -e 1G -g 8 --nodes 1 -n 1 -w 0 -q "
                           "--set nccl.costs=false --set nccl.nvls=true --engine ";
  for (const std::string engine : {"flow", "packet"}) {
    INFO(engine);
    auto r = ibn::test::run_cli(base + engine + " --algo nvls 2>/dev/null");
    INFO(r.out);
    REQUIRE(r.code == 0);
    CHECK(ibn::test::busbw_of(r.out) == doctest::Approx(700.0).epsilon(0.01));
    r = ibn::test::run_cli(base + engine + " --algo ring 2>/dev/null");
    REQUIRE(r.code == 0);
    CHECK(ibn::test::busbw_of(r.out) == doctest::Approx(450.0).epsilon(0.01));
  }
  // Not offered: refused by name, and auto keeps to ring/tree.
  auto r =
      ibn::test::run_cli("nccl-tests all_reduce_perf -b 1G -e 1G -g 8 --nodes 1 -n 1 -w 0 -q --algo nvls");
  CHECK(r.code != 0);
  CHECK(r.out.find("nccl.nvls") != std::string::npos);
}

TEST_CASE("collnet busbw across nodes through the binary: ~2 x the NICs' line rate, both engines") {
  // Network-bound (NVLink raised to 36,000 Gb/s), 4 nodes x 8 GPUs x 8 NDR NICs (50 GB/s), n = 32 ranks. Each
  // NIC sends and receives S/8 once: t = S/(8 x 50 GB/s) at line rate, busbw = 2 (n - 1)/n x S/t = 31/16 x
  // 400 = 775 GB/s, less the IB headers (MTU 4096 + ~30 B, 0.7 %) and the pipeline's fill: within 2 %. The
  // ring's NICs carry 2 (n - 1)/n x S/8 each way: its busbw is at most 8 x 50 = 400 GB/s (less its 62-step
  // pipeline's fill at 256 MiB), so collnet is more than 31/16 x the ring.
  const std::string base = "nccl-tests all_reduce_perf -b 256M -e 256M -g 8 --nodes 4 -n 1 -w 0 -q "
                           "--set nccl.costs=false --set nccl.collnet=true "
                           "--set nvlink.bandwidth_gbps=36000 --engine ";
  for (const std::string engine : {"flow", "packet"}) {
    INFO(engine);
    auto r = ibn::test::run_cli(base + engine + " --algo collnet 2>/dev/null");
    INFO(r.out);
    REQUIRE(r.code == 0);
    const double collnet = ibn::test::busbw_of(r.out);
    CHECK(collnet < 775.0);
    CHECK(collnet > 0.98 * 775.0);
    r = ibn::test::run_cli(base + engine + " --algo ring 2>/dev/null");
    REQUIRE(r.code == 0);
    const double ring = ibn::test::busbw_of(r.out);
    CHECK(ring < 400.0);
    CHECK(collnet / ring > 31.0 / 16.0);
  }
  // An Ethernet switch model has no SHARP: refused.
  const auto r = ibn::test::run_cli(base + "flow --algo collnet --set fabric.params.switch-model=spectrum-4");
  CHECK(r.code != 0);
  CHECK(r.out.find("SHARP") != std::string::npos);
}

TEST_CASE("scenario keys nccl.nvls / nccl.collnet: auto considers what they offer, a name needs its key") {
  using J = nlohmann::json;
  const J doc = {{"jobs", J::array({J{{"nodes", 2}, {"gpus_per_node", 8}}})}};
  CHECK(make_scenario(doc, "x", "").jobs[0].workload.algorithm == "auto");
  CHECK(make_scenario(doc, "x", "", {"nccl.nvls=true"}).jobs[0].workload.algorithm == "ring,tree,nvls");
  CHECK(make_scenario(doc, "x", "", {"nccl.nvls=true", "nccl.collnet=true"}).jobs[0].workload.algorithm ==
        "ring,tree,nvls,collnet");
  CHECK_THROWS_AS(make_scenario(doc, "x", "", {"jobs[0].workload.algorithm=collnet"}), InputError);
  CHECK(make_scenario(doc, "x", "", {"jobs[0].workload.algorithm=collnet", "nccl.collnet=true"})
            .jobs[0]
            .workload.algorithm == "collnet");
}

TEST_CASE("validate nccl-tests: NCCL_ALGO=NVLS in the log runs nvls on a system that offers it") {
  // The xxrjun H100 log's all_reduce (NCCL 2.29) with an "NCCL_ALGO set by environment to NVLS" line added.
  const auto dir = ibn::test::scratch_dir("nvls-validate");
  {
    std::ifstream in(std::string(IBNETSIM_TEST_DATA) +
                     "/nccl-tests/h100-1node-8gpu-nvlink-xxrjun-cluster01-single.log");
    std::ofstream out(dir / "nvls.log");
    std::string line;
    for (int i = 1; i <= 33 && std::getline(in, line); ++i) {
      out << line << "\n";
      if (i == 4) out << "cnode3-002:4180122:4180122 [0] NCCL INFO NCCL_ALGO set by environment to NVLS\n";
    }
  }
  const auto r = ibn::test::run_cli("validate nccl-tests " + (dir / "nvls.log").string() +
                                    " --engine flow -n 1 --max-bytes 64M --json 2>/dev/null");
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto v = nlohmann::json::parse(r.out);
  REQUIRE(v.at("runs").size() == 1);
  CHECK(v.at("runs").at(0).at("algorithm") == "nvls");
  const auto set = v.at("runs").at(0).at("set").get<std::vector<std::string>>();
  CHECK(std::find(set.begin(), set.end(), "nccl.nvls=true") != set.end());
  for (const auto& row : v.at("rows")) CHECK(row.at("algorithm") == "nvls");
}
