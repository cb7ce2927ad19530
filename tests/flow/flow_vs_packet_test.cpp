// Packet engine vs flow engine through eng::Engine (issue 7 item 3): uncongested, bandwidth-bound cases
// (ring AllReduce, linear placement, non-blocking fat-tree, >= 16 MiB) must agree within 3 %. Quick cases
// here; larger rings in flow_vs_packet_slow_test.cpp; where the engines diverge: bench/flow_vs_packet_bench
// and docs/flow-engine.md.
#include "tests/flow/ring_check.hpp"

using ibn::xval::check_ring;

TEST_CASE("flow vs packet: ring AllReduce 16 MiB, 8 ranks, 2-tier non-blocking tree, within 3 %") {
  check_ring(2, 8, 8, 16ull << 20);
}

TEST_CASE("flow vs packet: ring AllReduce 16 MiB, 16 ranks over 4 leaves, within 3 %") {
  check_ring(2, 8, 16, 16ull << 20);
}

TEST_CASE("flow vs packet: an HCA rate cap (link / 4), one HCA sending to two, and a ring, within 3 %") {
  // hca_rate_gbps paces the packet engine's HCA transmitter; the flow engine gives each capped HCA an
  // injection link at the cap. Both: the HCA's flows share the cap.
  auto tree = ibn::xval::fat_tree(2, 8);
  ibn::pkt::PacketConfig pc;
  pc.hca_rate_gbps = tree.fabric.link(tree.tables.hca_link(0)).speed.rate_gbps() / 4;
  const auto two = ibn::xval::compare(tree.fabric, tree.tables, pc, [](ibn::eng::Engine& e) {
    ibn::Time last;
    for (const ibn::routing::HcaIndex d : {1u, 5u})
      e.send({0, d, 4ull << 20, 0, 0}, [&](ibn::Time t) { last = std::max(last, t); });
    e.run();
    return static_cast<double>(last.count_ps());
  });
  MESSAGE("cap: 0 -> {1, 5} 4 MiB each: packet " << two.packet_ps / 1e6 << " us, flow " << two.flow_ps / 1e6
                                                 << " us (" << 100 * two.rel() << " %)");
  CHECK(std::abs(two.rel()) < 0.03);
  const auto ring = ibn::xval::compare(tree.fabric, tree.tables, pc, [](ibn::eng::Engine& e) {
    return static_cast<double>(ibn::xval::ring_allreduce(e, ibn::xval::linear(8), 16ull << 20).count_ps());
  });
  MESSAGE("cap: ring 8 ranks 16 MiB: packet " << ring.packet_ps / 1e6 << " us, flow " << ring.flow_ps / 1e6
                                              << " us (" << 100 * ring.rel() << " %)");
  CHECK(std::abs(ring.rel()) < 0.03);
}
