// Faults through the binary (issue 17 items 1 and 4): a spine cable down at t = 0 on both engines, whatif
// --faults, a QP that exhausts its retries, and bad fault input.
#include "tests/apps/run_cli.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

namespace {

// 2 leaves x 4 hosts (ports 1-4), one spine with 4 parallel cables to each leaf (ports 5-8; radix 8, 1:1):
// host h on leaf h / 4. The ring visits hosts 0,4,1,5,2,6,3,7, so every ring step crosses the spine: 4 flows
// up from each leaf, to 4 destinations that ftree (D-mod-k) spreads over the 4 cables, one flow per cable.
// NCCL's software costs are off: the closed form below is about the network alone.
nlohmann::json ring_scenario(const std::string& engine) {
  return {{"name", "faults-ring"},
          {"seed", 1},
          {"engine", engine},
          {"nccl", {{"costs", false}}},
          {"fabric",
           {{"generator", "fat-tree"},
            {"params",
             {{"tiers", 2}, {"radix", 8}, {"hosts", 8}, {"oversubscription", "1:1"}, {"rate", "NDR"}}}}},
          {"jobs",
           {{{"name", "ring"},
             {"nodes", 8},
             {"gpus_per_node", 1},
             {"nics_per_node", 1},
             {"placement", "explicit"},
             {"hosts", {"0", "4", "1", "5", "2", "6", "3", "7"}},
             {"workload",
              {{"op", "allreduce"},
               {"sizes", {"8M"}},
               {"algorithm", "ring"},
               {"protocol", "simple"},
               {"channels", 1},
               {"iterations", 2},
               {"warmup", 0}}}}}}};
}

std::string write(const std::string& dir, const std::string& name, const nlohmann::json& doc) {
  const auto path = dir + "/" + name;
  std::ofstream(path) << doc.dump(2);
  return path;
}

double p50_of(const std::string& results) {
  return ibn::test::read_json_file(results)
      .at("collectives")
      .at(0)
      .at("completion_us")
      .at("p50")
      .get<double>();
}

} // namespace

TEST_CASE("faults: a leaf-spine cable down at t = 0 doubles a cross-spine ring on both engines") {
  // Closed form: after the cable leaf-0/spine-0 (the first of 4) is gone, the 4 flows leaving leaf 0 (and the
  // 4 entering it) share 3 cables, so some cable carries m = 2 of them (pigeonhole; D-mod-k over 3 ports
  // gives at most 2). Every ring step waits for its slowest flow, so the bandwidth term of the ring doubles:
  // for 8 MiB (latency a few us of ~ 300 us) the time is 2x within a few percent.
  const auto dir = ibn::test::scratch_dir("faults-ring").string();
  for (const std::string engine : {"packet", "flow"}) {
    INFO(engine);
    auto doc = ring_scenario(engine);
    const auto healthy = write(dir, engine + "-healthy.json", doc);
    doc["faults"] = {{"events", {{{"time_us", 0.0}, {"kind", "link_down"}, {"link", "leaf-0/spine-0"}}}}};
    const auto failed = write(dir, engine + "-failed.json", doc);
    const auto a = ibn::test::run_cli("run " + healthy + " -q -o " + dir + "/" + engine + "-a");
    INFO(a.out);
    REQUIRE(a.code == 0);
    const auto b = ibn::test::run_cli("run " + failed + " -q -o " + dir + "/" + engine + "-b");
    INFO(b.out);
    REQUIRE(b.code == 0);
    const double t0 = p50_of(dir + "/" + engine + "-a/results.json");
    const double t1 = p50_of(dir + "/" + engine + "-b/results.json");
    CHECK(t1 / t0 > 1.9);
    CHECK(t1 / t0 < 2.05);
    const auto res = ibn::test::read_json_file(dir + "/" + engine + "-b/results.json");
    CHECK(res.at("engine").at("counters").at("faults").at(0).get<std::string>().find("link_down leaf-0") ==
          0);
    CHECK(res.at("manifest").at("config").at("faults").at("events").size() == 1);
  }
}

TEST_CASE("faults: a fault at t > 0 runs on the packet engine, the flow engine warns") {
  const auto dir = ibn::test::scratch_dir("faults-timed").string();
  auto doc = ring_scenario("packet");
  doc["faults"] = {{"events",
                    {{{"time_us", 20.0}, {"kind", "link_down"}, {"link", "leaf-0:6"}},
                     {{"time_us", 200.0}, {"kind", "link_up"}, {"link", "leaf-0:6"}}}},
                   {"sm_sweep_delay_us", 10.0}};
  const auto path = write(dir, "timed.json", doc);
  const auto r = ibn::test::run_cli("run " + path + " -q -o " + dir + "/p");
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto res = ibn::test::read_json_file(dir + "/p/results.json");
  CHECK(res.at("engine").at("counters").at("link_downs") == 1);
  CHECK(res.at("collectives").at(0).at("completion_us").at("n") == 2);
  const auto f = ibn::test::run_cli("run " + path + " -q --engine flow -o " + dir + "/f");
  INFO(f.out);
  REQUIRE(f.code == 0);
  const auto fres = ibn::test::read_json_file(dir + "/f/results.json");
  const auto w = fres.at("manifest").at("warnings").dump();
  CHECK(w.find("2 fault(s) at t > 0") != std::string::npos);
}

