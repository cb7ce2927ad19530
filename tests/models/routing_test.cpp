// Routing tables: LIDs, ftree D-mod-k balance and the shift-permutation property, minhop/updn minimality and
// legality, AR groups, dragonfly MIN/Valiant/UGAL, channel-dependency deadlock checks, the LFT dump.
#include "models/routing/deadlock.hpp"
#include "models/routing/dragonfly.hpp"
#include "models/routing/dump.hpp"
#include "models/routing/routing.hpp"
#include "sim/error.hpp"
#include "sim/rng.hpp"
#include "topology/generators.hpp"
#include "topology/ibnetdiscover.hpp"

#include "tests/test_util.hpp"

#include "tests/golden.hpp"

#include <doctest/doctest.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <set>
#include <sstream>

using namespace ibn;
using namespace ibn::routing;
using topo::Fabric;
using topo::LinkId;
using topo::NodeId;

namespace {

Fabric fat_tree(int tiers, int radix, std::optional<std::int64_t> hosts = std::nullopt,
                const std::string& ratios = "1:1", int rails = 1) {
  topo::FatTreeParams p;
  p.tiers = tiers;
  p.radix = radix;
  p.hosts = hosts;
  p.oversubscription = topo::parse_ratios(ratios, "--oversubscription");
  p.rails = rails;
  p.speed = topo::parse_link_speed("NDR", "--rate");
  return topo::build_fat_tree(p);
}

Fabric dragonfly(int a, int p, int h, int g) {
  topo::DragonflyParams d;
  d.a = a;
  d.p = p;
  d.h = h;
  d.g = g;
  d.speed = topo::parse_link_speed("NDR", "--rate");
  return topo::build_dragonfly(d);
}

topo::Node node(topo::NodeKind kind, const std::string& name, int radix, int tier) {
  topo::Node n;
  n.kind = kind;
  n.name = name;
  n.radix = radix;
  n.tier = tier;
  if (kind == topo::NodeKind::Hca) n.host = 0;
  return n;
}

void cable(Fabric& f, NodeId a, int pa, NodeId b, int pb) {
  f.add_link(
      topo::make_link({a, pa}, {b, pb}, topo::parse_link_speed("NDR", "rate"), 2.0, topo::Medium::Dac));
}

/// A ring of n switches sw0..sw(n-1) (tier 1), one HCA on port 1 of each; port 2 -> next, port 3 <- previous.
Fabric ring(int n) {
  Fabric f;
  for (int i = 0; i < n; ++i) f.add_node(node(topo::NodeKind::Switch, "sw" + std::to_string(i), 3, 1));
  for (int i = 0; i < n; ++i) cable(f, static_cast<NodeId>(i), 2, static_cast<NodeId>((i + 1) % n), 3);
  for (int i = 0; i < n; ++i) {
    auto h = node(topo::NodeKind::Hca, "h" + std::to_string(i), 1, 0);
    h.host = i;
    const NodeId hn = f.add_node(h);
    cable(f, hn, 1, static_cast<NodeId>(i), 1);
  }
  f.validate();
  return f;
}

/// Directed link key: link * 2 + (direction from b).
using Loads = std::map<std::uint64_t, int>;
void add_path(const Fabric& f, NodeId src, const std::vector<LinkId>& path, Loads& loads) {
  NodeId at = src;
  for (const LinkId l : path) {
    const auto& lk = f.link(l);
    ++loads[std::uint64_t{l} * 2 + (lk.a.node == at ? 0 : 1)];
    at = lk.other(at);
  }
}
int max_load(const Loads& loads) {
  int m = 0;
  for (const auto& [k, v] : loads) m = std::max(m, v);
  return m;
}
/// Max flows per directed link when HCA i sends to perm[i].
int permutation_max_load(const Fabric& f, const RoutingTables& t, const std::vector<HcaIndex>& perm) {
  Loads loads;
  for (HcaIndex i = 0; i < perm.size(); ++i)
    if (perm[i] != i) add_path(f, t.hca_nodes()[i], t.route(i, perm[i]), loads);
  return max_load(loads);
}

/// Tiers of the switches a path visits (HCA cables excluded).
std::vector<int> switch_tiers(const Fabric& f, NodeId src, const std::vector<LinkId>& path) {
  std::vector<int> tiers;
  NodeId at = src;
  for (const LinkId l : path) {
    at = f.link(l).other(at);
    if (f.node(at).kind == topo::NodeKind::Switch) tiers.push_back(f.node(at).tier);
  }
  return tiers;
}
/// True if the tier sequence goes up, then down, never up again after going down.
bool no_down_up_turn(const std::vector<int>& tiers) {
  bool went_down = false;
  for (std::size_t i = 1; i < tiers.size(); ++i) {
    if (tiers[i] < tiers[i - 1]) went_down = true;
    if (tiers[i] > tiers[i - 1] && went_down) return false;
  }
  return true;
}

/// BFS hop count between two HCAs over the whole graph (cables), for minimality checks.
std::vector<int> hops_from(const Fabric& f, NodeId src) {
  std::vector<int> d(f.num_nodes(), -1);
  std::vector<NodeId> q{src};
  d[src] = 0;
  for (std::size_t i = 0; i < q.size(); ++i) {
    const NodeId n = q[i];
    if (n != src && f.node(n).kind == topo::NodeKind::Hca) continue; // HCAs do not forward
    for (const LinkId l : f.links_of(n)) {
      const NodeId m = f.link(l).other(n);
      if (d[m] < 0) {
        d[m] = d[n] + 1;
        q.push_back(m);
      }
    }
  }
  return d;
}



using ibn::test::error_of;
using ibn::test::check_golden;

} // namespace

