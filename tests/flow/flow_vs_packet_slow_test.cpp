// Packet engine vs flow engine, larger uncongested ring AllReduces (issue 7 item 3; quick cases in
// flow_vs_packet_test.cpp): within 3 % on non-blocking 2- and 3-tier fat-trees, linear placement.
#include "tests/flow/ring_check.hpp"

using ibn::xval::check_ring;

TEST_CASE("flow vs packet (slow): ring AllReduce 16/64/256 MiB, 32 ranks, 2-tier tree, within 3 %") {
  for (const std::uint64_t mib : {16, 64, 256}) {
    CAPTURE(mib);
    check_ring(2, 8, 32, mib << 20);
  }
}

TEST_CASE("flow vs packet (slow): ring AllReduce 64 MiB, 64 ranks, 3-tier tree, within 3 %") {
  check_ring(3, 8, 64, 64ull << 20);
}
