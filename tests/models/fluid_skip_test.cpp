// Fluid skips (models/packet/fluid_skip.cpp; docs/engine.md "Fast-forward", "Fluid skips"): while every
// active QP sends the middle of a long message at a steady rate, the network moves each stream ahead by
// rate x time. Checked against closed forms where fluid is exact (one flow alone: its completion time to the
// nanosecond), against exact mode elsewhere (flows sharing oversubscribed uplinks), and through PacketEngine
// (a timer due inside a skipped interval runs at its own time).
#include "models/packet/network.hpp"
#include "models/packet/packet_engine.hpp"
#include "models/routing/routing.hpp"
#include "topology/generators.hpp"

#include "tests/models/packet_run.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

using namespace ibn;
using namespace ibn::pkt;

namespace {

/// `hosts` HCAs on one switch, 3 m DAC cables, NDR 4x.
topo::Fabric star(int hosts) {
  topo::Fabric f;
  const auto sw = ibn::test::add_node(f, topo::NodeKind::Switch, "sw", std::max(hosts, 2), 1);
  for (int i = 0; i < hosts; ++i) {
    const auto h = ibn::test::add_node(f, topo::NodeKind::Hca, "h" + std::to_string(i), 1, 0, i);
    f.add_link(topo::make_link({h, 1}, {sw, i + 1}, {topo::Generation::NDR, 4}, 3.0, topo::Medium::Dac));
  }
  return f;
}

/// Two leaves of 16 hosts, 4 uplinks each (4:1), two spines.
topo::Fabric two_leaves_4to1() {
  topo::FatTreeParams p;
  p.tiers = 2;
  p.radix = 20;
  p.leaf_ports = 20;
  p.hosts = 32;
  p.oversubscription = {{4, 1}};
  return topo::build_fat_tree(p);
}

struct Outcome {
  std::vector<Time> delivered; ///< per message, on the owner's clock (simulation time + time skipped)
  FluidSkipStats skips;
  NetworkStats stats;
  std::uint64_t events = 0;
};

/// Posts `flows` (src, dst, bytes) at time zero and runs; fluid skips on or off.
Outcome run(const topo::Fabric& f, const std::string& routing,
            const std::vector<std::tuple<int, int, std::uint64_t>>& flows, bool fluid, PacketConfig cfg = {},
            EventModel events = EventModel::Fast) {
  ibn::test::Run r(f, cfg, routing, events);
  if (fluid) r.net->enable_fluid_skips(nullptr, nullptr);
  Outcome o;
  o.delivered.assign(flows.size(), Time::max());
  r.net->on_delivered([&](const MessageRecord& m) {
    o.delivered.at(m.id) = m.delivered + r.net->fluid_skip_stats().skipped;
  });
  for (const auto& [s, d, b] : flows)
    r.net->post({.src = static_cast<HcaIndex>(s), .dst = static_cast<HcaIndex>(d), .bytes = b});
  o.events = r.sim.run().events_executed;
  o.skips = r.net->fluid_skip_stats();
  o.stats = r.net->stats();
  return o;
}

} // namespace

TEST_CASE("fluid skip: one long transfer ends when exact mode ends it, at the closed form's time") {
  // 64 MiB = 16,384 packets of 4096 B: the first 4096 + 26 (headers) + 16 (RETH) = 4138 B on the wire, 82,760
  // ps at 400 Gb/s, the others 4122 B, 82,440 ps. Alone on its path the flow is periodic, so its rate over
  // any window is exact: the skip lands where packet-by-packet simulation lands.
  const topo::Fabric f = star(2);
  const std::uint64_t bytes = 64ull << 20;
  const Outcome exact = run(f, "minhop", {{0, 1, bytes}}, false);
  const Outcome fast = run(f, "minhop", {{0, 1, bytes}}, true);
  CHECK(exact.skips.skips == 0);
  REQUIRE(fast.skips.skips >= 1);
  CHECK(fast.skips.packets_skipped > 16384 * 9 / 10);
  CHECK(fast.events * 10 < exact.events);
  // Within a nanosecond of exact mode (the skipped time is a whole number of measured packet periods).
  CHECK(std::llabs((fast.delivered[0] - exact.delivered[0]).count_ps()) <= 1000);
  // Closed form: first packet's start (nic_tx 300 ns) + 16,384 serializations + one cable, switch latency and
  // cable behind the last (cut-through) + nic_rx 300 ns; ACKs share no link with the data.
  const std::int64_t closed = 300'000 + 82'760 + 16383LL * 82'440 + 14'280 + 200'000 + 14'280 + 300'000;
  CHECK(std::llabs(fast.delivered[0].count_ps() - closed) <= 1000);
  // Payload exactly; hops and ACKs as measured over the span, scaled.
  CHECK(fast.stats.payload_bytes_delivered == bytes);
  CHECK(fast.stats.payload_bytes_sent == bytes);
  CHECK(std::abs(static_cast<double>(fast.stats.packet_hops) / static_cast<double>(exact.stats.packet_hops) -
                 1) < 0.01);
  CHECK(std::abs(static_cast<double>(fast.stats.acks) / static_cast<double>(exact.stats.acks) - 1) < 0.02);
}