TEST_CASE(
    "LIDs: NodeId order from 1 on generated fabrics, deterministic, given LIDs kept, the rest after them") {
  const Fabric f = fat_tree(2, 8);
  const LidMap a = assign_lids(f), b = assign_lids(f);
  CHECK(a.lid_of_node == b.lid_of_node);
  for (NodeId i = 0; i < f.num_nodes(); ++i) CHECK(a.lid_of_node[i] == i + 1);
  CHECK(a.max_lid() == f.num_nodes());
  CHECK(a.node_of_lid[5] == 4);

  Fabric g = ring(3);
  g.mutable_node(0).lid = 20; // sw0
  g.mutable_node(4).lid = 7;  // h1
  const LidMap c = assign_lids(g);
  CHECK(c.lid_of_node[0] == 20);
  CHECK(c.lid_of_node[4] == 7);
  // The others in NodeId order after the largest given LID: sw1, sw2, h0, h2 -> 21, 22, 23, 24.
  CHECK(c.lid_of_node[1] == 21);
  CHECK(c.lid_of_node[2] == 22);
  CHECK(c.lid_of_node[3] == 23);
  CHECK(c.lid_of_node[5] == 24);
  const auto t = route_minhop(g);
  CHECK(t.hca_of_lid(7) == HcaIndex{1});
  CHECK(!t.hca_of_lid(20)); // a switch, not a destination
  g.mutable_node(5).lid = 7;
  CHECK(error_of([&] { assign_lids(g); }).find("LID 7 is carried by both 'h1' and 'h2'") !=
        std::string::npos);
}

TEST_CASE("ftree on a full 2-tier tree: D-mod-k spreads destinations evenly over the leaf up-ports") {
  // Radix 8, 1:1: 8 leaves x 4 hosts = N = 32, u = 4 up-ports per leaf, 4 spines (one cable per pair).
  const Fabric f = fat_tree(2, 8);
  const auto t = route_ftree(f);
  const auto hcas = f.hcas();
  REQUIRE(hcas.size() == 32);
  for (const NodeId sw : f.switches()) {
    const auto& n = f.node(sw);
    std::map<Port, int> per_port;
    for (HcaIndex d = 0; d < hcas.size(); ++d) {
      const Port p = t.next_hop(sw, d);
      REQUIRE(p != kNoPort);
      const NodeId peer = f.link(*f.link_at(sw, p)).other(sw);
      const NodeId leaf_of_d = f.link(f.links_of(hcas[d]).front()).other(hcas[d]);
      if (n.tier == 1) {
        if (leaf_of_d == sw) {
          CHECK(peer == hcas[d]); // own HCAs: their port
        } else {
          CHECK(f.node(peer).tier == 2);
          ++per_port[p];
          // D-mod-k at a leaf: up-port index = rank mod u, ranks = HCA order here.
          CHECK(p == 4 + 1 + d % 4);
        }
      } else {
        CHECK(peer == leaf_of_d); // spine: the unique down port to d's leaf
        CHECK(t.ar_group(sw, d).size() == 1);
      }
    }
    if (n.tier == 1) {
      // Remote destinations N - 4 = 28 over u = 4 up-ports: 7 each.
      REQUIRE(per_port.size() == 4);
      for (const auto& [p, c] : per_port) CHECK(c == 7);
    }
  }
}

