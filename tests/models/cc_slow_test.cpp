// Congestion spreading and its cure: a victim flow that shares an upstream link with an incast, under IB
// credits and under RoCE PFC, without CC and with IB CC / DCQCN; adaptive routing against static routing
// on a permutation across an oversubscribed tier.
#include "bench/packet_scenario.hpp"
#include "models/packet/network.hpp"
#include "models/routing/routing.hpp"
#include "topology/generators.hpp"

#include "tests/test_util.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>

using namespace ibn;
using namespace ibn::pkt;

namespace {

using ibn::test::add_node;

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
  double incast_gbps = 0; ///< total into h3
};

/// Incast h0, h1, h5, h6 -> h3 (through the A-B cable for h0, h1) and a victim h2 -> h4 on the A-B cable,
/// all posting 64 KiB messages from t = 0; throughput measured in [20 us, first flow done).
VictimResult victim_run(const PacketConfig& cfg) {
  const topo::Fabric f = two_switches();
  Simulation sim{1};
  const auto tables = routing::builtin_routing().get("minhop").factory(f, {});
  PacketNetwork net(sim, f, tables, cfg);
  std::vector<HcaIndex> hca(7);
  for (HcaIndex i = 0; i < tables.num_hcas(); ++i)
    hca[std::stoul(f.node(tables.hca_nodes()[i]).name.substr(1))] = i;
  const std::uint64_t msg = 64 << 10;
  const int msgs = 256; // 16 MiB per flow
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

TEST_CASE("congestion spreading: the victim of an incast's backpressure, and its recovery with CC") {
  // Max-min fair shares: the four incast flows get C/4 each at h3; the A-B cable carries two of them (C/2)
  // and leaves C/2 to the victim h2 -> h4, whose own path is otherwise idle.
  const double eff_ib = 4096.0 / (4096 + 26), eff_roce = 4096.0 / (4096 + 82);
  struct Case {
    std::string name;
    nlohmann::json json;
    double eff;
  };
  const std::vector<Case> cases = {
      {"IB credits, no CC", {{"cc", "none"}}, eff_ib},
      {"IB credits, IB CC",
       {{"cc", "ibcc"},
        {"ibcc", {{"threshold_bytes", 65536}, {"marking_rate", 15}, {"ccti_timer_us", 20.48}}}},
       eff_ib},
      {"RoCE PFC, no CC", {{"link_layer", "rocev2"}, {"flow_control", "pfc"}, {"cc", "none"}}, eff_roce},
      {"RoCE PFC, DCQCN",
       {{"link_layer", "rocev2"},
        {"flow_control", "pfc"},
        {"cc", "dcqcn"},
        {"dcqcn", {{"profile", "paper"}}}},
       eff_roce},
  };
  std::vector<VictimResult> res;
  for (const auto& c : cases) {
    PacketConfig cfg;
    cfg.apply_json(c.json, "packet");
    res.push_back(victim_run(cfg));
    MESSAGE(c.name << ": victim " << res.back().victim_gbps << " Gb/s, incast " << res.back().incast_gbps
                   << " Gb/s (victim's fair share " << 200 * c.eff << ")");
  }
  for (int lossless = 0; lossless < 2; ++lossless) {
    const VictimResult& none = res[static_cast<std::size_t>(2 * lossless)];
    const VictimResult& cc = res[static_cast<std::size_t>(2 * lossless + 1)];
    const double share = 200 * cases[static_cast<std::size_t>(2 * lossless)].eff;
    CAPTURE(lossless);
    // Without CC, backpressure from h3's port blocks the A-B cable: the victim gets well under its share
    // (head-of-line blocking at swB's input from swA).
    CHECK(none.victim_gbps < 0.75 * share);
    if (lossless == 1) {
      // DCQCN with the paper's (40 Gb/s era) profile at 400 Gb/s: the first burst cuts every sender,
      // including the victim (marked at swA's congested output), and the additive increase (40 Mb/s per
      // 55 us) cannot bring it back within this 1 ms window: measured, reported, not asserted
      // (docs/congestion-control.md, "Known behaviour").
      continue;
    }
    // With IB CC the incast senders slow down before the input buffers fill: the victim recovers most of it.
    CHECK(cc.victim_gbps > 0.75 * share);
    CHECK(cc.victim_gbps > 1.2 * none.victim_gbps);
    // ... while the incast still uses most of h3's link.
    CHECK(cc.incast_gbps > 0.8 * 400 * cases[static_cast<std::size_t>(2 * lossless)].eff);
  }
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
    // Random permutations (bench/packet_scenario.hpp), where D-mod-k paths collide on the up-links.
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
