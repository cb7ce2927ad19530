// Fits of calibration/fit.hpp on synthetic data with known answers, and on the real perftest fixtures.
#include "calibration/fit.hpp"
#include "sim/rng.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

using namespace ibn;
using namespace ibn::calib;

namespace {

std::string fixture(const std::string& name) {
  return ibn::test::read_text_file(std::string(IBNETSIM_TEST_DATA) + "/perftest/" + name);
}

std::vector<std::uint64_t> pow2(std::uint64_t lo, std::uint64_t hi) {
  std::vector<std::uint64_t> v;
  for (std::uint64_t s = lo; s <= hi; s *= 2) v.push_back(s);
  return v;
}

} // namespace

TEST_CASE("fit_line recovers an exact line") {
  // y = 100 + 0.5 x exactly: a = 100, b = 0.5, R^2 = 1, no residual.
  std::vector<double> x{1, 2, 4, 8, 16}, y, w(5, 1.0);
  for (double v : x) y.push_back(100 + 0.5 * v);
  const LineFit f = fit_line(x, y, w);
  CHECK(f.a == doctest::Approx(100).epsilon(1e-12));
  CHECK(f.b == doctest::Approx(0.5).epsilon(1e-12));
  CHECK(f.r2 == doctest::Approx(1.0));
  CHECK(f.max_abs_residual < 1e-9);
}

TEST_CASE("latency segments: breakpoints found from the data, labelled by inline limit and MTU") {
  // Three regimes: S <= 128: 1000 + 0.5 S; 256..2048: 1500 + 0.8 S; >= 4096: 1900 + 0.25 S (ns).
  std::vector<SizePoint> pts;
  for (auto s : pow2(2, 8u << 20)) {
    const double d = static_cast<double>(s);
    const double v = s <= 128 ? 1000 + 0.5 * d : s <= 2048 ? 1500 + 0.8 * d : 1900 + 0.25 * d;
    pts.push_back({s, v});
  }
  const auto segs = fit_latency_segments(pts, 4, SegmentHints{220, 2048});
  REQUIRE(segs.size() == 3);
  CHECK(segs[0].lo_bytes == 2);
  CHECK(segs[0].hi_bytes == 128);
  CHECK(segs[1].lo_bytes == 256);
  CHECK(segs[2].lo_bytes == 4096);
  CHECK(segs[0].a.value == doctest::Approx(1000).epsilon(1e-9));
  CHECK(segs[1].b.value == doctest::Approx(0.8).epsilon(1e-9));
  CHECK(segs[2].b.value == doctest::Approx(0.25).epsilon(1e-9));
  CHECK(segs[1].note == "inline limit 220 B");
  CHECK(segs[2].note == "MTU 2048 B");
  CHECK(segs[0].a.unit == "ns");
  CHECK(segs[0].b.unit == "ns/B");
}

TEST_CASE("latency segments: one line stays one segment (no overfitting of 0.3 % noise)") {
  Rng rng(7);
  std::vector<SizePoint> pts;
  for (auto s : pow2(2, 1u << 20)) {
    const double v = (800 + 0.3 * static_cast<double>(s)) * (1 + 0.003 * (2 * rng.uniform01() - 1));
    pts.push_back({s, v});
  }
  const auto segs = fit_latency_segments(pts, 4, {});
  CHECK(segs.size() == 1);
  CHECK(segs[0].b.value == doctest::Approx(0.3).epsilon(0.01));
}

TEST_CASE("latency segments: too little data is an error") {
  CHECK(test::error_of([] {
          (void)fit_latency_segments({{2, 1000}}, 4, {});
        }).find("two or more") != std::string::npos);
}

TEST_CASE("bandwidth fit: S / (o + S/B) recovered, bound by link rate x header efficiency") {
  // o = 200 ns, B = 30 Gb/s: BW(S) = 8 S / (200 + 8 S / 30) Gb/s.
  std::vector<SizePoint> pts;
  for (auto s : pow2(2, 8u << 20)) {
    const double d = static_cast<double>(s);
    pts.push_back({s, 8 * d / (200 + 8 * d / 30)});
  }
  const BandwidthFit f = fit_bandwidth(pts, 0);
  CHECK(f.o.value == doctest::Approx(200).epsilon(1e-9));
  CHECK(f.B.value == doctest::Approx(30).epsilon(1e-9));
  CHECK_FALSE(f.bounded);
  CHECK(f.o.r2 == doctest::Approx(1.0));
  // A bound below the true B binds: B = bound, o refitted (non-negative).
  const BandwidthFit g = fit_bandwidth(pts, 25);
  CHECK(g.bounded);
  CHECK(g.B.value == doctest::Approx(25));
  CHECK(g.o.value >= 0);
  CHECK(g.o.max_residual > 1.0); // the bound makes the fit worse (in %)
}

