// The packet engine's components alone, without a Simulation or a fabric: the delay line, the packet pool's
// FIFOs, a switch output's VOQs and VL arbiter (on a plain port struct), the AR policy (with a made-up
// load per port) and the RC QP state machine.
#include "models/packet/adaptive_routing.hpp"
#include "models/packet/delay_line.hpp"
#include "models/packet/packet.hpp"
#include "models/packet/switch_port.hpp"
#include "models/packet/transport.hpp"
#include "topology/generators.hpp"

#include <doctest/doctest.h>

#include <array>
#include <vector>

using namespace ibn;
using namespace ibn::pkt;

TEST_CASE("delay line: FIFO order, front time, growth, and sorted inserts after equal times") {
  DelayLine d;
  CHECK(d.empty());
  CHECK(d.front_t() == Time::max());
  // Grows past its first capacity (8) with the order kept, while items are popped from the front (wrapping).
  std::uint32_t next_out = 0;
  for (std::uint32_t i = 0; i < 40; ++i) {
    d.push_back({Time::ns(i), i, 2 * i});
    if (i % 3 == 2) {
      CHECK(d.front().a == next_out);
      d.pop_front();
      ++next_out;
    }
  }
  CHECK(d.size() == 40 - next_out);
  CHECK(d.front_t() == Time::ns(next_out));
  for (std::uint32_t k = 0; k < d.size(); ++k) CHECK(d.at(k).b == 2 * (next_out + k));
  while (!d.empty()) d.pop_front();
  CHECK(d.front_t() == Time::max());

  // insert_sorted: ordered by time; an item goes after those with the same time (first come, first served).
  DelayLine s;
  s.insert_sorted({Time::ns(10), 1, 0});
  s.insert_sorted({Time::ns(30), 2, 0});
  s.insert_sorted({Time::ns(20), 3, 0});
  s.insert_sorted({Time::ns(10), 4, 0});
  s.insert_sorted({Time::ns(5), 5, 0});
  s.insert_sorted({Time::ns(30), 6, 0});
  const std::vector<std::uint32_t> want{5, 1, 4, 3, 2, 6};
  REQUIRE(s.size() == want.size());
  CHECK(s.front_t() == Time::ns(5));
  for (std::uint32_t k = 0; k < s.size(); ++k) CHECK(s.at(k).a == want[k]);
  // After an insert inside, pushes at the back still see the right last time.
  s.insert_sorted({Time::ns(25), 7, 0});
  CHECK(s.at(4).a == 7);
  CHECK(s.at(5).a == 2);
  s.insert_sorted({Time::ns(30), 8, 0});
  REQUIRE(s.size() == 8);
  CHECK(s.at(6).a == 6);
  CHECK(s.at(7).a == 8);
}

TEST_CASE("packet pool: FIFOs through the sentinel, reuse of released packets, packets in flight") {
  PacketPool pool;
  Fifo f;
  CHECK(f.empty());
  std::vector<std::uint32_t> ids;
  for (int i = 0; i < 5; ++i) {
    const std::uint32_t p = pool.alloc();
    CHECK(p != kSentinelPacket);
    pool[p].psn = static_cast<std::uint32_t>(100 + i);
    pool.push(f, p);
    ids.push_back(p);
  }
  CHECK(pool.in_flight() == 5);
  for (int i = 0; i < 5; ++i) {
    REQUIRE(!f.empty());
    const std::uint32_t p = pool.pop(f);
    CHECK(p == ids[static_cast<std::size_t>(i)]);
    CHECK(pool[p].psn == static_cast<std::uint32_t>(100 + i));
    pool.release(p);
  }
  CHECK(f.empty());
  CHECK(f.tail == kSentinelPacket);
  CHECK(pool.in_flight() == 0);
  CHECK(pool.peak_in_flight() == 5);
  // A released packet comes back fresh.
  const std::uint32_t again = pool.alloc();
  CHECK(pool[again].psn == 0);
  // Two FIFOs interleaved stay separate.
  Fifo a, b;
  const std::uint32_t x = pool.alloc(), y = pool.alloc(), z = pool.alloc();
  pool.push(a, x);
  pool.push(b, y);
  pool.push(a, z);
  CHECK(pool.pop(a) == x);
  CHECK(pool.pop(b) == y);
  CHECK(b.empty());
  CHECK(pool.pop(a) == z);
  CHECK(a.empty());
}