TEST_CASE("ftree routes are minimal: 2 cables on the same leaf, 4 across the spine, AR groups u at leaves, 1 "
          "at spines") {
  const Fabric f = fat_tree(2, 8);
  const auto t = route_ftree(f);
  const auto hcas = f.hcas();
  for (HcaIndex s = 0; s < hcas.size(); ++s)
    for (HcaIndex d = 0; d < hcas.size(); ++d) {
      const auto path = t.route(s, d);
      if (s == d)
        CHECK(path.empty());
      else
        CHECK(path.size() == (s / 4 == d / 4 ? 2u : 4u));
    }
  const NodeId leaf0 = *f.find_node("leaf-0");
  const NodeId spine0 = *f.find_node("spine-0");
  const auto g = t.ar_group(leaf0, 9);
  CHECK(g.size() == 4);
  CHECK(g.static_port() == t.next_hop(leaf0, 9));
  CHECK(g[0] == 5 + 9 % 4);
  CHECK(g.to_vector() == std::vector<Port>{6, 5, 7, 8}); // static first, then port order
  CHECK(t.ar_group(leaf0, 1).to_vector() == std::vector<Port>{2});
  CHECK(t.ar_group(spine0, 9).size() == 1);
  CHECK(t.deadlock_free_by_construction());
  CHECK(t.num_vls() == 1);
}

TEST_CASE("ftree: a shift by d1 (and every other shift) puts at most one flow on any link, a random "
          "permutation does not") {
  // Zahavi (CCPE 2010): D-mod-k makes shift permutations contention-free on full non-blocking trees.
  // Shift k from leaf l: the 4 sources j reach destinations with 4 distinct residues mod 4 -> 4 distinct
  // up-ports; spine q carries only destinations = q mod 4, one per destination leaf.
  const Fabric f = fat_tree(2, 8);
  const auto t = route_ftree(f);
  const std::size_t N = f.hcas().size();
  std::vector<HcaIndex> perm(N);
  for (std::size_t k = 1; k < N; ++k) {
    for (HcaIndex i = 0; i < N; ++i) perm[i] = static_cast<HcaIndex>((i + k) % N);
    CHECK_MESSAGE(permutation_max_load(f, t, perm) == 1, "shift " << k);
  }
  // A random permutation collides (fixed seed: deterministic).
  Rng rng(42);
  std::iota(perm.begin(), perm.end(), 0u);
  for (std::size_t i = N - 1; i > 0; --i) std::swap(perm[i], perm[rng.uniform_below(i + 1)]);
  CHECK(permutation_max_load(f, t, perm) > 1);
}

TEST_CASE("ftree on 3 tiers and on a k-ary 3-tree: every shift permutation is contention-free") {
  // Radix 8, 3 tiers: 8 pods x 4 leaves x 4 hosts = 128 hosts; up index at a pod spine = (r / 4) mod 4.
  for (const Fabric& f : {fat_tree(3, 8), [] {
                            topo::KaryNTreeParams k;
                            k.k = 4;
                            k.n = 3;
                            return topo::build_kary_ntree(k);
                          }()}) {
    const auto t = route_ftree(f);
    const std::size_t N = f.hcas().size();
    CHECK(N == (f.switches().size() == 80 ? 128u : 64u)); // 32+32+16 switches / 3 levels of 16
    std::vector<HcaIndex> perm(N);
    int worst = 0;
    for (std::size_t k = 1; k < N; ++k) {
      for (HcaIndex i = 0; i < N; ++i) perm[i] = static_cast<HcaIndex>((i + k) % N);
      worst = std::max(worst, permutation_max_load(f, t, perm));
    }
    CHECK(worst == 1);
    CHECK(check_deadlock_free(f, t, single_vl()).deadlock_free);
  }
}

