// Timed faults on the flow engine (models/flow/flow_faults.cpp): a degraded cable re-shares at its time, a
// dead cable stops its flows until the SM's reroute (or the cable's return), a QP whose route stays dead
// fails after its retries, AR steps around a dead port at once, and a run with a link down and up delivers
// every message exactly once. Each simulation runs in a forked child (one SimGrid engine per process).
#include "models/flow/flow_engine.hpp"
#include "models/routing/reroute.hpp"
#include "models/routing/routing.hpp"
#include "sim/child_processes.hpp"
#include "sim/error.hpp"
#include "topology/generators.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

using namespace ibn;
using nlohmann::json;

namespace {

topo::Fabric two_tier(int radix) {
  topo::FatTreeParams p;
  p.tiers = 2;
  p.radix = radix;
  return topo::build_fat_tree(p);
}

json in_child(const std::function<json()>& fn) {
  return json::parse(run_in_child_process([&] { return fn().dump(); }));
}

constexpr std::uint64_t kBytes = 4'000'000;

/// One flow src -> dst of kBytes with `faults` applied to its leaf -> spine cable; its delivery time, the
/// fault counters and the leaf -> spine cable of its route at the end of the run.
json one_flow(const topo::Fabric& f, const routing::RoutingTables& t, routing::HcaIndex src,
              routing::HcaIndex dst, const std::function<void(flow::FlowEngine&, topo::LinkId)>& faults,
              flow::FlowConfig c = {}) {
  return in_child([&] {
    flow::FlowEngine e(f, t, c);
    const topo::LinkId up = e.simgrid_route(src, dst).at(1);
    faults(e, up);
    json out = {{"delivered_ps", -1}, {"cable", up}};
    e.send({src, dst, kBytes, 0, 0}, [&](Time d) { out["delivered_ps"] = d.count_ps(); });
    e.run();
    const auto s = e.fault_stats();
    out["link_downs"] = s.link_downs;
    out["reroutes"] = s.reroutes;
    out["qp_errors"] = s.qp_errors;
    out["route_after"] = e.simgrid_route(src, dst);
    out["failures"] = json::array();
    for (const auto& q : e.qp_failures())
      out["failures"].push_back({{"src", q.src}, {"dst", q.dst}, {"ps", q.when.count_ps()}});
    const auto rep = e.report();
    out["extra"] = rep.extra;
    out["min_capacity_gbps"] = 1e9;
    for (const auto& l : rep.links)
      out["min_capacity_gbps"] = std::min(out["min_capacity_gbps"].get<double>(), l.capacity_gbps);
    return out;
  });
}

} // namespace

TEST_CASE("flow faults: a cable degraded 4x -> 1x at T re-shares from T (closed form)") {
  // Alone on its route, the flow moves W wire bytes at R (the cable's rate) from t = 0. At T the cable
  // drops to R/4: the remaining W - R T bytes take 4 (W - R T) / R, so the delivery moves by
  // 3 (W / R - T): t_degraded = t_healthy + 3 (W / R - T).
  const topo::Fabric f = two_tier(8);
  const routing::RoutingTables t = routing::route_ftree(f);
  const Time at = Time::from_us(20);
  const json healthy = one_flow(f, t, 0, 31, [](flow::FlowEngine&, topo::LinkId) {});
  const json slow = one_flow(f, t, 0, 31, [&](flow::FlowEngine& e, topo::LinkId l) {
    topo::LinkSpeed s = f.link(l).speed;
    s.width = 1;
    e.schedule_link_speed(l, s, at);
  });
  const double w_over_r = static_cast<double>(flow::FlowConfig{}.wire_bytes(kBytes)) * 8.0 /
                          static_cast<double>(f.link(healthy["cable"].get<topo::LinkId>()).rate_bps()) * 1e12;
  const double expect = healthy["delivered_ps"].get<double>() + 3.0 * (w_over_r - 20e6);
  CHECK(std::abs(slow["delivered_ps"].get<double>() - expect) < 2e3); // 2 ns
  CHECK(slow["link_downs"] == 0);
  CHECK_FALSE(slow["extra"].contains("link_downs")); // a degrade alone adds no fault counters
  CHECK(slow["min_capacity_gbps"].get<double>() == doctest::Approx(100.0)); // 1x NDR: the cable's last rate
  CHECK(healthy["min_capacity_gbps"].get<double>() == doctest::Approx(400.0));
}

