// In-suite fuzzing of every parser (fuzz/targets.hpp): seeds, regression inputs and a fixed number of
// mutated inputs per target from a fixed seed. The quick suite runs a short pass; fuzz_slow_test.cpp a
// longer one; scripts/fuzz runs libFuzzer for as long as asked.
#include "fuzz_driver.hpp"

#include <doctest/doctest.h>

using namespace ibn::fuzz;

TEST_CASE("fuzz: every parser has a target with seeds") {
  CHECK(targets().size() >= 10);
  CHECK(find_target("osu") != nullptr); // OSU / IMB-MPI1 outputs (validate osu)
  for (const auto& t : targets()) {
    INFO(t.name);
    CHECK(test::seeds_of(t).size() >= 2);
  }
}

TEST_CASE("fuzz: the mutation driver is deterministic") {
  const std::string seed = "{\"seed\": 1, \"sizes\": [\"1M\"]}\n";
  std::string a = seed, b = seed;
  test::Rng ra(7), rb(7);
  for (int i = 0; i < 200; ++i) {
    test::mutate(a, seed, ra);
    test::mutate(b, seed, rb);
  }
  CHECK(a == b);
  CHECK(a != seed);
}

TEST_CASE("fuzz: a target that throws something other than InputError is reported") {
  Target bad{"bad", "always fails", {}, {"x"}, [](std::string_view) { throw std::runtime_error("boom"); }};
  CHECK(test::run_one(bad, "x", 10).what.find("boom") != std::string::npos);
  Target slow{"slow", "takes time", {}, {"x"}, [](std::string_view) {
                 const auto t0 = std::chrono::steady_clock::now();
                 while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(30)) {
                 }
               }};
  CHECK(test::run_one(slow, "x", 0.01).what.find("slow input") == 0);
  CHECK(test::run_one(slow, "x", 10).what.empty());
}

// A short pass over every target (the slow suite runs more cases).
TEST_CASE("fuzz: quick pass over every target") {
  const std::size_t cases = test::cases_from_env(150);
  std::uint64_t seed = 20261203;
  for (const auto& t : targets()) {
    INFO(t.name);
    CHECK(test::fuzz_target(t, cases, seed++, 5.0) > cases);
  }
}
