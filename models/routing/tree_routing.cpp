// ftree (D-mod-k), minhop and updn: the OpenSM engines for trees and arbitrary fabrics.
#include "models/routing/builder.hpp"
#include "models/routing/routing.hpp"
#include "sim/error.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

namespace ibn::routing {

using detail::Index;
using detail::kInfDist;
using detail::kNone;
using detail::SwitchPort;
using detail::TablesBuilder;
using topo::NodeId;

namespace {

/// Throws unless the fabric is a layered tree: every HCA on a tier-1 switch, every switch-to-switch cable
/// between adjacent tiers, tiers >= 1.
void check_layered_tree(const Index& idx) {
  const auto& f = idx.fabric;
  const std::string hint = ": use --routing updn (deadlock-free on any fabric) or minhop";
  if (idx.num_switches() == 0) throw InputError("ftree: the fabric has no switches" + hint);
  for (std::uint32_t s = 0; s < idx.num_switches(); ++s) {
    const auto& n = idx.sw_node(s);
    if (n.tier < 1)
      throw InputError("ftree needs a layered fat-tree, but switch '" + n.name + "' has tier " +
                       std::to_string(n.tier) + hint);
    for (const SwitchPort& sp : idx.nbrs(s)) {
      const auto& m = idx.sw_node(sp.nbr);
      if (std::abs(m.tier - n.tier) != 1)
        throw InputError("ftree needs a layered fat-tree (every switch cable between adjacent tiers), but '" +
                         n.name + "' (tier " + std::to_string(n.tier) + ") port " + std::to_string(sp.port) +
                         " is cabled to '" + m.name + "' (tier " + std::to_string(m.tier) + ")" + hint);
    }
  }
  for (HcaIndex h = 0; h < idx.num_hcas(); ++h) {
    const auto& hn = f.node(idx.hca_nodes[h]);
    if (idx.hca_sw[h] == kNone)
      throw InputError("ftree: HCA '" + hn.name + "' is not cabled to a switch" + hint);
    const auto& leaf = idx.sw_node(idx.hca_sw[h]);
    if (leaf.tier != 1)
      throw InputError("ftree needs every HCA on a leaf (tier-1) switch, but '" + hn.name + "' is on '" +
                       leaf.name + "' (tier " + std::to_string(leaf.tier) + ")" + hint);
  }
}

std::uint32_t clamp32(std::uint64_t v) {
  return static_cast<std::uint32_t>(
      std::min<std::uint64_t>(v, std::numeric_limits<std::uint32_t>::max() / 2));
}

} // namespace

RoutingTables route_ftree(const topo::Fabric& f, const RoutingOptions& /*opt*/) {
  TablesBuilder b(f, "ftree");
  const Index& idx = b.index();
  check_layered_tree(idx);
  const auto dist = detail::class_distances(idx);
  b.groups_from_distances(dist, [](std::uint32_t, const SwitchPort&, std::uint32_t) { return true; });

  // Up-port counts per tier (every cable a port), their prefix products P_t, distinct parents per switch.
  const std::size_t S = idx.num_switches();
  int max_tier = 1;
  for (std::uint32_t s = 0; s < S; ++s) max_tier = std::max(max_tier, idx.sw_node(s).tier);
  std::vector<std::uint64_t> up_count(static_cast<std::size_t>(max_tier) + 2, 0);
  std::vector<std::uint32_t> parents(S, 0);
  for (std::uint32_t s = 0; s < S; ++s) {
    const int t = idx.sw_node(s).tier;
    std::uint64_t up = 0;
    std::vector<std::uint32_t> distinct;
    for (const SwitchPort& sp : idx.nbrs(s))
      if (idx.sw_node(sp.nbr).tier > t) {
        ++up;
        distinct.push_back(sp.nbr);
      }
    std::sort(distinct.begin(), distinct.end());
    parents[s] = static_cast<std::uint32_t>(std::unique(distinct.begin(), distinct.end()) - distinct.begin());
    up_count[static_cast<std::size_t>(t)] = std::max(up_count[static_cast<std::size_t>(t)], up);
  }
  std::vector<std::uint64_t> P(static_cast<std::size_t>(max_tier) + 2, 1);
  for (int t = 2; t <= max_tier + 1; ++t)
    P[static_cast<std::size_t>(t)] =
        std::min<std::uint64_t>(P[static_cast<std::size_t>(t - 1)] *
                                    std::max<std::uint64_t>(1, up_count[static_cast<std::size_t>(t - 1)]),
                                std::uint64_t{1} << 40);

  // Divisor of each group: up groups P_t; down groups (parallel cables to child c) P_c * n_c.
  std::vector<std::uint8_t> done(b.num_groups(), 0);
  std::vector<std::uint32_t> nbr_of_port(static_cast<std::size_t>(idx.max_port) + 1, kNone);
  for (std::uint32_t s = 0; s < S; ++s) {
    const int t = idx.sw_node(s).tier;
    for (const SwitchPort& sp : idx.nbrs(s)) nbr_of_port[sp.port] = sp.nbr;
    for (std::size_t c = 0; c < idx.num_classes(); ++c) {
      const std::uint32_t gid = b.group_id(s, static_cast<std::uint32_t>(c));
      if (gid == kNone || done[gid]) continue;
      done[gid] = 1;
      const auto ports = b.group_ports(gid);
      if (ports.size() < 2) continue;
      const std::uint32_t child = nbr_of_port[ports[0]];
      const int ct = idx.sw_node(child).tier;
      const std::uint64_t div =
          ct > t ? P[static_cast<std::size_t>(t)]
                 : P[static_cast<std::size_t>(ct)] * std::max<std::uint32_t>(1, parents[child]);
      b.set_divisor(gid, clamp32(div));
    }
  }

  // ca-order: leaves (tier 1) in NodeId order, each leaf's HCAs in port order.
  std::vector<std::uint32_t> rank(idx.num_hcas(), 0);
  {
    std::vector<std::vector<std::pair<Port, HcaIndex>>> on_leaf(S);
    for (HcaIndex h = 0; h < idx.num_hcas(); ++h) on_leaf[idx.hca_sw[h]].emplace_back(idx.hca_port[h], h);
    std::uint32_t r = 0;
    for (std::uint32_t s = 0; s < S; ++s) {
      auto& v = on_leaf[s];
      std::sort(v.begin(), v.end());
      for (const auto& [port, h] : v) rank[h] = r++;
    }
  }
  b.use_dmodk(std::move(rank));
  b.set_vls(VlRule::Single, 1, true);
  return b.finish();
}

RoutingTables route_minhop(const topo::Fabric& f, const RoutingOptions& /*opt*/) {
  TablesBuilder b(f, "minhop");
  const auto dist = detail::class_distances(b.index());
  b.groups_from_distances(dist, [](std::uint32_t, const SwitchPort&, std::uint32_t) { return true; });
  b.fill_static_by_port_equalisation();
  b.set_vls(VlRule::Single, 1, false);
  return b.finish();
}

namespace {

/// Multi-source BFS ranks from `roots`; switches of components without a root are ranked from their
/// lowest switch index.
std::vector<std::uint32_t> bfs_ranks(const Index& idx, const std::vector<std::uint32_t>& roots) {
  const std::size_t S = idx.num_switches();
  std::vector<std::uint32_t> rank(S, kNone), queue;
  queue.reserve(S);
  auto run = [&](const std::vector<std::uint32_t>& sources) {
    std::size_t head = queue.size();
    for (const auto r : sources)
      if (rank[r] == kNone) {
        rank[r] = 0;
        queue.push_back(r);
      }
    while (head < queue.size()) {
      const auto s = queue[head++];
      for (const SwitchPort& sp : idx.nbrs(s))
        if (rank[sp.nbr] == kNone) {
          rank[sp.nbr] = rank[s] + 1;
          queue.push_back(sp.nbr);
        }
    }
  };
  run(roots);
  for (std::uint32_t s = 0; s < S; ++s)
    if (rank[s] == kNone) run({s});
  return rank;
}

struct UpDown {
  std::vector<std::uint16_t> dist; // policy distance per (s, c)
  std::vector<std::uint8_t> down;  // 1 when s reaches class c going down only
  bool complete = true;            // every switch with HCAs reaches every class of its component
  std::string missing;             // first unreachable pair, for messages
};

/// Policy distances for up*/down* with key order pos[] (a hop s -> n is "up" when pos[n] < pos[s]).
UpDown updown_distances(const Index& idx, const std::vector<std::uint32_t>& pos) {
  const std::size_t S = idx.num_switches(), C = idx.num_classes();
  UpDown u;
  u.dist.assign(S * C, kInfDist);
  u.down.assign(S * C, 0);
  std::vector<std::uint32_t> by_key(S);
  for (std::uint32_t s = 0; s < S; ++s) by_key[pos[s]] = s;
  // Connected components (to tell "unreachable by up/down" from "another plane").
  std::vector<std::uint32_t> comp(S, kNone);
  for (std::uint32_t s0 = 0; s0 < S; ++s0) {
    if (comp[s0] != kNone) continue;
    std::vector<std::uint32_t> stack{s0};
    comp[s0] = s0;
    while (!stack.empty()) {
      const auto s = stack.back();
      stack.pop_back();
      for (const SwitchPort& sp : idx.nbrs(s))
        if (comp[sp.nbr] == kNone) {
          comp[sp.nbr] = s0;
          stack.push_back(sp.nbr);
        }
    }
  }
  std::vector<std::uint32_t> dd(S), dp(S);
  const std::uint32_t inf = kNone;
  for (std::size_t c = 0; c < C; ++c) {
    const std::uint32_t L = idx.class_sw[c];
    std::fill(dd.begin(), dd.end(), inf);
    dd[L] = 0;
    // Down-only distance: from the bottom of the key order up (down-neighbours have larger keys).
    for (std::size_t k = S; k-- > 0;) {
      const auto s = by_key[k];
      if (s == L) continue;
      std::uint32_t best = inf;
      for (const SwitchPort& sp : idx.nbrs(s))
        if (pos[sp.nbr] > pos[s] && dd[sp.nbr] != inf) best = std::min(best, dd[sp.nbr] + 1);
      dd[s] = best;
    }
    // Policy distance: down-only when possible, else up toward the nearest switch that can.
    for (std::size_t k = 0; k < S; ++k) {
      const auto s = by_key[k];
      if (dd[s] != inf) {
        dp[s] = dd[s];
        continue;
      }
      std::uint32_t best = inf;
      for (const SwitchPort& sp : idx.nbrs(s))
        if (pos[sp.nbr] < pos[s] && dp[sp.nbr] != inf) best = std::min(best, dp[sp.nbr] + 1);
      dp[s] = best;
    }
    for (std::uint32_t s = 0; s < S; ++s) {
      if (dp[s] == inf) {
        // Only switches with HCAs originate traffic; one without HCAs that cannot reach L is simply never on
        // a route to L (routes only step to switches with a finite distance), so it does not matter.
        if (comp[s] == comp[L] && idx.class_of_sw[s] != kNone && u.complete) {
          u.complete = false;
          u.missing = "'" + idx.sw_node(s).name + "' cannot reach '" + idx.sw_node(L).name + "'";
        }
        continue;
      }
      if (dp[s] >= kInfDist) throw InputError("updn: path longer than 65534 hops");
      u.dist[s * C + c] = static_cast<std::uint16_t>(dp[s]);
      u.down[s * C + c] = dd[s] != inf;
    }
  }
  return u;
}

std::vector<std::uint32_t> key_positions(const std::vector<std::uint32_t>& rank) {
  const std::size_t S = rank.size();
  std::vector<std::uint32_t> order(S), pos(S);
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return rank[a] != rank[b] ? rank[a] < rank[b] : a < b; // switch index order == NodeId order
  });
  for (std::uint32_t k = 0; k < S; ++k) pos[order[k]] = k;
  return pos;
}

