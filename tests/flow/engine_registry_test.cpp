// The engine registry (models/engines.hpp): both engines registered with their capabilities; a scenario that
// asks for something the chosen engine ignores gets one warning, on stderr and in results.json
// (manifest.warnings), through the binary.
#include "models/engines.hpp"
#include "tests/apps/run_cli.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <string>

using namespace ibn;

namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

} // namespace

TEST_CASE("engine registry: packet and flow with their capabilities") {
  const auto reg = eng::builtin_engines();
  REQUIRE(reg.contains("packet"));
  REQUIRE(reg.contains("flow"));
  CHECK_THROWS_AS(reg.get("ns-3"), InputError);
  const auto& packet = reg.get("packet").factory.capabilities;
  const auto& flow = reg.get("flow").factory.capabilities;
  CHECK(packet.dcqcn);
  CHECK(packet.pfc);
  CHECK(packet.per_packet_ar);
  CHECK_FALSE(flow.dcqcn);
  CHECK_FALSE(flow.ib_cc);
  CHECK_FALSE(flow.pfc);
  CHECK_FALSE(flow.credits);
  CHECK(flow.per_message_ar);
}

TEST_CASE("engine registry: ignored features make one warning naming each key") {
  const auto reg = eng::builtin_engines();
  pkt::PacketConfig d; // defaults: credits, no CC, AR off: nothing either engine ignores
  for (const auto& e : reg.entries()) CHECK(eng::ignored_features(e.name, e.factory.capabilities, d).empty());

  d.cc = pkt::CcMode::Dcqcn;
  d.flow_control = pkt::FlowControl::Pfc;
  d.ar_mode = pkt::ArMode::PerPacket;
  CHECK(eng::ignored_features("packet", reg.get("packet").factory.capabilities, d).empty());
  const auto w = eng::ignored_features("flow", reg.get("flow").factory.capabilities, d);
  REQUIRE(w.size() == 1);
  CHECK(w[0].find("engine 'flow'") != std::string::npos);
  CHECK(w[0].find("cc.algorithm dcqcn") != std::string::npos);
  CHECK(w[0].find("packet.flow_control pfc") != std::string::npos);
  CHECK(w[0].find("per message") != std::string::npos);

  d = {};
  d.cc = pkt::CcMode::IbCc;
  const auto ib = eng::ignored_features("flow", reg.get("flow").factory.capabilities, d);
  REQUIRE(ib.size() == 1);
  CHECK(ib[0].find("cc.algorithm ibcc") != std::string::npos);
}

TEST_CASE("run --engine flow with DCQCN and PFC: one warning on stderr and in manifest.warnings") {
  const auto dir = ibn::test::scratch_dir("engine-warnings");
  const std::string scenario = std::string(IBNETSIM_SOURCE_DIR) + "/scenarios/examples/small-allreduce.json";
  const std::string common = " --set 'jobs[0].workload.iterations=2' --set 'jobs[0].workload.sizes=256K'"
                             " --set cc.algorithm=dcqcn --set 'packet={\"flow_control\":\"pfc\"}' -q -o ";
  for (const std::string engine : {"flow", "packet"}) {
    const std::string out = (dir / engine).string();
    const auto r = ibn::test::run_cli("run " + scenario + " --engine " + engine + common + out);
    INFO(engine << ":\n" << r.out);
    REQUIRE(r.code == 0);
    const auto j = test::read_json_file(out + "/results.json");
    const auto& warnings = j.at("manifest").at("warnings");
    REQUIRE(warnings.is_array());
    if (engine == "flow") {
      CHECK(count(r.out, "engine 'flow' ignores") == 1);
      REQUIRE(warnings.size() == 1);
      const auto text = warnings[0].get<std::string>();
      CHECK(text.find("cc.algorithm dcqcn") != std::string::npos);
      CHECK(text.find("packet.flow_control pfc") != std::string::npos);
    } else {
      CHECK(count(r.out, "ignores") == 0);
      CHECK(warnings.empty());
    }
  }
}
