// NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS (issue 16 item 2) through the binary: the scenario keys
// nccl.min_channels / nccl.max_channels bound the channel count NCCL's search gives (2 x NICs per node, at
// most 32), and `validate nccl-tests` takes them from a log's environment lines.
#include "tests/apps/run_cli.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>

#include <fstream>
#include <string>

using ibn::test::run_cli;

using ibn::test::busbw_of;

TEST_CASE("nccl.max_channels caps the channels and so the NICs a collective uses") {
  // 2 nodes x 8 GPUs x 8 NDR NICs, 64 MiB AllReduce: 16 channels spread over the 8 NICs; capped at 2 channels
  // only 2 NICs carry the inter-node traffic, so busbw cannot exceed what 2 NICs move (2 x 50 GB/s).
  const std::string cmd = "nccl-tests all_reduce_perf -b 64M -e 64M -g 8 --nodes 2 -n 2 -w 0 -q --engine flow";
  const auto all = run_cli(cmd + " 2>/dev/null");
  const auto two = run_cli(cmd + " --set nccl.max_channels=2 2>/dev/null");
  INFO(all.out);
  INFO(two.out);
  REQUIRE(all.code == 0);
  REQUIRE(two.code == 0);
  CHECK(busbw_of(two.out) <= 2 * 50.0);
  CHECK(busbw_of(all.out) > 3 * busbw_of(two.out));
  // Bounds that contradict each other are refused, naming both keys.
  const auto bad = run_cli(cmd + " --set nccl.min_channels=8 --set nccl.max_channels=4");
  CHECK(bad.code == 2);
  CHECK(bad.out.find("nccl.min_channels") != std::string::npos);
  CHECK(bad.out.find("nccl.max_channels") != std::string::npos);
}

TEST_CASE("validate nccl-tests: NCCL_MAX_NCHANNELS in the log's environment lines reaches the simulation") {
  const auto dir = ibn::test::scratch_dir("nccl-env-channels");
  const std::string log = (dir / "ar.log").string();
  std::ofstream(log)
      << "# Collective test starting: all_reduce_perf\n"
         "# nThread 1 nGpus 1 minBytes 67108864 maxBytes 67108864 step: 2(factor) warmup iters: 1 iters: 2 "
         "agg iters: 1 validation: 1 graph: 0\n"
         "#  Rank  0 Group  0 Pid 11 on node-a device  0 [0000:06:00] NVIDIA H100 80GB HBM3\n"
         "#  Rank  1 Group  0 Pid 22 on node-b device  0 [0000:06:00] NVIDIA H100 80GB HBM3\n"
         "node-a:11:11 [0] NCCL INFO NCCL_MAX_NCHANNELS set by environment to 1.\n"
         "#                                                              out-of-place                       "
         "in-place\n"
         "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   "
         "algbw   busbw #wrong\n"
         "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  "
         "(GB/s)  (GB/s)\n"
         "    67108864      16777216     float     sum      -1   1400.0   47.94   47.94      0   1400.0   "
         "47.94   47.94      0\n"
         "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 47.94 \n";
  const auto r = run_cli("validate nccl-tests " + log + " --engine flow -n 1 --json 2>/dev/null");
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto v = nlohmann::json::parse(r.out);
  const auto& set = v.at("runs").at(0).at("set");
  CHECK(std::find(set.begin(), set.end(), "nccl.max_channels=1") != set.end());
}
