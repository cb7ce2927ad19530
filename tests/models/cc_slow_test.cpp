// DCQCN convergence on an incast under PFC; congestion spreading and its cure: a victim flow that shares an
// upstream link with an incast, under IB credits and under RoCE PFC, without CC and with IB CC / DCQCN;
// adaptive routing against static routing on a permutation across an oversubscribed tier.
#include "testing/packet_scenario.hpp"
#include "models/packet/network.hpp"
#include "models/routing/routing.hpp"
#include "tests/models/cc_fabrics.hpp"
#include "tests/models/packet_run.hpp"
#include "tests/test_util.hpp"
#include "topology/generators.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>

using namespace ibn;
using namespace ibn::pkt;

namespace {

using ibn::test::add_node;
using ibn::test::cc_star;
using ibn::test::Run;

double jain(const std::vector<double>& x) {
  const double s = std::accumulate(x.begin(), x.end(), 0.0);
  double s2 = 0;
  for (double v : x) s2 += v * v;
  return s * s / (static_cast<double>(x.size()) * s2);
}

/// Bytes of each sender's messages delivered in [from, to) (messages are small, so this is a rate).
std::vector<double> delivered_in(const PacketNetwork& net, int senders, Time from, Time to) {
  std::vector<double> b(static_cast<std::size_t>(senders), 0.0);
  for (std::size_t i = 0; i < net.num_messages(); ++i) {
    const auto& m = net.message(static_cast<MessageId>(i));
    if (m.is_delivered && m.delivered >= from && m.delivered < to &&
        m.spec.src < static_cast<HcaIndex>(senders))
      b[m.spec.src] += static_cast<double>(m.spec.bytes);
  }
  return b;
}

/// swA: h0, h1, h2 and a cable to swB; swB: h3, h4, h5, h6. Every cable 400 Gb/s, 2 m.
topo::Fabric two_switches() {
  topo::Fabric f;
  const topo::LinkSpeed ndr{topo::Generation::NDR, 4};
  const auto a = add_node(f, topo::NodeKind::Switch, "swA", 4, 1);
  const auto b = add_node(f, topo::NodeKind::Switch, "swB", 5, 1);
  f.add_link(topo::make_link({a, 4}, {b, 1}, ndr, 2.0, topo::Medium::Dac));
  for (int i = 0; i < 7; ++i) {
    const auto h = add_node(f, topo::NodeKind::Hca, "h" + std::to_string(i), 1, 0, i);
    if (i < 3)
      f.add_link(topo::make_link({h, 1}, {a, i + 1}, ndr, 2.0, topo::Medium::Dac));
    else
      f.add_link(topo::make_link({h, 1}, {b, i - 1}, ndr, 2.0, topo::Medium::Dac));
  }
  return f;
}

struct VictimResult {
  double victim_gbps = 0;
  double incast_gbps = 0;           ///< total into h3
  Time from, to;                    ///< the measured window
  double victim_min_rate_gbps = 0;  ///< DCQCN/IB CC: the lowest CC rate of the victim's QP over the run
  double victim_rate_from_gbps = 0; ///< ... and its CC rate at the start of the window
  std::uint64_t pause_frames = 0, cnps = 0;
};

/// Incast h0, h1, h5, h6 -> h3 (through the A-B cable for h0, h1) and a victim h2 -> h4 on the A-B cable,
/// all posting `msgs` 64 KiB messages from t = 0; throughput measured in [first flow done / 2, first flow
/// done).
VictimResult victim_run(PacketConfig cfg, int msgs) {
  cfg.trace_rates = cfg.cc != CcMode::None;
  const topo::Fabric f = two_switches();
  Simulation sim{1};
  const auto tables = routing::builtin_routing().get("minhop").factory(f, {});
  PacketNetwork net(sim, f, tables, cfg);
  std::vector<HcaIndex> hca(7);
  for (HcaIndex i = 0; i < tables.num_hcas(); ++i)
    hca[std::stoul(f.node(tables.hca_nodes()[i]).name.substr(1))] = i;
  const std::uint64_t msg = 64 << 10;
  const std::vector<std::pair<int, int>> flows = {{0, 3}, {1, 3}, {5, 3}, {6, 3}, {2, 4}};
  for (const auto& [s, d] : flows)
    for (int k = 0; k < msgs; ++k) net.post({.src = hca[s], .dst = hca[d], .bytes = msg});
  sim.run();
  REQUIRE(net.stats().payload_bytes_delivered == flows.size() * msgs * msg);
  Time first_done = Time::max();
  for (const auto& [s, d] : flows) {
    Time last;
    for (std::size_t i = 0; i < net.num_messages(); ++i) {
      const auto& m = net.message(static_cast<MessageId>(i));
      if (m.spec.src == hca[s]) last = std::max(last, m.delivered);
    }
    first_done = std::min(first_done, last);
  }
  // The second half of the time all five flows compete (the CC has had the first half to converge).
  const Time from = Time::ps(first_done.count_ps() / 2);
  REQUIRE(first_done > from + Time::us(20));
  VictimResult r;
  r.from = from;
  r.to = first_done;
  r.pause_frames = net.stats().pause_frames;
  r.cnps = net.stats().cnps_received;
  for (const auto& tr : net.rate_traces())
    if (tr.src == hca[2] && !tr.rate_gbps.empty()) {
      r.victim_min_rate_gbps = tr.rate_gbps.front().value;
      for (const auto& pt : tr.rate_gbps) {
        r.victim_min_rate_gbps = std::min(r.victim_min_rate_gbps, pt.value);
        if (pt.t <= from) r.victim_rate_from_gbps = pt.value;
      }
    }
  for (std::size_t i = 0; i < net.num_messages(); ++i) {
    const auto& m = net.message(static_cast<MessageId>(i));
    if (m.delivered < from || m.delivered >= first_done) continue;
    const double gb = static_cast<double>(m.spec.bytes) * 8 / (first_done - from).to_s() / 1e9;
    if (m.spec.src == hca[2])
      r.victim_gbps += gb;
    else
      r.incast_gbps += gb;
  }
  return r;
}

} // namespace