TEST_CASE("ftree with parallel cables treats each cable as a port, shift stays contention-free") {
  // Radix 8, 16 hosts: 4 leaves, u = 4 up-cables each, 2 spines -> 2 parallel cables per leaf-spine pair.
  const Fabric f = fat_tree(2, 8, 16);
  REQUIRE(f.switches().size() == 6);
  const auto t = route_ftree(f);
  const std::size_t N = 16;
  std::vector<HcaIndex> perm(N);
  for (std::size_t k = 1; k < N; ++k) {
    for (HcaIndex i = 0; i < N; ++i) perm[i] = static_cast<HcaIndex>((i + k) % N);
    CHECK_MESSAGE(permutation_max_load(f, t, perm) == 1, "shift " << k);
  }
  // A spine reaches a leaf over 2 cables: the AR group has both, the static choice alternates by (r / 2)
  // mod 2.
  const NodeId spine0 = *f.find_node("spine-0");
  CHECK(t.ar_group(spine0, 4).size() == 2);
  CHECK(t.next_hop(spine0, 4) != t.next_hop(spine0, 6));
}

TEST_CASE("ftree on an oversubscribed 2:1 tree balances the up-ports") {
  // Radix 12 at 2:1: 8 hosts + 4 up-ports per leaf, 12 leaves, N = 96: (96 - 8) / 4 = 22 per up-port.
  const Fabric f = fat_tree(2, 12, std::nullopt, "2:1");
  const auto t = route_ftree(f);
  REQUIRE(f.hcas().size() == 96);
  const NodeId leaf = *f.find_node("leaf-3");
  std::map<Port, int> per_port;
  for (HcaIndex d = 0; d < 96; ++d)
    if (d / 8 != 3) ++per_port[t.next_hop(leaf, d)];
  REQUIRE(per_port.size() == 4);
  for (const auto& [p, c] : per_port) CHECK(c == 22);
}

TEST_CASE("ftree refuses fabrics that are not layered trees and suggests updn/minhop") {
  const auto ring_err = error_of([] { route_ftree(ring(4)); });
  CHECK(ring_err.find("layered fat-tree") != std::string::npos);
  CHECK(ring_err.find("updn") != std::string::npos);
  CHECK(error_of([] { route_ftree(dragonfly(4, 2, 2, 5)); }).find("minhop") != std::string::npos);
}

TEST_CASE("minhop and updn on trees: minimal routes, no down->up turn, same AR groups as ftree") {
  for (const Fabric& f : {fat_tree(2, 8), fat_tree(3, 8, 64), fat_tree(2, 8, 16)}) {
    const auto ft = route_ftree(f);
    const auto mh = route_minhop(f);
    const auto ud = route_updn(f);
    CHECK(ud.notes().empty());
    const auto hcas = f.hcas();
    for (HcaIndex s = 0; s < hcas.size(); ++s) {
      const auto d0 = hops_from(f, hcas[s]);
      for (HcaIndex d = 0; d < hcas.size(); ++d) {
        if (s == d) continue;
        const auto pm = mh.route(s, d);
        const auto pu = ud.route(s, d);
        CHECK(static_cast<int>(pm.size()) == d0[hcas[d]]);
        CHECK(static_cast<int>(pu.size()) == d0[hcas[d]]);
        CHECK(no_down_up_turn(switch_tiers(f, hcas[s], pu)));
        CHECK(no_down_up_turn(switch_tiers(f, hcas[s], pm)));
      }
    }
    for (const NodeId sw : f.switches())
      for (HcaIndex d = 0; d < hcas.size(); ++d) {
        const auto a = ft.ar_group(sw, d).ports(), b = mh.ar_group(sw, d).ports(),
                   c = ud.ar_group(sw, d).ports();
        CHECK(std::vector<Port>(a.begin(), a.end()) == std::vector<Port>(b.begin(), b.end()));
        CHECK(std::vector<Port>(a.begin(), a.end()) == std::vector<Port>(c.begin(), c.end()));
        CHECK(mh.ar_group(sw, d).contains(mh.next_hop(sw, d)));
        CHECK(ud.ar_group(sw, d).contains(ud.next_hop(sw, d)));
      }
    CHECK(check_deadlock_free(f, ud, single_vl()).deadlock_free);
  }
}

