#pragma once
// The packet-vs-flow ring check shared by flow_vs_packet_test.cpp (quick) and flow_vs_packet_slow_test.cpp:
// ring AllReduce of `size` bytes over ranks 0..ranks-1 (linear placement) on a non-blocking fat-tree,
// both engines through eng::Engine, agreement within 3 % (issue 7 item 3).
#include "testing/flow_vs_packet.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>

namespace ibn::xval {

inline void check_ring(int tiers, int radix, std::uint32_t ranks, std::uint64_t size) {
  const Tree tree = fat_tree(tiers, radix, ranks);
  REQUIRE(tree.tables.num_hcas() >= ranks);
  const auto hcas = linear(ranks);
  const Comparison c = compare(tree.fabric, tree.tables, pkt::PacketConfig{}, [&](eng::Engine& e) {
    return static_cast<double>(ring_allreduce(e, hcas, size).count_ps());
  });
  MESSAGE(tiers << "-tier radix " << radix << ", ring " << ranks << " ranks, " << (size >> 20)
                << " MiB: packet " << c.packet_ps * 1e-6 << " us, flow " << c.flow_ps * 1e-6 << " us ("
                << c.rel() * 100 << " %, " << c.flow_path << ")");
  CHECK(std::abs(c.rel()) < 0.03);
}

} // namespace ibn::xval
