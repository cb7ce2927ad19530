// Bill of materials: counts per tier on the DGX SuperPOD H100 4-SU fabric, cable classes by length,
// twin-port cages, cost and power from a catalog, and the catalog's refusals (an entry without a source).
#include "sim/error.hpp"
#include "topology/bom.hpp"
#include "topology/rail_optimized.hpp"

#include "tests/test_util.hpp"

#include <doctest/doctest.h>

using namespace ibn;
using namespace ibn::topo;
using ibn::test::error_of;

namespace {

const std::string kCatalog = std::string(IBNETSIM_SOURCE_DIR) + "/data/catalog/parts.json";

nlohmann::json part(const std::string& model, int ports, double price) {
  nlohmann::json src = {{"source", "test"}, {"date", "2026-12-03"}};
  return {{"model", model},
          {"ports", ports},
          {"ports_per_cage", 2},
          {"rate", "NDR"},
          {"power_w", 100},
          {"price_usd", price},
          {"sources", {{"ports", src}, {"rate", src}, {"power_w", src}, {"price_usd", src}}}};
}

nlohmann::json cable(const std::string& model, double max_m, double price) {
  nlohmann::json src = {{"source", "test"}, {"date", "2026-12-03"}};
  return {
      {"model", model},
      {"max_length_m", max_m},
      {"power_w", 0},
      {"price_usd", price},
      {"price_per_m_usd", 1},
      {"sources", {{"max_length_m", src}, {"power_w", src}, {"price_usd", src}, {"price_per_m_usd", src}}}};
}

nlohmann::json small_catalog() {
  auto twin = part("twin", 2, 10);
  auto single = part("single", 1, 5);
  single.erase("ports_per_cage");
  return {{"switches", {part("sw64", 64, 1000)}},
          {"nics", nlohmann::json::array()},
          {"cables", {cable("dac", 3, 20), cable("fibre", 500, 2)}},
          {"transceivers", {twin, single}}};
}

RailOptimizedParams h100(std::int64_t nodes) {
  RailOptimizedParams p;
  p.nodes = nodes;
  p.ufm_ports = 4;
  p.speed = parse_link_speed("NDR", "rate");
  return p;
}

} // namespace

TEST_CASE("shipped catalog: every figure has a source and a date, it loads") {
  const auto c = Catalog::load(kCatalog);
  CHECK(c.find(c.switches, "qm9700"));
  CHECK(c.find(c.switches, "QM9700")); // model names are case-insensitive on lookup
  CHECK(c.find(c.switches, "q3400"));
  CHECK(c.find(c.switches, "sn5600"));
  CHECK(c.find(c.switches, "qm8700"));
  CHECK(c.find(c.nics, "connectx-7"));
  for (const auto* list : {&c.switches, &c.nics, &c.cables, &c.transceivers})
    for (const auto& p : *list)
      for (const auto& [figure, s] : p.sources) {
        CAPTURE(p.model);
        CAPTURE(figure);
        CHECK(!s.source.empty());
        CHECK(s.date.size() == 10);
      }
}

TEST_CASE("catalog refuses an entry without a source, unknown keys and negative figures") {
  auto doc = small_catalog();
  doc["switches"][0]["sources"].erase("price_usd");
  CHECK(error_of([&] { Catalog::parse(doc, "cat.json"); }).find("figure 'price_usd' has no source") !=
        std::string::npos);
  doc = small_catalog();
  doc["switches"][0]["sources"]["power_w"]["source"] = "";
  CHECK(error_of([&] { Catalog::parse(doc, "cat.json"); }).find("non-empty 'source' and 'date'") !=
        std::string::npos);
  doc = small_catalog();
  doc["switches"][0].erase("sources");
  CHECK(error_of([&] { Catalog::parse(doc, "cat.json"); }).find("key 'sources' is required") !=
        std::string::npos);
  doc = small_catalog();
  doc["switches"][0]["colour"] = "red";
  CHECK(error_of([&] { Catalog::parse(doc, "cat.json"); }).find("unknown key 'colour'") != std::string::npos);
  doc = small_catalog();
  doc["cables"][0]["price_usd"] = -1;
  CHECK(error_of([&] { Catalog::parse(doc, "cat.json"); }).find("must be >= 0") != std::string::npos);
  CHECK(error_of([] { Catalog::load("/nonexistent/cat.json"); }).find("cannot open") != std::string::npos);
}

