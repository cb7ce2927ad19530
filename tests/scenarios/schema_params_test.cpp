// --set / sweep --vary on a generator parameter: fabric.params.<key>=value sets one key of the free-form
// parameter object (as text, as generators read it) and keeps the others.
#include "scenarios/scenario.hpp"
#include "sim/error.hpp"

#include "tests/test_util.hpp"

#include <doctest/doctest.h>

using namespace ibn;
using namespace ibn::scen;
using ibn::test::error_of;

TEST_CASE("--set fabric.params.oversubscription=2:1 changes that parameter only") {
  auto doc = default_scenario_json();
  const auto s = make_scenario(doc, "test", ".", {"fabric.params.oversubscription=2:1", "fabric.params.leaf-ports=48"});
  CHECK(s.fabric_params.at("oversubscription") == "2:1");
  CHECK(s.fabric_params.at("leaf-ports") == "48");
  CHECK(s.fabric_params.at("hosts") == 256); // untouched
  // Without params in the scenario, the declared default object is the starting point.
  nlohmann::json bare = {{"jobs", doc["jobs"]}};
  const auto t = make_scenario(bare, "test", ".", {"fabric.params.oversubscription=4:1"});
  CHECK(t.fabric_params.at("oversubscription") == "4:1");
  CHECK(t.fabric_params.at("radix") == 64);
  CHECK(error_of([&] { make_scenario(doc, "test", ".", {"fabric.params[0]=1"}); }) != "");
}