/// The candidate root with the smallest eccentricity (ties: lowest NodeId).
std::uint32_t most_central(const Index& idx, const std::vector<std::uint32_t>& candidates) {
  std::uint32_t best = candidates.front(), best_ecc = kNone;
  for (const auto r : candidates) {
    const auto rank = bfs_ranks(idx, {r});
    std::uint32_t ecc = 0;
    for (std::uint32_t s = 0; s < rank.size(); ++s) ecc = std::max(ecc, rank[s]);
    if (ecc < best_ecc) {
      best_ecc = ecc;
      best = r;
    }
  }
  return best;
}

} // namespace

RoutingTables route_updn(const topo::Fabric& f, const RoutingOptions& opt) {
  TablesBuilder b(f, "updn");
  const Index& idx = b.index();
  const std::size_t S = idx.num_switches();
  if (S == 0) throw InputError("updn: the fabric has no switches");
  std::vector<std::uint32_t> roots;
  const bool given = !opt.roots.empty();
  if (given) {
    for (const auto& name : opt.roots) {
      const auto n = f.find_node(name);
      if (!n) throw InputError("updn: root '" + name + "' is not a node of the fabric");
      if (idx.sw_of_node[*n] == kNone) throw InputError("updn: root '" + name + "' is not a switch");
      roots.push_back(idx.sw_of_node[*n]);
    }
  } else {
    int top = std::numeric_limits<int>::min();
    for (std::uint32_t s = 0; s < S; ++s) top = std::max(top, idx.sw_node(s).tier);
    for (std::uint32_t s = 0; s < S; ++s)
      if (idx.sw_node(s).tier == top) roots.push_back(s);
  }
  auto pos = key_positions(bfs_ranks(idx, roots));
  UpDown ud = updown_distances(idx, pos);
  if (!ud.complete) {
    if (given)
      throw InputError(
          "updn: with roots as given, " + ud.missing +
          " without a down-to-up turn; choose roots that are above every leaf (e.g. the spines)");
    const std::uint32_t root = most_central(idx, roots);
    b.add_note("updn: the " + std::to_string(roots.size()) +
               " top-tier roots leave a destination unreachable (" + ud.missing +
               "); ranked from the single root '" + idx.sw_node(root).name + "' instead");
    pos = key_positions(bfs_ranks(idx, {root}));
    ud = updown_distances(idx, pos);
    if (!ud.complete) throw std::logic_error("updn: a single-root ranking left " + ud.missing);
  }
  const std::size_t C = idx.num_classes();
  b.groups_from_distances(ud.dist, [&](std::uint32_t s, const SwitchPort& sp, std::uint32_t c) {
    const std::size_t k = static_cast<std::size_t>(s) * C + c;
    if (ud.down[k]) return pos[sp.nbr] > pos[s] && ud.down[static_cast<std::size_t>(sp.nbr) * C + c] != 0;
    return pos[sp.nbr] < pos[s];
  });
  b.fill_static_by_port_equalisation();
  b.set_vls(VlRule::Single, 1, true);
  return b.finish();
}

} // namespace ibn::routing
