#pragma once
// Small fabrics built by hand with Fabric::add_node/add_link, for tests that must not depend on the
// generators. HCAs are added after the switches, leaf by leaf, so HCA NodeId order is leaf order.
#include "topology/fabric.hpp"

#include <string>
#include <vector>

namespace ibn::topo::testing {

inline Node make_switch(const std::string& name, int radix, int tier) {
  Node n;
  n.kind = NodeKind::Switch;
  n.name = name;
  n.radix = radix;
  n.tier = tier;
  return n;
}

inline Node make_hca(const std::string& name, int host) {
  Node n;
  n.kind = NodeKind::Hca;
  n.name = name;
  n.radix = 1;
  n.tier = 0;
  n.host = host;
  return n;
}

/// Cables node `a` to node `b` on the next free port of each.
class Cabler {
 public:
  explicit Cabler(Fabric& f) : f_(f), next_(f.num_nodes(), 1) {}
  LinkId cable(NodeId a, NodeId b, LinkSpeed speed, double length_m = 3.0) {
    if (next_.size() < f_.num_nodes()) next_.resize(f_.num_nodes(), 1);
    return f_.add_link(make_link({a, next_[a]++}, {b, next_[b]++}, speed, length_m,
                                 length_m <= kDacMaxLengthM ? Medium::Dac : Medium::Fiber));
  }

 private:
  Fabric& f_;
  std::vector<int> next_;
};

struct TwoTierSpec {
  int leaves = 4;
  int hosts_per_leaf = 4;
  int spines = 2;
  int cables_per_pair = 1; ///< parallel cables between each leaf and each spine
  LinkSpeed host_speed{Generation::NDR, 4};
  LinkSpeed up_speed{Generation::NDR, 4};
};

/// Leaf/spine tree: every leaf has `cables_per_pair` cables to every spine.
inline Fabric two_tier(const TwoTierSpec& s) {
  Fabric f;
  f.name = "two-tier";
  std::vector<NodeId> leaves, spines;
  for (int l = 0; l < s.leaves; ++l)
    leaves.push_back(f.add_node(
        make_switch("leaf" + std::to_string(l), s.hosts_per_leaf + s.spines * s.cables_per_pair, 1)));
  for (int p = 0; p < s.spines; ++p)
    spines.push_back(f.add_node(make_switch("spine" + std::to_string(p), s.leaves * s.cables_per_pair, 2)));
  std::vector<NodeId> hcas;
  for (int l = 0; l < s.leaves; ++l)
    for (int h = 0; h < s.hosts_per_leaf; ++h) {
      const int host = l * s.hosts_per_leaf + h;
      hcas.push_back(f.add_node(make_hca("h" + std::to_string(host), host)));
    }
  Cabler c(f);
  for (int l = 0; l < s.leaves; ++l)
    for (int h = 0; h < s.hosts_per_leaf; ++h)
      c.cable(hcas[static_cast<std::size_t>(l * s.hosts_per_leaf + h)], leaves[static_cast<std::size_t>(l)],
              s.host_speed, 3.0);
  for (int l = 0; l < s.leaves; ++l)
    for (int p = 0; p < s.spines; ++p)
      for (int k = 0; k < s.cables_per_pair; ++k)
        c.cable(leaves[static_cast<std::size_t>(l)], spines[static_cast<std::size_t>(p)], s.up_speed, 30.0);
  return f;
}

/// Non-blocking 3-tier folded Clos of radix-R switches (k = R/2): R pods of k leaves and k spines, k hosts
/// per leaf, k^2 cores; spine j of every pod connects to cores j*k .. j*k+k-1.
/// N = 2*(R/2)^3 hosts, 5*(R/2)^2 switches, 3*N cables.
inline Fabric three_tier(int radix, LinkSpeed speed = {Generation::NDR, 4}) {
  const int k = radix / 2, pods = radix;
  Fabric f;
  f.name = "three-tier-r" + std::to_string(radix);
  std::vector<NodeId> leaf, spine, core;
  for (int p = 0; p < pods; ++p)
    for (int i = 0; i < k; ++i)
      leaf.push_back(f.add_node(make_switch("leaf" + std::to_string(p * k + i), radix, 1)));
  for (int p = 0; p < pods; ++p)
    for (int i = 0; i < k; ++i)
      spine.push_back(f.add_node(make_switch("spine" + std::to_string(p * k + i), radix, 2)));
  for (int c = 0; c < k * k; ++c)
    core.push_back(f.add_node(make_switch("core" + std::to_string(c), radix, 3)));
  std::vector<NodeId> hcas;
  for (int h = 0; h < pods * k * k; ++h) hcas.push_back(f.add_node(make_hca("h" + std::to_string(h), h)));
  Cabler c(f);
  for (int h = 0; h < pods * k * k; ++h)
    c.cable(hcas[static_cast<std::size_t>(h)], leaf[static_cast<std::size_t>(h / k)], speed, 3.0);
  for (int p = 0; p < pods; ++p)
    for (int i = 0; i < k; ++i)
      for (int j = 0; j < k; ++j)
        c.cable(leaf[static_cast<std::size_t>(p * k + i)], spine[static_cast<std::size_t>(p * k + j)], speed,
                30.0);
  for (int p = 0; p < pods; ++p)
    for (int j = 0; j < k; ++j)
      for (int m = 0; m < k; ++m)
        c.cable(spine[static_cast<std::size_t>(p * k + j)], core[static_cast<std::size_t>(j * k + m)], speed,
                100.0);
  return f;
}

} // namespace ibn::topo::testing
