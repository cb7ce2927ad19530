// Scenario files: the declared schema, defaults, --set overrides and every bad-input message.
#include "scenarios/scenario.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace ibn;
using namespace ibn::scen;
using ibn::test::error_of;
using J = nlohmann::json;

TEST_CASE("scenario: an empty document gets every default") {
  const auto s = make_scenario(J::object(), "x.json", "");
  CHECK(s.engine == "packet");
  CHECK(s.seed == 1);
  CHECK(s.fabric_generator == "fat-tree");
  REQUIRE(s.jobs.size() == 1);
  CHECK(s.jobs[0].name == "job0");
  CHECK(s.jobs[0].workload.sizes_bytes == std::vector<std::uint64_t>{16u << 20});
  CHECK(s.jobs[0].workload.iterations == 100);
  // The effective configuration holds the defaults explicitly (it is what manifests record).
  CHECK(s.effective.at("jobs").at(0).at("workload").at("op") == "allreduce");
  CHECK(s.effective.at("nvlink").at("bandwidth_gbps") == 3600.0);
}

TEST_CASE("scenario: sizes accept strings, numbers and comma lists") {
  const auto s = make_scenario(J{{"jobs", J::array({J{{"workload", {{"sizes", "1M,64K,4096"}}}}})}}, "x", "");
  CHECK(s.jobs[0].workload.sizes_bytes == std::vector<std::uint64_t>{1u << 20, 65536, 4096});
  const auto t = make_scenario(J{{"jobs", J::array({J{{"workload", {{"sizes", J::array({1024, "2K"})}}}}})}}, "x", "");
  CHECK(t.jobs[0].workload.sizes_bytes == std::vector<std::uint64_t>{1024, 2048});
}

TEST_CASE("scenario: --set overrides typed by the declaration") {
  const auto s = make_scenario(default_scenario_json(), "built-in", "",
                               {"seed=7", "jobs[0].nodes=4", "jobs.1.workload.loop=false", "routing.adaptive=per-packet",
                                "jobs[0].workload.sizes=64K,1M", "fabric.params={\"tiers\":2,\"radix\":8}"});
  CHECK(s.seed == 7);
  CHECK(s.jobs[0].nodes == 4);
  CHECK_FALSE(s.jobs[1].workload.loop);
  CHECK(s.adaptive_routing == "per-packet");
  CHECK(s.jobs[0].workload.sizes_bytes == std::vector<std::uint64_t>{65536, 1u << 20});
  CHECK(s.fabric_params.at("radix") == 8);
  // Appending a job with index == size.
  const auto t = make_scenario(J::object(), "x", "", {"jobs[1].nodes=3"});
  REQUIRE(t.jobs.size() == 2);
  CHECK(t.jobs[1].nodes == 3);
  CHECK(t.jobs[1].gpus_per_node == 8);
}

TEST_CASE("scenario: bad input names the key") {
  CHECK(error_of([] { make_scenario(J{{"sed", 1}}, "s.json", ""); }).find("s.json: key 'sed': unknown key") == 0);
  CHECK(error_of([] { make_scenario(J{{"jobs", J::array({J{{"nodez", 2}}})}}, "s.json", ""); })
            .find("key 'jobs[0].nodez': unknown key") != std::string::npos);
  CHECK(error_of([] { make_scenario(J{{"jobs", J::array({J{{"nodes", -2}}})}}, "s.json", ""); })
            .find("key 'jobs[0].nodes': value -2 out of range") != std::string::npos);
  CHECK(error_of([] { make_scenario(J{{"jobs", J::array({J{{"nodes", "two"}}})}}, "s.json", ""); })
            .find("key 'jobs[0].nodes': expected integer") != std::string::npos);
  CHECK(error_of([] { make_scenario(J{{"engine", "fluid"}}, "s.json", ""); })
            .find("'fluid' is not one of: packet, flow") != std::string::npos);
  CHECK(error_of([] { make_scenario(J{{"jobs", J::array({J{{"workload", {{"sizes", "-1M"}}}}})}}, "s.json", ""); })
            .find("jobs[0].workload.sizes[0]") != std::string::npos);
  CHECK(error_of([] { make_scenario(J{{"jobs", J::array({J{{"workload", {{"compute_gap_us", -5}}}}})}}, "s", ""); })
            .find("compute_gap_us': value -5 out of range") != std::string::npos);
  CHECK(error_of([] { make_scenario(J{{"jobs", J::array()}}, "s.json", ""); }).find("at least one job") !=
        std::string::npos);
  CHECK(error_of([] { make_scenario(J{{"jobs", J::array({J{{"workload", {{"loop", true}}}}})}}, "s", ""); })
            .find("never end") != std::string::npos);
  CHECK(error_of([] { make_scenario(J::object(), "s", "", {"jobs[3].nodes=2"}); }).find("index 3 beyond") !=
        std::string::npos);
  CHECK(error_of([] { make_scenario(J::object(), "s", "", {"seed"}); }).find("expected key=value") != std::string::npos);
  CHECK(error_of([] { make_scenario(J::object(), "s", "", {"bogus.key=1"}); }).find("unknown key 'bogus.key'") !=
        std::string::npos);
  CHECK(error_of([] { make_scenario(J::object(), "s", "", {"seed=1.5"}); }).find("not an integer") != std::string::npos);
  CHECK(error_of([] {
          make_scenario(J{{"jobs", J::array({J{{"nodes", 2}, {"placement", "explicit"}, {"hosts", "1"}}})}}, "s", "");
        }).find("needs 2 entries") != std::string::npos);
}

TEST_CASE("scenario: malformed JSON gives the file, line and column") {
  const auto dir = std::filesystem::temp_directory_path() / "ibnetsim-scenario-test";
  std::filesystem::create_directories(dir);
  const auto path = (dir / "bad.json").string();
  std::ofstream(path) << "{\n  \"seed\": 1,\n  \"engine\" \"packet\"\n}\n";
  const auto e = error_of([&] { load_scenario(path); });
  CHECK(e.find(path + ":3:") == 0);
  CHECK(e.find("malformed JSON") != std::string::npos);
  CHECK(error_of([&] { load_scenario((dir / "missing.json").string()); }).find("cannot open") != std::string::npos);
}

TEST_CASE("scenario: every declared key has a description, and the Markdown lists it") {
  const auto& schema = scenario_schema();
  const auto md = schema.markdown();
  for (const auto& k : schema.keys()) {
    CHECK_MESSAGE(!k.description.empty(), k.path);
    CHECK_MESSAGE(md.find("`" + k.path + "`") != std::string::npos, k.path);
  }
}

TEST_CASE("scenario: docs/scenarios.md holds the generated key table verbatim") {
  std::ifstream in(std::string(IBNETSIM_SOURCE_DIR) + "/docs/scenarios.md");
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  CHECK_MESSAGE(ss.str().find(scenario_schema().markdown()) != std::string::npos,
                "regenerate the table with `ibnetsim list --keys`");
}

TEST_CASE("scenario: every example in scenarios/examples validates") {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(IBNETSIM_SOURCE_DIR) + "/scenarios/examples")) {
    if (e.path().extension() != ".json") continue;
    CHECK_NOTHROW(load_scenario(e.path().string()));
    ++n;
  }
  CHECK(n >= 3);
}
