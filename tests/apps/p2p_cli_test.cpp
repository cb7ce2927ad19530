// NCCL point-to-point through the binary (issue 16 item 3; docs/collectives.md, "Point-to-point"): a
// peer pair runs on kP2pChannelsPerNetPeer = 2 channels, each moving at most kP2pChannelNetGBps = 14 GB/s
// (NCCL's NCCL_P2P_PER_CHANNEL_NET_BW), so a large sendrecv between two nodes peaks at 28 GB/s on an
// NDR link (50 GB/s) that the network alone would fill.
#include "tests/apps/run_cli.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>

#include <string>

using ibn::test::busbw_of;

TEST_CASE("sendrecv between two nodes: 2 channels per peer x 14 GB/s, closed form, both engines") {
  // Closed form: t = S / min(link payload rate, 2 x 14 GB/s) + latencies; S = 1 GiB makes the latencies
  // (tens of us against 38 ms) negligible: busbw = algbw = 28.0 GB/s within 0.5 %. With nccl.costs=false
  // the network alone is the bound: the NDR link's ~49.6 GB/s payload rate.
  for (const std::string engine : {"flow", "packet"}) {
    INFO(engine);
    const std::string cmd = "nccl-tests sendrecv_perf -b 1G -e 1G -g 1 --nodes 2 -n 1 -w 0 -q --engine " + engine;
    auto r = ibn::test::run_cli(cmd + " 2>/dev/null");
    INFO(r.out);
    REQUIRE(r.code == 0);
    CHECK(busbw_of(r.out) == doctest::Approx(28.0).epsilon(0.005));
    if (engine == "packet") continue; // the packet engine at 50 GB/s x 1 GiB: the flow engine shows it
    r = ibn::test::run_cli(cmd + " --set nccl.costs=false 2>/dev/null");
    REQUIRE(r.code == 0);
    CHECK(busbw_of(r.out) > 45.0);
  }
}
