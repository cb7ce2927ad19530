// NCCL's cost model (scenarios/nccl_cost.hpp): the versioned table lookup, the per-step costs and step counts
// against hand-computed values from NCCL's tuning.cc constants (formula in each comment), the DAG fields
// they set, a closed form of the DAG's time with the costs on, and the tuning model's reference unchanged.
#include "scenarios/executor.hpp"
#include "scenarios/nccl_cost.hpp"
#include "scenarios/tuning.hpp"

#include "sim/error.hpp"
#include "tests/scenarios/fake_engine.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>

using namespace ibn;
using namespace ibn::scen;

namespace {

Time symbolic_run(const TransferDag& d, Time alpha, std::int64_t ps_per_byte) {
  // Delivery = max(dependency deliveries, launch) + local_delay + alpha + bytes x ps_per_byte (no
  // contention).
  std::vector<Time> done(d.size());
  Time end;
  for (TransferId i = 0; i < d.size(); ++i) {
    Time start = d.launch_latency;
    for (auto dep : d.deps_of(i)) start = std::max(start, done[dep]);
    done[i] =
        start + d[i].local_delay + alpha + Time::ps(static_cast<std::int64_t>(d[i].bytes) * ps_per_byte);
    end = std::max(end, done[i]);
  }
  return end;
}

/// A ring LL AllReduce of 4 KiB on 2 nodes x 2 GPUs, one NIC, one channel, NCCL's costs off.
/// When `d` (one GPU per node, two nodes) ends on an engine that delivers at post + 1 us + bytes x 8 /
/// 400 Gb/s, started at 0.
Time run_two_nodes(const TransferDag& d) {
  ibn::test::FakeEngine engine(2, 400'000'000'000ULL, Time::us(1));
  JobLayout layout;
  layout.nodes = {{0}, {1}};
  DagExecutor ex(engine, d, layout, ExecOptions{});
  Time end;
  ex.start({}, [&](Time t) { end = t; });
  engine.run();
  return end;
}

CollectiveSpec ring_ll_4_ranks_2_nodes() {
  CollectiveSpec s;
  s.op = CollOp::AllReduce;
  s.ranks = 4;
  s.gpus_per_node = 2;
  s.nics_per_node = 1;
  s.channels = 1;
  s.algorithm = "ring";
  s.protocol = "ll";
  s.size_bytes = 4096;
  return s;
}

} // namespace

TEST_CASE("nccl cost table: a version picks the newest entry not newer than it") {
  CHECK(std::string(nccl_cost_table("2.8.4").version) == "2.8.4");
  CHECK(std::string(nccl_cost_table("2.11.4").version) == "2.8.4");
  CHECK(std::string(nccl_cost_table("2.7.8").version) == "2.8.4"); // older than every entry: the oldest
  CHECK(std::string(nccl_cost_table("2.17.1").version) == "2.12.12");
  CHECK(std::string(nccl_cost_table("2.20.3").version) == "2.19.3");
  CHECK(std::string(nccl_cost_table("2.22.3").version) == "2.21.5");
  CHECK(std::string(nccl_cost_table("2.26.2+cuda12.2").version) == "2.23.4");
  CHECK(std::string(nccl_cost_table("2.27.7").version) == "2.23.4");
  CHECK(std::string(nccl_cost_table("").version) == "2.19.3"); // the tuning model's reference
  CHECK(nccl_version_code("2.26.2") == 22602);
  CHECK(nccl_version_code("2.8") == 20800);
  CHECK(nccl_version_code("v2") == -1);
  const auto e = test::error_of([] { nccl_cost_table("banana", "nccl.version"); });
  CHECK(e.find("nccl.version") != std::string::npos);
  CHECK(e.find("banana") != std::string::npos);
  CHECK_THROWS_AS(nccl_cost_table("3.1.0"), InputError);
  // Entries are in version order.
  std::size_t n = 0;
  const auto* t = nccl_cost_tables(&n);
  for (std::size_t i = 1; i < n; ++i) CHECK(t[i - 1].code < t[i].code);
}

TEST_CASE("nccl step costs: hand-computed from tuning.cc's constants") {
  NcclCostInputs in;
  in.ranks = 16;
  in.nodes = 2;
  // 2.26.2 (entry 2.23.4), ring LL, 2 x 8 GPUs: base = baseLat[ring][LL] = 6.6; intra = max(hwLat[NVLINK]
  // [ring][LL] 0.6, netOverhead 1.0) = 1.0; net = hwLat[NET][ring][LL] = 2.7.
  in.algorithm = "ring";
  in.protocol = "ll";
  auto c = nccl_step_costs(nccl_cost_table("2.26.2"), in);
  CHECK(c.base_us == doctest::Approx(6.6));
  CHECK(c.intra_us == doctest::Approx(1.0));
  CHECK(c.net_us == doctest::Approx(2.7));
  // Simple on an AMD host: intra = max(3.4, 2 x 3) = 6; net 14.0; base 8.4.
  in.protocol = "simple";
  in.amd_host = true;
  c = nccl_step_costs(nccl_cost_table("2.26.2"), in);
  CHECK(c.intra_us == doctest::Approx(6.0));
  CHECK(c.net_us == doctest::Approx(14.0));
  CHECK(c.base_us == doctest::Approx(8.4));
  in.amd_host = false;
  // One GPU per node: from 2.23 the ring uses the tree's NET latency (LL: 5.0), before it the ring's (2.7).
  in.protocol = "ll";
  in.ranks = 2;
  CHECK(nccl_step_costs(nccl_cost_table("2.26.2"), in).net_us == doctest::Approx(5.0));
  CHECK(nccl_step_costs(nccl_cost_table("2.22.3"), in).net_us == doctest::Approx(2.7));
  // 2.8: no netOverhead floor (intra = hwLat[NVLINK][ring][LL] = 0.47), ring Simple NET 9.6.
  in.ranks = 16;
  CHECK(nccl_step_costs(nccl_cost_table("2.8.4"), in).intra_us == doctest::Approx(0.47));
  in.protocol = "simple";
  CHECK(nccl_step_costs(nccl_cost_table("2.8.4"), in).net_us == doctest::Approx(9.6));
  // Tree Simple: 2.19 base 0, NVLINK 28, NET 28; 2.23 base 8.4, NVLINK 4.0, NET 14.
  in.algorithm = "tree";
  c = nccl_step_costs(nccl_cost_table("2.19.3"), in);
  CHECK(c.base_us == 0.0);
  CHECK(c.intra_us == doctest::Approx(28.0));
  CHECK(c.net_us == doctest::Approx(28.0));
  c = nccl_step_costs(nccl_cost_table("2.23.4"), in);
  CHECK(c.base_us == doctest::Approx(8.4));
  CHECK(c.intra_us == doctest::Approx(4.0));
  CHECK(c.net_us == doctest::Approx(14.0));
  CHECK(nccl_wire_efficiency("ll") == 0.5);
  CHECK(nccl_wire_efficiency("ll128") == doctest::Approx(120.0 / 128.0));
  CHECK(nccl_wire_efficiency("simple") == 1.0);
}

TEST_CASE("nccl step counts: NCCL's latency model per version") {
  // Ring AllReduce, 16 ranks on 2 nodes: 2(n-1) = 30 steps; 2.19: 2m = 4 cross nodes; 2.23: 2(m-1) = 2.
  auto c = nccl_step_counts(nccl_cost_table("2.19.3"), CollOp::AllReduce, "ring", 16, 2);
  CHECK(c.net == 4);
  CHECK(c.intra == 26);
  c = nccl_step_counts(nccl_cost_table("2.26.2"), CollOp::AllReduce, "ring", 16, 2);
  CHECK(c.net == 2);
  CHECK(c.intra == 28);
  // AllGather, 8 ranks on 2 nodes (2.22): n-1 = 7 steps, m = 2 of them across nodes.
  c = nccl_step_counts(nccl_cost_table("2.22.3"), CollOp::AllGather, "ring", 8, 2);
  CHECK(c.net == 2);
  CHECK(c.intra == 5);
  // Tree AllReduce, 8 nodes x 8: 2(ppn-1) = 14 intra, 2 floor(log2 8) = 6 net.
  c = nccl_step_counts(nccl_cost_table("2.8.4"), CollOp::AllReduce, "tree", 64, 8);
  CHECK(c.intra == 14);
  CHECK(c.net == 6);
  // SendRecv: one exchange across nodes; one node: none.
  c = nccl_step_counts(nccl_cost_table("2.26.2"), CollOp::SendRecv, "direct", 2, 2);
  CHECK(c.net == 1);
  CHECK(c.intra == 0);
  c = nccl_step_counts(nccl_cost_table("2.26.2"), CollOp::AllReduce, "ring", 8, 1);
  CHECK(c.net == 0);
  CHECK(c.intra == 14);
}

TEST_CASE("nccl costs in the DAG: launch latency, intra and net step overheads, closed form") {
  CollectiveSpec s = ring_ll_4_ranks_2_nodes();
  const auto off = build_collective(s);
  CHECK(off.launch_latency == Time::zero());
  for (const auto& t : off.transfers()) CHECK(t.local_delay == Time::zero());
  s.nccl_costs = true;
  s.nccl_version = "2.20.3";
  const auto on = build_collective(s);
  // 2.19.3 entry, ring LL on 2 nodes: base 6.6 us, intra max(0.6, 1.0) = 1.0 us, net 2.7 us.
  CHECK(on.launch_latency == Time::from_us(6.6));
  std::size_t net = 0, intra = 0;
  for (const auto& t : on.transfers()) {
    const bool cross = t.src / 2 != t.dst / 2;
    CHECK(t.local_delay == (cross ? Time::from_us(2.7) : Time::from_us(1.0)));
    (cross ? net : intra)++;
  }
  CHECK(net > 0);
  CHECK(intra > 0);
  // Ring positions 0 1 | 2 3: edges 0->1 and 2->3 inside a node, 1->2 and 3->0 across. Every chunk makes
  // 2(n-1) = 6 hops, 3 of each kind, so with transfer time alpha + wire bytes x 20 ps and no contention:
  // T = base + 3 (1.0 us) + 3 (2.7 us) + 6 (alpha + 2 x 1 KiB x 20 ps) (LL: 1 KiB of data per chunk, 2 KiB
  // on the wire). This closed form is of the DAG's costs only: the ring LL channel stage the DAG also carries
  // (channel_gbps, charged by the executor) is checked in "ring LL / LL128: ... closed form" below.
  CHECK(on.channel_stage_all);
  const Time alpha = Time::ns(500);
  const Time expect = Time::from_us(6.6) + Time::from_us(1.0) * 3 + Time::from_us(2.7) * 3 +
                      (alpha + Time::ps(2048 * 20)) * 6;
  CHECK(symbolic_run(on, alpha, 20) == expect);
  // A fitted override for LL replaces base and net; the intra cost stays the table's.
  s.nccl_fitted.protocol = "ll";
  s.nccl_fitted.base_us = 20;
  s.nccl_fitted.net_us = 5;
  const auto fitted = build_collective(s);
  CHECK(fitted.launch_latency == Time::from_us(20));
  for (const auto& t : fitted.transfers())
    CHECK(t.local_delay == (t.src / 2 != t.dst / 2 ? Time::from_us(5) : Time::from_us(1.0)));
  // An override of another protocol does nothing.
  s.nccl_fitted.protocol = "simple";
  CHECK(build_collective(s).launch_latency == Time::from_us(6.6));
}

TEST_CASE("nccl costs: the engine's own network latency is credited against the net step, never below zero") {
  // NCCL's hwLat[NET] was measured on real systems, network included; the engine charges its NIC, switch
  // and cable latencies by itself, so the DAG charges max(0, table - hw_net_latency) per inter-node step.
  // Intra-node steps and fitted costs are charged whole.
  CollectiveSpec s = ring_ll_4_ranks_2_nodes();
  s.nccl_costs = true;
  s.nccl_version = "2.20.3";
  s.hw_net_latency = Time::ns(830); // ring LL 2.19.3 entry: net 2.7 us -> 1.87 us; intra 1.0 us kept
  const auto d = build_collective(s);
  CHECK(d.launch_latency == Time::from_us(6.6)); // the base latency is not a step: no credit
  for (const auto& t : d.transfers())
    CHECK(t.local_delay == (t.src / 2 != t.dst / 2 ? Time::ns(1870) : Time::from_us(1.0)));
  s.hw_net_latency = Time::us(5); // more than the table's 2.7 us: clamped at zero
  const auto clamped = build_collective(s);
  for (const auto& t : clamped.transfers())
    CHECK(t.local_delay == (t.src / 2 != t.dst / 2 ? Time::zero() : Time::from_us(1.0)));
  // Fitted costs were measured against the simulation: charged whole.
  s.nccl_fitted.protocol = "ll";
  s.nccl_fitted.base_us = 20;
  s.nccl_fitted.net_us = 5;
  const auto fitted = build_collective(s);
  for (const auto& t : fitted.transfers())
    CHECK(t.local_delay == (t.src / 2 != t.dst / 2 ? Time::from_us(5) : Time::from_us(1.0)));
}

TEST_CASE("nccl costs: the variability model's typical launch delay is credited against the base, never "
          "below zero") {
  // NCCL's base latency (table or fitted) comes from averaged measured times, typical launch jitter included;
  // the variability model draws that jitter on top, so the base is charged less its typical part.
  CollectiveSpec s = ring_ll_4_ranks_2_nodes();
  s.nccl_costs = true;
  s.nccl_version = "2.20.3"; // ring LL base 6.6 us
  s.launch_credit = Time::from_us(2.5);
  CHECK(build_collective(s).launch_latency == Time::from_us(4.1));
  s.launch_credit = Time::from_us(9); // more than the base: zero, not negative
  CHECK(build_collective(s).launch_latency == Time::zero());
  // A fitted base is credited the same way (it was fitted on averaged times too).
  s.launch_credit = Time::from_us(2.5);
  s.nccl_fitted = {"ll", 20, 5};
  CHECK(build_collective(s).launch_latency == Time::from_us(17.5));
  // Without the cost model there is no base to credit.
  s.nccl_costs = false;
  s.nccl_fitted = {};
  CHECK(build_collective(s).launch_latency == Time::zero());
}

TEST_CASE("tuning model: the version's table only with the cost model on") {
  CollectiveSpec s;
  s.op = CollOp::AllReduce;
  s.ranks = 16;
  s.gpus_per_node = 8;
  s.nics_per_node = 8;
  s.size_bytes = 1024;
  s.nccl_version = "2.26.2";
  // Costs off: the reference (2.19.3): tree LL latency = 6.8 + 2 (7 x 0.6 + 1 x 5.0) = 25.2 us.
  auto in = tuning_inputs(s);
  REQUIRE(in.table != nullptr);
  CHECK(std::string(in.table->version) == "2.19.3");
  // Costs on: 2.23.4's ring LL on 2 x 8: base 6.6 + (30 - 2) x max(0.6, 1) + 2 x 2.7 = 40.0 us.
  s.nccl_costs = true;
  in = tuning_inputs(s);
  CHECK(std::string(in.table->version) == "2.23.4");
  const auto table = tuning_table(in);
  CHECK(table[0].algorithm == "ring");
  CHECK(table[0].protocol == "ll");
  CHECK(table[0].latency_us == doctest::Approx(40.0));
}

TEST_CASE("ring LL / LL128: NCCL's per-channel ceiling is each channel's stage, closed form") {
  // ring_channel_cap_GBps from the release's constants (src/graph/tuning.cc): LL llMaxBw / channels (2 nodes,
  // Intel host: 39.0 GB/s; >= 3 nodes 20.4), LL128 perChMaxRingLL128Bw (Hopper 36.7, Ampere 20.0), Simple
  // none.
  CollectiveSpec s = ring_ll_4_ranks_2_nodes();
  s.op = CollOp::AllGather;
  s.ranks = 2; // 2 nodes x 1 GPU
  s.gpus_per_node = 1;
  s.channels = 2;
  s.nccl_costs = true;
  s.nccl_version = "2.22.3";
  auto in = tuning_inputs(s);
  CHECK(ring_channel_cap_GBps(in, "ll") == doctest::Approx(39.0 / 2));
  in.nodes = 4;
  CHECK(ring_channel_cap_GBps(in, "ll") == doctest::Approx(20.4 / 2));
  CHECK(ring_channel_cap_GBps(in, "ll128") == doctest::Approx(36.7));
  in.sm = 80;
  CHECK(ring_channel_cap_GBps(in, "ll128") == doctest::Approx(20.0));
  CHECK(ring_channel_cap_GBps(in, "simple") == 0);

  // The DAG carries it in wire Gb/s on every transfer of a ring, passed before the post; Simple rings and
  // the model off carry none; a tree carries its own (the next test case), spacing posts.
  s.channels = 1;
  const auto d = build_collective(s);
  CHECK(d.channel_stage_all);
  CHECK(d.channel_gbps == doctest::Approx(39.0 * 8 / 0.5)); // LL: 8 B of data per 16 B line
  auto other = s;
  other.protocol = "simple";
  CHECK(build_collective(other).channel_gbps == 0);
  other = s;
  other.op = CollOp::AllReduce;
  other.algorithm = "tree";
  CHECK(build_collective(other).channel_stage_overlaps);
  CHECK_FALSE(d.channel_stage_overlaps);
  other.nccl_costs = false;
  CHECK(build_collective(other).channel_gbps == 0);
  other = s;
  other.nccl_costs = false;
  CHECK(build_collective(other).channel_gbps == 0);

  // Executed on an engine that delivers at post + 1 us + bytes x 8 / 400 Gb/s: each rank sends its 2 KiB
  // (4 KiB of LL lines) once, after the launch latency (which covers its net step cost: a root transfer's
  // local delay runs from the start, DagExecutor::release) and one pass through the stage:
  //   T = max(launch, net step) + 4096 x 8 / 624 Gb/s + 1 us + 4096 x 8 / 400 Gb/s.
  REQUIRE(d.size() == 2);
  const Time end = run_two_nodes(d);
  const Time pass = Time::from_s(4096.0 * 8 / (39.0 * 8 / 0.5 * 1e9));
  const Time expect = std::max(d.launch_latency, d[0].local_delay) + pass + Time::us(1) +
                      serialization_time(4096, 400'000'000'000ULL);
  CHECK(end == expect);
  CHECK(pass == Time::ps(52513)); // 4096 B x 8 / 624 Gb/s
}

namespace {
/// 4 nodes x 4 GPUs x 4 NICs, 8 channels, a hierarchical AllReduce of 1 MiB (the hierarchical tests below).
CollectiveSpec hierarchical_4x4_1mib() {
  CollectiveSpec s;
  s.op = CollOp::AllReduce;
  s.algorithm = "hierarchical";
  s.ranks = 16;
  s.gpus_per_node = 4;
  s.nics_per_node = 4;
  s.channels = 8;
  s.size_bytes = 1 << 20;
  return s;
}
} // namespace

TEST_CASE("hierarchical AllReduce: auto tunes the intra-node rings and the inter-node ring each on its own") {
  // 4 nodes x 4 GPUs x 4 NICs of 400 Gb/s, NVLink 450 GB/s per direction, 8 channels, 1 MiB. The rings as
  // NCCL would tune them (three NCCL calls), their inputs written out here: a ReduceScatter and an
  // AllGather of 1 MiB over the node's 4 GPUs (one node, busBw = NVLink), and an AllReduce of 1 MiB / 4
  // over 4 nodes of one GPU through one NIC (busBw = min(NVLink, 50 GB/s)).
  CollectiveSpec s = hierarchical_4x4_1mib();
  TuningInputs intra;
  intra.size_bytes = s.size_bytes;
  intra.ranks = 4;
  intra.nodes = 1;
  intra.channels = 8;
  intra.nvlink_GBps = intra.bus_GBps = s.nvlink_gbps / 8;
  intra.net_GBps = s.nics_per_node * s.nic_gbps / 8;
  intra.nics = 4;
  TuningInputs inter = intra;
  inter.size_bytes = s.size_bytes / 4;
  inter.nodes = 4;
  inter.net_GBps = inter.bus_GBps = s.nic_gbps / 8;
  inter.nics = 1;
  auto ring = [](TuningInputs in, CollOp op, const std::string& proto) {
    in.op = op;
    for (const auto& e : tuning_table(in))
      if (e.algorithm == "ring" && e.protocol == proto) return e.time_us;
    FAIL("no ring " << proto);
    return 0.0;
  };
  auto lowest = [](const std::map<std::string, double>& m) {
    return *std::min_element(m.begin(), m.end(), [](auto& a, auto& b) { return a.second < b.second; });
  };
  std::map<std::string, double> in_node, between;
  for (const std::string p : {"ll", "ll128", "simple"}) {
    in_node[p] = ring(intra, CollOp::ReduceScatter, p) + ring(intra, CollOp::AllGather, p);
    between[p] = ring(inter, CollOp::AllReduce, p);
  }
  const auto [pi, ti] = lowest(in_node);
  const auto [pn, tn] = lowest(between);
  const auto h = hierarchical_choose_protocols(s);
  CHECK(h.intra.protocol == pi);
  CHECK(h.inter.protocol == pn);
  CHECK(h.intra_time_us == doctest::Approx(ti));
  CHECK(h.time_us == doctest::Approx(ti + tn));
  // Here they differ: LL inside the node (llMaxBw of one node, lower latency), LL128 between nodes.
  CHECK(pi == "ll");
  CHECK(pn == "ll128");
  // The DAG: the network transfers carry LL128's wire bytes, the NVLink ones LL's; the result names both.
  s.protocol = "auto";
  const auto d = build_collective(s);
  CHECK(d.protocol == "ll128");
  CHECK(d.protocol_nvlink == "ll");
  CHECK(protocol_label(d.protocol, d.protocol_nvlink) == "ll128/ll");
  // Its NVLink transfers are those of the DAG with LL named, its network transfers those with LL128 named
  // (cut, wire bytes, order).
  auto sizes = [](const TransferDag& dag, bool net) {
    std::vector<std::uint64_t> v;
    for (const auto& t : dag.transfers())
      if ((t.src / 4 != t.dst / 4) == net) v.push_back(t.bytes);
    return v;
  };
  auto named = [&](const char* p) {
    auto x = s;
    x.protocol = p;
    return build_collective(x);
  };
  CHECK(!sizes(d, false).empty());
  CHECK(sizes(d, false) == sizes(named("ll"), false));
  CHECK(sizes(d, true) == sizes(named("ll128"), true));
  CHECK(sizes(d, true) != sizes(named("ll"), true));
  // 16 MiB: Simple inside the node (the bandwidth term), LL128 between nodes still.
  s.size_bytes = 16ULL << 20;
  const auto h16 = hierarchical_choose_protocols(s);
  CHECK(h16.intra.protocol == "simple");
  CHECK(h16.inter.protocol == "ll128");
  // With the cost model on, the network transfers pass LL128's stage (perChMaxRingLL128Bw, wire Gb/s), the
  // NVLink ones none (Simple has no ceiling), not the network's.
  s.nccl_costs = true;
  const auto d16 = build_collective(s);
  CHECK(protocol_label(d16.protocol, d16.protocol_nvlink) == "ll128/simple");
  CHECK(d16.channel_stage_all);
  CHECK(d16.channel_gbps == doctest::Approx(36.7 * 8 / (120.0 / 128.0)));
  REQUIRE(d16.channel_gbps_nvlink.has_value());
  CHECK(*d16.channel_gbps_nvlink == 0);
  s.nccl_costs = false;
  // A named protocol serves every phase.
  s.protocol = "simple";
  CHECK(build_collective(s).protocol_nvlink.empty());
  // One node: NCCL's own ring choice, one protocol.
  s.protocol = "auto";
  s.ranks = 4;
  s.size_bytes = 1 << 20;
  const auto h1 = hierarchical_choose_protocols(s);
  CHECK(h1.inter.protocol == tuning_choose_protocol(tuning_inputs(s), "ring").protocol);
  CHECK(h1.intra.protocol == h1.inter.protocol);
  CHECK(build_collective(s).protocol_nvlink.empty());
}

TEST_CASE("hierarchical AllReduce: three NCCL calls, three launches, each its protocol's base") {
  // 4 nodes x 4 GPUs, 8 channels, 1 MiB, auto: LL inside the node, LL128 between nodes (the test above).
  // 2.19.3 entry, ring baseLat: LL 6.6 us, LL128 14.0 us. The ReduceScatter's launch is the DAG's; the
  // AllReduce's (14.0) comes before each rank's first inter-node step, the AllGather's (6.6) before its
  // first step of the AllGather, on top of the step's own cost.
  CollectiveSpec s = hierarchical_4x4_1mib();
  s.protocol = "auto";
  s.nccl_costs = true;
  s.nccl_version = "2.20.3";
  const auto d = build_collective(s);
  REQUIRE(d.protocol == "ll128");
  REQUIRE(d.protocol_nvlink == "ll");
  CHECK(d.launch_latency == Time::from_us(6.6));
  Time net = Time::max(), intra = Time::max();
  for (const auto& t : d.transfers())
    (t.src / 4 != t.dst / 4 ? net : intra) = std::min(t.src / 4 != t.dst / 4 ? net : intra, t.local_delay);
  const std::uint32_t ar_first = 3, ag_first = 3 + 2 * 3; // steps: RS 0..2, AR 3..8, AG 9..11
  std::size_t ar_launched = 0, ag_launched = 0;
  for (const auto& t : d.transfers()) {
    const bool cross = t.src / 4 != t.dst / 4;
    if (cross && t.local_delay != net) {
      CHECK(t.step == ar_first);
      CHECK(t.local_delay == net + Time::from_us(14.0));
      ++ar_launched;
    } else if (!cross && t.local_delay != intra) {
      CHECK(t.step == ag_first);
      CHECK(t.local_delay == intra + Time::from_us(6.6));
      ++ag_launched;
    }
  }
  // Every rank's first step of the phase on every channel (one slice per LL step).
  // Every send of the phase's first step (ranks x channels, less the chunks the LL128 grain leaves empty:
  // a rank with nothing to send there starts behind one that paid the launch).
  std::size_t ar_first_sends = 0, ag_first_sends = 0;
  for (const auto& t : d.transfers()) {
    ar_first_sends += t.src / 4 != t.dst / 4 && t.step == ar_first;
    ag_first_sends += t.src / 4 == t.dst / 4 && t.step == ag_first;
  }
  CHECK(ar_launched == ar_first_sends);
  CHECK(ag_launched == ag_first_sends);
  CHECK(ar_launched >= 16 * 8 - 16);
  CHECK(ag_launched == 16 * 8);
  // The ring-fluid model charges the same launches before its stages.
  const auto st = ring_stages(s);
  REQUIRE(st);
  REQUIRE(st->stages.size() == 3);
  CHECK(st->launch_latency == Time::from_us(6.6));
  CHECK(st->stages[0].launch == Time::zero());
  CHECK(st->stages[1].launch == Time::from_us(14.0));
  CHECK(st->stages[2].launch == Time::from_us(6.6));
  // Without the cost model: no launch anywhere.
  s.nccl_costs = false;
  CHECK(build_collective(s).launch_latency == Time::zero());
  CHECK(ring_stages(s)->stages[1].launch == Time::zero());
}

namespace {
/// `s` running `algorithm` on `ranks` ranks and `channels` channels, NCCL's cost model on at 2.22.3.
CollectiveSpec costs_2_22(CollectiveSpec s, const char* algorithm, std::uint32_t ranks,
                          std::uint32_t channels) {
  s.algorithm = algorithm;
  s.ranks = ranks;
  s.channels = channels;
  s.nccl_costs = true;
  s.nccl_version = "2.22.3";
  return s;
}
} // namespace

TEST_CASE("hierarchical AllReduce: each ring's own per-channel ceiling, network and NVLink") {
  // LL with the cost model on (2.22.3, Hopper, Intel host), 4 nodes x 2 GPUs, 2 channels: the inter-node ring
  // is NCCL's ring on 4 nodes (llMaxBw 20.4 GB/s), the intra-node ones its ring on one node (llMaxBw of one
  // node); each over 2 channels, in wire Gb/s (LL: 8 B of data per 16 B line).
  CollectiveSpec s = costs_2_22(ring_ll_4_ranks_2_nodes(), "hierarchical", 8, 2);
  auto one = tuning_inputs(s);
  one.nodes = 1;
  const double ll_1node = ring_channel_cap_GBps(one, "ll") * 2; // llMaxBw itself
  CHECK(ll_1node > 20.4);
  const auto d = build_collective(s);
  CHECK(d.channel_stage_all);
  CHECK(d.channel_gbps == doctest::Approx(20.4 / 2 * 8 / 0.5));
  REQUIRE(d.channel_gbps_nvlink.has_value());
  CHECK(*d.channel_gbps_nvlink == doctest::Approx(ll_1node / 2 * 8 / 0.5));
  // A flat ring keeps one ceiling.
  s.algorithm = "ring";
  CHECK(!build_collective(s).channel_gbps_nvlink.has_value());
}

TEST_CASE("tree: NCCL's tree bandwidth per channel, size-corrected, spaces each rank's sends, closed form") {
  // tree_channel_cap_GBps = the tuning model's tree busBw / channels x treeCorrectionFactor (2.22.3, Hopper).
  // 8 nodes x 4 GPUs x 4 NICs of 400 Gb/s, NVLink 450 GB/s, 2 channels, 1 MiB (log2(1 MiB / 64) = 14):
  //   bus = min(450, 4 x 50) = 200; x 0.92 under 2 x perChMaxTreeBw (>= 3 nodes 36.0): 72;
  //   LL128: min(72 x 120/128, 2 x 29.0) = 58, per channel 29, x 0.6 = 17.4 GB/s;
  //   LL: min(72 / 3.8, llMaxBw 20.4) = 18.947, per channel 9.474, x 0.5 = 4.737;
  //   Simple: 72, per channel 36, x 0.5 = 18.0. Not an AllReduce: 0.
  CollectiveSpec s = costs_2_22(hierarchical_4x4_1mib(), "tree", 32, 2);
  auto in = tuning_inputs(s);
  CHECK(tree_channel_cap_GBps(in, "ll128") == doctest::Approx(17.4));
  CHECK(tree_channel_cap_GBps(in, "ll") == doctest::Approx(72.0 / 3.8 / 2 * 0.5));
  CHECK(tree_channel_cap_GBps(in, "simple") == doctest::Approx(18.0));
  in.op = CollOp::AllGather;
  CHECK(tree_channel_cap_GBps(in, "simple") == 0);

  // Executed: 2 nodes x 1 GPU, 1 NIC of 400 Gb/s, 1 channel, LL128, 16 chunks of 576,000 B (9,216,000 B,
  // log2(S / 64) = 17: x 0.9). Cap: bus = min(450, 50) = 50; min(46, 41.4) = 41.4; min(41.4 x 120/128, 36.7)
  // = 36.7; x 0.9 = 33.03 GB/s of busBw, half of it (16.515 GB/s, algBw) on each lane (up, down): a pass
  // p = 576,000 / 16.515e9 s = 34.878 us per chunk. On an engine that delivers at post + d (d = 1 us +
  // 614,400 wire bytes x 8 / 400 Gb/s = 13.288 us), the leaf's up lane begins its passes at launch + k p
  // (launch = NCCL's base latency, after which a rank starts), and posts each up when its pass has begun
  // and its net step is over (T0 = max(launch, net step) for the first); the root posts each down one net
  // step after its up arrives, which its down lane allows as the ups come p apart. The 8-deep window stays
  // out of the way (d + net step < 8 p): end = max(T0, launch + 15 p) + 2 d + net step, i.e. the 16 chunks
  // in 16 p ~ S / algBw plus the pipeline's latency. A pass before each post (the ring's stage) would add p
  // per hop.
  s.ranks = 2;
  s.gpus_per_node = 1;
  s.nics_per_node = 1;
  s.channels = 1;
  s.protocol = "ll128";
  s.size_bytes = 16 * 576000;
  const auto d = build_collective(s);
  CHECK(d.channel_stage_overlaps);
  CHECK(d.channel_gbps == doctest::Approx(36.7 * 0.9 / 2 * 8 * 128 / 120));
  REQUIRE(d.size() == 32);
  const Time end = run_two_nodes(d);
  const Time p = channel_stage_pass(614400, d.channel_gbps);
  CHECK(p.to_us() == doctest::Approx(34.878).epsilon(1e-3));
  const Time dt = Time::us(1) + serialization_time(614400, 400'000'000'000ULL);
  const Time step = d[0].local_delay, t0 = std::max(d.launch_latency, step);
  CHECK(end == std::max(t0, d.launch_latency + Time::ps(15 * p.count_ps())) + dt + dt + step);
  // The rate is the one the flow engine's ring-fluid model reads; the cost model off carries none.
  const auto plan = ring_stages(s);
  REQUIRE(plan.has_value());
  CHECK(plan->stage_gbps == d.channel_gbps);
  auto off = s;
  off.nccl_costs = false;
  CHECK_FALSE(build_collective(off).channel_stage_overlaps);
  CHECK(build_collective(off).channel_gbps == 0);
}

TEST_CASE("tree: a rank's ups and downs take two lanes, a broadcast to several children one pass") {
  // 2 nodes x 2 GPUs, 1 channel (tree 0): rank 0 is the root, its children are rank 1 (NVLink, its chain)
  // and rank 2 (the other node's head), whose child is rank 3. Every up is on lane 0, every down on lane 1;
  // of rank 0's two downs of a chunk the second shares the first's pass, and both wait for the same
  // transfers (the ups of both children and both connections' FIFO windows).
  CollectiveSpec s = hierarchical_4x4_1mib();
  s.algorithm = "tree";
  s.ranks = 4;
  s.gpus_per_node = 2;
  s.nics_per_node = 1;
  s.channels = 1;
  s.protocol = "ll";
  s.size_bytes = 16 * 32768; // 16 LL chunks
  s.nccl_costs = true;
  const auto d = build_collective(s);
  REQUIRE(d.channel_stage_overlaps);
  std::size_t shared = 0, downs_from_root = 0;
  for (TransferId t = 0; t < d.size(); ++t) {
    const auto& tr = d[t];
    const bool down = tr.step == 1;
    CHECK(tr.stage_lane == (down ? 1 : 0));
    if (down && tr.src == 0) {
      ++downs_from_root;
      const auto mine = d.deps_of(t);
      if (tr.stage_shared) {
        ++shared;
        REQUIRE(t > 0);
        const auto first = d[t - 1]; // its sibling, emitted just before it
        CHECK(first.src == 0);
        CHECK_FALSE(first.stage_shared);
        const auto theirs = d.deps_of(t - 1);
        CHECK(std::vector<TransferId>(mine.begin(), mine.end()) ==
              std::vector<TransferId>(theirs.begin(), theirs.end()));
      }
    } else {
      CHECK_FALSE(tr.stage_shared);
    }
  }
  CHECK(downs_from_root == 32);
  CHECK(shared == 16);
}
