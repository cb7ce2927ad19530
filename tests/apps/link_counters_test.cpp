// The packet engine's per-link counters through the binary: `ibnetsim run` on a small incast (background
// traffic from every free node into one HCA, beside a two-node job) writes, per tier of links.by_tier, the
// ECN marks (DCQCN), FECN marks (IB CC), PFC pause time, credit stalls, and wire and payload bytes.
#include "tests/apps/run_cli.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

namespace {

/// Runs the incast scenario with `packet` and `cc` settings and returns results.json.
nlohmann::json run_incast(const std::string& name, const nlohmann::json& packet, const nlohmann::json& cc) {
  const auto dir = ibn::test::scratch_dir("link-counters-" + name);
  const nlohmann::json scenario = {
      {"name", "incast-" + name},
      {"seed", 1},
      {"fabric",
       {{"generator", "fat-tree"},
        {"params",
         {{"tiers", 2}, {"radix", 8}, {"hosts", 16}, {"oversubscription", "1:1"}, {"rate", "NDR"}}}}},
      {"routing", {{"algorithm", "ftree"}, {"adaptive", "off"}}},
      {"cc", cc},
      {"packet", packet},
      {"jobs",
       {{{"name", "pair"},
         {"nodes", 2},
         {"gpus_per_node", 1},
         {"nics_per_node", 1},
         {"placement", "linear"},
         {"workload", {{"op", "allreduce"}, {"sizes", {"256K"}}, {"iterations", 2}, {"warmup", 0}}}}}},
      {"background",
       {{{"pattern", "incast"},
         {"load", 1.0},
         {"message_bytes", "64K"},
         {"nics_per_node", 1},
         {"stop_us", 40}}}}};
  const auto path = (dir / "scenario.json").string();
  std::ofstream(path) << scenario.dump(2);
  const auto r = ibn::test::run_cli("run " + path + " -q -o " + (dir / "out").string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  return ibn::test::read_json_file((dir / "out" / "results.json").string());
}

double sum_over_tiers(const nlohmann::json& results, const std::string& key) {
  double s = 0;
  for (const auto& t : results.at("links").at("by_tier")) s += t.at(key).get<double>();
  return s;
}

} // namespace

TEST_CASE("run: link counters per tier, from the packet engine (DCQCN ECN, IB CC FECN, PFC pauses)") {
  const auto none = run_incast("none", nlohmann::json::object(), {{"algorithm", "none"}});
  CHECK(sum_over_tiers(none, "ecn_marks") == 0);
  CHECK(sum_over_tiers(none, "fecn_marks") == 0);
  CHECK(sum_over_tiers(none, "pause_us") == 0);
  CHECK(sum_over_tiers(none, "stall_us") > 0); // credits: the senders into the incast wait for them
  for (const auto& t : none.at("links").at("by_tier")) {
    INFO(t.dump());
    // Every packet carries at least its header: wire bytes exceed payload bytes wherever anything was sent.
    CHECK(t.at("wire_bytes").get<double>() == t.at("bytes").get<double>());
    CHECK(t.at("payload_bytes").get<double>() > 0);
    CHECK(t.at("wire_bytes").get<double>() > t.at("payload_bytes").get<double>());
  }

  const auto dcqcn = run_incast("dcqcn", nlohmann::json::object(), {{"algorithm", "dcqcn"}});
  CHECK(sum_over_tiers(dcqcn, "ecn_marks") > 0);
  CHECK(sum_over_tiers(dcqcn, "fecn_marks") == 0);

  const auto ibcc = run_incast("ibcc", nlohmann::json::object(), {{"algorithm", "ibcc"}});
  CHECK(sum_over_tiers(ibcc, "fecn_marks") > 0);
  CHECK(sum_over_tiers(ibcc, "ecn_marks") == 0);

  const auto pfc = run_incast("pfc", {{"flow_control", "pfc"}}, {{"algorithm", "none"}});
  CHECK(sum_over_tiers(pfc, "pause_us") > 0);
  CHECK(sum_over_tiers(pfc, "ecn_marks") == 0);
}
