#include "topology/port_split.hpp"

#include <algorithm>
#include <sstream>

namespace ibn::topo {

int spread_switch_count(int u, std::int64_t needed, int radix) {
  for (int s = 1; s <= u; ++s)
    if (u % s == 0 && static_cast<std::int64_t>(s) * radix >= needed) return s;
  return -1;
}

std::vector<LeafPortSplit> leaf_port_splits(int tiers, int radix, std::int64_t hosts, const Ratio& r1,
                                            const Ratio& r2) {
  std::vector<LeafPortSplit> out;
  if (radix < 2 || hosts < 1 || (tiers != 2 && tiers != 3)) return out;
  const int parts = r1.down + r1.up;
  for (int lp = parts; lp <= radix; lp += parts) {
    LeafPortSplit s;
    s.leaf_ports = lp;
    s.down = lp / parts * r1.down;
    s.up = lp / parts * r1.up;
    const std::int64_t leaves = (hosts + s.down - 1) / s.down;
    if (tiers == 2) {
      if (hosts > static_cast<std::int64_t>(radix) * s.down) continue;
      const int spines = spread_switch_count(s.up, leaves * s.up, radix);
      if (spines < 0) continue;
      s.switches = leaves + spines;
    } else {
      const int parts2 = r2.down + r2.up;
      if (radix % parts2 != 0) continue;
      const int d2 = radix / parts2 * r2.down, u2 = radix / parts2 * r2.up;
      if (hosts > static_cast<std::int64_t>(radix) * d2 * s.down) continue;
      const std::int64_t pods = (leaves + d2 - 1) / d2;
      const int cores = spread_switch_count(u2, pods * u2, radix);
      if (cores < 0) continue;
      s.switches = leaves + pods * s.up + static_cast<std::int64_t>(s.up) * cores;
    }
    s.exact = hosts % s.down == 0;
    out.push_back(s);
  }
  std::stable_sort(out.begin(), out.end(), [](const LeafPortSplit& a, const LeafPortSplit& b) {
    if (a.exact != b.exact) return a.exact;
    if (a.switches != b.switches) return a.switches < b.switches;
    return a.leaf_ports > b.leaf_ports;
  });
  return out;
}

std::optional<LeafPortSplit> cheapest_leaf_ports(int tiers, int radix, std::int64_t hosts, const Ratio& r1,
                                                 const Ratio& r2) {
  auto all = leaf_port_splits(tiers, radix, hosts, r1, r2);
  if (all.empty()) return std::nullopt;
  return all.front();
}

std::string leaf_port_hints(int tiers, int radix, std::int64_t hosts, const Ratio& r1, const Ratio& r2) {
  const auto all = leaf_port_splits(tiers, radix, hosts, r1, r2);
  std::ostringstream out;
  auto say = [&](const LeafPortSplit& s) {
    out << " --leaf-ports " << s.leaf_ports << " (" << s.down << " down/" << s.up << " up, " << s.switches
        << " switches, " << (s.exact ? "every leaf full" : "last leaf partly filled") << ");";
  };
  const LeafPortSplit* exact = nullptr;
  const LeafPortSplit* fewest = nullptr;
  for (const auto& s : all) {
    if (s.exact && !exact) exact = &s;
    if (!fewest || s.switches < fewest->switches) fewest = &s;
  }
  if (exact) say(*exact);
  if (fewest && fewest != exact) say(*fewest);
  std::string text = out.str();
  if (!text.empty()) text.back() = '.';
  return text;
}

} // namespace ibn::topo
