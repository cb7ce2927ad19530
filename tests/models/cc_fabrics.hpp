#pragma once
// Hand-built fabrics of the congestion-control tests (cc_test.cpp, cc_slow_test.cpp).
#include "tests/test_util.hpp"
#include "topology/fabric.hpp"

#include <algorithm>
#include <string>

namespace ibn::test {

/// `hosts` HCAs h0.. on one switch "sw" (ports 1..hosts), 2 m DAC, NDR 4x (400 Gb/s).
inline topo::Fabric cc_star(int hosts) {
  topo::Fabric f;
  const auto sw = add_node(f, topo::NodeKind::Switch, "sw", std::max(hosts, 2), 1);
  for (int i = 0; i < hosts; ++i) {
    const auto h = add_node(f, topo::NodeKind::Hca, "h" + std::to_string(i), 1, 0, i);
    f.add_link(topo::make_link({h, 1}, {sw, i + 1}, {topo::Generation::NDR, 4}, 2.0, topo::Medium::Dac));
  }
  return f;
}

} // namespace ibn::test