TEST_CASE("flow faults: a cable down at T stops the flow until the reroute, then it resumes elsewhere") {
  // The flow stops at T with W - R T bytes left; the SM's tables come D later and route it over another
  // spine (same length, same rate): t_down = t_healthy + D.
  const topo::Fabric f = two_tier(8);
  const routing::RoutingTables t = routing::route_ftree(f);
  const json healthy = one_flow(f, t, 0, 31, [](flow::FlowEngine&, topo::LinkId) {});
  const json down = one_flow(f, t, 0, 31, [](flow::FlowEngine& e, topo::LinkId l) {
    flow::FlowFaultConfig fc;
    fc.sm_sweep_delay = Time::from_us(30);
    e.configure_faults(fc);
    e.schedule_link_down(l, Time::from_us(20));
  });
  CHECK(std::llabs(down["delivered_ps"].get<std::int64_t>() - healthy["delivered_ps"].get<std::int64_t>() -
                   30'000'000) < 2'000);
  CHECK(down["link_downs"] == 1);
  CHECK(down["reroutes"] == 1);
  CHECK(down["extra"]["stalled_transfers"] == 1);
  const auto cable = down["cable"].get<topo::LinkId>();
  const auto after = down["route_after"].get<std::vector<topo::LinkId>>();
  CHECK(after.size() == 4);
  CHECK(std::find(after.begin(), after.end(), cable) == after.end());
}

TEST_CASE("flow faults: after the reroute a stopped flow shares a cable with a moving one (closed form)") {
  // Two flows from leaf 0 on disjoint routes; A's uplink dies at T and the SM's tables (D later) send A and B
  // up the same cable. A stops at T with r_A = W - R T; B runs alone until T + D, r_B = W - R (T + D) left;
  // then both get R / 2 until B ends (2 r_B / R), then A gets R: A ends at T + D + (r_A + r_B) / R
  // = 2 W / R - T, B at T + D + 2 r_B / R = 2 W / R - T - D (bandwidth phases from 0; alone each ends at
  // W / R). Delivered: t_A = t_A,healthy + W / R - T, t_B = t_B,healthy + W / R - T - D.
  const topo::Fabric f = two_tier(8);
  const routing::RoutingTables t = routing::route_ftree(f);
  const topo::NodeId leaf0 = f.link(t.hca_link(0)).a.node == t.hca_nodes()[0] ? f.link(t.hca_link(0)).b.node
                                                                              : f.link(t.hca_link(0)).a.node;
  routing::HcaIndex a = 0, b = 0, da = 0, db = 0;
  topo::LinkId dead = topo::kNoLink;
  for (routing::HcaIndex x = 0; x < 4 && dead == topo::kNoLink; ++x)
    for (routing::HcaIndex y = 0; y < 4 && dead == topo::kNoLink; ++y)
      for (routing::HcaIndex p = 4; p < 32 && dead == topo::kNoLink; ++p)
        for (routing::HcaIndex q = 4; q < 32 && dead == topo::kNoLink; ++q) {
          if (x == y || p == q) continue;
          const auto rx = t.route(x, p), ry = t.route(y, q);
          if (std::find_first_of(rx.begin(), rx.end(), ry.begin(), ry.end()) != rx.end()) continue;
          std::vector<bool> failed(f.num_links(), false);
          failed[rx[1]] = true;
          const routing::Rerouted rr = routing::reroute(f, failed, "ftree");
          if (rr.tables.next_hop(leaf0, p) == rr.tables.next_hop(leaf0, q))
            a = x, b = y, da = p, db = q, dead = rx[1];
        }
  REQUIRE(dead != topo::kNoLink);
  auto run = [&](bool fault) {
    return in_child([&] {
      flow::FlowEngine e(f, t);
      if (fault) {
        flow::FlowFaultConfig fc;
        fc.sm_sweep_delay = Time::from_us(30);
        e.configure_faults(fc);
        e.schedule_link_down(dead, Time::from_us(20));
      }
      json out = json::array({0, 0});
      e.send({a, da, kBytes, 0, 0}, [&](Time d) { out[0] = d.count_ps(); });
      e.send({b, db, kBytes, 0, 0}, [&](Time d) { out[1] = d.count_ps(); });
      e.run();
      return out;
    });
  };
  const json h = run(false), r = run(true);
  const double w_over_r_ps = static_cast<double>(flow::FlowConfig{}.wire_bytes(kBytes)) * 8.0 /
                             static_cast<double>(f.link(dead).rate_bps()) * 1e12;
  CHECK(std::abs(r[0].get<double>() - (h[0].get<double>() + w_over_r_ps - 20e6)) < 2e3);
  CHECK(std::abs(r[1].get<double>() - (h[1].get<double>() + w_over_r_ps - 50e6)) < 2e3);
}

TEST_CASE("flow faults: without reroute the flow waits for the cable to come back") {
  const topo::Fabric f = two_tier(8);
  const routing::RoutingTables t = routing::route_ftree(f);
  const json healthy = one_flow(f, t, 0, 31, [](flow::FlowEngine&, topo::LinkId) {});
  const json r = one_flow(f, t, 0, 31, [](flow::FlowEngine& e, topo::LinkId l) {
    flow::FlowFaultConfig fc;
    fc.reroute = false;
    e.configure_faults(fc);
    e.schedule_link_down(l, Time::from_us(20));
    e.schedule_link_up(l, Time::from_us(65));
  });
  CHECK(std::llabs(r["delivered_ps"].get<std::int64_t>() - healthy["delivered_ps"].get<std::int64_t>() -
                   45'000'000) < 2'000);
  CHECK(r["reroutes"] == 0);
  CHECK(r["qp_errors"] == 0);
}

TEST_CASE("flow faults: a QP whose route stays dead exhausts its retries, the run ends") {
  // retry_count 1, ack timeout 10 us: the QP fails (1 + 1) x 10 us after its flow stopped at 20 us.
  const topo::Fabric f = two_tier(8);
  const routing::RoutingTables t = routing::route_ftree(f);
  const json r = one_flow(f, t, 0, 31, [&](flow::FlowEngine& e, topo::LinkId) {
    flow::FlowFaultConfig fc;
    fc.reroute = false;
    fc.ack_timeout = Time::from_us(10);
    fc.retry_count = 1;
    e.configure_faults(fc);
    e.schedule_link_down(t.hca_link(31), Time::from_us(20)); // the destination's own cable
  });
  CHECK(r["delivered_ps"] == -1);
  REQUIRE(r["failures"].size() == 1);
  CHECK(r["failures"][0]["src"] == 0);
  CHECK(r["failures"][0]["dst"] == 31);
  CHECK(r["failures"][0]["ps"] == 40'000'000);
  CHECK(r["qp_errors"] == 1);
}

TEST_CASE("flow faults: with AR a flow leaves a dead uplink at once") {
  const topo::Fabric f = two_tier(8);
  const routing::RoutingTables t = routing::route_ftree(f);
  flow::FlowConfig c;
  c.adaptive_routing = true;
  const json healthy = one_flow(
      f, t, 0, 31, [](flow::FlowEngine&, topo::LinkId) {}, c);
  const json r = one_flow(
      f, t, 0, 31,
      [](flow::FlowEngine& e, topo::LinkId l) {
        flow::FlowFaultConfig fc;
        fc.reroute = false;
        e.configure_faults(fc);
        e.schedule_link_down(l, Time::from_us(20));
      },
      c);
  CHECK(std::llabs(r["delivered_ps"].get<std::int64_t>() - healthy["delivered_ps"].get<std::int64_t>()) <
        2'000);
  CHECK(r["extra"]["stalled_transfers"] == 0);
}

TEST_CASE("flow faults: a link down and up with reroutes delivers every message exactly once") {
  // 32 HCAs, two rounds of a permutation (as the packet engine's faults test); a leaf-spine cable goes down
  // mid-transfer and comes back; every message is delivered once and the leaf uplinks carry every byte once.
  const topo::Fabric f = two_tier(8);
  const routing::RoutingTables t = routing::route_ftree(f);
  const json r = in_child([&] {
    flow::FlowEngine e(f, t);
    flow::FlowFaultConfig fc;
    fc.sm_sweep_delay = Time::from_us(20);
    e.configure_faults(fc);
    topo::LinkId dead = topo::kNoLink;
    for (topo::LinkId l = 0; l < f.num_links() && dead == topo::kNoLink; ++l)
      if (f.node(f.link(l).a.node).tier + f.node(f.link(l).b.node).tier == 3) dead = l; // leaf-spine
    e.schedule_link_down(dead, Time::from_us(10));
    e.schedule_link_up(dead, Time::from_us(100)); // the sweep after it (120 us) comes before the end
    std::vector<int> delivered(64, 0);
    std::uint64_t bytes = 0, leaf_up = 0;
    for (std::uint32_t round = 0; round < 2; ++round)
      for (std::uint32_t s = 0; s < 32; ++s) {
        const std::uint32_t dst = (s * 7 + 5) % 32;
        const std::uint32_t id = round * 32 + s;
        bytes += 4 << 20;
        e.send({s, dst, 4 << 20, 0, 0}, [&delivered, id](Time) { ++delivered[id]; });
      }
    e.run();
    const auto rep = e.report();
    for (const auto& l : rep.links)
      if (l.from_tier == 0) leaf_up += l.payload_bytes; // every message leaves its HCA once
    const auto s = e.fault_stats();
    return json{{"delivered", delivered},
                {"transfers", rep.transfers},
                {"bytes", bytes},
                {"hca_out", leaf_up},
                {"reroutes", s.reroutes},
                {"qp_errors", s.qp_errors},
                {"moved", rep.extra["moved_transfers"]},
                {"up", e.link_up(dead)}};
  });
  for (const auto& d : r["delivered"]) CHECK(d == 1);
  CHECK(r["transfers"] == 64);
  CHECK(r["hca_out"] == r["bytes"]);
  CHECK(r["reroutes"] == 2);
  CHECK(r["qp_errors"] == 0);
  CHECK(r["moved"].get<int>() > 0);
  CHECK(r["up"] == true);
}

TEST_CASE("flow faults: bad calls are refused") {
  const topo::Fabric f = two_tier(8);
  const routing::RoutingTables t = routing::route_ftree(f);
  const json r = in_child([&] {
    json out;
    flow::FlowConfig c;
    c.adaptive_routing = true;
    flow::FlowEngine e(f, t, c);
    try {
      e.configure_faults(flow::FlowFaultConfig{}); // reroute on with AR
    } catch (const InputError& x) {
      out["ar"] = x.what();
    }
    try {
      e.schedule_link_down(topo::LinkId{100000}, Time::zero());
    } catch (const InputError& x) {
      out["link"] = x.what();
    }
    e.send({0, 1, 4096, 0, 0}, nullptr);
    try {
      e.schedule_link_down(0, Time::from_us(1));
    } catch (const std::logic_error& x) {
      out["late"] = x.what();
    }
    e.run();
    return out;
  });
  CHECK(r["ar"].get<std::string>().find("reroute needs static routing") != std::string::npos);
  CHECK(r["link"].get<std::string>().find("unknown link") != std::string::npos);
  CHECK(r["late"].get<std::string>().find("before the first send") != std::string::npos);
}
