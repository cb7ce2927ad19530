#include "models/routing/dragonfly.hpp"

#include "models/routing/builder.hpp"
#include "sim/error.hpp"

#include <algorithm>
#include <tuple>

namespace ibn::routing {

using detail::Index;
using detail::kNone;
using detail::SwitchPort;
using detail::TablesBuilder;
using topo::LinkId;
using topo::NodeId;

Port DragonflyLayout::port_toward_group(std::uint32_t sw, int target, std::uint64_t spread) const {
  const int from = group_of_switch[sw];
  const auto cab = cables_between(from, target);
  if (cab.empty()) return kNoPort;
  const GlobalCable& c = cab[spread % cab.size()];
  if (c.sw == sw) return c.port;
  // Own cables to `target` are contiguous (sorted by switch, port).
  const auto first = std::find_if(cab.begin(), cab.end(), [&](const GlobalCable& g) { return g.sw == sw; });
  if (first != cab.end()) {
    const auto last = std::find_if(first, cab.end(), [&](const GlobalCable& g) { return g.sw != sw; });
    return first[static_cast<std::ptrdiff_t>(spread % static_cast<std::uint64_t>(last - first))].port;
  }
  return local_port[static_cast<std::size_t>(sw) * static_cast<std::size_t>(max_routers) +
                    static_cast<std::size_t>(index_in_group[c.sw])];
}

namespace {

const char* mode_name(DragonflyMode m) {
  switch (m) {
  case DragonflyMode::Valiant:
    return "df-valiant";
  case DragonflyMode::Ugal:
    return "df-ugal";
  default:
    return "df-min";
  }
}

std::unique_ptr<DragonflyLayout> make_layout(const Index& idx, const std::string& algo) {
  const std::string hint =
      ": use minhop or updn for this fabric (routing.algorithm in a scenario, --routing in topo routes)";
  auto L = std::make_unique<DragonflyLayout>();
  const std::size_t S = idx.num_switches();
  if (S == 0) throw InputError(algo + ": the fabric has no switches" + hint);
  L->group_of_switch.assign(S, -1);
  L->index_in_group.assign(S, -1);
  for (std::uint32_t s = 0; s < S; ++s) {
    const int g = idx.sw_node(s).group;
    if (g < 0)
      throw InputError(algo + " needs a dragonfly (every router in a group), but '" + idx.sw_node(s).name +
                       "' has no group" + hint);
    L->group_of_switch[s] = g;
    L->num_groups = std::max(L->num_groups, g + 1);
  }
  L->routers.assign(static_cast<std::size_t>(L->num_groups), {});
  for (std::uint32_t s = 0; s < S; ++s) {
    auto& r = L->routers[static_cast<std::size_t>(L->group_of_switch[s])];
    L->index_in_group[s] = static_cast<int>(r.size());
    r.push_back(s);
    L->max_routers = std::max(L->max_routers, static_cast<int>(r.size()));
  }
  for (HcaIndex h = 0; h < idx.num_hcas(); ++h)
    if (idx.hca_sw[h] == kNone)
      throw InputError(algo + ": HCA '" + idx.fabric.node(idx.hca_nodes[h]).name +
                       "' is not cabled to a router" + hint);
  // Local ports (first cable to each router of the same group) and global cables.
  const auto R = static_cast<std::size_t>(L->max_routers);
  L->local_port.assign(S * R, kNoPort);
  std::vector<std::tuple<int, int, std::uint32_t, Port>> global;
  for (std::uint32_t s = 0; s < S; ++s)
    for (const SwitchPort& sp : idx.nbrs(s)) {
      const int gs = L->group_of_switch[s], gn = L->group_of_switch[sp.nbr];
      if (gs == gn) {
        Port& lp = L->local_port[s * R + static_cast<std::size_t>(L->index_in_group[sp.nbr])];
        if (lp == kNoPort) lp = sp.port;
      } else {
        global.emplace_back(gs, gn, s, sp.port);
      }
    }
  std::sort(global.begin(), global.end());
  const auto G = static_cast<std::size_t>(L->num_groups);
  L->cable_offset.assign(G * G + 1, 0);
  for (const auto& [a, b, s, p] : global)
    ++L->cable_offset[static_cast<std::size_t>(a) * G + static_cast<std::size_t>(b) + 1];
  for (std::size_t k = 0; k < G * G; ++k) L->cable_offset[k + 1] += L->cable_offset[k];
  for (const auto& [a, b, s, p] : global) L->cables.push_back({s, p});
  // MIN needs all-to-all local cables and a global cable between every two groups.
  for (std::size_t g = 0; g < G; ++g) {
    const auto& rs = L->routers[g];
    for (const auto a : rs)
      for (const auto x : rs)
        if (a != x && L->local_port[a * R + static_cast<std::size_t>(L->index_in_group[x])] == kNoPort)
          throw InputError(algo + " needs all-to-all local cables in each group, but '" +
                           idx.sw_node(a).name + "' and '" + idx.sw_node(x).name + "' (group " +
                           std::to_string(g) + ") are not cabled together" + hint);
  }
  for (std::size_t g = 0; g < G; ++g)
    for (std::size_t t = 0; t < G; ++t)
      if (g != t && !L->routers[g].empty() && !L->routers[t].empty() &&
          L->cables_between(static_cast<int>(g), static_cast<int>(t)).empty())
        throw InputError(algo +
                         " (minimal routing) needs a global cable between every two groups, but groups " +
                         std::to_string(g) + " and " + std::to_string(t) + " have none" + hint);
  return L;
}

} // namespace

RoutingTables route_dragonfly(const topo::Fabric& f, DragonflyMode mode) {
  if (mode == DragonflyMode::None) mode = DragonflyMode::Minimal;
  const std::string algo = mode_name(mode);
  TablesBuilder b(f, algo);
  const Index& idx = b.index();
  auto L = make_layout(idx, algo);
  const std::size_t S = idx.num_switches();

  // AR groups per (router, destination router).
  std::vector<Port> ports;
  std::vector<std::uint8_t> owner(S, 0);
  for (std::uint32_t s = 0; s < S; ++s) {
    b.begin_switch(s);
    const int G = L->group_of_switch[s];
    for (std::uint32_t c = 0; c < idx.num_classes(); ++c) {
      const std::uint32_t y = idx.class_sw[c];
      if (y == s) continue;
      const int T = L->group_of_switch[y];
      ports.clear();
      if (G == T) {
        for (const SwitchPort& sp : idx.nbrs(s))
          if (sp.nbr == y) ports.push_back(sp.port);
      } else {
        const auto cab = L->cables_between(G, T);
        for (const auto& gc : cab)
          if (gc.sw == s) ports.push_back(gc.port);
        if (ports.empty()) {
          for (const auto& gc : cab) owner[gc.sw] = 1;
          for (const SwitchPort& sp : idx.nbrs(s))
            if (owner[sp.nbr]) ports.push_back(sp.port);
          for (const auto& gc : cab) owner[gc.sw] = 0;
        }
      }
      b.set_group(c, ports);
    }
    b.end_switch();
  }

  // Static MIN ports.
  b.use_dense_static();
  for (std::uint32_t s = 0; s < S; ++s)
    for (HcaIndex d = 0; d < idx.num_hcas(); ++d) {
      const std::uint32_t y = idx.hca_sw[d];
      Port p = kNoPort;
      if (y == s)
        p = idx.hca_port[d];
      else if (L->group_of_switch[y] == L->group_of_switch[s]) {
        const auto g = b.group_ports(b.group_id(s, idx.hca_class[d]));
        p = g[d % g.size()];
      } else {
        p = L->port_toward_group(s, L->group_of_switch[y], d);
      }
      b.set_static(s, d, p);
    }
  b.set_vls(VlRule::PerGlobalHop, mode == DragonflyMode::Minimal ? 2 : 3, true);
  b.set_dragonfly(mode, std::move(L));
  return b.finish();
}

int draw_intermediate_group(const RoutingTables& t, HcaIndex src, HcaIndex dst, Rng& rng) {
  const DragonflyLayout* df = t.dragonfly();
  if (!df) throw InputError("Valiant routing needs dragonfly tables (df-*), not '" + t.algorithm() + "'");
  const int gs = df->group_of_switch[t.hca_switch_index(src)];
  const int gd = df->group_of_switch[t.hca_switch_index(dst)];
  std::vector<int> candidates;
  for (int g = 0; g < df->num_groups; ++g)
    if (g != gs && g != gd && !df->routers[static_cast<std::size_t>(g)].empty()) candidates.push_back(g);
  if (candidates.empty()) return -1;
  return candidates[rng.uniform_below(candidates.size())];
}

std::vector<LinkId> valiant_route(const RoutingTables& t, HcaIndex src, HcaIndex dst, int intermediate) {
  const DragonflyLayout* df = t.dragonfly();
  if (!df) throw InputError("Valiant routing needs dragonfly tables (df-*), not '" + t.algorithm() + "'");
  if (src >= t.num_hcas() || dst >= t.num_hcas()) throw InputError("valiant_route: HCA index out of range");
  if (src == dst) return {};
  std::uint32_t s = t.hca_switch_index(src);
  const int gs = df->group_of_switch[s];
  const int gd = df->group_of_switch[t.hca_switch_index(dst)];
  if (intermediate < 0 || intermediate >= df->num_groups || intermediate == gs || intermediate == gd ||
      df->routers[static_cast<std::size_t>(intermediate)].empty())
    return t.route(src, dst);
  std::vector<LinkId> path{t.hca_link(src)};
  bool reached = false;
  const NodeId target = t.hca_nodes()[dst];
  for (std::size_t hops = 0; hops <= 2 * t.switch_nodes().size(); ++hops) {
    if (!reached && df->group_of_switch[s] == intermediate) reached = true;
    const Port p = reached ? t.next_hop_by_index(s, dst) : df->port_toward_group(s, intermediate, dst);
    if (p == kNoPort) break;
    path.push_back(t.link_at(s, p));
    const NodeId peer = t.peer_at(s, p);
    if (peer == target) return path;
    s = t.switch_index(peer);
    if (s == RoutingTables::kNone) break;
  }
  throw InputError("valiant_route: no route from HCA " + std::to_string(src) + " to HCA " +
                   std::to_string(dst) + " via group " + std::to_string(intermediate));
}

int switch_hops(const std::vector<LinkId>& path) {
  return path.size() >= 2 ? static_cast<int>(path.size()) - 2 : 0;
}

PathChoice ugal_choose(std::int64_t min_queue_bytes, int min_hops, std::int64_t val_queue_bytes, int val_hops,
                       std::int64_t threshold_byte_hops) {
  const __int128 lhs = static_cast<__int128>(min_queue_bytes) * min_hops;
  const __int128 rhs = static_cast<__int128>(val_queue_bytes) * val_hops + threshold_byte_hops;
  return lhs <= rhs ? PathChoice::Minimal : PathChoice::Valiant;
}

} // namespace ibn::routing
