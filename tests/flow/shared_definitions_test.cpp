// The two engines share one definition of framing (wire bytes) and of the device knobs (models/common,
// issue 15 item 3): these tests fail when the packet engine and the flow engine stop agreeing on them. The
// flow engine runs in a forked child (SimGrid: one engine per process), configured from the same
// PacketConfig through flow::flow_config_from, as the runner does.
#include "models/common/device.hpp"
#include "models/common/framing.hpp"
#include "models/engine.hpp"
#include "models/flow/flow_engine.hpp"
#include "models/packet/config.hpp"
#include "models/packet/packet_engine.hpp"
#include "models/routing/routing.hpp"
#include "sim/child_processes.hpp"
#include "topology/generators.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

using namespace ibn;
using nlohmann::json;

// One declaration of each shared knob: both configurations are the common structs, not copies of them.
static_assert(std::is_base_of_v<common::Framing, pkt::PacketConfig>);
static_assert(std::is_base_of_v<common::DeviceKnobs, pkt::PacketConfig>);
static_assert(std::is_base_of_v<common::Framing, flow::FlowConfig>);
static_assert(std::is_base_of_v<common::DeviceKnobs, flow::FlowConfig>);

namespace {

struct Tree {
  topo::Fabric fabric;
  routing::RoutingTables tables;
};

/// 2-tier fat-tree of 8-port switches (4 HCAs per leaf): HCA 0 -> HCA 5 crosses leaf, spine, leaf.
Tree tree() {
  topo::FatTreeParams p;
  p.tiers = 2;
  p.radix = 8;
  topo::Fabric f = topo::build_fat_tree(p);
  routing::RoutingTables t = routing::route_ftree(f);
  return {std::move(f), std::move(t)};
}

/// A directed cable end's figures, engine-neutral.
using LinkRow = std::tuple<int, int, std::uint64_t, std::uint64_t>; // from tier, to tier, wire, payload

struct Run {
  std::int64_t delivered_ps = 0;
  std::vector<LinkRow> links;
};

json to_json(const Run& r) {
  json links = json::array();
  for (const auto& [a, b, w, p] : r.links) links.push_back({a, b, w, p});
  return {{"delivered_ps", r.delivered_ps}, {"links", links}};
}
Run from_json(const json& j) {
  Run r;
  r.delivered_ps = j["delivered_ps"].get<std::int64_t>();
  for (const auto& l : j["links"])
    r.links.emplace_back(l[0].get<int>(), l[1].get<int>(), l[2].get<std::uint64_t>(),
                         l[3].get<std::uint64_t>());
  return r;
}

/// One message of `bytes` from `src` to `dst` on engine `e`: its delivery time and every link's counters.
Run one_message(eng::Engine& e, routing::HcaIndex src, routing::HcaIndex dst, std::uint64_t bytes) {
  Run r;
  e.send({src, dst, bytes, 0, 0}, [&](Time t) { r.delivered_ps = t.count_ps(); });
  e.run();
  for (const eng::LinkRecord& l : e.report().links)
    r.links.emplace_back(l.from_tier, l.to_tier, l.wire_bytes, l.payload_bytes);
  return r;
}

/// The same message on both engines: {packet, flow}.
std::pair<Run, Run> both(const Tree& t, const pkt::PacketConfig& pc, std::uint64_t bytes) {
  Run packet;
  {
    pkt::PacketEngine pe(t.fabric, t.tables, pc, 1);
    packet = one_message(pe, 0, 5, bytes);
  }
  const Run flow = from_json(json::parse(run_in_child_process([&] {
    flow::FlowEngine fe(t.fabric, t.tables, flow::flow_config_from(pc));
    return to_json(one_message(fe, 0, 5, bytes)).dump();
  })));
  return {packet, flow};
}

/// The links that carried `wire` bytes, sorted.
std::vector<LinkRow> route_links(const Run& r, std::uint64_t wire) {
  std::vector<LinkRow> out;
  for (const LinkRow& l : r.links)
    if (std::get<2>(l) == wire) out.push_back(l);
  std::sort(out.begin(), out.end());
  return out;
}

pkt::PacketConfig config(const std::string& link_layer, std::uint32_t mtu) {
  pkt::PacketConfig pc;
  pc.apply_json({{"link_layer", link_layer}, {"mtu_bytes", mtu}}, "test");
  return pc;
}

} // namespace