TEST_CASE(
    "N:1 incast with DCQCN under PFC: fair shares (Jain >= 0.95) and the queue bounded near Kmax + BDP") {
  // Four senders start 20 us apart toward h4 on one switch (RoCEv2, PFC, 400 Gb/s), each posting 64 KiB
  // messages back to back; per-sender throughput is measured from message deliveries in the second half.
  const int n = 4;
  const topo::Fabric f = cc_star(n + 1);
  auto run = [&](CcMode cc, double& jain_second_half, std::uint64_t& peak_queue, double& total_gbps) {
    PacketConfig cfg;
    cfg.apply_json(nlohmann::json{{"link_layer", "rocev2"}, {"flow_control", "pfc"}}, "packet");
    cfg.pfc.buffer_bytes = 2 << 20;
    cfg.cc = cc;
    cfg.dcqcn = DcqcnParams::profile_named("nvidia-default", "t");
    cfg.dcqcn.kmin_bytes = 20'000;
    cfg.dcqcn.kmax_bytes = 100'000;
    cfg.dcqcn.pmax = 0.2;
    cfg.trace_interval_ns = 500;
    Run r(f, cfg);
    const std::uint64_t msg = 64 << 10;
    const int msgs = 160; // 10 MiB per sender
    for (int s = 0; s < n; ++s)
      for (int k = 0; k < msgs; ++k)
        r.net->post_at(Time::us(20 * s),
                       {.src = static_cast<HcaIndex>(s), .dst = static_cast<HcaIndex>(n), .bytes = msg});
    // The window where all four compete: from the last start to the first sender's completion.
    Time first_done = Time::max();
    r.sim.run();
    for (int s = 0; s < n; ++s) {
      Time last;
      for (std::size_t i = 0; i < r.net->num_messages(); ++i) {
        const auto& m = r.net->message(static_cast<MessageId>(i));
        if (m.spec.src == static_cast<HcaIndex>(s)) last = std::max(last, m.delivered);
      }
      first_done = std::min(first_done, last);
    }
    const Time start = Time::us(20 * (n - 1));
    const Time mid = start + Time::ps((first_done - start).count_ps() / 2);
    const auto b = delivered_in(*r.net, n, mid, first_done);
    jain_second_half = jain(b);
    total_gbps = std::accumulate(b.begin(), b.end(), 0.0) * 8 / (first_done - mid).to_s() / 1e9;
    // The bottleneck queue (switch port toward h4) over the same half.
    peak_queue = 0;
    for (const auto& tr : r.net->queue_traces())
      if (f.node(tr.node).kind == topo::NodeKind::Switch && tr.port == n + 1)
        for (const auto& pt : tr.queue_bytes)
          if (pt.t >= mid && pt.t < first_done)
            peak_queue = std::max(peak_queue, static_cast<std::uint64_t>(pt.value));
    CHECK(r.net->stats().pfc_drops == 0);
    return cfg;
  };
  double j_cc = 0, j_none = 0, g_cc = 0, g_none = 0;
  std::uint64_t q_cc = 0, q_none = 0;
  const PacketConfig cfg = run(CcMode::Dcqcn, j_cc, q_cc, g_cc);
  run(CcMode::None, j_none, q_none, g_none);
  // BDP of the control loop: C x (base RTT + CNP spacing), base RTT = data path + CNP path =
  // 2 x (nic_tx + 2 prop + t_switch + nic_rx) + one packet time.
  const double rtt_s = 2 * (300e-9 + 2 * 2 * 4.76e-9 + 200e-9 + 300e-9) + (4096 + 82) * 8 / 400e9;
  const double bdp = 400e9 / 8 * (rtt_s + cfg.dcqcn.cnp_interval_us * 1e-6);
  MESSAGE("DCQCN: Jain " << j_cc << ", peak queue " << q_cc << " B, " << g_cc << " Gb/s; none: Jain "
                         << j_none << ", peak queue " << q_none
                         << " B; Kmax + BDP = " << cfg.dcqcn.kmax_bytes + bdp);
  CHECK(j_cc >= 0.95);
  CHECK(static_cast<double>(q_cc) <= cfg.dcqcn.kmax_bytes + bdp);
  CHECK(g_cc > 0.9 * 400 * 4096.0 / (4096 + 82)); // the bottleneck stays busy
  // Without CC the same incast fills the input buffers up to PFC's XOFF: the bound is DCQCN's doing.
  CHECK(static_cast<double>(q_none) > cfg.dcqcn.kmax_bytes + bdp);
}