TEST_CASE("bandwidth fit: the overlap exponent p is recovered, p = 1 for additive data") {
  // Additive data (the previous case's o = 200 ns, B = 30 Gb/s) keep p = 1.
  std::vector<SizePoint> add, pipe;
  for (auto s : pow2(2, 8u << 20)) {
    const double d = static_cast<double>(s);
    add.push_back({s, 8 * d / (200 + 8 * d / 30)});
    // Pipelined data: t = (o^p + (8S/B)^p)^(1/p) with o = 270 ns, B = 230 Gb/s, p = 2^(20/8) = 5.657 (a
    // grid value), so BW(S) -> min(8S/o, B) away from the knee.
    const double p = std::pow(2.0, 20 / 8.0);
    pipe.push_back({s, 8 * d / std::pow(std::pow(270.0, p) + std::pow(8 * d / 230, p), 1 / p)});
  }
  const BandwidthFit f = fit_bandwidth(add, 0);
  CHECK(f.p.value == 1.0);
  const BandwidthFit g = fit_bandwidth(pipe, 0);
  CHECK(g.p.value == doctest::Approx(std::pow(2.0, 20 / 8.0)));
  CHECK(g.o.value == doctest::Approx(270).epsilon(1e-6));
  CHECK(g.B.value == doctest::Approx(230).epsilon(1e-6));
  CHECK(g.o.max_residual < 1e-6);
  // The model function itself: p = 1 is o + cS; large p tends to max(o, cS).
  CHECK(bandwidth_message_ns(200, 0.5, 1.0, 100) == doctest::Approx(250));
  CHECK(bandwidth_message_ns(200, 0.5, 64.0, 1000) == doctest::Approx(500).epsilon(1e-3));
  CHECK(bandwidth_message_ns(0, 0.5, 4.0, 1000) == doctest::Approx(500));
}

TEST_CASE("bandwidth fit: one size only gives B with o = 0") {
  const BandwidthFit f = fit_bandwidth({{65536, 92.57}, {65536, 97.28}}, 0);
  CHECK_FALSE(f.o_identified);
  CHECK(f.o.value == 0);
  CHECK(f.B.value > 92.57);
  CHECK(f.B.value < 97.28);
}

TEST_CASE("noise model: draws follow the quantile table") {
  NoiseModel m;
  m.segments.push_back({0, 100, {{0.0, 0.0}, {0.5, 100.0}, {0.99, 500.0}, {1.0, 1000.0}}, 1, 0});
  Rng rng(3);
  std::vector<double> x;
  for (int i = 0; i < 200000; ++i) x.push_back(m.draw(rng, 10).to_ns());
  std::sort(x.begin(), x.end());
  CHECK(x[100000] == doctest::Approx(100).epsilon(0.02));
  CHECK(x[198000] == doctest::Approx(500).epsilon(0.03));
  CHECK(x.front() >= 0);
  CHECK(x.back() <= 1000);
  CHECK(m.quantile_ns(10, 0.75) == doctest::Approx(100 + 400 * 0.25 / 0.49));
}

TEST_CASE("noise fit: medians of the offsets from t_min per segment") {
  // Rows whose offsets from t_min are 0.1 / 0.6 / 4 / 6 us at median / p99 / p99.9 / max, and one row
  // with larger offsets: the medians over the segment's rows are the knots.
  std::vector<LatencyStats> rows;
  for (auto s : pow2(2, 64)) rows.push_back({s, 1.0, 1.1, 1.6, 5.0, 7.0});
  rows.push_back({128, 1.0, 2.0, 3.0, 9.0, 20.0});
  std::vector<LatencySegment> segs(2);
  segs[0].lo_bytes = 2;
  segs[0].hi_bytes = 64;
  segs[1].lo_bytes = 128;
  segs[1].hi_bytes = 128;
  const NoiseModel m = fit_noise(rows, segs, true);
  REQUIRE(m.segments.size() == 2);
  CHECK(m.quantile_ns(8, 0.5) == doctest::Approx(100));
  CHECK(m.quantile_ns(8, 0.99) == doctest::Approx(600));
  CHECK(m.quantile_ns(8, 0.999) == doctest::Approx(4000));
  CHECK(m.quantile_ns(8, 1.0) == doctest::Approx(6000));
  CHECK(m.segments[0].sample_median_ns == doctest::Approx(100));
  CHECK(m.quantile_ns(128, 0.5) == doctest::Approx(1000));
  CHECK(m.segments[0].points == 6);
}

