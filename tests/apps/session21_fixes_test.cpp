// Defects listed by the walk through the product of 2026-12-07 and fixed on 2026-12-07 (second round), each
// with the case that showed it.
#include "tests/apps/run_cli.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {
std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}
const std::string kSmall = std::string(IBNETSIM_SOURCE_DIR) + "/scenarios/examples/small-allreduce.json";
} // namespace

TEST_CASE("run: the same scenario and seed write byte-identical results.json and results.csv") {
  // results.json carried engine.wall_s and engine.events_per_s, which differ between any two runs.
  const auto dir = ibn::test::scratch_dir("s21-determinism");
  for (const char* o : {"a", "b"}) {
    const auto r = ibn::test::run_cli("run " + kSmall + " --quiet -o " + (dir / o).string());
    INFO(r.out);
    REQUIRE(r.code == 0);
    CHECK(r.out.find(" s)") != std::string::npos); // the wall time is still printed
  }
  const std::string a = slurp(dir / "a" / "results.json");
  REQUIRE(!a.empty());
  CHECK(a == slurp(dir / "b" / "results.json"));
  CHECK(slurp(dir / "a" / "results.csv") == slurp(dir / "b" / "results.csv"));
  const auto j = nlohmann::json::parse(a);
  CHECK(!j.at("engine").contains("wall_s"));
  CHECK(!j.at("engine").contains("events_per_s"));
  CHECK(j.at("engine").at("events").get<std::uint64_t>() > 0);
}

TEST_CASE("plan: plan.json of the same request is byte-identical between runs") {
  const auto dir = ibn::test::scratch_dir("s21-plan");
  for (const char* o : {"a", "b"}) {
    const auto r = ibn::test::run_cli("plan --gpus 256 --no-sim -o " + (dir / o).string());
    INFO(r.out);
    REQUIRE(r.code == 0);
  }
  const std::string a = slurp(dir / "a" / "plan.json");
  REQUIRE(!a.empty());
  CHECK(a == slurp(dir / "b" / "plan.json"));
  CHECK(!nlohmann::json::parse(a).contains("wall_s"));
}

TEST_CASE("a key repeated in one JSON object is refused, naming its path") {
  // JSON allows it and the parser kept the last value: "seed" twice ran silently with the second.
  const auto dir = ibn::test::scratch_dir("s21-dupkey");
  const auto scen = dir / "dup.json";
  {
    std::ofstream f(scen);
    f << "{\"seed\": 1,\n \"jobs\": [{\"name\": \"a\"}, {\"name\": \"b\", \"name\": \"c\"}],\n \"seed\": "
         "2}\n";
  }
  const auto r = ibn::test::run_cli("run " + scen.string() + " -o " + (dir / "out").string());
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(r.out.find("dup.json") != std::string::npos);
  CHECK(r.out.find("key $.jobs[1].name appears twice") != std::string::npos); // the first repeat found
  CHECK(!std::filesystem::exists(dir / "out" / "results.json"));
  // An object of many keys (the set path): the 40th key repeated.
  const auto big = dir / "big.json";
  {
    std::ofstream f(big);
    f << "{\"seed\": 1, \"x\": {";
    for (int i = 0; i < 40; ++i) f << "\"k" << i << "\": " << i << ", ";
    f << "\"k39\": 0}}";
  }
  const auto b = ibn::test::run_cli("run " + big.string() + " -o " + (dir / "out2").string());
  INFO(b.out);
  CHECK(b.code == 2);
  CHECK(b.out.find("key $.x.k39 appears twice") != std::string::npos);
}

TEST_CASE("run: a folder given as the scenario is named as a folder, not as malformed JSON") {
  const auto dir = ibn::test::scratch_dir("s21-folder");
  const auto r = ibn::test::run_cli("run " + dir.string() + " -o " + (dir / "out").string());
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(r.out.find(dir.string() + ": is a folder, not a scenario file") != std::string::npos);
  CHECK(r.out.find("malformed") == std::string::npos);
}

