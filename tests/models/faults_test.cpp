// Faults in the packet engine (models/packet/faults.hpp): a dead spine cable and the reroute against the
// flows-per-link closed form, a degraded uplink against the rate ratio, conservation after a mid-run
// failure, and a QP whose only path is dead exhausting its retries.
#include "models/packet/faults.hpp"
#include "models/packet/network.hpp"
#include "models/routing/reroute.hpp"
#include "models/routing/routing.hpp"
#include "topology/generators.hpp"

#include "tests/models/packet_run.hpp"
#include "tests/topology/hand_fabrics.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>

using namespace ibn;
using namespace ibn::pkt;
using ibn::test::Run;

namespace {

/// Non-blocking 2-tier tree: 8 leaves x 4 hosts, 4 spines, one cable from every leaf to every spine.
topo::Fabric tree32() {
  topo::FatTreeParams p;
  p.tiers = 2;
  p.radix = 8;
  p.hosts = 32;
  return topo::build_fat_tree(p);
}

/// The cable between two named nodes.
topo::LinkId cable(const topo::Fabric& f, const std::string& a, const std::string& b) {
  const auto na = f.find_node(a), nb = f.find_node(b);
  REQUIRE(na);
  REQUIRE(nb);
  for (const auto l : f.links_of(*na))
    if (f.link(l).other(*na) == *nb) return l;
  FAIL("no cable " << a << " - " << b);
  return topo::kNoLink;
}

/// Largest number of flows (src -> dst pairs) sharing one direction of one cable under `t`.
int max_flows_per_link(const topo::Fabric& f, const routing::RoutingTables& t,
                       const std::vector<std::pair<HcaIndex, HcaIndex>>& flows) {
  std::map<std::pair<topo::LinkId, topo::NodeId>, int> load;
  int m = 0;
  for (const auto& [s, d] : flows) {
    topo::NodeId at = t.hca_nodes()[s];
    for (const auto l : t.route(s, d)) {
      m = std::max(m, ++load[{l, at}]);
      at = f.link(l).other(at);
    }
  }
  return m;
}

/// Makespan of messages posted at `from`: the last delivery minus `from`.
Time makespan(const PacketNetwork& net, Time from) {
  Time last = from;
  for (MessageId i = 0; i < net.num_messages(); ++i) last = std::max(last, net.message(i).delivered);
  return last - from;
}

} // namespace

TEST_CASE("ib_ack_timeout is 4.096 us x 2^timeout") {
  CHECK(ib_ack_timeout(0) == Time::ps(4'096'000));
  CHECK(ib_ack_timeout(20) == Time::ps(4'294'967'296'000)); // PacketConfig's default (NCCL_IB_TIMEOUT 20)
  CHECK_THROWS_AS(ib_ack_timeout(32), InputError);
}

TEST_CASE("a dead spine cable: the permutation slows by the rerouted tables' flows per link, and not before "
          "the failure") {
  const topo::Fabric f = tree32();
  const PacketConfig cfg;
  const std::uint64_t bytes = 4 << 20;
  std::vector<std::pair<HcaIndex, HcaIndex>> flows;
  for (HcaIndex s = 0; s < 32; ++s) flows.push_back({s, (s + 4) % 32}); // leaf i -> leaf i + 1
  const Time start = Time::from_us(200);
  auto post_all = [&](Run& r) {
    for (const auto& [s, d] : flows) r.net->post_at(start, {.src = s, .dst = d, .bytes = bytes});
  };
  const topo::LinkId dead = cable(f, "leaf-0", "spine-0");

  Run base(f, cfg, "ftree", EventModel::Plain);
  post_all(base);
  base.sim.run();
  const Time t0 = makespan(*base.net, start);
  CHECK(max_flows_per_link(f, base.tables, flows) == 1); // non-blocking: every flow has its own cables

  SUBCASE("a failure after the run changes nothing") {
    Run r(f, cfg, "ftree");
    r.net->schedule_link_down(dead, start + t0 * 10);
    post_all(r);
    r.sim.run();
    REQUIRE(r.net->num_messages() == base.net->num_messages());
    for (MessageId i = 0; i < r.net->num_messages(); ++i) {
      CHECK(r.net->message(i).delivered == base.net->message(i).delivered);
      CHECK(r.net->message(i).acked == base.net->message(i).acked);
    }
  }
  SUBCASE("down at t = 0, rerouted after the sweep, traffic after that") {
    Run r(f, cfg, "ftree");
    FaultConfig fc;
    fc.sm_sweep_delay = Time::from_us(100);
    r.net->configure_faults(fc);
    r.net->schedule_link_down(dead, Time::zero());
    post_all(r);
    r.sim.run();
    // The closed form: flows share their most loaded cable equally, so the last one ends m times later.
    std::vector<bool> failed(f.num_links(), false);
    failed[dead] = true;
    const auto rr = routing::reroute(f, failed, "ftree");
    const int m = max_flows_per_link(*rr.fabric, rr.tables, flows);
    CHECK(m == 2); // 4 flows leave leaf-0 (and 4 enter it) over 3 cables
    const double ratio = static_cast<double>(makespan(*r.net, start).count_ps()) / t0.count_ps();
    CHECK(ratio == doctest::Approx(m).epsilon(0.03).scale(0));
    CHECK(r.net->fault_stats().reroutes == 1);
    CHECK(r.net->fault_stats().dropped_packets == 0); // nothing was sent before the reroute
    CHECK(r.net->stats().payload_bytes_delivered == 32 * bytes);
    CHECK_FALSE(r.net->link_up(dead));
  }
}