TEST_CASE("fit_profile on the ConnectX-3 QDR write tests") {
  FitOptions opt;
  opt.link_rate_gbps = 32; // 4x QDR data rate
  opt.link_rate_source = "test";
  const Profile p = fit_profile(
      {{"cx3-mt4099-qdr40g-ib-ib_write_bw-a.txt", fixture("cx3-mt4099-qdr40g-ib-ib_write_bw-a.txt"), 0},
       {"cx3-mt4099-qdr40g-ib-ib_write_lat-a.txt", fixture("cx3-mt4099-qdr40g-ib-ib_write_lat-a.txt"), 0}},
      opt);
  CHECK(p.link_layer == pkt::LinkLayer::InfiniBand);
  CHECK(p.mtu_bytes == 2048);
  CHECK(p.max_inline_bytes == 220u);
  REQUIRE(p.inputs.size() == 2);
  CHECK(p.inputs[0].fnv1a64.rfind("fnv1a64:", 0) == 0);
  CHECK(p.inputs[0].fnv1a64 == fnv1a64_hex(fixture("cx3-mt4099-qdr40g-ib-ib_write_bw-a.txt")));
  // B is at most 32 Gb/s x 2048/2074 and close to the measured plateau 3666 MiB/s = 30.75 Gb/s.
  REQUIRE(p.bw_rate);
  CHECK(p.bw_rate->value <= 32.0 * 2048 / 2074 + 1e-9);
  CHECK(p.bw_rate->value == doctest::Approx(perftest_mbps_to_gbps(3666)).epsilon(0.03));
  // Latency: several segments, one of them starting after the inline limit (128 -> 256 B step).
  REQUIRE(p.latency.size() >= 2);
  bool inline_break = false;
  for (const auto& s : p.latency) inline_break = inline_break || s.note.find("inline") != std::string::npos;
  CHECK(inline_break);
  for (const auto& s : p.latency) CHECK(s.a.r2 > 0.9);
  CHECK_FALSE(p.noise.empty());
  // Engine: nic latencies positive and below the smallest measured one-way latency (0.98 us).
  CHECK(p.nic_tx_latency.to_ns() > 0);
  CHECK((p.nic_tx_latency + p.nic_rx_latency).to_ns() < 980);
  CHECK(p.hca_rate_gbps > 0); // the measured plateau is below the QDR link: the cap binds
}

TEST_CASE("fit_profile refuses inputs with different MTUs, naming both files") {
  const auto msg = test::error_of([] {
    (void)fit_profile({{"a.txt", fixture("cx3-mt4099-qdr40g-ib-ib_write_bw-a.txt"), 0},
                       {"b.txt", fixture("cx6dx-roce-k8s-pod-ib_write_bw-a-nvidia-cns.txt"), 0}},
                      {});
  });
  CHECK(msg.find("b.txt") != std::string::npos);
  CHECK(msg.find("a.txt") != std::string::npos);
}

