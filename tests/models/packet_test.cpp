// Packet engine validation: closed forms (the formula in each comment), conservation, credits, fairness,
// determinism and deadlock detection.
#include "models/packet/network.hpp"
#include "models/routing/routing.hpp"
#include "sim/deadlock.hpp"
#include "topology/generators.hpp"

#include "tests/models/packet_run.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace ibn;
using namespace ibn::pkt;

namespace {

topo::NodeId add(topo::Fabric& f, topo::NodeKind kind, const std::string& name, int radix, int tier,
                 int host = -1) {
  return ibn::test::add_node(f, kind, name, radix, tier, host);
}

/// `hosts` HCAs on one switch; cable i is `len_m[i]` metres of DAC.
topo::Fabric star(int hosts, const std::vector<double>& len_m,
                  topo::LinkSpeed speed = {topo::Generation::NDR, 4}) {
  topo::Fabric f;
  const auto sw = add(f, topo::NodeKind::Switch, "sw", std::max(hosts, 2), 1);
  for (int i = 0; i < hosts; ++i) {
    const auto h = add(f, topo::NodeKind::Hca, "h" + std::to_string(i), 1, 0, i);
    f.add_link(
        topo::make_link({h, 1}, {sw, i + 1}, speed, len_m[static_cast<std::size_t>(i)], topo::Medium::Dac));
  }
  return f;
}

using ibn::test::Run;

} // namespace