namespace {
/// The fields the arbiter needs (switch_port.hpp), without the rest of a transmitter.
struct TestPort {
  static constexpr int kVls = 2;
  int radix = 4;
  std::uint16_t words = 1;
  std::vector<Fifo> voq_store = std::vector<Fifo>(kVls * 4);
  std::vector<std::uint64_t> nonempty_store = std::vector<std::uint64_t>(kVls, 0);
  Fifo* voq = voq_store.data();
  std::uint64_t* nonempty = nonempty_store.data();
  std::array<std::int32_t, kMaxVls> credits{};
  std::array<std::uint16_t, kMaxVls> rr_input{};
  ArbPosition high, low;
  std::uint64_t high_bytes = 0;
  std::uint64_t queued_bytes = 0, queued_packets = 0;
  TestPort() {
    credits.fill(1000);
    rr_input.fill(static_cast<std::uint16_t>(radix - 1));
  }
};

std::uint32_t queue(TestPort& port, PacketPool& pool, int vl, unsigned input, std::uint32_t wire,
                    std::uint32_t tag) {
  const std::uint32_t p = pool.alloc();
  pool[p].wire = wire;
  pool[p].psn = tag;
  voq_push(port, pool, p, vl, input);
  return p;
}
} // namespace

TEST_CASE("switch port: round-robin across inputs, skipping heads that do not fit the credits") {
  PacketConfig cfg; // one VL, the default table: one low entry
  VlArbiter arb(cfg);
  CHECK(arb.single_vl() == 0);
  PacketPool pool;
  TestPort port;
  arb.init(port.high, port.low);
  // Inputs 0, 2 and 3 each hold two packets; input 2's are too large for the credits at first.
  for (unsigned in : {0u, 2u, 3u})
    for (std::uint32_t k = 0; k < 2; ++k) queue(port, pool, 0, in, in == 2 ? 4096 : 1024, in * 10 + k);
  CHECK(port.queued_packets == 6);
  port.credits[0] = 20; // 1,280 bytes: 1 KiB packets fit, 4 KiB ones do not
  std::vector<std::uint32_t> order;
  for (int i = 0; i < 4; ++i) {
    const std::uint32_t p = arb.select(port, pool);
    REQUIRE(p != kNil);
    order.push_back(pool[p].psn);
  }
  CHECK(order == std::vector<std::uint32_t>{0, 30, 1, 31}); // round-robin 0, 3, 0, 3; input 2 skipped
  CHECK(arb.select(port, pool) == kNil);                    // only input 2's large packets are left
  port.credits[0] = 64;
  CHECK(pool[arb.select(port, pool)].psn == 20);
  CHECK(pool[arb.select(port, pool)].psn == 21);
  CHECK(port.queued_packets == 0);
  CHECK(port.queued_bytes == 0);
  CHECK(port.nonempty[0] == 0);
}