TEST_CASE("fit_profile: switch latency from pairs at different hop counts") {
  // Synthetic ib_write_lat tables: hop count h adds 2 x (150 ns switch + 14.28 ns cable) to the RTT, so
  // one way grows by 164.28 ns per hop; the fit subtracts one 3 m DAC cable (14.28 ns).
  auto table = [](double base_us) {
    std::string t =
        "---------------------------------------------------------------------------------------\n"
        "                    RDMA_Write Latency Test\n"
        " Mtu             : 4096[B]\n Link type       : IB\n"
        "---------------------------------------------------------------------------------------\n"
        " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
        "t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec]\n";
    for (int s = 2; s <= 4096; s *= 2) {
      char row[256];
      const double v = base_us + 0.0002 * s;
      std::snprintf(row, sizeof row, " %d 1000 %.5f %.5f %.5f %.5f 0.01 %.5f %.5f\n", s, v - 0.01, v + 1, v,
                    v, v + 0.1, v + 0.5);
      t += row;
    }
    return t + "---------------------------------------------------------------------------------------\n";
  };
  FitOptions opt;
  opt.link_rate_gbps = 200;
  const Profile p = fit_profile({{"h1.txt", table(1.2), 1}, {"h3.txt", table(1.2 + 2 * 0.16428), 3}}, opt);
  REQUIRE(p.switch_latency_fit);
  CHECK(p.switch_latency_fit->value == doctest::Approx(150).epsilon(0.002));
  CHECK(p.switch_latency_source == "fitted");
  CHECK(p.hops == 1);
}

TEST_CASE("NCCL cost fit: base and per-step network cost recovered from synthetic rows") {
  // residual = 7 + 3 x net_steps + 2e-5 us/B x size at two step counts (2 and 6): all three recovered.
  std::vector<calib::NcclCostPoint> pts;
  for (double steps : {2.0, 6.0})
    for (double size : {64.0, 1024.0, 8192.0, 32768.0})
      pts.push_back({steps, size, 7 + 3 * steps + 2e-5 * size});
  auto e = calib::fit_nccl_costs(pts, 100);
  CHECK_FALSE(e.base_fixed);
  CHECK(e.base_us == doctest::Approx(7).epsilon(1e-9));
  CHECK(e.net_step_us == doctest::Approx(3).epsilon(1e-9));
  CHECK(e.slope_us_per_byte == doctest::Approx(2e-5).epsilon(1e-6));
  CHECK(e.r2 == doctest::Approx(1.0));
  CHECK(e.points == 8);
  // One step count: base and net_step are not separable; base is held at the prior, net_step takes the rest
  // (7 + 3 x 4 = 19 = 10 + 4 x 2.25).
  pts.clear();
  for (double size : {64.0, 1024.0, 8192.0}) pts.push_back({4.0, size, 19.0});
  e = calib::fit_nccl_costs(pts, 10);
  CHECK(e.base_fixed);
  CHECK(e.base_us == doctest::Approx(10));
  CHECK(e.net_step_us == doctest::Approx(2.25));
  CHECK(e.slow_rows == 0);
  // Errors: too few rows; no network step.
  CHECK_THROWS_AS(calib::fit_nccl_costs({{1, 8, 1}, {1, 16, 1}}, 0), InputError);
  CHECK_THROWS_AS(calib::fit_nccl_costs({{0, 8, 1}, {0, 16, 1}, {0, 32, 1}}, 0), InputError);
}

TEST_CASE("NCCL cost fit: a row far slower than the others is a slow iteration, not a cost") {
  // One step count (base held at the prior 6.8 us): residual = 6.8 + 2 x 1.4 us with a little noise, and one
  // row 68 us slower (a nccl-tests average holding one slow iteration, as the Snellius 16 KiB row does). The
  // noise's robust sd is ~0.1 us, so the slow row is hundreds of sds out: left out, and the rest give 1.4.
  std::vector<calib::NcclCostPoint> pts;
  const double noise[] = {0.05, -0.1, 0.12, -0.04, 0.0, 0.08, -0.11, 0.03, -0.06, 0.1};
  double size = 8;
  for (double n : noise) {
    pts.push_back({2.0, size, 6.8 + 2 * 1.4 + n});
    size *= 2;
  }
  pts[7].residual_us += 68; // 1 KiB
  const auto e = calib::fit_nccl_costs(pts, 6.8);
  CHECK(e.slow_rows == 1);
  CHECK(e.points == 9);
  CHECK(e.net_step_us == doctest::Approx(1.4).epsilon(0.05));
  // Kept, the same rows would have given a net step several us too high.
  pts.erase(pts.begin() + 7);
  const auto clean = calib::fit_nccl_costs(pts, 6.8);
  CHECK(clean.slow_rows == 0);
  CHECK(clean.net_step_us == doctest::Approx(e.net_step_us));
  // Rows faster than the fit are never dropped (a fast row is not a slow iteration).
  pts[3].residual_us -= 30;
  CHECK(calib::fit_nccl_costs(pts, 6.8).slow_rows == 0);
}