TEST_CASE("run: explicit hosts listed twice or unknown name the scenario file and the key") {
  const auto dir = ibn::test::scratch_dir("s21-hosts");
  auto doc = ibn::test::read_json_file(kSmall);
  auto& job = doc["jobs"][0];
  job["nodes"] = 2;
  job["gpus_per_node"] = 1;
  job["nics_per_node"] = 1;
  job["placement"] = "explicit";
  job["hosts"] = {"0", "0"};
  const auto twice = dir / "twice.json";
  std::ofstream(twice) << doc.dump();
  auto r = ibn::test::run_cli("run " + twice.string() + " -o " + (dir / "a").string());
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(r.out.find("twice.json: key 'jobs[0].hosts[1]': '0' is listed twice (also at index 0)") !=
        std::string::npos);
  job["hosts"] = {"0", "99999"};
  const auto unknown = dir / "unknown.json";
  std::ofstream(unknown) << doc.dump();
  r = ibn::test::run_cli("run " + unknown.string() + " -o " + (dir / "b").string());
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(r.out.find("unknown.json: key 'jobs[0].hosts[1]': job 'train': explicit node '99999' is neither") !=
        std::string::npos);
}

TEST_CASE("whatif: a point that cannot be built is refused before the first point runs") {
  // Each failed only when its point ran, after the points before it (minutes on a real study).
  const auto dir = ibn::test::scratch_dir("s21-whatif-late");
  struct Case {
    const char* flags;
    const char* says;
  };
  for (const Case& c :
       {Case{"--oversubscription 1:1,100:1", "--oversubscription 100:1: a radix-64 leaf has fewer"},
        Case{"--faults none,1000-link", "point 1t1-1000-link-static: built-in default study: key "
                                        "'faults.random.links_down': 1000 cables asked"},
        Case{"--faults 1-link@host-leaf", "cuts HCA 'host-0' off the fabric"}}) {
    const auto r = ibn::test::run_cli(std::string("whatif ") + c.flags + " -o " + (dir / "w").string());
    INFO(c.flags);
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK(r.out.find(c.says) != std::string::npos);
    CHECK(r.out.find("done in") == std::string::npos); // no point ran
    CHECK(!std::filesystem::exists(dir / "w" / "points"));
  }
}

TEST_CASE("run: keys that change nothing as the scenario stands are reported as warnings") {
  // Each was silently inert: a straggler delay with no straggler, launch-jitter shape with no jitter,
  // cc.params with cc none, a jitter scale with distribution none, flow.* on the packet engine.
  const auto dir = ibn::test::scratch_dir("s21-no-effect");
  const auto r =
      ibn::test::run_cli("run " + kSmall + " -q -o " + (dir / "a").string() +
                         " --set variability.stragglers.delay_us=5 --set variability.launch.sigma=0.9"
                         " --set cc.params.g=0.1 --set flow.solver=simgrid"
                         " --set 'jobs[0].workload.jitter.scale_us=3'");
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto j = ibn::test::read_json_file((dir / "a" / "results.json").string());
  const auto w = j.at("warnings").dump();
  for (const char* k :
       {"variability.stragglers.delay_us is given but variability.stragglers.count is 0",
        "variability.launch.sigma is given but the launch jitter has neither",
        "cc.params is given but cc.algorithm is none",
        "jobs[0].workload.jitter.scale_us is given but jobs[0].workload.jitter.distribution is none",
        "flow.solver is given but the engine is packet"}) {
    CHECK(w.find(k) != std::string::npos);
    CHECK(r.out.find(std::string("warning: no effect: ") + k) != std::string::npos);
  }
  // The same keys where they act: no warning.
  const auto ok =
      ibn::test::run_cli("run " + kSmall + " -q -o " + (dir / "b").string() +
                         " --set variability.stragglers.count=1 --set variability.stragglers.delay_us=5"
                         " --set 'jobs[0].workload.jitter.distribution=normal'"
                         " --set 'jobs[0].workload.jitter.scale_us=3'");
  INFO(ok.out);
  REQUIRE(ok.code == 0);
  CHECK(ok.out.find("no effect") == std::string::npos);
  // The manifest says which variability model ran (the effective configuration leaves ungiven keys out).
  const auto m = ibn::test::read_json_file((dir / "b" / "results.json").string()).at("manifest");
  CHECK(m.at("variability").at("stragglers").at("count") == 1);
  CHECK(m.at("variability").at("stragglers").at("delay_us") == 5.0);
  CHECK(!m.contains("flow")); // packet engine
}

