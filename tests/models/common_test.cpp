// models/common: the definitions both engines share — framing (wire bytes), device knobs, the route walk and
// the least-loaded AR choice.
#include "models/common/adaptive.hpp"
#include "models/common/device.hpp"
#include "models/common/framing.hpp"
#include "models/common/route.hpp"
#include "models/routing/routing.hpp"
#include "sim/error.hpp"
#include "topology/generators.hpp"

#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <vector>

using namespace ibn;

TEST_CASE("framing: a message's wire bytes are the sum of its packets'") {
  for (const std::uint32_t header : {common::kIbHeaderBytes, common::kRoceV2HeaderBytes}) {
    for (const std::uint32_t mtu : {256u, 1024u, 4096u}) {
      const common::Framing f{mtu, header, common::kRethBytes};
      const std::uint64_t m = mtu;
      for (const std::uint64_t payload : std::vector<std::uint64_t>{0, 1, m - 1, m, m + 1, 10 * m + 7}) {
        std::uint64_t sum = 0, packets = 0;
        std::uint64_t off = 0;
        do {
          sum += f.packet_wire_bytes(payload, off, true, false);
          ++packets;
          off += mtu;
        } while (off < payload);
        INFO("mtu " << mtu << " header " << header << " payload " << payload);
        CHECK(packets == f.packets(payload));
        CHECK(sum == f.write_wire_bytes(payload));
      }
    }
  }
  const common::Framing ib{4096, common::kIbHeaderBytes, common::kRethBytes};
  CHECK(ib.write_wire_bytes(0) == 26 + 16); // one header-only packet with its RETH
  CHECK(ib.write_wire_bytes(8192) == 8192 + 2 * 26 + 16);
  CHECK(ib.packet_wire_bytes(100, 0, true, true) == 100 + 26 + 16 + 4); // first and last: RETH + immediate
  CHECK(ib.packet_wire_bytes(8192, 4096, true, false) == 4096 + 26);    // a middle packet: no RETH
  CHECK(ib.max_packet_wire_bytes() == 4096 + 26 + 16 + 4);
  const common::Framing roce{4096, common::kRoceV2HeaderBytes, common::kRethBytes};
  CHECK(roce.header_efficiency() < ib.header_efficiency());
  CHECK(ib.header_efficiency() == doctest::Approx(4096.0 / 4122.0));
}

TEST_CASE("device knobs: where latencies are charged, the injection cap") {
  common::DeviceKnobs d;
  d.fec_latency = Time::ns(50);
  topo::Link l;
  l.latency = Time::ns(10);
  CHECK(d.cable_latency(l) == Time::ns(60));
  CHECK(d.link_latency(l, false) == Time::ns(60));
  CHECK(d.link_latency(l, true) == Time::ns(260)); // + the 200 ns switch latency
  CHECK(d.nic_latency() == Time::ns(600));
  CHECK(d.injection_gbps(400) == 400); // no cap
  d.hca_rate_gbps = 200;
  CHECK(d.injection_gbps(400) == 200);
  CHECK(d.injection_gbps(100) == 100); // a cap above the link changes nothing
}

TEST_CASE("least-loaded AR choice: smallest load, ties to the earlier port (static first)") {
  const std::array<routing::Port, 4> ports{2, 3, 5, 7};
  const routing::ArGroupView g(ports, 5); // order: 5 (static), 2, 3, 7
  std::array<std::uint64_t, 8> load{};
  auto by_port = [&](routing::Port p) { return load[p]; };
  CHECK(common::least_loaded(g, by_port) == 5); // all equal: the static port
  load = {0, 0, 4, 1, 0, 3, 0, 1};
  CHECK(common::least_loaded(g, by_port) == 3); // 3 and 7 both load 1: the earlier (3)
  load[7] = 0;
  CHECK(common::least_loaded(g, by_port) == 7);
  CHECK(common::least_loaded(routing::ArGroupView{}, by_port) == routing::kNoPort);
  const std::array<routing::Port, 1> one{4};
  int asked = 0;
  CHECK(common::least_loaded(routing::ArGroupView(one, 4), [&](routing::Port) {
          ++asked;
          return std::uint64_t{0};
        }) == 4);
  CHECK(asked == 0);
  // An idle port ends the search (nothing is below zero, ties keep it): same choice, fewer loads asked.
  std::vector<routing::Port> seen;
  auto watched = [&](routing::Port p) {
    seen.push_back(p);
    return load[p];
  };
  load = {0, 0, 4, 0, 0, 3, 0, 1}; // 5 busy, 2 busy, 3 idle, 7 busy
  CHECK(common::least_loaded(g, watched) == 3);
  CHECK(seen == std::vector<routing::Port>{5, 2, 3});
  seen.clear();
  load[5] = 0; // the static port idle: only it is asked
  CHECK(common::least_loaded(g, watched) == 5);
  CHECK(seen == std::vector<routing::Port>{5});
}

TEST_CASE("route walk: the static route equals the routing tables' route, hop by hop") {
  topo::FatTreeParams p;
  p.tiers = 2;
  p.radix = 8;
  const topo::Fabric f = topo::build_fat_tree(p);
  const routing::RoutingTables t = routing::route_ftree(f);
  for (routing::HcaIndex s = 0; s < t.num_hcas(); s += 3)
    for (routing::HcaIndex d = 0; d < t.num_hcas(); d += 5) {
      if (s == d) continue;
      const auto hops = common::static_route(f, t, s, d);
      const auto links = t.route(s, d);
      REQUIRE(hops.size() == links.size());
      topo::NodeId at = t.hca_nodes()[s];
      for (std::size_t i = 0; i < hops.size(); ++i) {
        CHECK(hops[i].link == links[i]);
        CHECK(hops[i].from == at); // each hop is transmitted by the node the previous one reached
        at = f.link(hops[i].link).other(at);
      }
      CHECK(at == t.hca_nodes()[d]);
    }
  // A switch that answers no port: InputError naming the switch.
  CHECK_THROWS_AS(common::walk_route(
                      f, t, 0, 1, [](std::uint32_t, topo::NodeId) { return routing::kNoPort; },
                      [](const common::Hop&) {}),
                  InputError);
}