TEST_CASE("minhop port equalisation: a leaf's remote destinations go round-robin over its up-ports") {
  // Destinations in LID order; each takes the least-used min-hop port: 28 remote destinations over 4 ports.
  const Fabric f = fat_tree(2, 8);
  const auto t = route_minhop(f);
  const NodeId leaf = *f.find_node("leaf-2");
  std::map<Port, int> per_port;
  for (HcaIndex d = 0; d < 32; ++d)
    if (d / 4 != 2) ++per_port[t.next_hop(leaf, d)];
  REQUIRE(per_port.size() == 4);
  for (const auto& [p, c] : per_port) CHECK(c == 7);
  // First remote destination (HCA 0) takes the lowest up-port, the next one the second, ...
  CHECK(t.next_hop(leaf, 0) == 5);
  CHECK(t.next_hop(leaf, 1) == 6);
  CHECK(t.next_hop(leaf, 4) == 5);
}

TEST_CASE("deadlock check: minhop on a ring of 5 switches cycles with 1 VL, updn on the same ring does not") {
  // Ring of 5: every destination is <= 2 hops away one way round, so sw_i -> sw_i+1 -> sw_i+2 routes exist
  // for every i: the clockwise channels form a dependency cycle.
  const Fabric f = ring(5);
  const auto mh = route_minhop(f);
  const auto rep = check_deadlock_free(f, mh, single_vl());
  CHECK_FALSE(rep.deadlock_free);
  REQUIRE(rep.cycle.size() >= 2);
  for (const auto& c : rep.cycle) {
    CHECK(c.find("switch sw") == 0);
    CHECK(c.find(" -> switch sw") != std::string::npos);
    CHECK(c.find("(VL0)") != std::string::npos);
  }
  MESSAGE("minhop ring cycle: " << rep.cycle.front() << " ... (" << rep.cycle.size() << " channels)");

  const auto ud = route_updn(f);
  const auto rep2 = check_deadlock_free(f, ud, single_vl());
  CHECK(rep2.deadlock_free);
  CHECK(rep2.cycle.empty());
  for (HcaIndex s = 0; s < 5; ++s)
    for (HcaIndex d = 0; d < 5; ++d) CHECK(ud.reachable(s, d));
  // Static routes only: minhop's LFT on the ring still cycles (each clockwise 2-hop route is the only min
  // path).
  CHECK_FALSE(check_deadlock_free(f, mh, single_vl(), false).deadlock_free);
}

TEST_CASE("updn: roots that leave a destination unreachable fall back to one central root, explicit ones are "
          "refused") {
  // Path A - C - B (all tier 1, so all are default roots; keys by NodeId A=0 < B=1 < C=2):
  // A -> C is down, C -> B is up: A cannot reach B. Fallback: root C (eccentricity 1).
  Fabric f;
  const NodeId A = f.add_node(node(topo::NodeKind::Switch, "A", 3, 1));
  const NodeId B = f.add_node(node(topo::NodeKind::Switch, "B", 3, 1));
  const NodeId C = f.add_node(node(topo::NodeKind::Switch, "C", 3, 1));
  cable(f, A, 2, C, 2);
  cable(f, C, 3, B, 2);
  for (const NodeId s : {A, B, C}) {
    const NodeId h = f.add_node(node(topo::NodeKind::Hca, "h" + f.node(s).name, 1, 0));
    cable(f, h, 1, s, 1);
  }
  const auto t = route_updn(f);
  REQUIRE(t.notes().size() == 1);
  CHECK(t.notes()[0].find("single root 'C'") != std::string::npos);
  for (HcaIndex s = 0; s < 3; ++s)
    for (HcaIndex d = 0; d < 3; ++d) CHECK(t.reachable(s, d));
  RoutingOptions o;
  o.roots = {"A"};
  CHECK(route_updn(f, o).notes().empty()); // A - C - B all down from A
  o.roots = {"A", "B"};
  CHECK(error_of([&] { route_updn(f, o); }).find("cannot reach") != std::string::npos);
  o.roots = {"nope"};
  CHECK(error_of([&] { route_updn(f, o); }).find("'nope' is not a node") != std::string::npos);
}

