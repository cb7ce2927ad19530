// FlowEngine built for the HCAs a run uses (issue 19 item 3): only their hosts and the links their routes can
// take are made in SimGrid, the times and the report are those of the engine built with every HCA and link,
// and a send outside the declared HCAs (or timed faults, which may reroute anywhere) is an internal error.
//
// Each simulation runs in a forked child (SimGrid allows one engine per process; sim/child_processes.hpp).
#include "models/common/route.hpp"
#include "models/flow/flow_engine.hpp"
#include "models/routing/routing.hpp"
#include "scenarios/runner.hpp"
#include "scenarios/scenario.hpp"
#include "sim/child_processes.hpp"
#include "tests/test_util.hpp"
#include "topology/generators.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <optional>
#include <set>
#include <stdexcept>
#include <vector>

using namespace ibn;
using nlohmann::json;

namespace {

/// 3-tier fat-tree of radix-8 switches: 128 hosts, 384 cables.
topo::Fabric three_tier() {
  topo::FatTreeParams p;
  p.tiers = 3;
  p.radix = 8;
  return topo::build_fat_tree(p);
}

/// Eight HCAs over several pods.
const std::vector<routing::HcaIndex> kUsed{0, 5, 17, 40, 63, 64, 90, 127};

/// A ring over kUsed plus two flows into HCA 40 (shared links), on a platform of kUsed or of every HCA:
/// delivery times, the report (links, idle links, extra) and what was made.
json ring_run(const topo::Fabric& f, const routing::RoutingTables& t, bool ar, bool declare) {
  return json::parse(run_in_child_process([&] {
    flow::FlowConfig c;
    c.adaptive_routing = ar;
    std::optional<std::vector<routing::HcaIndex>> used;
    if (declare) used = kUsed;
    flow::FlowEngine e(f, t, c, used);
    std::vector<std::int64_t> done;
    auto send = [&](routing::HcaIndex s, routing::HcaIndex d, std::uint64_t bytes) {
      const std::size_t k = done.size();
      done.push_back(-1);
      e.send({s, d, bytes, 0, 0}, [&done, k](Time x) { done[k] = x.count_ps(); });
    };
    for (std::size_t i = 0; i < kUsed.size(); ++i) send(kUsed[i], kUsed[(i + 1) % kUsed.size()], 3'000'000);
    send(0, 40, 1'000'000);
    send(127, 40, 2'000'000);
    e.run();
    const eng::EngineReport r = e.report();
    json links = json::array(), idle = json::array();
    for (const auto& l : r.links)
      links.push_back(
          {l.from_tier, l.to_tier, l.capacity_gbps, l.payload_bytes, l.wire_bytes, l.busy.count_ps()});
    for (const auto& i : r.idle_links) idle.push_back({i.from_tier, i.to_tier, i.count});
    return json{{"done", done},
                {"links", links},
                {"idle", idle},
                {"extra", r.extra},
                {"events", r.events},
                {"links_made", e.links_made()},
                {"hosts_made", e.hosts_made()},
                {"subset", e.platform_subset()}}
        .dump();
  }));
}

} // namespace

TEST_CASE("flow: a small job on a large fabric makes only its routes' links, with the same results") {
  const topo::Fabric f = three_tier();
  const routing::RoutingTables t = routing::route_ftree(f);
  REQUIRE(t.num_hcas() == 128);
  // The directed links of the static routes between every pair of used HCAs.
  std::set<std::uint32_t> on_routes;
  for (const auto s : kUsed)
    for (const auto d : kUsed)
      if (s != d)
        for (const auto& h : common::static_route(f, t, s, d))
          on_routes.insert(2 * h.link + (f.link(h.link).a.node == h.from ? 0u : 1u));
  for (const bool ar : {false, true}) {
    CAPTURE(ar);
    const json all = ring_run(f, t, ar, false), sub = ring_run(f, t, ar, true);
    CHECK(all["subset"] == false);
    CHECK(all["links_made"] == 2 * f.num_links());
    CHECK(all["hosts_made"] == 128);
    CHECK(sub["subset"] == true);
    CHECK(sub["hosts_made"] == kUsed.size());
    if (ar) // every port of the AR groups on the way: more than the static routes, fewer than all
      CHECK(sub["links_made"].get<std::size_t>() > on_routes.size());
    else
      CHECK(sub["links_made"] == on_routes.size());
    CHECK(sub["links_made"].get<std::size_t>() < f.num_links());
    for (const auto& d : sub["done"]) CHECK(d.get<std::int64_t>() > 0);
    // Same times (to the ps), same link records, the links never made folded into the same idle counts.
    CHECK(sub["done"] == all["done"]);
    CHECK(sub["links"] == all["links"]);
    CHECK(sub["idle"] == all["idle"]);
    CHECK(sub["extra"] == all["extra"]);
    CHECK(sub["events"] == all["events"]);
  }
}