TEST_CASE("one packet through one switch takes exactly nic_tx + prop1 + t_switch + ser + prop2 + nic_rx") {
  const topo::Fabric f = star(2, {2.0, 3.0});
  PacketConfig cfg; // NDR 400 Gb/s: 20 ps per byte
  Run r(f, cfg);
  const MessageId id = r.net->post({.src = 0, .dst = 1, .bytes = 4096, .verb = Verb::Write});
  r.sim.run();
  const MessageRecord& m = r.net->message(id);
  REQUIRE(m.is_delivered);
  REQUIRE(m.is_acked);
  // wire = 4096 payload + 26 header + 16 RETH = 4138 B; ser = 4138 * 8 / 400e9 s = 82,760 ps.
  // prop1 = 2 m x 4,760 ps/m = 9,520 ps; prop2 = 3 m x 4,760 = 14,280 ps.
  const std::int64_t expected = 300'000 + 9'520 + 200'000 + 82'760 + 14'280 + 300'000;
  CHECK(m.delivered.count_ps() == expected);
  CHECK(m.first_tx.count_ps() == 300'000);
  // The ACK (26 + 4 = 30 B, ser 600 ps) returns the same way: acked = delivered - nic_rx + ack path + nic_rx
  // where the responder sends the ACK when the data tail arrives: tail + 14,280 + 200,000 + 600 + 9,520.
  const std::int64_t tail_at_receiver = expected - 300'000;
  CHECK(m.acked.count_ps() == tail_at_receiver + 14'280 + 200'000 + 600 + 9'520 + 300'000);
  CHECK(r.net->packets_in_flight() == 0);
}

TEST_CASE("a long transfer runs at rate x MTU/(MTU+overhead) within 0.1 %") {
  for (const auto speed :
       {topo::LinkSpeed{topo::Generation::NDR, 4}, topo::LinkSpeed{topo::Generation::FDR, 4},
        topo::LinkSpeed{topo::Generation::HDR, 2}}) {
    CAPTURE(speed.to_string());
    const topo::Fabric f = star(2, {3.0, 3.0}, speed);
    PacketConfig cfg;
    Run r(f, cfg);
    const std::uint64_t bytes = 64ull << 20; // 16,384 packets of 4096 B
    const MessageId id = r.net->post({.src = 0, .dst = 1, .bytes = bytes, .verb = Verb::Write});
    r.sim.run();
    const MessageRecord& m = r.net->message(id);
    REQUIRE(m.is_delivered);
    // Goodput = C x 4096 / (4096 + 26); the fixed latencies (nic, switch, cables) are removed by timing the
    // transfer from its first byte to its last: delivered - nic_rx - first_tx - prop - t_sw - prop.
    const double span_s = (m.delivered - m.first_tx).to_s() - 2 * 300e-9 - 200e-9 - 2 * 3 * 4.76e-9 + 300e-9;
    const double goodput = static_cast<double>(bytes) * 8 / span_s;
    const double expected = static_cast<double>(speed.rate_bps()) * 4096.0 / (4096.0 + 26.0);
    CHECK(std::abs(goodput / expected - 1.0) < 1e-3);
    CHECK(r.net->stats().payload_bytes_sent == bytes);
    CHECK(r.net->stats().payload_bytes_delivered == bytes);
  }
}

TEST_CASE("HCA injection cap: a long transfer runs at min(link, cap) x MTU/(MTU+overhead) within 0.1 %") {
  // 100 Gb/s (8e12/1e11 = 80 ps per byte, no remainder), 300 Gb/s (26.67 ps per byte: remainder carried)
  // and 800 Gb/s (above the 400 Gb/s link: no effect).
  for (const double cap_gbps : {100.0, 300.0, 800.0}) {
    CAPTURE(cap_gbps);
    const topo::Fabric f = star(2, {3.0, 3.0});
    PacketConfig cfg;
    cfg.hca_rate_gbps = cap_gbps;
    Run r(f, cfg);
    const std::uint64_t bytes = 64ull << 20;
    const MessageId id = r.net->post({.src = 0, .dst = 1, .bytes = bytes, .verb = Verb::Write});
    r.sim.run();
    const MessageRecord& m = r.net->message(id);
    REQUIRE(m.is_delivered);
    // Goodput = min(400, cap) x 4096 / (4096 + 26), from first byte to last as in the uncapped test above.
    const double span_s = (m.delivered - m.first_tx).to_s() - 2 * 300e-9 - 200e-9 - 2 * 3 * 4.76e-9 + 300e-9;
    const double goodput = static_cast<double>(bytes) * 8 / span_s;
    const double expected = std::min(400e9, cap_gbps * 1e9) * 4096.0 / (4096.0 + 26.0);
    CHECK(std::abs(goodput / expected - 1.0) < 1e-3);
    CHECK(r.net->stats().payload_bytes_delivered == bytes);
  }
  PacketConfig bad;
  bad.hca_rate_gbps = -1;
  CHECK_THROWS_AS(bad.validate(), InputError);
  PacketConfig c;
  c.apply_json(nlohmann::json{{"hca_rate_gbps", 200}}, "packet");
  CHECK(c.hca_rate_gbps == 200);
  CHECK(c.to_json().at("hca_rate_gbps").get<double>() == 200);
}

TEST_CASE("N:1 incast under credits: no loss, bottleneck fully busy, equal shares under round-robin") {
  const int n = 5; // four senders, one receiver (h4)
  const topo::Fabric f = star(n, std::vector<double>(n, 2.0));
  PacketConfig cfg;
  cfg.switch_buffer_bytes = 16384; // small buffers: credits, not buffer space, must carry the fairness
  Run r(f, cfg);
  const std::uint64_t bytes = 4ull << 20;
  std::vector<MessageId> ids;
  for (int s = 0; s < n - 1; ++s)
    ids.push_back(
        r.net->post({.src = static_cast<HcaIndex>(s), .dst = 4, .bytes = bytes, .verb = Verb::Write}));
  r.sim.run();
  const auto& st = r.net->stats();
  CHECK(st.packets_corrupted == 0);
  CHECK(st.retransmitted_packets == 0);
  CHECK(st.naks == 0);
  CHECK(st.payload_bytes_delivered == 4 * bytes);
  CHECK(st.min_credits_seen >= 0);
  // The switch port toward h4 is the bottleneck: busy for (4 x bytes) / goodput of the whole transfer.
  Time first = Time::max(), last;
  for (MessageId id : ids) {
    first = std::min(first, r.net->message(id).first_tx);
    last = std::max(last, r.net->message(id).delivered);
  }
  const auto ports = r.net->port_stats();
  const auto bott = std::find_if(ports.begin(), ports.end(), [&](const PortStats& p) {
    return f.node(p.node).kind == topo::NodeKind::Switch && p.port == 5;
  });
  REQUIRE(bott != ports.end());
  const double window = (last - first).to_s();
  CHECK(bott->busy.to_s() / window > 0.99);
  // Round-robin across inputs: every sender finishes within a few packet times of the others.
  std::vector<double> done;
  for (MessageId id : ids) done.push_back(r.net->message(id).delivered.to_us());
  const auto [lo, hi] = std::minmax_element(done.begin(), done.end());
  const double packet_us = 4138 * 8 / 400e9 * 1e6;
  CHECK(*hi - *lo < 5 * packet_us);
  // Senders were stalled on credits (they can inject 4x what the bottleneck drains).
  Time sender_stall;
  for (const auto& p : ports)
    if (f.node(p.node).kind == topo::NodeKind::Hca) sender_stall += p.credit_stall;
  CHECK(sender_stall > Time::zero());
}

TEST_CASE("conservation and credits on a fat-tree permutation, with and without adaptive routing") {
  topo::FatTreeParams p;
  p.tiers = 2;
  p.radix = 8;
  p.hosts = 32;
  p.oversubscription = {{3, 1}};
  const topo::Fabric f = topo::build_fat_tree(p);
  for (auto ar : {ArMode::Off, ArMode::PerPacket, ArMode::Bounded}) {
    CAPTURE(to_string(ar));
    PacketConfig cfg;
    cfg.ar_mode = ar;
    Run r(f, cfg, "ftree");
    const std::uint64_t bytes = 256 << 10;
    for (HcaIndex s = 0; s < 32; ++s) r.net->post({.src = s, .dst = (s * 7 + 5) % 32, .bytes = bytes});
    r.sim.run();
    const auto& st = r.net->stats();
    CHECK(st.payload_bytes_sent == 32 * bytes);
    CHECK(st.payload_bytes_delivered == 32 * bytes);
    CHECK(r.net->packets_in_flight() == 0);
    CHECK(st.min_credits_seen >= 0);
    for (std::size_t i = 0; i < r.net->num_messages(); ++i) {
      CHECK(r.net->message(static_cast<MessageId>(i)).is_delivered);
      CHECK(r.net->message(static_cast<MessageId>(i)).is_acked);
    }
  }
}

TEST_CASE("determinism: the same scenario and seed give identical timings") {
  auto once = [] {
    topo::FatTreeParams p;
    p.tiers = 2;
    p.radix = 8;
    p.hosts = 16;
    const topo::Fabric f = topo::build_fat_tree(p);
    PacketConfig cfg;
    cfg.ar_mode = ArMode::PerPacket;
    cfg.bit_error_rate = 1e-7; // exercises the RNG stream and go-back-N
    cfg.ack_timeout = Time::us(50);
    Run r(f, cfg, "ftree");
    for (HcaIndex s = 0; s < 16; ++s) r.net->post({.src = s, .dst = (s + 5) % 16, .bytes = 1 << 20});
    r.sim.run();
    std::vector<std::int64_t> t;
    for (std::size_t i = 0; i < r.net->num_messages(); ++i)
      t.push_back(r.net->message(static_cast<MessageId>(i)).delivered.count_ps());
    t.push_back(static_cast<std::int64_t>(r.net->stats().packets_corrupted));
    return t;
  };
  const auto a = once();
  CHECK(a == once());
  CHECK(a.back() > 0); // some packets were corrupted and recovered
}

TEST_CASE("bit errors: lost packets are recovered by go-back-N and every byte arrives once") {
  const topo::Fabric f = star(2, {3.0, 3.0});
  PacketConfig cfg;
  cfg.bit_error_rate = 2e-7; // ~0.7 % of 4 KiB packets
  cfg.ack_timeout = Time::us(20);
  Run r(f, cfg);
  const std::uint64_t bytes = 8ull << 20;
  const MessageId id = r.net->post({.src = 0, .dst = 1, .bytes = bytes});
  r.sim.run();
  const auto& st = r.net->stats();
  CHECK(st.packets_corrupted > 0);
  CHECK(st.retransmitted_packets > 0);
  CHECK(st.payload_bytes_delivered == bytes);
  CHECK(r.net->message(id).is_delivered);
  CHECK(r.net->message(id).is_acked);
}

TEST_CASE("RDMA READ, SEND and zero-byte WRITE_WITH_IMM complete") {
  const topo::Fabric f = star(2, {1.0, 1.0});
  Run r(f, PacketConfig{});
  const MessageId rd = r.net->post({.src = 0, .dst = 1, .bytes = 100000, .verb = Verb::Read});
  const MessageId sd = r.net->post({.src = 1, .dst = 0, .bytes = 5000, .verb = Verb::Send});
  const MessageId wi = r.net->post({.src = 0, .dst = 1, .bytes = 0, .verb = Verb::WriteImm});
  r.sim.run();
  CHECK(r.net->message(rd).is_delivered);
  CHECK(r.net->message(sd).is_acked);
  CHECK(r.net->message(wi).is_delivered);
  CHECK(r.net->stats().payload_bytes_delivered == 105000);
}

TEST_CASE("a cyclic routing with one VL on a switch ring is reported as a deadlock") {
  // Five switches in a ring, one HCA each; HCA i sends to HCA i+2: the unique minimal route goes two hops
  // clockwise, so every ring channel waits on the next one — a cycle in the channel dependency graph.
  topo::Fabric f;
  const int n = 5;
  std::vector<topo::NodeId> sw;
  for (int i = 0; i < n; ++i) sw.push_back(add(f, topo::NodeKind::Switch, "s" + std::to_string(i), 3, 1));
  for (int i = 0; i < n; ++i) {
    const auto h = add(f, topo::NodeKind::Hca, "h" + std::to_string(i), 1, 0, i);
    f.add_link(topo::make_link({h, 1}, {sw[static_cast<std::size_t>(i)], 1}, {}, 2, topo::Medium::Dac));
  }
  for (int i = 0; i < n; ++i)
    f.add_link(topo::make_link({sw[static_cast<std::size_t>(i)], 2},
                               {sw[static_cast<std::size_t>((i + 1) % n)], 3}, {}, 10, topo::Medium::Fiber));
  PacketConfig cfg;
  cfg.switch_buffer_bytes = 8448; // two full packets per input
  cfg.ack_timeout = Time::us(100);
  Run r(f, cfg, "minhop");
  for (HcaIndex s = 0; s < n; ++s) r.net->post({.src = s, .dst = (s + 2) % n, .bytes = 4 << 20});
  bool reported = false;
  try {
    r.sim.run();
  } catch (const DeadlockError& e) {
    reported = true;
    const std::string what = e.what();
    CAPTURE(what);
    CHECK(e.cycle().size() >= 2 * n); // each ring switch contributes an output and an input buffer
    CHECK(what.find("waits for credits") != std::string::npos);
    CHECK(e.packets_in_flight() > 0);
  }
  CHECK(reported);
}

TEST_CASE("VL arbitration: weights share a bottleneck in proportion, the high table goes first") {
  // Two senders on SL0 and SL1 (VL0, VL1) into one receiver. A 4 KiB packet is 65 credits (4138 B / 64).
  // Low table 0:65,1:195 serves one VL0 packet per three VL1 packets: VL1 finishes after
  // (S + S/3) / R and VL0 after 2S/R, so T1/T0 = 2/3. With VL1 in the high table T1/T0 = 1/2.
  auto ratio = [](const std::string& high, const std::string& low) {
    const topo::Fabric f = star(3, {2.0, 2.0, 2.0});
    PacketConfig cfg;
    cfg.num_vls = 2;
    cfg.vl_arb_high = parse_vl_arb(high, "high");
    cfg.vl_arb_low = parse_vl_arb(low, "low");
    Run r(f, cfg);
    const std::uint64_t bytes = 4ull << 20;
    const MessageId a = r.net->post({.src = 0, .dst = 2, .bytes = bytes, .sl = 0});
    const MessageId b = r.net->post({.src = 1, .dst = 2, .bytes = bytes, .sl = 1});
    r.sim.run();
    return r.net->message(b).delivered.to_s() / r.net->message(a).delivered.to_s();
  };
  CHECK(ratio("", "0:65,1:65") == doctest::Approx(1.0).epsilon(0.01));
  CHECK(ratio("", "0:65,1:195") == doctest::Approx(2.0 / 3.0).epsilon(0.02));
  CHECK(ratio("1:255", "0:65") == doctest::Approx(0.5).epsilon(0.02));
  PacketConfig bad;
  bad.num_vls = 2;
  bad.vl_arb_low = parse_vl_arb("0:4", "low");
  CHECK_THROWS_WITH_AS(bad.validate(), doctest::Contains("data VL 1 has no entry"), InputError);
  CHECK_THROWS_WITH_AS(parse_vl_arb("0-4", "packet.vl_arb_low"), doctest::Contains("packet.vl_arb_low"),
                       InputError);
}

TEST_CASE("bad messages and settings are refused") {
  const topo::Fabric f = star(2, {1.0, 1.0});
  Run r(f, PacketConfig{});
  CHECK_THROWS_AS(r.net->post({.src = 0, .dst = 0, .bytes = 1}), InputError);
  CHECK_THROWS_AS(r.net->post({.src = 0, .dst = 9, .bytes = 1}), InputError);
  PacketConfig bad;
  bad.mtu_bytes = 3000;
  CHECK_THROWS_WITH_AS(bad.validate(), doctest::Contains("packet.mtu_bytes"), InputError);
  PacketConfig c;
  CHECK_THROWS_WITH_AS(c.apply_json(nlohmann::json{{"colour", 1}}, "packet"),
                       doctest::Contains("packet.colour"), InputError);
  CHECK_THROWS_WITH_AS(c.apply_json(nlohmann::json{{"switch_latency_ns", -5}}, "packet"),
                       doctest::Contains("negative"), InputError);
}
