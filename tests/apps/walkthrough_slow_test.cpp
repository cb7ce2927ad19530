// Slow checks of defects a walk through the product found (2026-12-07).
#include "tests/apps/run_cli.hpp"

#include <doctest/doctest.h>

#include <regex>
#include <string>

TEST_CASE("plan on the flow engine: progress lines show each design's percent and ETA") {
  // The flow designs ran as `ibnetsim run` processes whose progress the plan could not see: every line read
  // "0%, N s elapsed, ETA unknown". The one design of this plan takes about 10 s (2,048 GPUs, 12 iterations).
  const auto dir = ibn::test::scratch_dir("walk-plan-progress");
  const auto r = ibn::test::run_cli("plan --gpus 2048 --engine flow --sizes 64M -n 12 --ratios 1:1 -j 1 -o " +
                                    (dir / "out").string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  const std::regex moving(
      R"(plan: \[qm9700-[0-9]to1-2tier\] ([1-9][0-9]?)%, [0-9]+ s elapsed, ETA [0-9]+ s)");
  CHECK(std::regex_search(r.out, moving)); // (a line at 0 % may still say "ETA unknown" on a loaded machine)
}
