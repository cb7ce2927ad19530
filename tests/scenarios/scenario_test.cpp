// Scenario files: the declared schema, defaults, --set overrides and every bad-input message.
#include "models/routing/routing.hpp"
#include "scenarios/placement.hpp"
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
  CHECK(s.engine == EngineKind::Packet);
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
  CHECK(s.adaptive_routing == pkt::ArMode::PerPacket);
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

TEST_CASE("scenario: choices are parsed once into enums, named as the tables and registries name them") {
  const auto s = make_scenario(
      J{{"engine", "flow"},
        {"cc", {{"algorithm", "dcqcn"}}},
        {"jobs", J::array({J{{"workload", {{"op", "allgather"}, {"jitter", {{"distribution", "exponential"}}}}}}})},
        {"background", J::array({J{{"pattern", "incast"}}})}},
      "x", "");
  CHECK(s.engine == EngineKind::Flow);
  CHECK(s.cc == pkt::CcMode::Dcqcn);
  CHECK(s.jobs[0].workload.op == CollOp::AllGather);
  CHECK(s.jobs[0].workload.jitter.distribution == JitterDist::Exponential);
  CHECK(s.background[0].pattern == BackgroundPattern::Incast);
  // A key's accepted names are the registry's (or the enum table's), so a new entry is accepted everywhere.
  const auto& schema = scenario_schema();
  std::vector<std::string> routing{"auto"};
  const auto routing_reg = routing::builtin_routing();
  for (const auto& e : routing_reg.entries()) routing.push_back(e.name);
  CHECK(schema.find("routing.algorithm")->choices == routing);
  std::vector<std::string> placement;
  const auto placement_reg = builtin_placement_policies();
  for (const auto& e : placement_reg.entries()) placement.push_back(e.name);
  CHECK(schema.find("jobs[].placement")->choices == placement);
  std::vector<std::string> algorithms;
  const auto collectives_reg = builtin_collectives();
  for (const auto& e : collectives_reg.entries()) algorithms.push_back(e.name);
  CHECK(schema.find("jobs[].workload.algorithm")->choices == algorithms);
  CHECK(schema.find("routing.adaptive")->choices == std::vector<std::string>{"off", "per-packet", "bounded"});
  CHECK(error_of([] { make_scenario(J{{"jobs", J::array({J{{"placement", "diagonal"}}})}}, "s", ""); })
            .find("'diagonal' is not one of: linear") != std::string::npos);
}

TEST_CASE("scenario: packet keys are declared once and typed by their declaration") {
  const auto& schema = scenario_schema();
  const pkt::PacketConfig defaults;
  const auto written = defaults.to_json();
  for (const auto& k : pkt::packet_knobs()) {
    CAPTURE(k.name);
    const auto* d = schema.find(std::string("packet.") + k.name);
    REQUIRE(d != nullptr);
    if (k.kind != pkt::KnobKind::Object) CHECK(d->default_value == written.at(k.name)); // what the engine uses
    CHECK_FALSE(d->fill_default);
    CHECK(!d->description.empty());
  }
  CHECK(written.size() == pkt::packet_knobs().size()); // to_json writes every knob, and only those
  // Defaults are documented but not written into the effective configuration (a profile may set them).
  CHECK(make_scenario(J::object(), "x", "").effective.at("packet") == J::object());
  const auto s = make_scenario(J::object(), "x", "", {"packet.mtu_bytes=2048", "packet.trace_rates=true"});
  CHECK(s.packet == J{{"mtu_bytes", 2048}, {"trace_rates", true}});
  CHECK(error_of([] { make_scenario(J::object(), "s", "", {"packet.mtu_bytes=big"}); }).find("not an integer") !=
        std::string::npos);
  CHECK(error_of([] { make_scenario(J{{"packet", {{"colour", 1}}}}, "s.json", ""); })
            .find("s.json: key 'packet.colour': unknown key (known here: link_layer, mtu_bytes") == 0);
  CHECK(error_of([] { make_scenario(J{{"packet", {{"num_vls", 16}}}}, "s.json", ""); })
            .find("key 'packet.num_vls': value 16 out of range [1, 15]") != std::string::npos);
  CHECK(error_of([] { make_scenario(J{{"packet", {{"flow_control", "xon"}}}}, "s.json", ""); })
            .find("'xon' is not one of: credits, pfc") != std::string::npos);
  // Rules between knobs are checked when the scenario is read, not when a point runs.
  CHECK(error_of([] { make_scenario(J{{"packet", {{"mtu_bytes", 3000}}}}, "s.json", ""); })
            .find("s.json: packet.mtu_bytes: must be 256, 512") == 0);
  // The packet engine reads the same declaration: apply_json checks kind and range, to_json round-trips.
  pkt::PacketConfig c;
  c.apply_json(J{{"link_layer", "rocev2"}, {"ack_timeout_us", 8.0}, {"vl_arb_low", "0:4"}}, "packet");
  CHECK(c.header_bytes == 82);
  CHECK(c.ack_timeout == Time::us(8));
  pkt::PacketConfig back;
  back.apply_json(c.to_json(), "packet");
  CHECK(back.to_json() == c.to_json());
  CHECK(error_of([] { pkt::PacketConfig().apply_json(J{{"retry_count", 9}}, "packet"); }) ==
        "packet.retry_count: must be at most 7, got 9");
  CHECK(error_of([] { pkt::PacketConfig().apply_json(J{{"num_vls", 1.5}}, "packet"); })
            .find("packet.num_vls: expected a whole number") == 0);
}

