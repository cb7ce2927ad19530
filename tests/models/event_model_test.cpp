// The packet engine's two event models (models/packet/network.hpp, EventModel) against each other.
//
// EventModel::Plain spends an event on every packet arrival at a switch and on every transmission end;
// EventModel::Fast (the default) skips the events whose outcome is known in advance: switch arrivals under
// static routing (time-ordered `incoming` lists), ends of transmissions after which a switch output has
// nothing queued, and ends after which an HCA's next packet cannot fit its credits (quiet ends). Where no two
// things happen at the same picosecond at one port these are exact rewrites: every message time (first
// packet, delivery, ACK), every port's packets, bytes, busy time and credit-stall time, and the final clock
// are equal to the picosecond, while Fast needs fewer events. The flows start at distinct odd picoseconds so
// that the symmetric starts do not line arrivals up.
//
// What is not equal, and why (docs/engine.md, "Fast and Plain event models"): when a packet reaches an output
// at the very picosecond its transmission ends, or two reach it at the same picosecond, Plain serves them in
// event order (the first event finds the output idle and starts its packet alone) while Fast lets every
// packet present at that picosecond into the selection. That moves a port's peak queue by at most one
// packet (checked below) and, in general, can change which packet goes first. With two VLs and mixed verbs
// the two models were seen to diverge by up to 2.6 us in message times (not a tie effect that was pinned
// down): that case is not asserted here and is open.
#include "models/packet/network.hpp"
#include "topology/generators.hpp"

#include "tests/models/packet_run.hpp"

#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <vector>

using namespace ibn;
using namespace ibn::pkt;

namespace {

struct Outcome {
  std::vector<MessageRecord> msgs;
  std::vector<PortStats> ports;
  NetworkStats stats;
  Time end;
  std::uint64_t events = 0;
};

Outcome run(const topo::Fabric& f, const PacketConfig& cfg, const std::string& routing, EventModel em,
            const std::function<void(PacketNetwork&)>& post) {
  test::Run r(f, cfg, routing, em);
  post(*r.net);
  const RunResult rr = r.sim.run();
  Outcome o;
  for (std::size_t i = 0; i < r.net->num_messages(); ++i)
    o.msgs.push_back(r.net->message(static_cast<MessageId>(i)));
  o.ports = r.net->port_stats();
  o.stats = r.net->stats();
  o.end = rr.now;
  o.events = rr.events_executed;
  return o;
}

void check_same(const Outcome& fast, const Outcome& plain) {
  CHECK(fast.end == plain.end);
  REQUIRE(fast.msgs.size() == plain.msgs.size());
  for (std::size_t i = 0; i < fast.msgs.size(); ++i) {
    CAPTURE(i);
    const MessageRecord& a = fast.msgs[i];
    const MessageRecord& b = plain.msgs[i];
    CHECK(a.is_delivered);
    CHECK(a.is_acked == b.is_acked);
    CHECK(a.first_tx == b.first_tx);
    CHECK(a.delivered == b.delivered);
    CHECK(a.acked == b.acked);
    CHECK(a.retransmitted_packets == b.retransmitted_packets);
  }
  REQUIRE(fast.ports.size() == plain.ports.size());
  for (std::size_t i = 0; i < fast.ports.size(); ++i) {
    CAPTURE(i);
    const PortStats& a = fast.ports[i];
    const PortStats& b = plain.ports[i];
    CHECK(a.packets == b.packets);
    CHECK(a.bytes == b.bytes);
    CHECK(a.busy == b.busy);
    CHECK(a.credit_stall == b.credit_stall);
    // Same-picosecond arrival and transmission end (see the top): at most one packet apart.
    const std::uint64_t max_pkt = 4096 + 26 + 16 + 4;
    CHECK(a.peak_queue_bytes <= b.peak_queue_bytes + max_pkt);
    CHECK(b.peak_queue_bytes <= a.peak_queue_bytes + max_pkt);
  }
  CHECK(fast.stats.packet_hops == plain.stats.packet_hops);
  CHECK(fast.stats.payload_bytes_delivered == plain.stats.payload_bytes_delivered);
  CHECK(fast.stats.min_credits_seen == plain.stats.min_credits_seen);
  CHECK(fast.stats.retransmitted_packets == plain.stats.retransmitted_packets);
  // The point of Fast: fewer events for the same result.
  CHECK(fast.events < plain.events);
}

topo::Fabric fat_tree(int hosts, int radix, int over) {
  topo::FatTreeParams p;
  p.tiers = 2;
  p.radix = radix;
  p.hosts = hosts;
  p.oversubscription = {{over, 1}};
  return topo::build_fat_tree(p);
}

} // namespace

TEST_CASE(
    "event models: a 4:1 fat-tree permutation (credit-bound senders) is identical under Fast and Plain") {
  const topo::Fabric f = fat_tree(32, 10, 4);
  PacketConfig cfg;
  const auto post = [](PacketNetwork& net) {
    for (HcaIndex s = 0; s < 32; ++s)
      net.post_at(Time::ps(1 + 7919 * s), {.src = s, .dst = (s * 7 + 5) % 32, .bytes = 512 << 10});
  };
  check_same(run(f, cfg, "ftree", EventModel::Fast, post), run(f, cfg, "ftree", EventModel::Plain, post));
}

TEST_CASE("event models: ring and incast are identical under Fast and Plain") {
  const topo::Fabric f = fat_tree(16, 8, 3);
  PacketConfig cfg;
  cfg.switch_buffer_bytes = 32768; // (the incast fills them: credit stalls upstream)
  SUBCASE("ring") {
    const auto post = [](PacketNetwork& net) {
      for (HcaIndex s = 0; s < 16; ++s)
        net.post_at(Time::ps(1 + 7919 * s), {.src = s, .dst = (s + 1) % 16, .bytes = 300'000});
    };
    check_same(run(f, cfg, "ftree", EventModel::Fast, post), run(f, cfg, "ftree", EventModel::Plain, post));
  }
  SUBCASE("incast of 15 into one host, staggered sizes") {
    const auto post = [](PacketNetwork& net) {
      for (HcaIndex s = 1; s < 16; ++s)
        net.post_at(Time::ps(1 + 7919 * s), {.src = s, .dst = 0, .bytes = 50'000u * s});
    };
    check_same(run(f, cfg, "ftree", EventModel::Fast, post), run(f, cfg, "ftree", EventModel::Plain, post));
  }
}

TEST_CASE("event models: bit errors and go-back-N are identical under Fast and Plain") {
  const topo::Fabric f = fat_tree(16, 8, 1);
  PacketConfig cfg;
  cfg.bit_error_rate = 2e-7;
  cfg.ack_timeout = Time::us(40);
  const auto post = [](PacketNetwork& net) {
    for (HcaIndex s = 0; s < 16; ++s)
      net.post_at(Time::ps(1 + 7919 * s), {.src = s, .dst = (s + 9) % 16, .bytes = 256 << 10});
  };
  const Outcome fast = run(f, cfg, "ftree", EventModel::Fast, post);
  check_same(fast, run(f, cfg, "ftree", EventModel::Plain, post));
  CHECK(fast.stats.retransmitted_packets > 0); // the case is exercised
}
