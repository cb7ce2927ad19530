// Routing at scale (seconds each): the 65,536-host 3-tier radix-64 fat-tree under ftree, every shift on a
// 1,024-host 3-tier tree, deadlock checks on 2,048 hosts. Timings are reported, not asserted.
#include "models/routing/deadlock.hpp"
#include "models/routing/routing.hpp"
#include "topology/generators.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <map>

using namespace ibn;
using namespace ibn::routing;
using topo::Fabric;
using topo::LinkId;
using topo::NodeId;

namespace {

Fabric fat_tree(int tiers, int radix) {
  topo::FatTreeParams p;
  p.tiers = tiers;
  p.radix = radix;
  return topo::build_fat_tree(p);
}

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Max flows per directed link for HCA i -> (i + k) mod N.
int shift_max_load(const Fabric& f, const RoutingTables& t, std::size_t k) {
  const std::size_t N = t.num_hcas();
  std::vector<int> load(f.num_links() * 2, 0);
  int worst = 0;
  for (HcaIndex i = 0; i < N; ++i) {
    NodeId at = t.hca_nodes()[i];
    for (const LinkId l : t.route(i, static_cast<HcaIndex>((i + k) % N))) {
      const auto& lk = f.link(l);
      worst = std::max(worst, ++load[std::size_t{l} * 2 + (lk.a.node == at ? 0 : 1)]);
      at = lk.other(at);
    }
  }
  return worst;
}

} // namespace

TEST_CASE(
    "ftree on the 65,536-host 3-tier radix-64 tree: compact tables, balanced up-ports, minimal, shift-free") {
  // 64 pods x 32 leaves x 32 hosts; 2,048 leaves + 2,048 pod spines + 1,024 cores = 5,120 switches.
  const Fabric f = fat_tree(3, 64);
  const auto t0 = std::chrono::steady_clock::now();
  const auto t = route_ftree(f);
  const double build_s = since(t0);
  REQUIRE(t.num_hcas() == 65536);
  REQUIRE(t.switch_nodes().size() == 5120);
  MESSAGE("ftree 65,536 hosts x 5,120 switches: built in " << build_s << " s; " << t.storage_description());
  CHECK(t.memory_bytes() < 64u * 1024 * 1024); // no dense LFT: D-mod-k rule + per-(switch, leaf) group ids

  // Leaf up-ports: (65,536 - 32) remote destinations / 32 up-ports = 2,047 each.
  for (const char* name : {"pod0-leaf-0", "pod17-leaf-9", "pod63-leaf-31"}) {
    const NodeId leaf = *f.find_node(name);
    std::map<Port, int> per_port;
    for (HcaIndex d = 0; d < 65536; ++d)
      if (f.link(f.links_of(t.hca_nodes()[d]).front()).other(t.hca_nodes()[d]) != leaf)
        ++per_port[t.next_hop(leaf, d)];
    REQUIRE(per_port.size() == 32);
    for (const auto& [p, c] : per_port) CHECK(c == 2047);
  }
  // Pod spine up-ports: destinations outside the pod (65,536 - 1,024) / 32 = 2,016 each.
  {
    const NodeId spine = *f.find_node("pod5-spine-7");
    std::map<Port, int> per_port;
    for (HcaIndex d = 0; d < 65536; ++d)
      if (d / 1024 != 5) ++per_port[t.next_hop(spine, d)];
    REQUIRE(per_port.size() == 32);
    for (const auto& [p, c] : per_port) CHECK(c == 2016);
  }
  // Minimal: 2 cables on a leaf, 4 in a pod, 6 across the cores.
  for (HcaIndex s = 0; s < 65536; s += 4099)
    for (HcaIndex d = 0; d < 65536; d += 997) {
      if (s == d) continue;
      const std::size_t want = s / 32 == d / 32 ? 2 : s / 1024 == d / 1024 ? 4 : 6;
      CHECK(t.route(s, d).size() == want);
    }
  // Shifts by one leaf (d1 = 32) and by one pod (1,024): one flow per link (Zahavi's D-mod-k property).
  CHECK(shift_max_load(f, t, 32) == 1);
  CHECK(shift_max_load(f, t, 1024) == 1);
  CHECK(shift_max_load(f, t, 12345) == 1);
}

TEST_CASE("ftree on a 1,024-host 3-tier radix-16 tree: all 1,023 shifts are contention-free") {
  const Fabric f = fat_tree(3, 16);
  const auto t = route_ftree(f);
  REQUIRE(t.num_hcas() == 1024);
  int worst = 0;
  for (std::size_t k = 1; k < 1024; ++k) worst = std::max(worst, shift_max_load(f, t, k));
  CHECK(worst == 1);
}

TEST_CASE("deadlock check on 2,048 hosts: ftree and updn acyclic with 1 VL (static and AR)") {
  const Fabric f = fat_tree(2, 64);
  for (const auto& t : {route_ftree(f), route_updn(f)}) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto rep = check_deadlock_free(f, t, single_vl());
    MESSAGE(t.algorithm() << ": " << rep.channels << " channels, " << rep.dependencies << " dependencies in "
                          << since(t0) << " s");
    CHECK(rep.deadlock_free);
    // Every leaf->spine channel depends on every spine->leaf channel of the same spine except back to its own
    // leaf: 64 leaves x 32 spines x 63 = 129,024.
    CHECK(rep.dependencies == 129024);
  }
}