TEST_CASE("scenario: conflicting keys are refused, naming both, a packet key alone sets the scenario key") {
  // routing.adaptive vs packet.ar_mode
  CHECK(error_of([] {
          make_scenario(J{{"routing", {{"adaptive", "per-packet"}}}, {"packet", {{"ar_mode", "off"}}}}, "s.json", "");
        }).find("s.json: keys 'routing.adaptive' (\"per-packet\") and 'packet.ar_mode' (\"off\") disagree") == 0);
  CHECK(error_of([] {
          make_scenario(J{{"packet", {{"ar_mode", "bounded"}}}}, "s.json", "", {"routing.adaptive=off"});
        }).find("'routing.adaptive'") != std::string::npos);
  const auto same =
      make_scenario(J{{"routing", {{"adaptive", "bounded"}}}, {"packet", {{"ar_mode", "bounded"}}}}, "s", "");
  CHECK(same.adaptive_routing == pkt::ArMode::Bounded);
  const auto alone = make_scenario(J{{"packet", {{"ar_mode", "per-packet"}}}}, "s", "");
  CHECK(alone.adaptive_routing == pkt::ArMode::PerPacket);
  CHECK(alone.effective.at("routing").at("adaptive") == "per-packet");
  // A study re-reads the effective configuration: it stays consistent.
  CHECK(make_scenario(alone.effective, "s", "").adaptive_routing == pkt::ArMode::PerPacket);

  // cc.algorithm vs packet.cc: packet.cc no longer survives cc.algorithm none.
  CHECK(error_of([] {
          make_scenario(J{{"cc", {{"algorithm", "none"}}}, {"packet", {{"cc", "dcqcn"}}}}, "s.json", "");
        }).find("s.json: keys 'cc.algorithm' (\"none\") and 'packet.cc' (\"dcqcn\") disagree") == 0);
  CHECK(error_of([] { make_scenario(J{{"packet", {{"cc", "ibcc"}}}}, "s.json", "", {"cc.algorithm=none"}); })
            .find("'packet.cc'") != std::string::npos);
  const auto cc_alone = make_scenario(J{{"packet", {{"cc", "ibcc"}}}}, "s", "");
  CHECK(cc_alone.cc == pkt::CcMode::IbCc);
  CHECK(cc_alone.effective.at("cc").at("algorithm") == "ibcc");
  pkt::PacketConfig cfg;
  apply_packet_settings(cc_alone, cfg);
  CHECK(cfg.cc == pkt::CcMode::IbCc);
  pkt::PacketConfig none_cfg;
  none_cfg.cc = pkt::CcMode::Dcqcn; // whatever came before, the scenario's cc.algorithm decides
  apply_packet_settings(make_scenario(J::object(), "s", ""), none_cfg);
  CHECK(none_cfg.cc == pkt::CcMode::None);
}