TEST_CASE("flow: an HCA rate cap makes injection links for the used HCAs only, none where it does not bind") {
  const topo::Fabric f = three_tier();
  const routing::RoutingTables t = routing::route_ftree(f);
  const double link_gbps = f.link(t.hca_link(0)).speed.rate_gbps();
  auto run = [&](double cap_gbps, bool declare) {
    return json::parse(run_in_child_process([&] {
      flow::FlowConfig c;
      c.hca_rate_gbps = cap_gbps;
      std::optional<std::vector<routing::HcaIndex>> used;
      if (declare) used = kUsed;
      flow::FlowEngine e(f, t, c, used);
      std::int64_t done = -1;
      e.send({0, 127, 1'000'000, 0, 0}, [&](Time x) { done = x.count_ps(); });
      e.run();
      return json{{"done", done}, {"links_made", e.links_made()}, {"extra", e.report().extra}}.dump();
    }));
  };
  const json none = run(0, true), at = run(link_gbps, true), below = run(link_gbps / 2, true),
             below_all = run(link_gbps / 2, false);
  // A cap at the link rate does not bind: no injection link, the time of no cap (it used to index past the
  // links with the HCA's "no injection link" mark).
  CHECK(at["done"] == none["done"]);
  CHECK(at["links_made"] == none["links_made"]);
  CHECK(below["links_made"] == none["links_made"].get<std::size_t>() + kUsed.size());
  CHECK(below_all["links_made"] == 2 * f.num_links() + t.num_hcas());
  CHECK(below["done"] == below_all["done"]);
  CHECK(below["extra"] == below_all["extra"]); // simgrid_links counts the whole platform
  CHECK(below["done"].get<std::int64_t>() > none["done"].get<std::int64_t>());
}

TEST_CASE("flow: a send outside the used HCAs and timed faults on a partial platform are internal errors") {
  const topo::Fabric f = three_tier();
  const routing::RoutingTables t = routing::route_ftree(f);
  const json r = json::parse(run_in_child_process([&] {
    flow::FlowEngine e(f, t, {}, kUsed);
    json out;
    auto logic = [](const std::function<void()>& fn) -> std::string {
      try {
        fn();
      } catch (const std::logic_error& ex) {
        return ex.what();
      }
      return "no logic_error";
    };
    out["send"] = logic([&] { e.send({0, 1, 10, 0, 0}, {}); });
    out["route"] = logic([&] { e.simgrid_route(2, 5); });
    out["path"] = logic([&] { e.static_path(5, 3); });
    out["faults"] = logic([&] { e.schedule_link_down(0, Time::us(1)); });
    out["declared_ok"] = e.simgrid_route(0, 127).size();
    return out.dump();
  }));
  for (const char* k : {"send", "route", "path", "faults"}) {
    CAPTURE(k);
    CHECK(r[k].get<std::string>().find("flow engine") != std::string::npos);
  }
  CHECK(r["send"].get<std::string>().find("not among the used HCAs") != std::string::npos);
  CHECK(r["faults"].get<std::string>().find("timed faults") != std::string::npos);
  CHECK(r["declared_ok"].get<std::size_t>() == 6); // HCA, leaf, spine, core, spine, leaf -> HCA
}

TEST_CASE("flow: the runner declares every job's and background pattern's HCAs") {
  // A job and a uniform background on part of a 128-host fabric, on the flow engine: any transfer
  // between HCAs the runner did not declare would stop the run with an internal error. The tier tables
  // count every directed cable (made, made and idle, or never made).
  const json sj = {
      {"name", "declared"},
      {"seed", 3},
      {"fabric", {{"generator", "fat-tree"}, {"params", {{"tiers", 3}, {"radix", 8}}}}},
      {"routing", {{"algorithm", "ftree"}, {"adaptive", "off"}}},
      {"jobs",
       {{{"name", "a"},
         {"nodes", 4},
         {"placement", "random"},
         {"workload", {{"op", "allreduce"}, {"sizes", {"1M"}}, {"iterations", 2}, {"warmup", 0}}}}}},
      {"background",
       {{{"pattern", "uniform"}, {"nodes", 6}, {"placement", "random"}, {"message_bytes", 65536}}}}};
  const json r = json::parse(run_in_child_process([&] {
    const scen::Scenario s = scen::make_scenario(sj, "test", ".");
    scen::RunOptions opt;
    opt.engine = scen::EngineKind::Flow;
    const scen::RunResult res = scen::run_scenario(s, opt);
    std::uint64_t cable_ends = 0;
    for (const auto& l : res.engine.idle_links) cable_ends += l.count;
    cable_ends += res.engine.links.size();
    return json{{"ends", cable_ends},
                {"samples", res.collectives.at(0).samples_us.size()},
                {"background", res.background}}
        .dump();
  }));
  CHECK(r["ends"] == 2 * three_tier().num_links());
  CHECK(r["samples"] == 2);
  CHECK(r["background"].size() == 1);
}