TEST_CASE("updn on the imported SX6036 fabric: every pair routed, acyclic with 1 VL, ftree refuses it") {
  const auto imp = topo::import_ibnetdiscover_file(std::string(IBNETSIM_TEST_DATA) +
                                                   "/ibnetdiscover/sx6036-qdr-fdr10-2014-ibnetdiscover.txt");
  const Fabric& f = imp.fabric;
  const auto t = route_updn(f);
  const std::size_t N = t.num_hcas();
  CHECK(N == 145); // 144 CAs, one of them with both ports cabled
  std::size_t routed = 0;
  for (HcaIndex s = 0; s < N; ++s)
    for (HcaIndex d = 0; d < N; ++d)
      if (t.reachable(s, d)) ++routed;
  CHECK(routed == N * N);
  // The imported LIDs are used.
  for (NodeId n = 0; n < f.num_nodes(); ++n)
    if (f.node(n).lid != 0) CHECK(t.lids().lid_of_node[n] == static_cast<Lid>(f.node(n).lid));
  // Roots: the importer makes ib7 (3 HCAs, 24 switch cables) and ib8 spines (tier 2). Both carry leaf-to-leaf
  // traffic (no single-root fallback); ib8 has no route to ib7's 3 HCAs (down then up) and needs none.
  CHECK(t.notes().empty());
  auto by_desc = [&](const std::string& key) {
    for (const NodeId n : f.switches())
      if (f.node(n).description.find(key) != std::string::npos) return n;
    FAIL("no switch " << key);
    return topo::kNoNode;
  };
  const NodeId ib1 = by_desc("ib1:"), ib7 = by_desc("ib7:"), ib8 = by_desc("ib8:");
  std::set<NodeId> spines_used;
  int ib8_entries = 0;
  for (HcaIndex d = 0; d < N; ++d) {
    for (const Port p : t.ar_group(ib1, d)) spines_used.insert(f.link(*f.link_at(ib1, p)).other(ib1));
    if (t.next_hop(ib8, d) != kNoPort) ++ib8_entries;
  }
  CHECK(spines_used.count(ib7) == 1);
  CHECK(spines_used.count(ib8) == 1);
  CHECK(ib8_entries == 145 - 3);
  const auto rep = check_deadlock_free(f, t, single_vl());
  CHECK(rep.deadlock_free);
  MESSAGE("sx6036 updn: " << rep.channels << " channels, " << rep.dependencies << " dependencies; "
                          << t.storage_description());
  const auto mh = route_minhop(f);
  for (HcaIndex s = 0; s < N; s += 7)
    for (HcaIndex d = 0; d < N; d += 5) CHECK(mh.reachable(s, d));
  CHECK(error_of([&] { route_ftree(f); }).find("updn") != std::string::npos);
}

TEST_CASE("two planes (rails): HCAs of different planes do not reach each other, route() says so") {
  // Plane p: one leaf sw<p> with HCAs h<p>a, h<p>b; nothing joins the planes (as with rails).
  Fabric f;
  for (int p = 0; p < 2; ++p) f.add_node(node(topo::NodeKind::Switch, "sw" + std::to_string(p), 4, 1));
  for (int i = 0; i < 4; ++i) {
    const NodeId h = f.add_node(node(topo::NodeKind::Hca, "h" + std::to_string(i), 1, 0));
    cable(f, h, 1, static_cast<NodeId>(i % 2), 1 + i / 2); // HCA i on plane i % 2
  }
  for (const auto& t : {route_ftree(f), route_minhop(f), route_updn(f)}) {
    CHECK(t.reachable(0, 2));
    CHECK(t.route(0, 2).size() == 2);
    CHECK_FALSE(t.reachable(0, 1));
    CHECK(error_of([&] { t.route(0, 1); }).find("no route") != std::string::npos);
    CHECK(t.next_hop(0, 1) == kNoPort);
    CHECK(t.ar_group(0, 1).empty());
  }
}