TEST_CASE("switch port: VL arbitration by weight, and the high table first up to its limit") {
  PacketConfig cfg;
  cfg.num_vls = 2;
  cfg.vl_arb_low = {{0, 32}, {1, 16}}; // 2 KiB, then 1 KiB per turn
  VlArbiter arb(cfg);
  CHECK(arb.single_vl() == -1);
  PacketPool pool;
  TestPort port;
  arb.init(port.high, port.low);
  for (std::uint32_t k = 0; k < 6; ++k) {
    queue(port, pool, 0, 0, 1024, k);       // VL0: tags 0..5
    queue(port, pool, 1, 1, 1024, 100 + k); // VL1: tags 100..105
  }
  std::vector<std::uint32_t> order;
  for (int i = 0; i < 6; ++i) order.push_back(pool[arb.select(port, pool)].psn);
  // Each 1,024-byte packet spends 16 units: VL0 gets two per turn, VL1 one.
  CHECK(order == std::vector<std::uint32_t>{0, 1, 100, 2, 3, 101});

  // A high table holding VL1 goes first, but after vl_high_limit x 4 KiB of it one low packet may go.
  PacketConfig hc;
  hc.num_vls = 2;
  hc.vl_arb_high = {{1, 255}};
  hc.vl_arb_low = {{0, 255}};
  hc.vl_high_limit = 1; // 4,096 bytes
  VlArbiter ha(hc);
  TestPort hp;
  ha.init(hp.high, hp.low);
  for (std::uint32_t k = 0; k < 4; ++k) {
    queue(hp, pool, 0, 0, 2048, k);
    queue(hp, pool, 1, 1, 2048, 100 + k);
  }
  std::vector<std::uint32_t> h;
  for (int i = 0; i < 8; ++i) h.push_back(pool[ha.select(hp, pool)].psn);
  CHECK(h == std::vector<std::uint32_t>{100, 101, 0, 102, 103, 1, 2, 3});
}

namespace {
Msg message(MessageId id, std::uint64_t bytes, std::uint32_t mtu, Verb verb = Verb::Write) {
  Msg m;
  m.rec.id = id;
  m.rec.spec.bytes = bytes;
  m.rec.spec.verb = verb;
  m.npkts = bytes == 0 ? 1 : static_cast<std::uint32_t>((bytes + mtu - 1) / mtu);
  return m;
}
/// Sends every packet of the message at the QP's send position (as the HCA would, credits permitting).
void send_message(RcQp& qp, std::vector<Msg>& msgs, std::uint32_t mtu) {
  const std::uint32_t mi = qp.find_send_message(msgs);
  REQUIRE(mi != kNil);
  Msg& m = msgs[mi];
  if (!m.psn_assigned) {
    m.first_psn = qp.next_psn;
    m.psn_assigned = true;
  }
  bool last = false;
  while (!last) {
    const std::uint64_t left = m.rec.spec.bytes - qp.send_off;
    last = left <= mtu;
    qp.sent_data(static_cast<std::uint32_t>(std::min<std::uint64_t>(left, mtu)), last);
  }
}
} // namespace

TEST_CASE("RC QP, responder: in-order ACK coalescing, one NAK per gap, re-ACK of duplicates") {
  RcQp qp;
  // Every 4th packet and at once when asked (a message's last packet).
  CHECK(qp.receive(0, false) == Rx::InOrder);
  CHECK(!qp.advance(false, 4));
  CHECK(qp.receive(1, false) == Rx::InOrder);
  CHECK(!qp.advance(false, 4));
  CHECK(qp.receive(2, false) == Rx::InOrder);
  CHECK(qp.advance(true, 4)); // last of a message
  CHECK(qp.epsn == 3);
  // A gap: PSN 5 while 3 is expected: one NAK, then silence until the gap closes.
  CHECK(qp.receive(5, false) == Rx::SendNak);
  CHECK(qp.receive(6, false) == Rx::Dropped);
  CHECK(qp.receive(1, false) == Rx::Duplicate);
  CHECK(qp.receive(3, false) == Rx::InOrder);
  qp.advance(false, 4);
  CHECK(!qp.nak_sent);
  CHECK(qp.receive(5, false) == Rx::SendNak); // a new gap NAKs again
}

TEST_CASE("RC QP, responder: out-of-order placement jumps the expected PSN and ACKs at once") {
  RcQp qp;
  CHECK(qp.receive(2, true) == Rx::Placed);
  CHECK(qp.receive(1, true) == Rx::Placed);
  CHECK(qp.receive(1, true) == Rx::Dropped); // placed already
  CHECK(qp.receive(0, true) == Rx::InOrder);
  CHECK(qp.advance(false, 16)); // the expected PSN jumped over 1 and 2: ACK now
  CHECK(qp.epsn == 3);
  CHECK(qp.ooo.empty());
}