TEST_CASE("congestion spreading: the victim of an incast's backpressure, and its recovery with CC") {
  // Max-min fair shares: the four incast flows get C/4 each at h3; the A-B cable carries two of them (C/2)
  // and leaves C/2 to the victim h2 -> h4, whose own path is otherwise idle.
  const double eff_ib = 4096.0 / (4096 + 26), eff_roce = 4096.0 / (4096 + 82);
  // Flow sizes: 256 x 64 KiB (16 MiB) when the state is stationary (no CC: PFC / credit backpressure from
  // the start) or the CC reacts within tens of us (IB CC: CCTI timer 20.48 us). DCQCN with the NVIDIA
  // firmware profile increases only on its rate timer T = 300 us (rpg_time_reset) or on 32,767-byte
  // byte-counter events, so after the initial burst (~0.1 ms of cuts) it needs several T to climb back:
  // 1,024 x 64 KiB (64 MiB) puts the measured half at >= 6 T (1.8 ms) after the start.
  struct Case {
    std::string name;
    nlohmann::json json;
    double eff;
    int msgs;
  };
  const nlohmann::json roce = {{"link_layer", "rocev2"}, {"flow_control", "pfc"}};
  auto with = [](nlohmann::json j, const nlohmann::json& patch) {
    j.merge_patch(patch);
    return j;
  };
  const std::vector<Case> cases = {
      {"IB credits, no CC", {{"cc", "none"}}, eff_ib, 256},
      {"IB credits, IB CC",
       {{"cc", "ibcc"},
        {"ibcc", {{"threshold_bytes", 65536}, {"marking_rate", 15}, {"ccti_timer_us", 20.48}}}},
       eff_ib,
       256},
      {"RoCE PFC, no CC", with(roce, {{"cc", "none"}}), eff_roce, 256},
      {"RoCE PFC, DCQCN nvidia-default",
       with(roce, {{"cc", "dcqcn"}, {"dcqcn", {{"profile", "nvidia-default"}}}}), eff_roce, 1024},
      {"RoCE PFC, DCQCN paper", with(roce, {{"cc", "dcqcn"}, {"dcqcn", {{"profile", "paper"}}}}), eff_roce,
       256},
  };
  std::vector<VictimResult> res;
  for (const auto& c : cases) {
    PacketConfig cfg;
    cfg.apply_json(c.json, "packet");
    res.push_back(victim_run(cfg, c.msgs));
    const VictimResult& r = res.back();
    MESSAGE(c.name << ": victim " << r.victim_gbps << " Gb/s, incast " << r.incast_gbps
                   << " Gb/s (victim's fair share " << 200 * c.eff << "); window [" << r.from.to_us() << ", "
                   << r.to.to_us() << "] us; victim's CC rate: lowest " << r.victim_min_rate_gbps
                   << ", at the window's start " << r.victim_rate_from_gbps << " Gb/s; " << r.pause_frames
                   << " pause frames, " << r.cnps << " CNPs/BECNs");
  }
  // {no CC, with CC} pairs: IB credits with IB CC, RoCE PFC with DCQCN (NVIDIA firmware profile).
  for (const auto& [none_i, cc_i] : {std::pair<std::size_t, std::size_t>{0, 1}, {2, 3}}) {
    const VictimResult& none = res[none_i];
    const VictimResult& cc = res[cc_i];
    const double share = 200 * cases[none_i].eff;
    CAPTURE(cases[cc_i].name);
    // Without CC, backpressure from h3's port blocks the A-B cable: the victim gets well under its share
    // (head-of-line blocking at swB's input from swA).
    CHECK(none.victim_gbps < 0.75 * share);
    // With CC the incast senders slow down before the input buffers fill: the victim recovers most of it.
    CHECK(cc.victim_gbps > 0.75 * share);
    CHECK(cc.victim_gbps > 1.2 * none.victim_gbps);
    // ... while the incast still uses most of h3's link.
    CHECK(cc.incast_gbps > 0.8 * 400 * cases[none_i].eff);
  }
  // DCQCN with the paper's 40 Gb/s-era profile (cases[4]) is measured and reported, not asserted: the first
  // burst (1,200 Gb/s offered to 400 Gb/s at both swA's A-B output and h3's port, the queues at the PFC
  // limit) cuts every QP, the victim included, once per CNP interval (50 us) down to 1/16 of the line
  // rate; the clamped target then brings it back only to 1/8, and the additive step of 40 Mb/s per 55 us
  // (hyper increase needs 5 x 10 MB of byte counter) takes tens of ms to reach the share
  // (docs/congestion-control.md, "Known behaviour").
}