TEST_CASE("a dead spine switch: every cable down, the permutation rerouted over the other spines") {
  const topo::Fabric f = tree32();
  const PacketConfig cfg;
  const std::uint64_t bytes = 4 << 20;
  std::vector<std::pair<HcaIndex, HcaIndex>> flows;
  for (HcaIndex s = 0; s < 32; ++s) flows.push_back({s, (s + 4) % 32});
  const Time start = Time::from_us(200);
  auto run = [&](bool fault) {
    Run r(f, cfg, "ftree", EventModel::Plain);
    if (fault) r.net->schedule_node_down(*f.find_node("spine-0"), Time::zero());
    for (const auto& [s, d] : flows) r.net->post_at(start, {.src = s, .dst = d, .bytes = bytes});
    r.sim.run();
    CHECK(r.net->stats().payload_bytes_delivered == 32 * bytes);
    return makespan(*r.net, start);
  };
  std::vector<bool> failed(f.num_links(), false);
  for (const auto l : f.links_of(*f.find_node("spine-0"))) failed[l] = true;
  const auto rr = routing::reroute(f, failed, "ftree");
  const int m = max_flows_per_link(*rr.fabric, rr.tables, flows); // 4 flows per leaf over 3 uplinks
  CHECK(m == 2);
  CHECK(static_cast<double>(run(true).count_ps()) / run(false).count_ps() ==
        doctest::Approx(m).epsilon(0.03).scale(0));
}

TEST_CASE("a leaf uplink degraded 4x -> 1x slows a flow crossing it 4 times") {
  const topo::Fabric f = tree32();
  const PacketConfig cfg;
  const std::uint64_t bytes = 8 << 20;
  auto one_flow = [&](bool degrade) {
    Run r(f, cfg, "ftree");
    if (degrade) {
      const auto path = r.tables.route(0, 4); // host 0 on leaf-0 to host 4 on leaf-1
      REQUIRE(path.size() == 4);
      r.net->set_link_speed(path[1], {topo::Generation::NDR, 1}); // leaf-0's uplink on that path
    }
    r.net->post({.src = 0, .dst = 4, .bytes = bytes});
    r.sim.run();
    return makespan(*r.net, Time::zero());
  };
  const double ratio = static_cast<double>(one_flow(true).count_ps()) / one_flow(false).count_ps();
  CHECK(ratio == doctest::Approx(4.0).epsilon(0.02).scale(0)); // rate 4x / 1x, less the fixed latencies

  // Width as the fabric carries it (an ibnetdiscover import): 1x uplinks everywhere, same bottleneck.
  topo::testing::TwoTierSpec s;
  s.leaves = 2;
  s.hosts_per_leaf = 1;
  s.spines = 1;
  s.up_speed = {topo::Generation::NDR, 1};
  const topo::Fabric slow = topo::testing::two_tier(s);
  s.up_speed = {topo::Generation::NDR, 4};
  const topo::Fabric fast = topo::testing::two_tier(s);
  auto flow_on = [&](const topo::Fabric& g) {
    Run r(g, cfg, "minhop");
    r.net->post({.src = 0, .dst = 1, .bytes = bytes});
    r.sim.run();
    return makespan(*r.net, Time::zero());
  };
  CHECK(static_cast<double>(flow_on(slow).count_ps()) / flow_on(fast).count_ps() ==
        doctest::Approx(4.0).epsilon(0.02).scale(0));
}

TEST_CASE("RC: the ACK timer of an acknowledged message does not keep the clock running past the traffic") {
  // The HCA's ACK timer was left armed at the first packet's deadline (4.3 s with NCCL_IB_TIMEOUT 20) after
  // the last ACK, so a run ended 4.3 s after its traffic (one idle wake-up per HCA). Now the last deadline of
  // an HCA cleared cancels it: the run ends with the last ACK, on both event models.
  const topo::Fabric f = tree32();
  PacketConfig cfg;
  REQUIRE(cfg.ack_timeout > Time::from_us(1'000'000));
  for (const EventModel em : {EventModel::Fast, EventModel::Plain}) {
    Run r(f, cfg, "ftree", em);
    for (HcaIndex s = 0; s < 4; ++s) r.net->post({.src = s, .dst = s + 8, .bytes = 1 << 20});
    r.sim.run();
    Time last_ack = Time::zero();
    for (MessageId i = 0; i < r.net->num_messages(); ++i) {
      REQUIRE(r.net->message(i).is_acked);
      last_ack = std::max(last_ack, r.net->message(i).acked);
    }
    CHECK(r.sim.now() >= last_ack);
    CHECK(r.sim.now() < last_ack + Time::from_us(10));
  }
}

