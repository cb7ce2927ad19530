// Congestion control and lossless dynamics of the packet engine: the DCQCN and IB CC reaction points in
// closed form, ECN/FECN marking, PFC pause/resume, IB CC on an incast, and configuration. (DCQCN incast
// convergence, victim-flow and adaptive-routing scenarios, which take seconds: cc_slow_test.cpp.)
#include "models/packet/cc.hpp"
#include "models/packet/network.hpp"
#include "models/routing/routing.hpp"
#include "tests/models/cc_fabrics.hpp"
#include "tests/models/packet_run.hpp"
#include "tests/test_util.hpp"
#include "topology/generators.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace ibn;
using namespace ibn::pkt;

using ibn::test::cc_star;
using ibn::test::Run;

TEST_CASE("DCQCN reaction point: cut, fast recovery, additive and hyper increase in closed form") {
  const double C = 400e9;
  SUBCASE("hpcc-ns3 profile: timer-only stages, cuts coalesced within the decrease interval") {
    const DcqcnParams p = DcqcnParams::profile_named("hpcc-ns3", "t");
    DcqcnRp rp(p, C, C / 100e9); // rai 20 Mb/s x 4 = 80 Mb/s at 400 Gb/s
    CHECK(rp.rate_bps() == C);
    rp.on_cnp(Time::us(10));
    // First cut with alpha = initial 1: R_C = C (1 - 1/2), R_T = C.
    CHECK(rp.rate_bps() == doctest::Approx(C / 2));
    CHECK(rp.target_bps() == doctest::Approx(C));
    // A CNP 1 us later waits for the end of the 4 us decrease interval.
    rp.on_cnp(Time::us(11));
    CHECK(rp.cuts() == 1);
    rp.advance(Time::us(14) - Time::ps(1));
    CHECK(rp.cuts() == 1);
    // alpha ticks (K = 1 us): at 11 (CNP window of 10) alpha = (1-g) 1 + g = 1; at 12 (CNP window of 11): 1;
    // at 13 and 14: decay. The tick at 14 comes before the cut at 14: alpha = (1-g)^2.
    rp.advance(Time::us(14));
    CHECK(rp.cuts() == 2);
    const double g = 1.0 / 256;
    const double rc2 = C / 2 * (1 - (1 - g) * (1 - g) / 2);
    CHECK(rp.rate_bps() == doctest::Approx(rc2).epsilon(1e-9));
    // No increase happened between the cuts and clamp_target is off: R_T stays C.
    CHECK(rp.target_bps() == doctest::Approx(C));
    // Timer T = 300 us after the cut: stage 0 < F = 1: fast recovery R_C = (R_T + R_C) / 2.
    rp.advance(Time::us(314));
    const double rc3 = (C + rc2) / 2;
    CHECK(rp.rate_bps() == doctest::Approx(rc3).epsilon(1e-9));
    // Next expiry: stage 1 == F: additive R_T = min(C, C + 80 Mb/s) = C, R_C = (R_T + R_C) / 2.
    rp.advance(Time::us(614));
    CHECK(rp.rate_bps() == doctest::Approx((C + rc3) / 2).epsilon(1e-9));
  }
  SUBCASE("paper profile: byte counter and timer stages, target clamped on every cut") {
    DcqcnParams p = DcqcnParams::profile_named("paper", "t");
    DcqcnRp rp(p, 40e9, 1.0);
    rp.on_cnp(Time::zero()); // alpha = (1-g) 1 + g = 1: R_C = 20 Gb/s, R_T = 40
    CHECK(rp.rate_bps() == doctest::Approx(20e9));
    // Five byte-counter events (B = 10 MB): j = 1..5, i = 0; max(i, j) < F = 5 for the first four
    // (fast recovery), then j = 5: min(i, j) = 0 < F: additive, R_T = 40 Gb/s + 40 Mb/s, capped at 40 Gb/s.
    double rc = 20e9;
    for (int k = 1; k <= 4; ++k) {
      rp.on_sent(Time::us(k), 10'000'000);
      rc = (40e9 + rc) / 2;
      CHECK(rp.rate_bps() == doctest::Approx(rc).epsilon(1e-12));
    }
    // The timer T = 55 us expires (i = 1, j = 4: fast recovery again).
    rp.advance(Time::us(60));
    rc = (40e9 + rc) / 2;
    CHECK(rp.rate_bps() == doctest::Approx(rc).epsilon(1e-12));
    // A CNP at 60 us (>= 50 us after the first cut): alpha decayed at the 55 us tick (no CNP in the window),
    // then rises: alpha = (1-g)(1-g) + g; R_T = R_C (clamp) and R_C = R_C (1 - alpha / 2).
    const double g = 1.0 / 256;
    const double alpha = (1 - g) * (1 - g) + g;
    const double before = rp.rate_bps();
    rp.on_cnp(Time::us(60));
    CHECK(rp.alpha() == doctest::Approx(alpha).epsilon(1e-12));
    CHECK(rp.target_bps() == doctest::Approx(before));
    CHECK(rp.rate_bps() == doctest::Approx(before * (1 - alpha / 2)).epsilon(1e-12));
  }
  SUBCASE("the rate never falls below the minimum and returns to the line rate") {
    DcqcnParams p = DcqcnParams::profile_named("nvidia-default", "t");
    p.min_rate_mbps = 1000;
    DcqcnRp rp(p, 100e9, 1.0);
    for (int k = 0; k < 200; ++k) rp.on_cnp(Time::us(4 * k));
    CHECK(rp.rate_bps() == doctest::Approx(1e9));
    rp.advance(Time::ms(1000)); // 3,333 timer expiries: R_C = (R_T + R_C) / 2 with R_T = C each time
    CHECK(rp.rate_bps() == 100e9);
    CHECK_FALSE(rp.limited());
  }
}

