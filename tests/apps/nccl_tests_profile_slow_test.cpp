// Issue 16 item 6: `nccl-tests -b 4 -e 1M -g 64 --nodes 32 --profile P` failed with "schedule_at: time ...
// before now" (an internal error, exit 1). It no longer reproduces (2026-12-05, packet engine, profiles
// fitted from the cx3 QDR and the Azure HDR perftest logs); this runs the reported command through the
// binary so that it stays fixed. About 25 s of CPU: labelled slow.
#include "tests/apps/run_cli.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>

#include <string>

TEST_CASE("nccl-tests -b 4 -e 1M -g 64 --nodes 32 with a perftest-fitted profile runs to the end") {
  const std::string data = IBNETSIM_TEST_DATA;
  const auto dir = ibn::test::scratch_dir("nccl-tests-profile").string();
  const auto fit = ibn::test::run_cli(
      "calibrate fit " + data + "/perftest/cx3-mt4099-qdr40g-ib-ib_send_lat-a.txt " + data +
      "/perftest/cx3-mt4099-qdr40g-ib-ib_write_bw-a.txt " + data +
      "/perftest/cx3-mt4099-qdr40g-ib-ib_write_lat-a.txt --link-rate QDR -o " + dir + "/cx3.json");
  INFO(fit.out);
  REQUIRE(fit.code == 0);
  const auto r = ibn::test::run_cli("nccl-tests all_reduce_perf -b 4 -e 1M -g 64 --nodes 32 --profile " +
                                    dir + "/cx3.json -q");
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(r.out.find("before now") == std::string::npos);
  CHECK(r.out.find("internal error") == std::string::npos);
  CHECK(r.out.find("# Avg bus bandwidth") != std::string::npos);
  CHECK(r.out.find("     1048576 ") != std::string::npos); // the last row (1 MiB) was printed
}