TEST_CASE("conservation: a spine cable fails mid-run, every message delivered once, nothing left") {
  const topo::Fabric f = tree32();
  PacketConfig cfg;
  cfg.ack_timeout = ib_ack_timeout(6); // 262 us: lost tails are recovered within the test
  // 8 MiB per message (each flow ~170 us): the traffic outlasts the link's return and the SM's sweep after
  // it; fault events are Background and fire only while traffic remains (docs/engine.md).
  const std::uint64_t bytes = 8 << 20;
  Run r(f, cfg, "ftree");
  FaultConfig fc;
  fc.sm_sweep_delay = Time::from_us(20);
  r.net->configure_faults(fc);
  const topo::LinkId dead = cable(f, "leaf-1", "spine-2");
  r.net->schedule_link_down(dead, Time::from_us(10)); // mid-transfer
  r.net->schedule_link_up(dead, Time::from_us(150));  // before the first ACK timeouts fire (~270 us)
  std::vector<int> delivered;
  r.net->on_delivered([&](const MessageRecord& m) {
    if (delivered.size() <= m.id) delivered.resize(m.id + 1, 0);
    ++delivered[m.id];
  });
  for (int round = 0; round < 2; ++round)
    for (HcaIndex s = 0; s < 32; ++s) r.net->post({.src = s, .dst = (s * 7 + 5) % 32, .bytes = bytes});
  r.sim.run();
  const auto fs = r.net->fault_stats();
  CHECK(fs.dropped_packets > 0); // the failure hit traffic
  CHECK(fs.reroutes == 2);       // after the down and after the up
  CHECK(r.net->qp_failures().empty());
  REQUIRE(delivered.size() == r.net->num_messages());
  for (MessageId i = 0; i < r.net->num_messages(); ++i) {
    CHECK(delivered[i] == 1);
    CHECK(r.net->message(i).is_acked);
  }
  CHECK(r.net->stats().payload_bytes_delivered == 64 * bytes);
  CHECK(r.net->packets_in_flight() == 0);
  std::uint64_t dropped = 0;
  for (const auto& ps : r.net->port_stats()) dropped += ps.dropped_packets;
  CHECK(dropped == fs.dropped_packets);
  CHECK(r.net->link_up(dead));
}

TEST_CASE("a QP whose only path is dead exhausts its retries and is reported, the run ends") {
  const topo::Fabric f = tree32();
  PacketConfig cfg;
  cfg.ack_timeout = ib_ack_timeout(4); // 65.5 us
  cfg.retry_count = 2;
  Run r(f, cfg, "ftree");
  FaultConfig fc;
  fc.reroute = false;
  r.net->configure_faults(fc);
  const topo::LinkId hca_cable = r.tables.hca_link(4); // the destination's only cable
  r.net->schedule_link_down(hca_cable, Time::zero());
  const MessageId id = r.net->post({.src = 0, .dst = 4, .bytes = 64 << 10});
  r.net->post({.src = 1, .dst = 5, .bytes = 64 << 10}); // unaffected
  const auto res = r.sim.run();
  CHECK(res.reason == StopReason::Stopped);
  REQUIRE(r.net->qp_failures().size() == 1);
  const QpFailure& q = r.net->qp_failures()[0];
  CHECK(q.src == 0);
  CHECK(q.dst == 4);
  REQUIRE(q.messages == std::vector<std::uint32_t>{id});
  // First send nic_tx after the post (first_tx stays there: resends do not move it), then (retry_count + 1)
  // timeouts, each re-armed at the previous one.
  const Time first = r.net->message(id).posted + cfg.nic_tx_latency;
  CHECK(r.net->message(id).first_tx == first);
  CHECK(r.net->message(id).retransmitted_packets > 0);
  CAPTURE(q.when.count_ps());
  CAPTURE(first.count_ps());
  CHECK(q.when >= first + cfg.ack_timeout * 3);
  CHECK(q.when <= first + cfg.ack_timeout * 3 + Time::from_us(5));
  CHECK(r.net->message(id).is_failed);
  CHECK_FALSE(r.net->message(id).is_delivered);
  CHECK(r.net->message(1).is_acked);
  CHECK(r.net->fault_stats().qp_errors == 1);
  CHECK(r.net->stats().timeouts == 3);
}

TEST_CASE("fault API: bad links and late configuration are refused") {
  const topo::Fabric f = tree32();
  Run r(f, PacketConfig{}, "ftree");
  CHECK_THROWS_AS(r.net->schedule_link_down(topo::LinkId{100000}, Time::zero()), InputError);
  CHECK_THROWS_AS(r.net->set_link_speed(topo::LinkId{100000}, {}), InputError);
  r.net->post({.src = 0, .dst = 4, .bytes = 4096});
  r.sim.run();
  CHECK_THROWS_AS(r.net->schedule_link_down(0, r.sim.now()), std::logic_error);
  PacketConfig ar;
  ar.ar_mode = ArMode::PerPacket;
  Run a(f, ar, "ftree");
  CHECK_THROWS_AS(a.net->configure_faults(FaultConfig{}), InputError);
}