TEST_CASE("IB CC reaction point: CCTI rises per BECN and falls one step per CCTI_Timer") {
  IbCcParams p;
  p.ccti_increase = 2;
  p.ccti_limit = 10;
  p.ccti_timer_us = 10;
  IbCcRp st(p);
  for (int k = 0; k < 4; ++k) st.on_becn(Time::us(k)); // 0, 1, 2, 3 us: CCTI = 8
  CHECK(st.ccti() == 8);
  for (int k = 0; k < 4; ++k) st.on_becn(Time::us(4 + k)); // capped at the limit
  CHECK(st.ccti() == 10);
  // The timer started with the first BECN at 0: ticks at 10, 20, ... us; CCTI(t) = 10 - floor(t / 10 us).
  st.advance(Time::us(35));
  CHECK(st.ccti() == 7);
  st.advance(Time::us(1000));
  CHECK(st.ccti() == 0);
  // The default table: entry i delays (T_maxpkt >> 3) x i.
  const auto t = p.table();
  REQUIRE(t.size() == 11);
  CHECK(t[5] == CctEntry{3, 5});
}

TEST_CASE("ECN marking follows Kmin/Kmax: none below Kmin, all above Kmax, at enqueue and at dequeue") {
  // 3:1 incast on one switch under credits (the queue is bounded by 3 x 128 KiB input buffers), no CC
  // reaction possible because rate_decrease is disabled by an enormous minimum rate: the marks are counted
  // only.
  for (const auto point : {MarkPoint::Enqueue, MarkPoint::Dequeue}) {
    CAPTURE(to_string(point));
    for (const auto& [kmin, kmax, expect] :
         std::vector<std::tuple<std::uint32_t, std::uint32_t, int>>{{1u << 30, 1u << 30, 0}, {0, 0, 1}}) {
      const topo::Fabric f = cc_star(4);
      PacketConfig cfg;
      cfg.cc = CcMode::Dcqcn;
      cfg.dcqcn.kmin_bytes = kmin;
      cfg.dcqcn.kmax_bytes = kmax;
      cfg.dcqcn.mark_point = point;
      cfg.dcqcn.min_rate_mbps = 400e3; // the reaction point cannot go below the line rate
      Run r(f, cfg);
      for (HcaIndex s = 0; s < 3; ++s) r.net->post({.src = s, .dst = 3, .bytes = 1 << 20});
      r.sim.run();
      const auto& st = r.net->stats();
      CHECK(st.payload_bytes_delivered == 3u << 20);
      std::uint64_t data_pkts_at_bottleneck = 0, marks = 0;
      for (const auto& p : r.net->port_stats())
        if (f.node(p.node).kind == topo::NodeKind::Switch && p.port == 4) {
          data_pkts_at_bottleneck = p.packets;
          marks = p.ecn_marks;
        }
      if (expect == 0) {
        CHECK(st.ecn_marks == 0);
        CHECK(st.cnps_sent == 0);
      } else {
        // Kmin = Kmax = 0: every data packet that finds a non-empty queue is marked; the first packet finds
        // an empty one. CNPs: at most one per QP per 4 us.
        CHECK(marks > data_pkts_at_bottleneck * 9 / 10);
        CHECK(st.cnps_sent > 0);
        CHECK(st.cnps_sent <= st.ecn_marks);
        CHECK(st.cnps_received == st.cnps_sent);
      }
    }
  }
}