TEST_CASE("shared framing: both engines put the same wire bytes of one message on each link (IB and RoCE)") {
  const Tree t = tree();
  for (const std::string ll : {"ib", "rocev2"}) {
    for (const std::uint32_t mtu : {1024u, 4096u}) {
      const pkt::PacketConfig pc = config(ll, mtu);
      CHECK(pc.header_bytes == (ll == "ib" ? common::kIbHeaderBytes : common::kRoceV2HeaderBytes));
      for (const std::uint64_t bytes :
           {std::uint64_t{0}, std::uint64_t{mtu}, std::uint64_t{3ull * mtu + 100}}) {
        CAPTURE(ll);
        CAPTURE(mtu);
        CAPTURE(bytes);
        const auto [packet, flow] = both(t, pc, bytes);
        // The route's links (HCA -> leaf -> spine -> leaf -> HCA) carry the message's wire bytes, as
        // common::Framing::write_wire_bytes sums them, and its payload, on both engines alike.
        const std::uint64_t wire = pc.write_wire_bytes(bytes);
        const auto pd = route_links(packet, wire);
        const auto fd = route_links(flow, wire);
        REQUIRE(fd.size() == 4);
        CHECK(pd == fd);
        for (const LinkRow& l : fd) CHECK(std::get<3>(l) == bytes);
        // The flow engine has no ACKs: the other links carry nothing. The packet engine's ACKs carry headers
        // and an AETH, no payload.
        for (const LinkRow& l : flow.links)
          if (std::get<2>(l) != wire) CHECK(l == LinkRow{std::get<0>(l), std::get<1>(l), 0, 0});
        for (const LinkRow& l : packet.links)
          if (std::get<2>(l) != wire) {
            CHECK(std::get<3>(l) == 0);
            CHECK(std::get<2>(l) % (pc.header_bytes + pc.ack_payload_bytes) == 0);
          }
      }
    }
  }
}

TEST_CASE("shared device knobs: a one-packet message takes the same time on both engines") {
  // nic_tx + the cables' propagation and FEC + one switch latency per switch + one serialization + nic_rx, on
  // both engines (cut-through with equal link rates: the packet pays one serialization; the flow engine
  // charges the route's latency once and the wire bytes at the bottleneck rate). SimGrid's double seconds
  // round to the ps: within 2 ps.
  const Tree t = tree();
  for (const std::string ll : {"ib", "rocev2"}) {
    pkt::PacketConfig pc = config(ll, 4096);
    pc.switch_latency = Time::ns(130);
    pc.fec_latency = Time::ns(50);
    pc.nic_tx_latency = Time::ns(250);
    pc.nic_rx_latency = Time::ns(420);
    CAPTURE(ll);
    const auto [packet, flow] = both(t, pc, 1000);
    CHECK(std::llabs(packet.delivered_ps - flow.delivered_ps) <= 2);
    // And the knobs matter (the test would see a divergence): the defaults give another time.
    const auto [packet_default, flow_default] = both(t, config(ll, 4096), 1000);
    CHECK(std::llabs(packet_default.delivered_ps - flow_default.delivered_ps) <= 2);
    CHECK(packet_default.delivered_ps != packet.delivered_ps);
  }
}

TEST_CASE("shared device knobs: an HCA rate cap binds both engines alike") {
  // The packet engine spaces packets wire x 8 / cap apart and sends the last at the link rate; the flow
  // engine sends the whole message at the cap: they differ by less than one packet at the cap.
  const Tree t = tree();
  pkt::PacketConfig pc;
  const double link_gbps = t.fabric.link(t.tables.hca_link(0)).speed.rate_gbps();
  pc.hca_rate_gbps = link_gbps / 4;
  const std::uint64_t bytes = 1ull << 20;
  const auto [packet, flow] = both(t, pc, bytes);
  const double one_packet_ps = pc.max_packet_wire_bytes() * 8.0 / (pc.hca_rate_gbps * 1e9) * 1e12;
  CHECK(std::abs(static_cast<double>(packet.delivered_ps - flow.delivered_ps)) <= one_packet_ps);
  // Uncapped, the message is about 4 times faster on both.
  const auto [packet_free, flow_free] = both(t, pkt::PacketConfig{}, bytes);
  CHECK(packet.delivered_ps > 3 * packet_free.delivered_ps);
  CHECK(flow.delivered_ps > 3 * flow_free.delivered_ps);
}