TEST_CASE("faults: a QP that exhausts its retries is reported in results.json, not a hang") {
  // Host 4's cable (leaf-1 port 1) dies at 5 us and the SM does not reroute: every QP towards it times out
  // retry_count + 1 = 2 times (10 us each) and fails; the run stops there.
  const auto dir = ibn::test::scratch_dir("faults-qp").string();
  auto doc = ring_scenario("packet");
  doc["faults"] = {{"events", {{{"time_us", 5.0}, {"kind", "link_down"}, {"link", "leaf-1:1"}}}},
                   {"reroute", false}};
  doc["packet"] = {{"retry_count", 1}, {"ack_timeout_us", 10.0}};
  const auto path = write(dir, "qp.json", doc);
  const auto r = ibn::test::run_cli("run " + path + " -q -o " + dir + "/out");
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto res = ibn::test::read_json_file(dir + "/out/results.json");
  INFO(res.at("engine").dump());
  const auto& q = res.at("engine").at("counters").at("qp_failures");
  REQUIRE(q.size() >= 1);
  CHECK(q.at(0).at("time_us").get<double>() > 5.0);
  CHECK(res.at("warnings").dump().find("exhausted their retries") != std::string::npos);
}

TEST_CASE("whatif --faults none,1-link: one row per token, the table shows it") {
  const auto dir = ibn::test::scratch_dir("faults-whatif").string();
  const auto path = write(dir, "ring.json", ring_scenario("flow"));
  const auto r = ibn::test::run_cli(
      "whatif " + path + " --faults none,1-link --oversubscription '' --routing off -q -o " + dir + "/w");
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto w = ibn::test::read_json_file(dir + "/w/whatif.json");
  REQUIRE(w.at("rows").size() == 2);
  CHECK(w.at("rows").at(0).at("faults") == "none");
  CHECK(w.at("rows").at(1).at("faults") == "1-link");
  CHECK(w.at("manifest").at("dimensions").at("faults") == nlohmann::json{"none", "1-link"});
  CHECK(w.at("rows").at(1).at("completion_us").at("p50").get<double>() >
        w.at("rows").at(0).at("completion_us").at("p50").get<double>());
  CHECK(r.out.find(" faults ") != std::string::npos); // the table's column (the scenario is "faults-ring")
  CHECK(r.out.find("1-link") != std::string::npos);
  // Without --faults: no faults column, no faults key.
  const auto d =
      ibn::test::run_cli("whatif " + path + " --oversubscription '' --routing off -q -o " + dir + "/d");
  REQUIRE(d.code == 0);
  CHECK(d.out.find(" faults ") == std::string::npos);
  CHECK_FALSE(ibn::test::read_json_file(dir + "/d/whatif.json").at("rows").at(0).contains("faults"));
}

TEST_CASE("faults: bad input exits 2 naming the key or token") {
  const auto dir = ibn::test::scratch_dir("faults-bad").string();
  auto doc = ring_scenario("flow");
  doc["faults"] = {{"events", {{{"link", "leaf-0/spine-9"}}}}};
  auto r = ibn::test::run_cli("run " + write(dir, "a.json", doc) + " -q -o " + dir + "/a");
  CHECK(r.code == 2);
  CHECK(r.out.find("faults.events[0].link") != std::string::npos);
  doc["faults"] = {{"events", {{{"time_us", -3.0}, {"link", "leaf-0/spine-0"}}}}};
  r = ibn::test::run_cli("run " + write(dir, "b.json", doc) + " -q -o " + dir + "/b");
  CHECK(r.code == 2);
  CHECK(r.out.find("faults.events[0].time_us") != std::string::npos);
  const auto path = write(dir, "ok.json", ring_scenario("flow"));
  r = ibn::test::run_cli("whatif " + path + " --faults none,2-links@moon --oversubscription '' -q -o " + dir +
                         "/c");
  CHECK(r.code == 2);
  CHECK(r.out.find("'2-links@moon'") != std::string::npos);
  r = ibn::test::run_cli("whatif " + path + " --faults banana --oversubscription '' -q -o " + dir + "/d");
  CHECK(r.code == 2);
  CHECK(r.out.find("'banana'") != std::string::npos);
}