TEST_CASE("PFC: an incast pauses the senders without loss, pause frames come in XOFF/XON pairs") {
  const topo::Fabric f = cc_star(5);
  PacketConfig cfg;
  cfg.apply_json(
      nlohmann::json{{"link_layer", "rocev2"}, {"flow_control", "pfc"}, {"pfc", {{"buffer_bytes", 262144}}}},
      "packet");
  Run r(f, cfg);
  for (HcaIndex s = 0; s < 4; ++s) r.net->post({.src = s, .dst = 4, .bytes = 8 << 20});
  r.sim.run();
  const auto& st = r.net->stats();
  CHECK(st.payload_bytes_delivered == 4u * (8u << 20));
  CHECK(st.pfc_drops == 0);
  CHECK(st.retransmitted_packets == 0);
  CHECK(st.pause_frames > 0);
  CHECK(st.pause_frames % 2 == 0); // every pause was resumed
  Time paused, busy_bottleneck;
  Time first = Time::max(), last;
  for (std::size_t i = 0; i < r.net->num_messages(); ++i) {
    first = std::min(first, r.net->message(static_cast<MessageId>(i)).first_tx);
    last = std::max(last, r.net->message(static_cast<MessageId>(i)).delivered);
  }
  for (const auto& p : r.net->port_stats()) {
    if (f.node(p.node).kind == topo::NodeKind::Hca) paused += p.pause_time;
    if (f.node(p.node).kind == topo::NodeKind::Switch && p.port == 5) busy_bottleneck = p.busy;
  }
  // Four senders share one 400 Gb/s port: each is paused for about 3/4 of the transfer.
  CHECK(paused.to_s() > 4 * 0.5 * (last - first).to_s());
  CHECK(busy_bottleneck.to_s() / (last - first).to_s() > 0.95); // PFC keeps the bottleneck busy
  // Too little headroom for the data in flight after XOFF: packets are dropped and go-back-N recovers.
  PacketConfig tight = cfg;
  tight.pfc.buffer_bytes = 16384;
  tight.pfc.headroom_bytes = 4096;
  tight.ack_timeout = Time::us(50);
  Run r2(f, tight);
  for (HcaIndex s = 0; s < 4; ++s) r2.net->post({.src = s, .dst = 4, .bytes = 1 << 20});
  r2.sim.run();
  CHECK(r2.net->stats().pfc_drops > 0);
  CHECK(r2.net->stats().payload_bytes_delivered >= 4u << 20);
  for (std::size_t i = 0; i < r2.net->num_messages(); ++i)
    CHECK(r2.net->message(static_cast<MessageId>(i)).is_acked);
}