TEST_CASE("run --engine flow: the manifest records the flow engine's settings in effect") {
  const auto dir = ibn::test::scratch_dir("s21-flow-manifest");
  const auto r = ibn::test::run_cli("run " + kSmall + " -q --engine flow -o " + (dir / "a").string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto m = ibn::test::read_json_file((dir / "a" / "results.json").string()).at("manifest");
  CHECK(m.at("flow").at("solver") == "native");
  CHECK(m.at("flow").at("ring_fluid") == "auto");
  CHECK(m.at("flow").at("symmetric_steps") == true);
  CHECK(!m.contains("variability")); // none ran
}

TEST_CASE("run --set: an error about a key the command line set says so, not only the scenario file") {
  // "small-allreduce.json: key 'fabric.params': radix 16 at 7:3 ..." blamed a file that holds 3:1.
  const auto dir = ibn::test::scratch_dir("s21-set-note");
  auto r = ibn::test::run_cli("run " + kSmall + " -q -o " + (dir / "a").string() +
                              " --set fabric.params.oversubscription=7:3");
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(r.out.find("key 'fabric.params': radix 16 at 7:3") != std::string::npos);
  CHECK(r.out.find("(fabric.params.oversubscription=7:3 is from the command line, not the file)") !=
        std::string::npos);
  r = ibn::test::run_cli("run " + kSmall + " -q -o " + (dir / "b").string() +
                         " --set 'jobs[0].workload.op=alltoall' --set 'jobs[0].workload.algorithm=tree'");
  INFO(r.out);
  CHECK(r.code == 2);
  // The algorithm's refusal names the algorithm key (since 2026-12-07; it named workload.op before).
  CHECK(r.out.find("key 'jobs[0].workload.algorithm'") != std::string::npos);
  CHECK(r.out.find("(jobs[0].workload.algorithm=tree is from the command line, not the file)") !=
        std::string::npos);
  // An error about a value the file holds gets no note, though another key of the same object was --set.
  auto doc = ibn::test::read_json_file(kSmall);
  doc["fabric"]["params"]["oversubscription"] = "7:3";
  const auto bad = dir / "bad.json";
  std::ofstream(bad) << doc.dump();
  r = ibn::test::run_cli("run " + bad.string() + " -q -o " + (dir / "c").string() +
                         " --set fabric.params.rate=NDR");
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(r.out.find("bad.json: key 'fabric.params': radix 16 at 7:3") != std::string::npos);
  CHECK(r.out.find("from the command line") == std::string::npos);
  // Checks made while the world is built (after the scenario's own) carry the note too, once.
  r = ibn::test::run_cli("run " + std::string(IBNETSIM_SOURCE_DIR) +
                         "/scenarios/examples/dragonfly-allgather.json -q -o " + (dir / "d").string() +
                         " --set packet.num_vls=1");
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(r.out.find("key 'packet.num_vls': 1 VL with 'df-min' routing") != std::string::npos);
  const auto note = r.out.find("(packet.num_vls=1 is from the command line, not the file)");
  CHECK(note != std::string::npos);
  CHECK(r.out.find("is from the command line", note + 40) == std::string::npos);
}
