// Faults through the binary (issue 17 items 1 and 4): a spine cable down at t = 0 on both engines; faults at
// t > 0 on both engines (cable down and degraded mid-transfer against closed forms, a down/up conserving
// every transfer, a switch outage that costs an ACK timeout); whatif --faults, a QP that exhausts its retries
// on both engines, and bad fault input.
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
  return ibn::test::first_p50_us(results);
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

TEST_CASE("faults: a fault at t > 0 runs on both engines, no warning") {
  const auto dir = ibn::test::scratch_dir("faults-timed").string();
  auto doc = ring_scenario("packet");
  doc["faults"] = {{"events",
                    {{{"time_us", 20.0}, {"kind", "link_down"}, {"link", "leaf-0:6"}},
                     {{"time_us", 200.0}, {"kind", "link_up"}, {"link", "leaf-0:6"}}}},
                   {"sm_sweep_delay_us", 10.0}};
  const auto path = write(dir, "timed.json", doc);
  for (const std::string engine : {"packet", "flow"}) {
    INFO(engine);
    const auto r = ibn::test::run_cli("run " + path + " -q --engine " + engine + " -o " + dir + "/" + engine);
    INFO(r.out);
    REQUIRE(r.code == 0);
    const auto res = ibn::test::read_json_file(dir + "/" + engine + "/results.json");
    CHECK(res.at("engine").at("counters").at("link_downs") == 1);
    CHECK(res.at("engine").at("counters").at("reroutes") == 2);
    CHECK(res.at("collectives").at(0).at("completion_us").at("n") == 2);
    CHECK(res.at("manifest").at("warnings").dump().find("t > 0") == std::string::npos);
  }
}

namespace {

/// The 2-node ring (hosts 0 and 4, one on each leaf) of one 8 MiB AllReduce: one reduce-scatter and one
/// all-gather step of a 4 MiB chunk each way. Both directions cross the spine on cable leaf-0/spine-0
/// (D-mod-k: host 4's rank 4 mod 4 = port 0 up from leaf 0; its mirror down to leaf 0), alone on it.
nlohmann::json pair_scenario(const std::string& engine) {
  auto doc = ring_scenario(engine);
  auto& job = doc["jobs"][0];
  job["nodes"] = 2;
  job["hosts"] = {"0", "4"};
  job["workload"]["iterations"] = 1;
  return doc;
}

/// p50 completion of `doc` run through the binary on both engines: {packet, flow}.
std::pair<double, double> both_engines(const std::string& dir, const std::string& name, nlohmann::json doc) {
  double t[2] = {0, 0};
  int k = 0;
  for (const std::string engine : {"packet", "flow"}) {
    doc["engine"] = engine;
    const auto path = write(dir, name + "-" + engine + ".json", doc);
    const auto r = ibn::test::run_cli("run " + path + " -q -o " + dir + "/" + name + "-" + engine);
    INFO(r.out);
    REQUIRE(r.code == 0);
    t[k++] = p50_of(dir + "/" + name + "-" + engine + "/results.json");
  }
  return {t[0], t[1]};
}

} // namespace

TEST_CASE("faults: a cable down mid-transfer at T costs the flow engine the sweep delay (closed form)") {
  // Closed form (flow): both flows stop at T = 20 us with their remaining bytes; the SM's tables come
  // D = 10 us later and route them over another spine cable, alone again and as long: each resumes its
  // remaining bytes at the same rate, so completion = T + D + remaining / R + the rest = t_healthy + D.
  // The packet engine also resends what was on the wire and in the dead output (go-back-N after the NAK):
  // a few us more (measured 184.44 vs 181.91 us).
  const auto dir = ibn::test::scratch_dir("faults-timed-down").string();
  const auto [ph, fh] = both_engines(dir, "healthy", pair_scenario("flow"));
  auto doc = pair_scenario("flow");
  doc["faults"] = {{"events", {{{"time_us", 20.0}, {"kind", "link_down"}, {"link", "leaf-0/spine-0"}}}},
                   {"sm_sweep_delay_us", 10.0}};
  const auto [pd, fd] = both_engines(dir, "down", doc);
  CHECK(fd == doctest::Approx(fh + 10.0).epsilon(1e-6));
  CHECK(pd == doctest::Approx(ph + 10.0).epsilon(0.03));
  CHECK(fd == doctest::Approx(pd).epsilon(0.03));
}

TEST_CASE("faults: a cable degraded 4x -> 1x mid-transfer at T re-shares from T (closed form)") {
  // Closed form (flow): a chunk is W = 4 MiB + 1024 headers of 26 B + 16 B RETH = 4,220,944 wire bytes, at
  // R = 400 Gb/s W / R = 84.41888 us. The first step's bandwidth phase starts at 0 and has W - R T left at
  // T = 20 us; from T the cable runs at R / 4, so that rest takes 4x and the second step 4 W / R: completion
  // = t_healthy + 3 (W / R - T) + 3 W / R = t_healthy + 6 W / R - 3 T (t_healthy = 171.91 us -> 618.43 us).
  const auto dir = ibn::test::scratch_dir("faults-timed-degrade").string();
  const auto [ph, fh] = both_engines(dir, "healthy", pair_scenario("flow"));
  auto doc = pair_scenario("flow");
  doc["faults"] = {
      {"events", {{{"time_us", 20.0}, {"kind", "degrade"}, {"link", "leaf-0/spine-0"}, {"width", 1}}}}};
  const auto [pd, fd] = both_engines(dir, "degrade", doc);
  const double w_over_r = 4'220'944.0 * 8.0 / 400e9 * 1e6;
  CHECK(fd == doctest::Approx(fh + 6.0 * w_over_r - 3.0 * 20.0).epsilon(1e-4));
  CHECK(fd == doctest::Approx(pd).epsilon(0.02));
  (void)ph;
}