TEST_CASE("IB CC on an incast: FECN marks, BECNs, CCTI rises, and falls back to 0 after the congestion") {
  const topo::Fabric f = cc_star(5);
  PacketConfig cfg;
  cfg.cc = CcMode::IbCc;
  cfg.ibcc.threshold_bytes = 32768;
  cfg.trace_rates = true;
  Run r(f, cfg);
  for (HcaIndex s = 0; s < 4; ++s) r.net->post({.src = s, .dst = 4, .bytes = 4 << 20});
  r.sim.run();
  const auto& st = r.net->stats();
  CHECK(st.payload_bytes_delivered == 4u * (4u << 20));
  CHECK(st.fecn_marks > 0);
  CHECK(st.becns_sent == st.fecn_marks);
  CHECK(st.cnps_received == st.becns_sent);
  REQUIRE(r.net->rate_traces().size() == 4);
  for (const auto& tr : r.net->rate_traces()) {
    double lo = 1e9;
    for (const auto& pt : tr.rate_gbps) lo = std::min(lo, pt.value);
    CHECK(lo < 400); // every sender was slowed at some point
  }
  // CCTI decays one step per CCTI_Timer: 128 x 20.48 us later every QP is back at 0 (a later message moves
  // the clock there).
  r.net->post_at(r.sim.now() + Time::us(128 * 21), {.src = 0, .dst = 1, .bytes = 1});
  r.sim.run();
  for (HcaIndex s = 0; s < 4; ++s) CHECK(r.net->qp_ccti(s, 4, 0) == 0);
}

TEST_CASE("congestion-control settings: profiles, overrides, strict keys") {
  PacketConfig c;
  c.apply_json(nlohmann::json{{"cc", "dcqcn"}, {"dcqcn", {{"profile", "paper"}, {"g", 0.0625}}}}, "packet");
  CHECK(c.cc == CcMode::Dcqcn);
  CHECK(c.dcqcn.profile == "paper");
  CHECK(c.dcqcn.g == 0.0625);
  CHECK(c.dcqcn.rate_timer_us == 55);
  CHECK(c.dcqcn.kmax_bytes == 200'000);
  PacketConfig back;
  back.apply_json(c.to_json(), "packet"); // the manifest round-trips
  CHECK(back.to_json() == c.to_json());
  CHECK(test::error_of([] {
          PacketConfig().apply_json(nlohmann::json{{"dcqcn", {{"kmn_bytes", 1}}}}, "packet");
        }) == "packet.dcqcn.kmn_bytes: unknown key");
  CHECK(test::error_of([] {
          PacketConfig().apply_json(nlohmann::json{{"dcqcn", {{"profile", "x"}}}}, "packet");
        }).find("unknown DCQCN profile 'x'") != std::string::npos);
  CHECK(test::error_of([] {
          PacketConfig().apply_json(nlohmann::json{{"cc", "hpcc"}}, "packet");
        }).find("packet.cc") == 0);
  CHECK(test::error_of([] {
          PacketConfig().apply_json(nlohmann::json{{"flow_control", "x"}}, "packet");
        }).find("packet.flow_control") == 0);
  CHECK(test::error_of([] {
          PacketConfig().apply_json(nlohmann::json{{"dcqcn", {{"kmin_bytes", 10}, {"kmax_bytes", 5}}}},
                                    "packet");
        }).find("packet.dcqcn.kmax_bytes") == 0);
  CHECK(test::error_of([] {
          PacketConfig().apply_json(nlohmann::json{{"ibcc", {{"cct", {{1, 2}}}}}}, "packet");
        }).find("packet.ibcc.cct") == 0);
  CHECK(test::error_of([] {
          PacketConfig().apply_json(nlohmann::json{{"pfc", {{"headroom_bytes", 600000}}}}, "packet");
        }).find("packet.pfc.headroom_bytes") == 0);
  const auto hp = DcqcnParams::profile_named("hpcc-ns3", "t");
  CHECK(hp.byte_counter_bytes == 0);
  CHECK(hp.scale_ref_gbps == 100);
  // Defaults: CC off, credits.
  CHECK(PacketConfig().cc == CcMode::None);
  CHECK(PacketConfig().flow_control == FlowControl::Credits);
}
