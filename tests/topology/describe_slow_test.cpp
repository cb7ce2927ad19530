// describe() and JSON save/load on the 3-tier radix-64 non-blocking fat-tree (65,536 HCAs, 5,120 switches,
// 196,608 cables): closed-form answers and wall-clock budgets.
#include "hand_fabrics.hpp"

#include "topology/describe.hpp"
#include "topology/fabric_io.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <sstream>

namespace ibn::topo {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

TEST_CASE("describe: 3-tier radix-64 fat-tree, 65,536 HCAs") {
  auto t0 = std::chrono::steady_clock::now();
  const Fabric f = testing::three_tier(64);
  MESSAGE("build: " << seconds_since(t0) << " s");
  REQUIRE(f.hcas().size() == 65536);
  REQUIRE(f.switches().size() == 5120);
  REQUIRE(f.num_links() == 196608);

  t0 = std::chrono::steady_clock::now();
  const FabricSummary s = describe(f);
  const double describe_s = seconds_since(t0);
  MESSAGE("describe: " << describe_s << " s");
  // N·b/2 (§6.2, 1:1); diameter 6; minimal paths 32 within a pod, 32 x 32 = 1024 across pods.
  // Per HCA: 31 leaves x 32 same-pod peers with 32 paths, 63 pods x 1024 peers with 1024 paths.
  CHECK(s.bisection_gbps == doctest::Approx(65536 * 400.0 / 2));
  CHECK(s.diameter_hops == 6);
  CHECK(s.path_diversity_min == 32);
  CHECK(s.path_diversity_max == 1024);
  CHECK(s.path_diversity_mean == doctest::Approx((992.0 * 32 + 64512.0 * 1024) / (992.0 + 64512.0)));
  CHECK(s.tiers == 3);
  CHECK(*s.per_tier[0].oversubscription == doctest::Approx(1.0));
  CHECK(*s.per_tier[1].oversubscription == doctest::Approx(1.0));
  CHECK(s.degraded_links == 0);
  WARN(describe_s < 10.0);

  t0 = std::chrono::steady_clock::now();
  std::ostringstream out;
  save_fabric_json(f, out);
  const std::string text = out.str();
  const double save_s = seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
  const Fabric g = fabric_from_json(nlohmann::json::parse(text), "big.json");
  const double load_s = seconds_since(t0);
  MESSAGE("save: " << save_s << " s, parse+load: " << load_s << " s, " << text.size() / 1e6 << " MB");
  CHECK(g.num_nodes() == f.num_nodes());
  CHECK(g.num_links() == f.num_links());
  std::ostringstream again;
  save_fabric_json(g, again);
  const bool identical = again.str() == text; // not CHECK(a == b): doctest would print 30 MB on failure
  CHECK(identical);
  WARN(save_s + load_s < 10.0);
}

} // namespace ibn::topo
