#pragma once
// Small building steps the generators share (generators.cpp, rail_optimized.cpp): a switch, an HCA, a cable
// whose medium follows its length (DAC up to kDacMaxLengthM, fibre beyond).
#include "topology/fabric.hpp"

#include <string>
#include <utility>

namespace ibn::topo::build {

inline Medium medium_for(double length_m) {
  return length_m <= kDacMaxLengthM ? Medium::Dac : Medium::Fiber;
}

inline void cable(Fabric& f, NodeId a, int pa, NodeId b, int pb, const LinkSpeed& s, double len) {
  f.add_link(make_link({a, pa}, {b, pb}, s, len, medium_for(len)));
}

inline NodeId add_switch(Fabric& f, std::string name, int radix, int tier, int plane, int group) {
  Node n;
  n.kind = NodeKind::Switch;
  n.name = std::move(name);
  n.radix = radix;
  n.tier = tier;
  n.plane = plane;
  n.group = group;
  return f.add_node(std::move(n));
}

inline NodeId add_hca(Fabric& f, std::string name, int host, int plane, int group) {
  Node n;
  n.kind = NodeKind::Hca;
  n.name = std::move(name);
  n.radix = 1;
  n.tier = 0;
  n.host = host;
  n.plane = plane;
  n.group = group;
  return f.add_node(std::move(n));
}

} // namespace ibn::topo::build
