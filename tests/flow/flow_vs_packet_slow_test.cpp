// Packet engine vs flow engine, larger uncongested ring AllReduces (issue 7 item 3; quick cases in
// flow_vs_packet_test.cpp): within 3 % on non-blocking 2- and 3-tier fat-trees, linear placement.
#include "tests/flow/flow_vs_packet.hpp"

#include <doctest/doctest.h>

#include <cmath>

using namespace ibn;

namespace {
void check_ring(int tiers, int radix, std::uint32_t ranks, std::uint64_t size) {
  const xval::Tree tree = xval::fat_tree(tiers, radix, ranks);
  REQUIRE(tree.tables.num_hcas() >= ranks);
  const auto hcas = xval::linear(ranks);
  const xval::Comparison c =
      xval::compare(tree.fabric, tree.tables, pkt::PacketConfig{}, [&](eng::Engine& e) {
        return static_cast<double>(xval::ring_allreduce(e, hcas, size).count_ps());
      });
  MESSAGE(tiers << "-tier radix " << radix << ", ring " << ranks << " ranks, " << (size >> 20)
                << " MiB: packet " << c.packet_ps * 1e-6 << " us, flow " << c.flow_ps * 1e-6 << " us ("
                << c.rel() * 100 << " %, " << c.flow_path << ")");
  CHECK(std::abs(c.rel()) < 0.03);
}
} // namespace

TEST_CASE("flow vs packet (slow): ring AllReduce 16/64/256 MiB, 32 ranks, 2-tier tree, within 3 %") {
  for (const std::uint64_t mib : {16, 64, 256}) {
    CAPTURE(mib);
    check_ring(2, 8, 32, mib << 20);
  }
}

TEST_CASE("flow vs packet (slow): ring AllReduce 64 MiB, 64 ranks, 3-tier tree, within 3 %") {
  check_ring(3, 8, 64, 64ull << 20);
}
