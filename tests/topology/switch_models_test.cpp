// The switch model catalog: names, inference from NodeDescriptions, generator key, fabric JSON and
// ibnetdiscover import.
#include "sim/error.hpp"
#include "topology/fabric_io.hpp"
#include "topology/generators.hpp"
#include "topology/ibnetdiscover.hpp"
#include "topology/switch_models.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace ibn;
using namespace ibn::topo;

TEST_CASE("switch catalog: ids, part numbers, every entry has a source") {
  CHECK(std::string(find_switch_model("quantum-2")->id) == "quantum-2");
  CHECK(std::string(find_switch_model("MQM9700")->id) == "quantum-2");
  CHECK(std::string(find_switch_model("qm8790")->id) == "quantum");
  CHECK(std::string(find_switch_model("SN4600")->id) == "spectrum-3");
  CHECK(std::string(find_switch_model("q3400")->id) == "quantum-x800");
  CHECK(find_switch_model("sx6036") == nullptr);
  for (const auto& m : switch_models()) {
    CAPTURE(m.id);
    CHECK(m.latency_ns > 0);
    CHECK(std::string(m.source).size() > 20);
  }
  CHECK_THROWS_WITH_AS(switch_model_or_throw("foo", "--switch-model"),
                       doctest::Contains("unknown switch model 'foo' (known: quantum, quantum-2"),
                       InputError);
}

TEST_CASE("switch catalog: models inferred from NodeDescriptions") {
  CHECK(std::string(infer_switch_model("MF0;CNTSN-POD229-QM97-IB-02:MQM9700/U1")->id) == "quantum-2");
  CHECK(std::string(infer_switch_model("Quantum-2 Mellanox Technologies")->id) == "quantum-2");
  CHECK(std::string(infer_switch_model("Quantum Mellanox Technologies")->id) == "quantum");
  CHECK(std::string(infer_switch_model("MF0;leaf07:SN4600C/U1")->id) == "spectrum-3");
  CHECK(infer_switch_model("MF0;ib5:SX6036/U1") == nullptr);
  CHECK(infer_switch_model("MF0;sn5600-rack:SX6036/U1") == nullptr); // a host name is not read for a model
  CHECK(infer_switch_model("5FB0405-leaf-IB01") == nullptr);
}

TEST_CASE("switch-model on generate: one model or per tier, unknown names list the known ones") {
  auto gen = builtin_generators().get("fat-tree").factory;
  const Fabric f = gen({{"tiers", "2"}, {"radix", "4"}, {"switch-model", "leaf=sn4600,spine=spectrum-4"}});
  for (NodeId n = 0; n < f.num_nodes(); ++n) {
    const Node& node = f.node(n);
    if (node.kind == NodeKind::Hca) CHECK(node.switch_model.empty());
    if (node.kind == NodeKind::Switch)
      CHECK(node.switch_model == (node.tier == 1 ? "spectrum-3" : "spectrum-4"));
  }
  CHECK_THROWS_WITH_AS(gen({{"radix", "4"}, {"switch-model", "qm1234"}}),
                       doctest::Contains("fat-tree switch-model: unknown switch model 'qm1234' (known:"),
                       InputError);
  CHECK_THROWS_AS(gen({{"radix", "4"}, {"switch-model", "top=quantum"}}), InputError);
  // JSON round trip keeps the model; an unknown one names the JSON path.
  const Fabric back = fabric_from_json(fabric_to_json(f), "mem");
  CHECK(back.node(*back.find_node("spine-0")).switch_model == "spectrum-4");
  auto j = fabric_to_json(f);
  for (auto& n : j["nodes"])
    if (n.contains("switch_model")) n["switch_model"] = "nope";
  CHECK_THROWS_WITH_AS(fabric_from_json(j, "mem"), doctest::Contains("switch_model"), InputError);
}

TEST_CASE("ibnetdiscover import: the QM9700 fixture is Quantum-2, the SX6036 one names no model") {
  const auto q = import_ibnetdiscover_file(std::string(IBNETSIM_TEST_DATA) +
                                           "/ibnetdiscover/qm9700-ndr200-redacted-snippet-charlie0129.txt");
  std::size_t quantum2 = 0;
  for (NodeId n = 0; n < q.fabric.num_nodes(); ++n) quantum2 += q.fabric.node(n).switch_model == "quantum-2";
  CHECK(quantum2 == 1);
  REQUIRE(!q.notes.empty());
  CHECK(q.notes.front().find("identified as quantum-2") != std::string::npos);
  const auto s = import_ibnetdiscover_file(std::string(IBNETSIM_TEST_DATA) +
                                           "/ibnetdiscover/sx6036-qdr-fdr10-2014-ibnetdiscover.txt");
  for (NodeId n = 0; n < s.fabric.num_nodes(); ++n) CHECK(s.fabric.node(n).switch_model.empty());
  REQUIRE(s.notes.size() == 1);
  CHECK(s.notes.front().find("name no known model") != std::string::npos);
}