TEST_CASE("adaptive routing gives at least static routing's throughput on a permutation across a 3:1 tier") {
  topo::FatTreeParams p;
  p.tiers = 2;
  p.radix = 8;
  p.hosts = 32;
  p.oversubscription = {{3, 1}};
  const topo::Fabric f = topo::build_fat_tree(p);
  const auto tables = routing::builtin_routing().get("ftree").factory(f, {});
  auto throughput = [&](ArMode ar) {
    PacketConfig cfg;
    cfg.ar_mode = ar;
    const std::uint64_t bytes = 1 << 20;
    // Random permutations (testing/packet_scenario.hpp), where D-mod-k paths collide on the up-links.
    double sum = 0;
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      Simulation sim{seed};
      PacketNetwork net(sim, f, tables, cfg);
      const auto dst = bench::traffic("perm", 32, seed);
      for (HcaIndex s = 0; s < 32; ++s)
        net.post({.src = s, .dst = static_cast<HcaIndex>(dst[s]), .bytes = bytes});
      sim.run();
      REQUIRE(net.stats().payload_bytes_delivered == 32 * bytes);
      Time end;
      for (std::size_t i = 0; i < net.num_messages(); ++i)
        end = std::max(end, net.message(static_cast<MessageId>(i)).delivered);
      sum += 32.0 * static_cast<double>(bytes) * 8 / end.to_s() / 1e9;
    }
    return sum / 3;
  };
  const double st = throughput(ArMode::Off);
  const double ar = throughput(ArMode::PerPacket);
  const double bounded = throughput(ArMode::Bounded);
  MESSAGE("aggregate throughput: static " << st << " Gb/s, AR per-packet " << ar << ", AR bounded "
                                          << bounded);
  CHECK(ar >= st);
  CHECK(bounded >= st);
}
