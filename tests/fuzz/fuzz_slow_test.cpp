// The longer in-suite fuzzing pass (label slow-fuzz): more mutated inputs per target than the quick pass,
// from other fixed seeds. Budget: all targets together well under 2 minutes on 2 cores (docs/robustness.md).
#include "fuzz_driver.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

using namespace ibn::fuzz;

TEST_CASE("fuzz: longer pass over every target") {
  std::uint64_t seed = 1;
  const char* only = std::getenv("IBNETSIM_FUZZ_ONLY"); // one target, for a longer local run
  for (const auto& t : targets()) {
    if (only && std::string(only) != t.name) {
      ++seed;
      continue;
    }
    // The scenario and --set targets validate a whole scenario per input: fewer cases keep the budget.
    const bool heavy = std::string(t.name) == "scenario" || std::string(t.name) == "set" ||
                       std::string(t.name) == "perftest";
    const std::size_t cases = test::cases_from_env(heavy ? 10000 : 20000);
    INFO(t.name);
    CHECK(test::fuzz_target(t, cases, 1000 + seed++, 10.0) > cases);
  }
}