TEST_CASE("BOM of the SuperPOD H100 4-SU fabric: tiers, cable classes, twin-port cages, cost and power") {
  const Fabric f = build_rail_optimized(h100(127)); // host cables 3 m (DAC), leaf-spine 30 m (fibre)
  const auto c = Catalog::parse(small_catalog(), "cat");
  const Bom b = bill_of_materials(f, c);
  REQUIRE(b.tiers.size() == 2);
  CHECK(b.tiers[0].tier == "leaf");
  CHECK(b.tiers[0].switches == 32);
  CHECK(b.tiers[0].cables == 1020); // node-leaf incl. the 4 UFM cables (the reference's "compute and UFM")
  CHECK(b.tiers[0].cables_by_class.at("dac") == 1020);
  CHECK(b.tiers[0].ports_used == 1020 + 1024);
  CHECK(b.tiers[0].ports_free == 32 * 64 - 2044); // the 4 empty slots of the UFM node
  CHECK(b.tiers[1].tier == "spine");
  CHECK(b.tiers[1].switches == 16);
  CHECK(b.tiers[1].cables == 1024);
  CHECK(b.tiers[1].cables_by_class.at("fibre") == 1024);
  CHECK(b.switches == 48);
  CHECK(b.cables == 2044);
  // Fibre leaf-spine links: leaf uplinks on ports 33..64 = 16 twin cages per leaf; spines use all 32 cages.
  CHECK(b.tiers[0].transceivers == 32 * 16);
  CHECK(b.tiers[1].transceivers == 16 * 32);
  CHECK(b.transceivers == 1024);
  const double want_cost = 48 * 1000.0 + 1020 * (20 + 3.0) + 1024 * (2 + 30.0) + 1024 * 10;
  CHECK(b.cost_usd == doctest::Approx(want_cost));
  CHECK(b.power_w == doctest::Approx(48 * 100.0 + 1024 * 100.0));
  CHECK(b.nics == 1016);
  CHECK(!b.warnings.empty()); // no NIC in this catalog: counted, not priced

  const auto j = bom_to_json(b);
  CHECK(j.at("switches") == 48);
  CHECK(j.at("cables") == 2044);
  CHECK(j.at("transceivers") == 1024);
  CHECK(j.at("by_tier").size() == 2);
  CHECK(j.at("by_tier")[1].at("tier") == "spine");
  CHECK(bom_to_csv(b).find("switch,sw64,leaf,32") != std::string::npos);
}

TEST_CASE("BOM: fibre to an HCA takes a single-port module, a switch must be in the catalog") {
  auto p = h100(32);
  p.ufm_ports = 0;
  p.cables.host_m = 10;
  const Fabric f = build_rail_optimized(p);
  const auto c = Catalog::parse(small_catalog(), "cat");
  const Bom b = bill_of_materials(f, c);
  // 256 host fibres: 256 single-port modules at the NICs, 8 leaves x 16 down cages; 256 leaf-spine fibres:
  // 8 leaves x 16 up cages + 4 spines x 32 cages.
  CHECK(b.transceivers == 256 + 8 * 16 + 8 * 16 + 4 * 32);
  CHECK(error_of([&] {
          bill_of_materials(f, c, {"qm9999", ""});
        }).find("not in the catalog") != std::string::npos);
  RailOptimizedParams q = p;
  q.radix = 40;
  q.su_nodes = 20;
  // 32 nodes in SUs of 20: 2 SUs = 16 leaves, 320 up-links over 10 spines; a 64-port part covers radix 40.
  CHECK(bill_of_materials(build_rail_optimized(q), c).switches == 26);
  q.speed = parse_link_speed("HDR", "rate");
  CHECK(error_of([&] {
          bill_of_materials(build_rail_optimized(q), c);
        }).find("no 200 Gb/s switch with 40 ports") != std::string::npos);
}
