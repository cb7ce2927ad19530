// perftest scenario on the packet engine: closed forms (the formula in each comment), perftest's
// conventions (per-QP iterations, bidirectional sum, peak >= average), the iteration cap and bad input.
#include "scenarios/perftest.hpp"

#include "sim/error.hpp"
#include "topology/generators.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>

using namespace ibn;
using namespace ibn::scen;

namespace {

constexpr double kNdr = 400e9;

PerftestPath b2b(double cable_m = 3.0) {
  return back_to_back_path({topo::Generation::NDR, 4}, cable_m, {});
}

PerftestResultRow run_one(const PerftestPath& p, PerftestTool tool, std::uint64_t size, std::uint64_t iters,
                          std::uint32_t qps = 1, bool bidir = false) {
  PerftestSpec s;
  s.tool = tool;
  s.sizes = {size};
  s.iterations = iters;
  s.qps = qps;
  s.tx_depth = perftest_default_tx_depth(tool);
  s.bidirectional = bidir;
  s.src = p.src;
  s.dst = p.dst;
  const auto rows = run_perftest(p.fabric, p.tables, p.config, s);
  REQUIRE(rows.size() == 1);
  return rows.front();
}

/// One-way latency of a sample in integer picoseconds (the driver reports microseconds as doubles).
std::int64_t ps_of(double us) {
  return std::llround(us * 1e6);
}

/// Exact serialization of `bytes` at NDR 4x (400 Gb/s: 20 ps per byte).
std::int64_t ser_ps(std::int64_t bytes) {
  return bytes * 20;
}

/// RDMA WRITE goodput in Gb/s: 8 S / (ceil(S/4096) x 26 + 16 + S) x 400e9 (26 B per packet, 16 B RETH on the
/// first packet of each message).
double write_goodput_gbps(double s) {
  return s / (std::ceil(s / 4096) * 26 + 16 + s) * kNdr * 1e-9;
}
/// SEND and READ responses carry no RETH: 8 S / (ceil(S/4096) x 26 + S) x 400e9.
double send_goodput_gbps(double s) {
  return s / (std::ceil(s / 4096) * 26 + s) * kNdr * 1e-9;
}

topo::Fabric two_tier() {
  topo::FatTreeParams p;
  p.tiers = 2;
  p.radix = 4; // 4 leaves x 2 hosts, 2 spines; host cables 3 m DAC, leaf-spine 30 m fibre
  return topo::build_fat_tree(p);
}

} // namespace

TEST_CASE("ib_write_bw 64 KiB back to back at NDR: goodput = 8S / (ceil(S/4096) x 26 + 16 + S) x 400 Gb/s") {
  const auto p = b2b();
  const std::uint64_t s = 65536;
  const auto r = run_one(p, PerftestTool::ib_write_bw, s, 2000);
  // 16 packets x 26 B + 16 B RETH per 65,536 B: 397.381 Gb/s. The fixed latencies (one message's post to
  // completion, ~0.8 us) are spread over 2000 x 1.32 us of streaming, so the average is within 0.05 %.
  const double expected = write_goodput_gbps(static_cast<double>(s));
  CHECK(r.bw_avg_gbps == doctest::Approx(expected).epsilon(0.005));
  CHECK(std::abs(r.bw_avg_gbps / expected - 1) < 5e-4);
  CHECK(r.bw_peak_gbps >= r.bw_avg_gbps);
  CHECK(r.bw_peak_gbps == doctest::Approx(r.bw_avg_gbps).epsilon(1e-3)); // deterministic: peak ~ average
  CHECK(r.iterations == 2000);
  CHECK(r.msg_rate_mpps == doctest::Approx(r.bw_avg_gbps * 1e9 / 8 / s / 1e6).epsilon(1e-9));
  CHECK(r.events > 0);
}

