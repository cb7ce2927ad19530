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