TEST_CASE("fluid skip: flows sharing oversubscribed uplinks end within 0.1 % of exact mode") {
  // 32 hosts on two leaves, 4:1: every host sends 8 MiB to the host 16 further on, so 16 flows per leaf share
  // its 4 uplinks (D-mod-k: 4 flows each) at a quarter of the line rate each.
  const topo::Fabric f = two_leaves_4to1();
  std::vector<std::tuple<int, int, std::uint64_t>> flows;
  for (int s = 0; s < 32; ++s) flows.emplace_back(s, (s + 16) % 32, 8ull << 20);
  const Outcome exact = run(f, "ftree", flows, false);
  const Outcome fast = run(f, "ftree", flows, true);
  REQUIRE(fast.skips.skips >= 1);
  CHECK(fast.events * 3 < exact.events);
  for (std::size_t i = 0; i < flows.size(); ++i) {
    CAPTURE(i);
    REQUIRE(fast.delivered[i] != Time::max());
    CHECK(std::abs(fast.delivered[i].to_us() / exact.delivered[i].to_us() - 1) < 1e-3);
  }
  CHECK(fast.stats.payload_bytes_delivered == exact.stats.payload_bytes_delivered);
  // The event model's invariants hold on every port event after the skips (Checked: Fast plus assertions),
  // with the same outcome.
  const Outcome checked = run(f, "ftree", flows, true, PacketConfig{}, EventModel::Checked);
  CHECK(checked.skips.skips == fast.skips.skips);
  CHECK(checked.delivered == fast.delivered);
}

TEST_CASE("fluid skip: off where the network's features do not repeat (congestion control, AR)") {
  const topo::Fabric f = star(2);
  for (const char* what : {"dcqcn", "ar"}) {
    CAPTURE(what);
    PacketConfig cfg;
    if (std::string(what) == "dcqcn")
      cfg.apply_json(nlohmann::json{{"cc", "dcqcn"}}, "packet");
    else
      cfg.ar_mode = ArMode::PerPacket;
    const Outcome exact = run(f, "minhop", {{0, 1, 16ull << 20}}, false, cfg);
    const Outcome fast = run(f, "minhop", {{0, 1, 16ull << 20}}, true, cfg);
    CHECK(fast.skips.skips == 0);
    CHECK(fast.events == exact.events);
    CHECK(fast.delivered[0] == exact.delivered[0]);
  }
}

TEST_CASE("fluid skip through PacketEngine: a timer due inside a skippable interval runs at its own time") {
  // One 64 MiB transfer (about 1.36 ms alone) and a timer at 400 us that posts a second transfer from another
  // HCA: the skip before the timer stops short of it, the timer runs at 400 us on the engine's clock, the new
  // QP ends that steady interval, and the first transfer ends where exact mode ends it.
  const topo::Fabric f = star(3);
  const auto tables = routing::builtin_routing().get("minhop").factory(f, {});
  auto once = [&](bool ff) {
    PacketConfig cfg;
    cfg.fast_forward = ff;
    PacketEngine e(f, tables, cfg, 1);
    std::vector<Time> at(3, Time::max());
    e.send({.src = 0, .dst = 1, .bytes = 64ull << 20}, [&](Time t) { at[0] = t; });
    e.call_at(Time::us(400), [&] {
      at[2] = e.now();
      e.send({.src = 2, .dst = 1, .bytes = 8ull << 20}, [&](Time t) { at[1] = t; });
    });
    e.run();
    return std::make_pair(at, e.report());
  };
  const auto [exact, exact_report] = once(false);
  const auto [fast, fast_report] = once(true);
  CHECK(exact[2] == Time::us(400));
  CHECK(fast[2] == Time::us(400));
  CHECK(!exact_report.extra.contains("fast_forward"));
  REQUIRE(fast_report.extra.contains("fast_forward"));
  CHECK(fast_report.extra.at("fast_forward").at("fluid_skips").get<std::uint64_t>() >= 2); // before and after
  CHECK(fast_report.events * 4 < exact_report.events);
  for (int i = 0; i < 2; ++i) {
    CAPTURE(i);
    CHECK(std::abs(fast[static_cast<std::size_t>(i)].to_us() / exact[static_cast<std::size_t>(i)].to_us() -
                   1) < 1e-4);
  }
}