TEST_CASE(
    "ib_write_lat 2 B back to back: one way = nic_tx + ser(2 + 26 + 16 B) + prop(3 m DAC) + nic_rx exactly") {
  const auto p = b2b();
  const auto r = run_one(p, PerftestTool::ib_write_lat, 2, 50);
  // 300,000 + 880 + 14,280 + 300,000 ps: the responder replies when the data is delivered (after nic_rx).
  const std::int64_t expected = 300'000 + ser_ps(2 + 26 + 16) + 3 * 4'760 + 300'000;
  CHECK(expected == 615'160);
  CHECK(ps_of(r.t_typical_us) == expected);
  CHECK(ps_of(r.t_min_us) == expected);
  CHECK(ps_of(r.t_max_us) == expected);
  CHECK(ps_of(r.t_avg_us) == expected);
  CHECK(ps_of(r.p99_us) == expected);
  CHECK(ps_of(r.p999_us) == expected);
  CHECK(r.t_stdev_us == doctest::Approx(0.0));
  CHECK(r.iterations == 50);
  CHECK(r.messages == 100); // ping and pong
}

TEST_CASE(
    "ib_send_lat and multi-packet ib_write_lat follow the same closed form, ib_read_lat is the whole read") {
  const auto p = b2b();
  const std::int64_t prop = 3 * 4'760, nic = 300'000;
  // SEND has no RETH: ser(2 + 26).
  CHECK(ps_of(run_one(p, PerftestTool::ib_send_lat, 2, 20).t_typical_us) == nic + ser_ps(28) + prop + nic);
  // 8 KiB WRITE = two packets sent back to back: ser(4096 + 26 + 16) + ser(4096 + 26).
  CHECK(ps_of(run_one(p, PerftestTool::ib_write_lat, 8192, 20).t_typical_us) ==
        nic + ser_ps(4138) + ser_ps(4122) + prop + nic);
  // READ of 4 KiB: request (26 + 16 B) out; the responder processes it (nic_rx for the request, nic_tx for
  // the response: read_responder_latency) and answers with 4096 + 26 B; completion after nic_rx; not halved
  // (perftest's rtt_factor is 1 for READ).
  CHECK(ps_of(run_one(p, PerftestTool::ib_read_lat, 4096, 20).t_typical_us) ==
        nic + ser_ps(42) + prop + (nic + nic) + ser_ps(4122) + prop + nic);
}

TEST_CASE("the back-to-back relay is transparent for any cable length and rate") {
  for (double m : {0.01, 0.5, 2.0, 3.3, 7.0}) {
    CAPTURE(m);
    const auto p = b2b(m);
    const auto medium = m <= topo::kDacMaxLengthM ? topo::Medium::Dac : topo::Medium::Fiber;
    const std::int64_t prop = std::llround(m * static_cast<double>(topo::propagation_ps_per_m(medium)));
    CHECK(ps_of(run_one(p, PerftestTool::ib_write_lat, 2, 10).t_typical_us) ==
          300'000 + 880 + prop + 300'000);
  }
  // HDR 4x = 200 Gb/s: 40 ps per byte.
  const auto hdr = back_to_back_path({topo::Generation::HDR, 4}, 3.0, {});
  CHECK(ps_of(run_one(hdr, PerftestTool::ib_write_lat, 2, 10).t_typical_us) ==
        300'000 + 44 * 40 + 14'280 + 300'000);
  CHECK(hdr.description == "back-to-back 4xHDR, 3 m DAC");
}

TEST_CASE(
    "ib_write_lat across a 2-tier tree: + one switch latency and cable per extra switch (cut-through)") {
  const topo::Fabric f = two_tier();
  const auto base = b2b();
  const std::int64_t b2b_ps = ps_of(run_one(base, PerftestTool::ib_write_lat, 2, 20).t_typical_us);
  const auto far = fabric_path(f, "host-0", "host-2", {}, "--pair");  // leaf-0 -> spine -> leaf-1
  const auto near = fabric_path(f, "host-0", "host-1", {}, "--pair"); // both on leaf-0
  REQUIRE(far.tables.route(far.src, far.dst).size() == 4);
  REQUIRE(near.tables.route(near.src, near.dst).size() == 2);
  CHECK(far.config.switch_latency == Time::ns(200)); // NDR default
  // Cut-through with equal rates: each switch forwards the head switch_latency after it arrived and the
  // tail follows at line rate, so serialization is paid once; every extra hop adds t_sw + its cable.
  //   one way = nic_tx + sum(prop of the path's cables) + switches x t_sw + ser(44 B) + nic_rx
  auto closed_form = [&](const PerftestPath& p) {
    std::int64_t props = 0;
    const auto route = p.tables.route(p.src, p.dst);
    for (auto l : route) props += p.fabric.link(l).latency.count_ps();
    return 300'000 + props + static_cast<std::int64_t>(route.size() - 1) * 200'000 + 880 + 300'000;
  };
  const std::int64_t far_ps = ps_of(run_one(far, PerftestTool::ib_write_lat, 2, 20).t_typical_us);
  const std::int64_t near_ps = ps_of(run_one(near, PerftestTool::ib_write_lat, 2, 20).t_typical_us);
  CHECK(far_ps == closed_form(far));
  CHECK(near_ps == closed_form(near));
  // Versus back to back (one 3 m cable): 3 switches (leaf, spine, leaf) and two 30 m fibres more:
  // + 3 x 200 ns + 3 m DAC (14,280 ps: host cables 2 x 3 m vs 3 m) + 2 x 153,900 ps.
  CHECK(far_ps - b2b_ps == 3 * 200'000 + 14'280 + 2 * 153'900);
  // Different leaves versus the same leaf: exactly 2 switch latencies + the two leaf-spine cables.
  CHECK(far_ps - near_ps == 2 * 200'000 + 2 * 153'900);
}

TEST_CASE("-q 4 gives the same bandwidth as -q 1 at 64 KiB (line-rate bound) and iterations are per QP") {
  const auto p = b2b();
  const auto one = run_one(p, PerftestTool::ib_write_bw, 65536, 2000, 1);
  const auto four = run_one(p, PerftestTool::ib_write_bw, 65536, 500, 4);
  CHECK(four.iterations == 2000); // perftest prints iterations x QPs
  CHECK(four.iterations_per_qp == 500);
  CHECK(four.messages == 2000);
  CHECK(four.bw_avg_gbps == doctest::Approx(one.bw_avg_gbps).epsilon(1e-3));
}

TEST_CASE("ib_send_bw is slightly above ib_write_bw (no RETH) and ib_read_bw reaches the same plateau") {
  const auto p = b2b();
  const std::uint64_t s = 65536;
  const auto w = run_one(p, PerftestTool::ib_write_bw, s, 1000);
  const auto snd = run_one(p, PerftestTool::ib_send_bw, s, 1000);
  CHECK(snd.bw_avg_gbps > w.bw_avg_gbps);
  CHECK(snd.bw_avg_gbps == doctest::Approx(send_goodput_gbps(s)).epsilon(0.005));
  // Read responses carry S + 26 per packet: at 1 MiB the plateau is 400 x 4096/4122 = 397.48 Gb/s,
  // within 0.01 % of the write plateau; at most 16 reads outstanding per QP (max_rd_atomic) still
  // cover the bandwidth-delay product.
  const std::uint64_t big = 1 << 20;
  const auto rd = run_one(p, PerftestTool::ib_read_bw, big, 100);
  const auto wr = run_one(p, PerftestTool::ib_write_bw, big, 100);
  CHECK(rd.bw_avg_gbps == doctest::Approx(send_goodput_gbps(big)).epsilon(0.005));
  CHECK(rd.bw_avg_gbps == doctest::Approx(wr.bw_avg_gbps).epsilon(0.005));
}

TEST_CASE("-b reports the sum of both directions, as perftest: twice the unidirectional bandwidth") {
  const auto p = b2b();
  for (auto tool : {PerftestTool::ib_write_bw, PerftestTool::ib_send_bw, PerftestTool::ib_read_bw}) {
    CAPTURE(calib::to_string(tool));
    const auto uni = run_one(p, tool, 65536, 500);
    const auto bi = run_one(p, tool, 65536, 500, 1, true);
    // Each direction also carries the other one's ACKs (30 B per 16 packets): < 0.1 %.
    CHECK(bi.bw_avg_gbps == doctest::Approx(2 * uni.bw_avg_gbps).epsilon(0.005));
    CHECK(bi.msg_rate_mpps == doctest::Approx(2 * uni.msg_rate_mpps).epsilon(0.005));
    CHECK(bi.iterations == 500);
    CHECK(bi.messages == 1000);
  }
}

TEST_CASE("perftest's BW peak: exact minimum of (C[j] - P[i]) / (j - i + 1) over i <= j") {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    const std::size_t n = 1 + rng() % 60;
    std::vector<Time> posted, completed;
    std::int64_t tp = 0, tc = 0;
    for (std::size_t i = 0; i < n; ++i) {
      tp += static_cast<std::int64_t>(rng() % 1000);
      posted.push_back(Time::ps(tp));
    }
    for (std::size_t i = 0; i < n; ++i) {
      tc = std::max(tc, posted[i].count_ps()) + static_cast<std::int64_t>(1 + rng() % 2000);
      completed.push_back(Time::ps(tc));
    }
    double brute = INFINITY;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = i; j < n; ++j)
        brute = std::min(brute, static_cast<double>(completed[j].count_ps() - posted[i].count_ps()) /
                                    static_cast<double>(j - i + 1));
    CHECK(perftest_min_time_per_message(posted, completed) == doctest::Approx(brute).epsilon(1e-12));
  }
}

TEST_CASE("iteration cap: at most max_bytes_per_size per direction, never below 5, -n is the ceiling") {
  PerftestSpec s;
  s.tool = PerftestTool::ib_write_bw;
  s.iterations = 5000;
  CHECK(perftest_iterations_for(s, 8 << 20) == 5000); // no cap set
  s.max_bytes_per_size = 512ull << 20;
  CHECK(perftest_iterations_for(s, 2) == 5000);
  CHECK(perftest_iterations_for(s, 65536) == 5000);  // 312.5 MiB fits
  CHECK(perftest_iterations_for(s, 131072) == 4096); // 512 MiB / 128 KiB
  CHECK(perftest_iterations_for(s, 8 << 20) == 64);  // 512 MiB / 8 MiB
  s.qps = 16;
  CHECK(perftest_iterations_for(s, 8 << 20) == 5); // floor: perftest's minimum
  s.tool = PerftestTool::ib_write_lat;             // ping-pong moves 2 x size per iteration
  s.qps = 1;
  s.iterations = 1000;
  CHECK(perftest_iterations_for(s, 8 << 20) == 32);
  s.tool = PerftestTool::ib_read_lat;
  CHECK(perftest_iterations_for(s, 8 << 20) == 64);
  CHECK(perftest_all_sizes().size() == 23);
  CHECK(perftest_all_sizes().front() == 2);
  CHECK(perftest_all_sizes().back() == 8388608);
}

TEST_CASE("titles, tools and defaults are perftest's") {
  CHECK(perftest_title(PerftestTool::ib_write_bw, false) == "RDMA_Write BW Test");
  CHECK(perftest_title(PerftestTool::ib_send_bw, true) == "Send Bidirectional BW Test");
  CHECK(perftest_title(PerftestTool::ib_read_lat, false) == "RDMA_Read Latency Test");
  CHECK(perftest_title(PerftestTool::ib_send_lat, false) == "Send Latency Test");
  CHECK(parse_perftest_tool("ib_read_bw") == PerftestTool::ib_read_bw);
  CHECK_THROWS_AS(parse_perftest_tool("ib_atomic_bw"), InputError);
  CHECK(perftest_default_iterations(PerftestTool::ib_write_bw) == 5000);
  CHECK(perftest_default_iterations(PerftestTool::ib_send_lat) == 1000);
  CHECK(perftest_default_size(PerftestTool::ib_read_bw) == 65536);
  CHECK(perftest_default_size(PerftestTool::ib_read_lat) == 2);
  CHECK(perftest_default_tx_depth(PerftestTool::ib_write_bw) == 128);
  CHECK(perftest_default_tx_depth(PerftestTool::ib_write_lat) == 1);
}

TEST_CASE("a -a sweep is deterministic and bandwidth grows with size towards the plateau") {
  const auto p = b2b();
  PerftestSpec s;
  s.tool = PerftestTool::ib_write_bw;
  s.sizes = {2, 256, 4096, 65536};
  s.iterations = 200;
  s.src = p.src;
  s.dst = p.dst;
  const auto a = run_perftest(p.fabric, p.tables, p.config, s);
  const auto b = run_perftest(p.fabric, p.tables, p.config, s);
  REQUIRE(a.size() == 4);
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].bw_avg_gbps == b[i].bw_avg_gbps);
    CHECK(a[i].events == b[i].events);
    CHECK(a[i].bw_peak_gbps >= a[i].bw_avg_gbps);
    if (i > 0) CHECK(a[i].bw_avg_gbps > a[i - 1].bw_avg_gbps);
  }
  CHECK(a.back().bw_avg_gbps < 400.0);
}

