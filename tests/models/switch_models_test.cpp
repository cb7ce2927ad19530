// Switch models in both engines and the RDMA READ responder latency: closed forms (formula in each comment).
#include "models/common/device.hpp"
#include "models/packet/network.hpp"
#include "topology/generators.hpp"
#include "topology/switch_models.hpp"

#include "tests/models/packet_run.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>

using namespace ibn;
using namespace ibn::pkt;

namespace {

/// A 2-tier radix-4 fat-tree (2 hosts and 2 uplinks per leaf), host cables 2 m and leaf-spine 3 m of DAC.
topo::Fabric small_tree(const std::string& models) {
  std::map<std::string, std::string> kv{
      {"tiers", "2"}, {"radix", "4"}, {"rate", "NDR"}, {"cable-m", "host=2,leaf=3"}};
  if (!models.empty()) kv["switch-model"] = models;
  return topo::builtin_generators().get("fat-tree").factory(kv);
}

/// Delivery time of one 4096-byte WRITE from HCA `a` to HCA `b` (node names).
Time one_write(const topo::Fabric& f, const PacketConfig& cfg, const std::string& a, const std::string& b) {
  ibn::test::Run r(f, cfg);
  const auto src = *r.tables.hca_index(*f.find_node(a));
  const auto dst = *r.tables.hca_index(*f.find_node(b));
  const MessageId id = r.net->post({.src = src, .dst = dst, .bytes = 4096, .verb = Verb::Write});
  r.sim.run();
  REQUIRE(r.net->message(id).is_delivered);
  return r.net->message(id).delivered;
}

} // namespace

TEST_CASE("RDMA READ: request one-way + responder nic_rx + nic_tx + response one-way, to the picosecond") {
  // Two HCAs on one switch (NDR 4x, 20 ps per byte), cables 2 m (9,520 ps) and 3 m (14,280 ps).
  topo::Fabric f;
  const auto sw = ibn::test::add_node(f, topo::NodeKind::Switch, "sw", 2, 1);
  const auto h0 = ibn::test::add_node(f, topo::NodeKind::Hca, "h0", 1, 0, 0);
  const auto h1 = ibn::test::add_node(f, topo::NodeKind::Hca, "h1", 1, 0, 1);
  f.add_link(topo::make_link({h0, 1}, {sw, 1}, {topo::Generation::NDR, 4}, 2.0, topo::Medium::Dac));
  f.add_link(topo::make_link({h1, 1}, {sw, 2}, {topo::Generation::NDR, 4}, 3.0, topo::Medium::Dac));
  PacketConfig cfg; // nic_tx = nic_rx = 300 ns, switch 200 ns
  ibn::test::Run r(f, cfg);
  const MessageId id = r.net->post({.src = 0, .dst = 1, .bytes = 4096, .verb = Verb::Read});
  r.sim.run();
  const MessageRecord& m = r.net->message(id);
  REQUIRE(m.is_delivered);
  // READ = nic_tx + one_way(request) + (nic_rx + nic_tx at the responder) + one_way(response) + nic_rx, where
  // one_way(W) = prop + switch + ser(W) + prop (cut-through, equal rates):
  //   request  W = 26 + 16 (RETH) = 42 B: 9,520 + 200,000 + 840 + 14,280
  //   response W = 4096 + 26 = 4122 B:    14,280 + 200,000 + 82,440 + 9,520
  const std::int64_t request = 9'520 + 200'000 + 840 + 14'280;
  const std::int64_t response = 14'280 + 200'000 + 82'440 + 9'520;
  const std::int64_t expected = 300'000 + request + (300'000 + 300'000) + response + 300'000;
  CHECK(m.delivered.count_ps() == expected);
  CHECK(m.acked.count_ps() == expected);
  CHECK(cfg.read_responder_latency() == Time::ns(600));
}

TEST_CASE("switch models: each switch pays its own model's latency in the packet engine (mixed fabric)") {
  // Same leaf: host cable, leaf, host cable. Across the spine: two more leaf-spine cables (3 m, 14,280 ps
  // each), the spine and the other leaf. Difference = leaf + spine + 2 x 14,280 ps.
  PacketConfig cfg;
  const topo::Fabric plain = small_tree("");
  const Time d_plain = one_write(plain, cfg, "host-0", "host-2") - one_write(plain, cfg, "host-0", "host-1");
  CHECK(d_plain.count_ps() == 200'000 + 200'000 + 2 * 14'280); // no model: switch_latency_ns everywhere

  const topo::Fabric mixed = small_tree("leaf=spectrum-3,spine=quantum");
  const Time same = one_write(mixed, cfg, "host-0", "host-1");
  const Time cross = one_write(mixed, cfg, "host-0", "host-2");
  CHECK((cross - same).count_ps() == 300'000 + 130'000 + 2 * 14'280);
  // The same-leaf path itself: nic_tx + 2 m + leaf (300 ns) + ser(4138 B) + 2 m + nic_rx.
  CHECK(same.count_ps() == 300'000 + 9'520 + 300'000 + 82'760 + 9'520 + 300'000);

  cfg.switch_latency_from_model = false; // a measured switch latency replaces the models
  const Time d_off = one_write(mixed, cfg, "host-0", "host-2") - one_write(mixed, cfg, "host-0", "host-1");
  CHECK(d_off.count_ps() == 200'000 + 200'000 + 2 * 14'280);
}

TEST_CASE("switch models: the flow engine's path delay uses the transmitting switch's model") {
  // The flow engine charges link_latency(link, transmitting node) on every directed link of a route
  // (models/flow/flow_engine.cpp): cable + the switch's model latency when a switch transmits.
  const topo::Fabric f = small_tree("leaf=spectrum-2,spine=quantum-2");
  common::DeviceKnobs d; // switch_latency 200 ns
  const auto leaf = *f.find_node("leaf-0");
  const auto spine = *f.find_node("spine-0");
  const auto host = *f.find_node("host-0");
  const topo::Link& up = f.link(f.links_of(leaf).back());
  CHECK(d.link_latency(up, f.node(leaf)) == up.latency + Time::ns(300));
  CHECK(d.link_latency(up, f.node(spine)) == up.latency + Time::ns(200));
  CHECK(d.link_latency(up, f.node(host)) == up.latency);
  topo::Node unnamed = f.node(leaf);
  unnamed.switch_model.clear();
  d.switch_latency = Time::ns(90);
  CHECK(d.link_latency(up, unnamed) == up.latency + Time::ns(90));
  d.switch_latency_from_model = false;
  CHECK(d.link_latency(up, f.node(leaf)) == up.latency + Time::ns(90));
}
