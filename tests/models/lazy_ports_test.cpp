// Ports made on first use (models/packet/build.cpp, Core::materialise): an idle fabric makes none, a run
// makes only the ports its packets use, and making them late changes nothing (the same run with every port
// made up front, as queue traces do, gives the same timings and statistics).
#include "models/packet/network.hpp"
#include "models/packet/packet_engine.hpp"
#include "models/routing/routing.hpp"
#include "topology/generators.hpp"

#include "tests/models/packet_run.hpp"

#include <doctest/doctest.h>

#include <map>

using namespace ibn;
using namespace ibn::pkt;

namespace {

topo::Fabric fat_tree_3(int radix, std::int64_t hosts) {
  topo::FatTreeParams p;
  p.tiers = 3;
  p.radix = radix;
  p.hosts = hosts;
  return topo::build_fat_tree(p);
}

} // namespace

TEST_CASE("an idle fabric makes no port, a run makes only the ports its packets use") {
  const topo::Fabric f = fat_tree_3(8, 40);
  test::Run r(f, PacketConfig{}, "ftree");
  CHECK(r.net->num_ports() == 2 * f.num_links());
  CHECK(r.net->materialised_ports() == 0);
  r.sim.run(); // nothing posted
  CHECK(r.net->materialised_ports() == 0);
  CHECK(r.net->port_stats().size() == r.net->num_ports()); // every port listed, made or not
  CHECK(r.net->used_port_stats().empty());
  std::uint64_t unused = 0;
  for (const auto& [tiers, n] : r.net->unused_ports_by_tier()) unused += n;
  CHECK(unused == r.net->num_ports());

  // h0 -> h1 on the same leaf: h0's port, the leaf's port to h1, h1's port (ACKs), the leaf's port to h0.
  r.net->post({.src = 0, .dst = 1, .bytes = 64 << 10});
  r.sim.run();
  CHECK(r.net->materialised_ports() == 4);
  const auto used = r.net->used_port_stats();
  REQUIRE(used.size() == 4);
  for (const auto& p : used) CHECK(p.packets > 0);
  unused = 0;
  for (const auto& [tiers, n] : r.net->unused_ports_by_tier()) unused += n;
  CHECK(unused == r.net->num_ports() - 4);
}

TEST_CASE("ports made late behave as ports made up front: same timings and statistics") {
  const topo::Fabric f = fat_tree_3(8, 40);
  auto once = [&](bool all_up_front) {
    PacketConfig cfg;
    cfg.ar_mode = ArMode::PerPacket;               // AR looks at the load of ports that were never used
    if (all_up_front) cfg.trace_interval_ns = 1e6; // queue traces make every port in the constructor
    test::Run r(f, cfg, "ftree");
    if (all_up_front) CHECK(r.net->materialised_ports() == r.net->num_ports());
    for (HcaIndex s = 0; s < 8; ++s) r.net->post({.src = s, .dst = (s * 5 + 17) % 40, .bytes = 1 << 20});
    r.sim.run();
    std::vector<std::int64_t> t;
    for (std::size_t i = 0; i < r.net->num_messages(); ++i)
      t.push_back(r.net->message(static_cast<MessageId>(i)).delivered.count_ps());
    std::map<std::pair<topo::NodeId, int>, std::pair<std::uint64_t, std::int64_t>> ports;
    for (const auto& p : r.net->port_stats())
      if (p.packets > 0) ports[{p.node, p.port}] = {p.bytes, p.busy.count_ps()};
    return std::make_pair(t, ports);
  };
  const auto lazy = once(false);
  const auto eager = once(true);
  CHECK(lazy.first == eager.first);
  CHECK(lazy.second == eager.second);
  CHECK(!lazy.second.empty());
}

TEST_CASE("the engine's report lists the used ports and folds the others per tier") {
  const topo::Fabric f = fat_tree_3(8, 40);
  const auto tables = routing::builtin_routing().get("ftree").factory(f, {});
  PacketEngine e(f, tables, PacketConfig{}, 1);
  e.send({.src = 0, .dst = 9, .bytes = 1 << 20}, [](Time) {});
  e.run();
  const eng::EngineReport rep = e.report();
  std::uint64_t idle = 0;
  for (const auto& g : rep.idle_links) idle += g.count;
  CHECK(rep.links.size() == e.network().materialised_ports());
  CHECK(rep.links.size() + idle == 2 * f.num_links());
  CHECK(rep.links.size() < 20); // two hosts in different pods of a 40-host fabric: a path each way
}

TEST_CASE("recycled message records: memory follows the messages in progress, and nothing else changes") {
  // 8 hosts each send 40 messages of 64 KiB to the next, every next message posted when the previous is
  // delivered, with bit errors, so that retransmissions and duplicates reach messages already complete.
  const topo::Fabric f = fat_tree_3(8, 8);
  auto once = [&](bool recycle) {
    PacketConfig cfg;
    cfg.bit_error_rate = 2e-7; // about one packet in 60 lost: go-back-N resends, duplicate ACKs
    test::Run r(f, cfg, "ftree");
    r.net->recycle_messages(recycle);
    std::map<HcaIndex, int> left;
    std::uint64_t delivered = 0;
    r.net->on_delivered([&](const MessageRecord& rec) {
      ++delivered;
      if (--left[rec.spec.src] > 0)
        r.net->post({.src = rec.spec.src, .dst = rec.spec.dst, .bytes = 64 << 10});
    });
    for (HcaIndex h = 0; h < 8; ++h) {
      left[h] = 40;
      r.net->post({.src = h, .dst = static_cast<HcaIndex>((h + 1) % 8), .bytes = 64 << 10});
    }
    r.sim.run();
    struct Out {
      Time end;
      std::uint64_t delivered, records, retransmitted, hops;
    };
    return Out{r.sim.now(), delivered, r.net->num_messages(), r.net->stats().retransmitted_packets,
               r.net->stats().packet_hops};
  };
  const auto kept = once(false), reused = once(true);
  CHECK(kept.delivered == 320);
  CHECK(reused.delivered == 320);
  CHECK(kept.records == 320);
  CHECK(reused.records <= 16);   // at most two per sender in progress (the next is posted before the ACK)
  CHECK(kept.retransmitted > 0); // the duplicates were there to meet recycled records
  CHECK(reused.retransmitted == kept.retransmitted);
  CHECK(reused.hops == kept.hops);
  CHECK(reused.end == kept.end);
}