TEST_CASE("host path: every host knob moves both engines by its closed form") {
  // One 1 MiB message HCA 0 -> HCA 5 (leaf, spine, leaf), alone, on both engines. With a host knob set, its
  // time moves from the defaults' by
  //   delta = host latency per message + wire x 8 x (1/r - 1/L)
  // L the cable's rate, r the injection rate the knob gives (wire Gb/s; w = (4096 + 26)/4096 wire bytes per
  // payload byte; PCIe payload rate per lane = GT/s x encoding x 256/(256 + 24) x 0.95 for Gen3-5
  // (128b/130b), GT/s x 236/256 x 256/(256 + 16) for Gen6 FLITs):
  //   pcie 4 x16: r = min(L, 16 x 16 x 128/130 x 256/280 x 0.95 x w) = 218.9 w   (Gen3 x8: 54.7 w, Gen6 x4:
  //   222.1 w) gpudirect off: r = 1/(1/L + 1/h), h = host_copy_gbps x w or L; + host_staging_latency (1 us)
  //   cross_numa: r = L x cross_numa_bw_factor (0.5); + cross_numa_latency (200 ns)
  //   sriov: r = L x sriov_rate_factor (1); + sriov_latency (100 ns)
  // The flow engine sends the message at r (within 1 ns of the form); the packet engine paces packets at r
  // and sends the last at L: within one packet at r. A knob that an engine ignores leaves its time unchanged
  // and fails the check; a host knob without a case here fails the first check.
  const Tree t = tree();
  const double L = t.fabric.link(t.tables.hca_link(0)).speed.rate_gbps();
  const double w = (4096.0 + 26.0) / 4096.0;
  const double gen4x16 = 16 * 16 * (128.0 / 130.0) * (256.0 / 280.0) * 0.95 * w;
  const double gen3x8 = 8 * 8 * (128.0 / 130.0) * (256.0 / 280.0) * 0.95 * w;
  const double gen6x4 = 64 * 4 * (236.0 / 256.0) * (256.0 / 272.0) * w;
  auto series = [](double a, double b) { return 1.0 / (1.0 / a + 1.0 / b); };
  struct Case {
    json set;          // packet knobs
    double rate_gbps;  // r
    double latency_ns; // host latency per message
    std::vector<std::string> covers;
  };
  const std::vector<Case> cases = {
      {{{"pcie_gen", 4}}, std::min(L, gen4x16), 0, {"pcie_gen"}},
      {{{"pcie_gen", 3}, {"pcie_lanes", 8}}, std::min(L, gen3x8), 0, {"pcie_gen", "pcie_lanes"}},
      {{{"pcie_gen", 6}, {"pcie_lanes", 4}}, std::min(L, gen6x4), 0, {"pcie_gen", "pcie_lanes"}},
      {{{"gpudirect", false}}, series(L, L), 1000, {"gpudirect"}},
      {{{"gpudirect", false}, {"host_copy_gbps", 100}}, series(L, 100 * w), 1000, {"host_copy_gbps"}},
      {{{"gpudirect", false}, {"host_staging_latency_ns", 5000}},
       series(L, L),
       5000,
       {"host_staging_latency_ns"}},
      {{{"cross_numa", true}}, L * 0.5, 200, {"cross_numa"}},
      {{{"cross_numa", true}, {"cross_numa_bw_factor", 0.8}}, L * 0.8, 200, {"cross_numa_bw_factor"}},
      {{{"cross_numa", true}, {"cross_numa_latency_ns", 700}}, L * 0.5, 700, {"cross_numa_latency_ns"}},
      {{{"sriov", true}}, L, 100, {"sriov"}},
      {{{"sriov", true}, {"sriov_rate_factor", 0.5}}, L * 0.5, 100, {"sriov_rate_factor"}},
      {{{"sriov", true}, {"sriov_latency_ns", 900}}, L, 900, {"sriov_latency_ns"}},
  };
  std::set<std::string> covered;
  for (const Case& c : cases) covered.insert(c.covers.begin(), c.covers.end());
  for (const std::string& name : pkt::host_knob_names()) {
    CAPTURE(name);
    CHECK(covered.count(name) == 1);
  }
  const std::uint64_t bytes = 1ull << 20;
  const pkt::PacketConfig defaults;
  const double wire = static_cast<double>(defaults.write_wire_bytes(bytes));
  const auto [packet0, flow0] = both(t, defaults, bytes);
  for (const Case& c : cases) {
    CAPTURE(c.set.dump());
    pkt::PacketConfig pc;
    pc.apply_json(c.set, "test");
    CHECK(pc.injection_gbps(L, w) == doctest::Approx(c.rate_gbps).epsilon(1e-12));
    const double expected_ps = c.latency_ns * 1e3 + wire * 8 * (1 / c.rate_gbps - 1 / L) * 1e3;
    const double packet_at_r_ps = pc.max_packet_wire_bytes() * 8.0 / c.rate_gbps * 1e3;
    const auto [packet, flow] = both(t, pc, bytes);
    const double dp = static_cast<double>(packet.delivered_ps - packet0.delivered_ps);
    const double df = static_cast<double>(flow.delivered_ps - flow0.delivered_ps);
    CAPTURE(expected_ps);
    CAPTURE(dp);
    CAPTURE(df);
    CHECK(expected_ps >= 1e5); // every case moves the time by at least 100 ns
    CHECK(std::abs(df - expected_ps) <= 1000);
    CHECK(std::abs(dp - expected_ps) <= packet_at_r_ps + 2);
  }
}