TEST_CASE("dragonfly MIN: <= 3 switch hops (5 cables), static port in the AR group, every AR choice stays "
          "minimal") {
  // a=4 routers/group, p=2, h=2, g=5: a*h/(g-1) = 2 global cables between every pair of groups.
  const Fabric f = dragonfly(4, 2, 2, 5);
  const auto t = route_dragonfly(f, DragonflyMode::Minimal);
  CHECK(t.num_vls() == 2);
  CHECK(t.vl_rule() == VlRule::PerGlobalHop);
  const std::size_t N = t.num_hcas();
  REQUIRE(N == 40);
  int longest = 0;
  for (HcaIndex s = 0; s < N; ++s)
    for (HcaIndex d = 0; d < N; ++d) {
      if (s == d) continue;
      const auto path = t.route(s, d);
      longest = std::max(longest, static_cast<int>(path.size()));
      CHECK(path.size() <= 5);
    }
  CHECK(longest == 5);
  // Every sequence of AR choices from every router reaches each destination within 3 switch hops.
  for (HcaIndex d = 0; d < N; ++d)
    for (const NodeId r0 : f.switches()) {
      std::vector<std::pair<NodeId, int>> frontier{{r0, 0}};
      while (!frontier.empty()) {
        auto [r, hops] = frontier.back();
        frontier.pop_back();
        const auto g = t.ar_group(r, d);
        REQUIRE(!g.empty());
        CHECK(g.contains(t.next_hop(r, d)));
        for (const Port p : g) {
          const NodeId peer = f.link(*f.link_at(r, p)).other(r);
          if (f.node(peer).kind == topo::NodeKind::Hca)
            CHECK(peer == t.hca_nodes()[d]);
          else {
            CHECK(hops + 1 <= 3);
            if (hops + 1 <= 3) frontier.push_back({peer, hops + 1});
          }
        }
      }
    }
  // Group 0's two cables to group 3 leave from g0-r1 and g0-r3 (absolute arrangement); HCA 0 sits on g0-r0,
  // which owns none, and its routes to group 3's 8 HCAs use both cables.
  std::set<LinkId> used;
  for (HcaIndex d = 24; d < 32; ++d)
    for (const LinkId l : t.route(0, d)) {
      const auto& lk = f.link(l);
      const auto &a = f.node(lk.a.node), &b = f.node(lk.b.node);
      if (a.kind == topo::NodeKind::Switch && b.kind == topo::NodeKind::Switch && a.group != b.group)
        used.insert(l);
    }
  CHECK(used.size() == 2);
}

TEST_CASE("dragonfly deadlock: MIN with 1 VL cycles, with VL+1 per global hop it is acyclic on 2 VLs") {
  const Fabric f = dragonfly(4, 2, 2, 9);
  const auto t = route_dragonfly(f, DragonflyMode::Minimal);
  const auto one = check_deadlock_free(f, t, single_vl());
  CHECK_FALSE(one.deadlock_free);
  CHECK(!one.cycle.empty());
  MESSAGE("df MIN 1 VL cycle of " << one.cycle.size() << " channels, e.g. " << one.cycle.front());
  const auto two = check_deadlock_free(f, t, vl_function(t.vl_rule()));
  CHECK(two.deadlock_free);
  CHECK(two.vls_used == 2);
}

TEST_CASE("dragonfly Valiant: via the intermediate group, <= 5 switch hops, acyclic on 3 VLs, cyclic on 1") {
  const Fabric f = dragonfly(4, 2, 2, 5);
  const auto t = route_dragonfly(f, DragonflyMode::Valiant);
  CHECK(t.num_vls() == 3);
  const auto* df = t.dragonfly();
  REQUIRE(df != nullptr);
  const std::size_t N = t.num_hcas();
  std::vector<std::vector<LinkId>> paths;
  for (HcaIndex s = 0; s < N; ++s)
    for (HcaIndex d = 0; d < N; ++d) {
      if (s == d) continue;
      const int gs = df->group_of_switch[t.hca_switch_index(s)];
      const int gd = df->group_of_switch[t.hca_switch_index(d)];
      for (int I = 0; I < df->num_groups; ++I) {
        const auto path = valiant_route(t, s, d, I);
        CHECK(switch_hops(path) <= 5);
        if (I != gs && I != gd) {
          bool visits = false;
          for (const LinkId l : path)
            for (const NodeId n : {f.link(l).a.node, f.link(l).b.node})
              visits = visits || (f.node(n).kind == topo::NodeKind::Switch && f.node(n).group == I);
          CHECK(visits);
        } else {
          CHECK(path == t.route(s, d));
        }
        paths.push_back(path);
      }
    }
  const auto three = check_deadlock_free_paths(f, paths, vl_per_global_hop());
  CHECK(three.deadlock_free);
  CHECK(three.vls_used == 3);
  CHECK_FALSE(check_deadlock_free_paths(f, paths, single_vl()).deadlock_free);

  // Intermediate groups: never the source's or destination's, each other group drawn.
  Rng rng(7);
  std::set<int> drawn;
  for (int i = 0; i < 200; ++i) {
    const int I = draw_intermediate_group(t, 0, 39, rng); // HCA 0 in group 0, HCA 39 in group 4
    CHECK(I != 0);
    CHECK(I != 4);
    drawn.insert(I);
  }
  CHECK(drawn == std::set<int>{1, 2, 3});
  CHECK(error_of([&] { valiant_route(route_minhop(f), 0, 1, 2); }).find("dragonfly tables") !=
        std::string::npos);
}