TEST_CASE("faults: a timed cable down and up on the 8-host ring, every transfer delivered once") {
  // Conservation: the cable dies at 20 us (mid first step) and comes back at 400 us, with a reroute after
  // each. Both iterations complete, with as many transfers as the healthy run, on both engines; after the
  // first reroute the flow engine's second iteration runs on the routes of a cable down at t = 0 (592.48 us,
  // the closed-form test above), until the cable's return moves the flows back.
  const auto dir = ibn::test::scratch_dir("faults-timed-ring").string();
  for (const std::string engine : {"packet", "flow"}) {
    INFO(engine);
    auto doc = ring_scenario(engine);
    const auto healthy = write(dir, engine + "-h.json", doc);
    doc["faults"] = {{"events",
                      {{{"time_us", 20.0}, {"kind", "link_down"}, {"link", "leaf-0/spine-0"}},
                       {{"time_us", 400.0}, {"kind", "link_up"}, {"link", "leaf-0/spine-0"}}}},
                     {"sm_sweep_delay_us", 10.0}};
    const auto faulted = write(dir, engine + "-f.json", doc);
    const auto a = ibn::test::run_cli("run " + healthy + " -q -o " + dir + "/" + engine + "-h");
    const auto b = ibn::test::run_cli("run " + faulted + " -q -o " + dir + "/" + engine + "-f");
    INFO(b.out);
    REQUIRE(a.code == 0);
    REQUIRE(b.code == 0);
    const auto h = ibn::test::read_json_file(dir + "/" + engine + "-h/results.json");
    const auto f = ibn::test::read_json_file(dir + "/" + engine + "-f/results.json");
    CHECK(f.at("collectives").at(0).at("completion_us").at("n") == 2);
    CHECK(f.at("engine").at("transfers") == h.at("engine").at("transfers"));
    CHECK_FALSE(f.at("engine").at("counters").contains("qp_failures"));
    CHECK(f.at("engine").at("counters").at("reroutes") == 2);
    const double t1 = f.at("collectives").at(0).at("completion_us").at("max").get<double>();
    CHECK(t1 > 480.0); // slower than healthy (297 us), at most the t = 0 fault's 592 us
    CHECK(t1 < 600.0);
  }
}

TEST_CASE("faults: a switch down longer than a sender's message costs an ACK timeout on both engines") {
  // The only spine dies at 20 us and comes back at 60 us. Each sender sends the rest of its 1 MiB chunk into
  // the dead switch within ~1 us and waits: the first ACK timeout after the return (4.096 us x 2^20 after
  // the failure) resends the chunk. Completion ~ 20 us + 4,294,967 us + the rest of the ring, both engines.
  const auto dir = ibn::test::scratch_dir("faults-timed-switch").string();
  auto doc = ring_scenario("flow");
  doc["jobs"][0]["workload"]["iterations"] = 1;
  doc["faults"] = {{"events",
                    {{{"time_us", 20.0}, {"kind", "switch_down"}, {"switch", "spine-0"}},
                     {{"time_us", 60.0}, {"kind", "switch_up"}, {"switch", "spine-0"}}}},
                   {"sm_sweep_delay_us", 10.0}};
  const auto [p, fl] = both_engines(dir, "switch", doc);
  CHECK(fl > 4'294'967.0);
  CHECK(fl < 4'294'967.0 + 300.0);
  CHECK(fl == doctest::Approx(p).epsilon(1e-5));
}

TEST_CASE("faults: a QP that exhausts its retries is reported in results.json, not a hang") {
  // Host 4's cable (leaf-1 port 1) dies at 5 us and the SM does not reroute: every QP towards it times out
  // retry_count + 1 = 2 times (10 us each) and fails; the run stops there.
  const auto dir = ibn::test::scratch_dir("faults-qp").string();
  auto doc = ring_scenario("packet");
  doc["faults"] = {{"events", {{{"time_us", 5.0}, {"kind", "link_down"}, {"link", "leaf-1:1"}}}},
                   {"reroute", false}};
  doc["packet"] = {{"retry_count", 1}, {"ack_timeout_us", 10.0}};
  // The flow engine: the transfers into host 4 stop at 5 us and their QPs fail (1 + 1) x 10 us later.
  for (const std::string engine : {"packet", "flow"}) {
    INFO(engine);
    doc["engine"] = engine;
    const auto path = write(dir, "qp-" + engine + ".json", doc);
    const auto r = ibn::test::run_cli("run " + path + " -q -o " + dir + "/" + engine);
    INFO(r.out);
    REQUIRE(r.code == 0);
    const auto res = ibn::test::read_json_file(dir + "/" + engine + "/results.json");
    INFO(res.at("engine").dump());
    const auto& q = res.at("engine").at("counters").at("qp_failures");
    REQUIRE(q.size() >= 1);
    CHECK(q.at(0).at("time_us").get<double>() > 5.0);
    CHECK(q.at(0).at("time_us").get<double>() <= 25.0);
    CHECK(res.at("warnings").dump().find("exhausted their retries") != std::string::npos);
  }
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