TEST_CASE("bad specs and pairs are InputErrors naming the problem") {
  const auto p = b2b();
  PerftestSpec s;
  s.src = p.src;
  s.dst = p.dst;
  auto throws = [&](PerftestSpec bad) {
    CHECK_THROWS_AS(run_perftest(p.fabric, p.tables, p.config, bad), InputError);
  };
  PerftestSpec q0 = s;
  q0.qps = 0;
  throws(q0);
  PerftestSpec zero = s;
  zero.sizes = {0};
  throws(zero);
  PerftestSpec lat_q = s;
  lat_q.tool = PerftestTool::ib_write_lat;
  lat_q.qps = 2;
  throws(lat_q);
  PerftestSpec lat_b = s;
  lat_b.tool = PerftestTool::ib_send_lat;
  lat_b.bidirectional = true;
  throws(lat_b);
  PerftestSpec same = s;
  same.dst = same.src;
  throws(same);

  const topo::Fabric f = two_tier();
  auto message = [&](const std::string& a, const std::string& b) {
    try {
      (void)fabric_path(f, a, b, {}, "--pair");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(message("host-0", "nope").find("'nope'") != std::string::npos);
  CHECK(message("host-0", "leaf-0").find("not an HCA") != std::string::npos);
  CHECK(message("host-3", "host-3").find("must differ") != std::string::npos);
  CHECK(message("host-0", "nope").rfind("--pair", 0) == 0);
  CHECK_THROWS_AS(back_to_back_path({}, -1.0, {}), InputError);
  CHECK_THROWS_AS(back_to_back_path({}, 0.0, {}), InputError);
}