TEST_CASE("UGAL decision: MIN iff q_min*H_min <= q_val*H_val + T") {
  // 3 hops x 1000 B = 3000 <= 5 hops x 600 B = 3000: MIN (equality).
  CHECK(ugal_choose(1000, 3, 600, 5, 0) == PathChoice::Minimal);
  CHECK(ugal_choose(1001, 3, 600, 5, 0) == PathChoice::Valiant);
  CHECK(ugal_choose(1001, 3, 600, 5, 3) == PathChoice::Minimal); // threshold 3 byte-hops
  CHECK(ugal_choose(0, 3, 0, 5, 0) == PathChoice::Minimal);
  CHECK(ugal_choose(std::int64_t{1} << 62, 5, 0, 5, 0) == PathChoice::Valiant); // no overflow
}

TEST_CASE("registry: built-in routing algorithms, unknown names list the known ones") {
  const auto reg = builtin_routing();
  std::vector<std::string> names;
  for (const auto& e : reg.entries()) {
    names.push_back(e.name);
    CHECK(!e.description.empty());
  }
  CHECK(names == std::vector<std::string>{"ftree", "minhop", "updn", "df-min", "df-valiant", "df-ugal"});
  const auto err = error_of([&] { reg.get("lash"); });
  CHECK(err.find("unknown routing algorithm 'lash'") != std::string::npos);
  CHECK(err.find("ftree, minhop, updn, df-min") != std::string::npos);
  const Fabric f = fat_tree(2, 4);
  CHECK(reg.get("updn").factory(f, {}).algorithm() == "updn");
}

TEST_CASE("topo routes dump: ibroute layout for a radix-4 2-tier tree under ftree matches the golden text") {
  // 4 leaves x 2 hosts, 2 spines; LIDs: leaves 1-4, spines 5-6, hosts 7-14.
  const Fabric f = fat_tree(2, 4);
  const auto t = route_ftree(f);
  std::ostringstream s;
  write_lft_dump(f, t, s);
  const std::string text = s.str();
  // Generated fabrics carry no GUIDs: synthetic ones, 0x1000000000000000 + NodeId + 1 (leaf-0 is node 0).
  CHECK(text.find("Unicast lids [0x0-0xe] of switch Lid 1 guid 0x1000000000000001 (leaf-0):\n") == 0);
  check_golden("routes-ftree-fat-tree-r4.txt", text);
}

namespace {
struct Cli {
  int code = -1;
  std::string out;
};
Cli run(const std::string& args) {
  Cli r;
  FILE* p = popen((std::string(IBNETSIM_BINARY) + " " + args + " 2>&1").c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}
} // namespace

TEST_CASE("ibnetsim topo routes: same text as the library dump, -o writes the file, bad names exit 2") {
  const auto dir = std::filesystem::temp_directory_path() / "ibnetsim-test-routes";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string fabric = (dir / "ft.json").string(), out = (dir / "lfts.txt").string();
  REQUIRE(run("topo generate fat-tree --tiers 2 --radix 4 -o " + fabric).code == 0);
  auto r = run("topo routes " + fabric + " --routing ftree");
  CHECK(r.code == 0);
  // stderr comes first here: the note that the generated fabric's 14 nodes got synthetic GUIDs.
  const std::string note = "note: 14 node(s) have no GUID in " + fabric;
  REQUIRE(r.out.rfind(note, 0) == 0);
  r.out.erase(0, r.out.find('\n') + 1);
  check_golden("routes-ftree-fat-tree-r4.txt", r.out);
  CHECK(run("topo routes " + fabric + " --routing ftree -o " + out).code == 0);
  CHECK(ibn::test::read_text_file(out) == r.out);
  const auto bad = run("topo routes " + fabric + " --routing nope");
  CHECK(bad.code == 2);
  CHECK(bad.out.find("known: ftree, minhop, updn") != std::string::npos);
  std::filesystem::remove_all(dir);
}
