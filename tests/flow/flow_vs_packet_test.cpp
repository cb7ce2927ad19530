// Packet engine vs flow engine through eng::Engine (issue 7 item 3): uncongested, bandwidth-bound cases
// (ring AllReduce, linear placement, non-blocking fat-tree, >= 16 MiB) must agree within 3 %. Quick cases
// here; larger rings in flow_vs_packet_slow_test.cpp; where the engines diverge: bench/flow_vs_packet_bench
// and docs/flow-engine.md.
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

TEST_CASE("flow vs packet: ring AllReduce 16 MiB, 8 ranks, 2-tier non-blocking tree, within 3 %") {
  check_ring(2, 8, 8, 16ull << 20);
}

TEST_CASE("flow vs packet: ring AllReduce 16 MiB, 16 ranks over 4 leaves, within 3 %") {
  check_ring(2, 8, 16, 16ull << 20);
}