TEST_CASE("RC QP, requester: PSNs, cumulative ACKs complete messages, go-back-N repositions mid-message") {
  constexpr std::uint32_t mtu = 1000;
  std::vector<Msg> msgs{message(0, 2500, mtu), message(1, 1000, mtu), message(2, 3000, mtu)};
  RcQp qp;
  for (MessageId i = 0; i < 3; ++i) qp.sendq.push_back(i);
  send_message(qp, msgs, mtu); // PSN 0..2
  send_message(qp, msgs, mtu); // PSN 3
  send_message(qp, msgs, mtu); // PSN 4..6
  CHECK(qp.next_psn == 7);
  CHECK(qp.max_psn_sent == 7);
  CHECK(qp.find_send_message(msgs) == kNil);
  CHECK(msgs[2].first_psn == 4);

  std::vector<MessageId> acked;
  auto on_acked = [&](MessageId id) { acked.push_back(id); };
  CHECK(qp.ack(1));
  qp.complete_acked(msgs, mtu, on_acked);
  CHECK(acked.empty()); // message 0 ends at PSN 2
  CHECK(!qp.ack(0));    // stale
  CHECK(qp.ack(3));
  qp.complete_acked(msgs, mtu, on_acked);
  CHECK(acked == std::vector<MessageId>{0, 1});
  CHECK(qp.sendq.size() == 1);
  CHECK(qp.unacked());

  // A NAK for PSN 5 (the second packet of message 2): resend from there.
  qp.reposition(msgs, mtu, 5);
  CHECK(qp.next_psn == 5);
  CHECK(qp.send_pos == 0);
  CHECK(qp.send_off == 1000);
  CHECK(qp.sent_data(1000, false)); // PSN 5 again: a resend
  CHECK(qp.sent_data(1000, true));  // PSN 6 again
  CHECK(qp.ack(6));
  qp.complete_acked(msgs, mtu, on_acked);
  CHECK(acked == std::vector<MessageId>{0, 1, 2});
  CHECK(!qp.unacked());
}

TEST_CASE("AR policy: least loaded port of the group, ties to the static port, bounded keeps its choice") {
  topo::FatTreeParams fp;
  fp.tiers = 2;
  fp.radix = 8;
  fp.hosts = 16;
  const topo::Fabric f = topo::build_fat_tree(fp);
  const auto tables = routing::builtin_routing().get("ftree").factory(f, {});
  const topo::NodeId leaf = *f.find_node("leaf-0");
  const routing::HcaIndex dst = 15; // on another leaf: the whole up group
  const routing::ArGroupView g = tables.ar_group(leaf, dst);
  REQUIRE(g.size() >= 3);
  std::vector<std::uint64_t> load(static_cast<std::size_t>(fp.radix) + 1, 100);
  auto by_load = [&](routing::Port p) { return load[p]; };

  ArPolicy off(ArMode::Off, Time::us(2));
  load[g[0]] = 1000;
  CHECK(off.choose(tables, leaf, dst, Time::zero(), by_load) == tables.next_hop(leaf, dst));

  ArPolicy per_packet(ArMode::PerPacket, Time::us(2));
  load[g[0]] = 100;
  CHECK(per_packet.choose(tables, leaf, dst, Time::zero(), by_load) == g[0]); // all equal: the static port
  load[g[0]] = 500;
  CHECK(per_packet.choose(tables, leaf, dst, Time::zero(), by_load) == g[1]); // tie among the rest: group order
  load[g[2]] = 10;
  CHECK(per_packet.choose(tables, leaf, dst, Time::zero(), by_load) == g[2]);

  ArPolicy bounded(ArMode::Bounded, Time::us(2));
  CHECK(bounded.choose(tables, leaf, dst, Time::zero(), by_load) == g[2]);
  load[g[2]] = 1000;
  load[g[1]] = 1;
  CHECK(bounded.choose(tables, leaf, dst, Time::us(1), by_load) == g[2]); // within the window: kept
  CHECK(bounded.choose(tables, leaf, dst, Time::us(2), by_load) == g[1]); // window over: chosen again
  // A destination reached through one port only has nothing to choose.
  const routing::ArGroupView one = tables.ar_group(leaf, 1);
  if (one.size() == 1) CHECK(per_packet.choose(tables, leaf, 1, Time::zero(), by_load) == one.static_port());
}
