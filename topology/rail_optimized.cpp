#include "topology/rail_optimized.hpp"

#include "sim/error.hpp"
#include "sim/units.hpp"
#include "topology/build_helpers.hpp"
#include "topology/port_split.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ibn::topo {
namespace {

using namespace build;

std::string fail_prefix() {
  return "rail-optimized: ";
}

struct Tier {
  int down = 0, up = 0;
};

/// Leaf split: down = su_nodes, up = su_nodes·up/down of the ratio (must be whole and fit the radix).
Tier leaf_split(const RailOptimizedParams& p, const Ratio& r) {
  if (static_cast<std::int64_t>(p.su_nodes) * r.up % r.down != 0) {
    std::string ok;
    for (int k = 1; k <= 8; ++k)
      for (const Ratio c : {Ratio{k, 1}})
        if (p.su_nodes % c.down == 0) ok += (ok.empty() ? "" : ", ") + c.to_string();
    throw InputError(fail_prefix() + "--su-nodes " + std::to_string(p.su_nodes) + " at " + r.to_string() +
                     " gives " + std::to_string(p.su_nodes) + "*" + std::to_string(r.up) + "/" +
                     std::to_string(r.down) + " leaf up-ports (must be whole); ratios that fit: " + ok);
  }
  Tier t{p.su_nodes, static_cast<int>(static_cast<std::int64_t>(p.su_nodes) * r.up / r.down)};
  if (t.down + t.up > p.radix)
    throw InputError(fail_prefix() + "a leaf needs " + std::to_string(t.down) + " down + " +
                     std::to_string(t.up) + " up ports at " + r.to_string() + " but the radix is " +
                     std::to_string(p.radix) + ": use a smaller --su-nodes (at most " +
                     std::to_string(static_cast<std::int64_t>(p.radix) * r.down / (r.down + r.up)) +
                     ") or a larger --radix");
  return t;
}

} // namespace

double rail_optimized_bisection_gbps(const RailOptimizedParams& p) {
  const double r1 = p.oversubscription.size() > 0 ? p.oversubscription[0].value() : 1.0;
  const double r2 = p.oversubscription.size() > 1 ? p.oversubscription[1].value() : 1.0;
  const int tiers = p.tiers.value_or(2);
  double factor = std::min(1.0, 1.0 / r1);
  if (tiers == 3) factor = std::min(factor, 1.0 / (r1 * r2));
  return static_cast<double>(p.nodes) * p.nics_per_node * p.planes * p.speed.rate_gbps() / 2.0 * factor;
}

Fabric build_rail_optimized(const RailOptimizedParams& in) {
  RailOptimizedParams p = in;
  if (p.nodes < 1) throw InputError(fail_prefix() + "--nodes must be at least 1");
  if (p.nics_per_node < 1 || p.nics_per_node > 64)
    throw InputError(fail_prefix() + "--nics-per-node must be 1..64, got " + std::to_string(p.nics_per_node));
  if (p.su_nodes < 1) throw InputError(fail_prefix() + "--su-nodes must be at least 1");
  if (p.radix < 2 || p.radix > 4096) throw InputError(fail_prefix() + "--radix must be 2..4096");
  if (p.planes < 1 || p.planes > 16) throw InputError(fail_prefix() + "--planes must be 1..16");
  if (p.ufm_ports < 0 || p.ufm_ports > p.nics_per_node)
    throw InputError(fail_prefix() + "--ufm-ports must be 0.." + std::to_string(p.nics_per_node) +
                     " (one per leaf of an SU)");
  if (p.tiers && *p.tiers != 2 && *p.tiers != 3)
    throw InputError(fail_prefix() + "--tiers must be 2 or 3, got " + std::to_string(*p.tiers));
  if (p.oversubscription.size() > 2)
    throw InputError(fail_prefix() + "--oversubscription gives " + std::to_string(p.oversubscription.size()) +
                     " ratios; a rail-optimized tree has at most 2 tiers with up-links (leaf, spine)");
  const Ratio r1 = p.oversubscription.size() > 0 ? p.oversubscription[0] : Ratio{1, 1};
  const Ratio r2 = p.oversubscription.size() > 1 ? p.oversubscription[1] : Ratio{1, 1};
  const Tier leaf = leaf_split(p, r1);
  const int K = p.nics_per_node, R = p.radix;
  const std::int64_t slots_needed = p.nodes + (p.ufm_ports > 0 ? 1 : 0);
  const std::int64_t sus = (slots_needed + p.su_nodes - 1) / p.su_nodes;
  const std::int64_t L = sus * K; // leaves per plane
  if (L > 1'000'000) throw InputError(fail_prefix() + "too many leaves (" + std::to_string(L) + ")");
  { // The resource bound, before anything is allocated (264,000 HCAs went through unchecked).
    const double planes = p.planes, leaves = static_cast<double>(L) * planes;
    const double hcas = static_cast<double>(p.nodes) * K * planes;
    const double spines = std::ceil(static_cast<double>(L) * leaf.up / R) * planes;
    check_fabric_estimate({static_cast<double>(p.nodes), hcas, leaves + 2 * spines,
                           hcas + 2 * static_cast<double>(L) * leaf.up * planes},
                          p.max_hosts, "rail-optimized");
  }
  const int two_tier_spines = spread_switch_count(leaf.up, L * leaf.up, R);
  const int tiers = p.tiers.value_or(two_tier_spines > 0 ? 2 : 3);
  if (tiers == 2 && p.oversubscription.size() > 1)
    throw InputError(fail_prefix() + "--oversubscription gives a spine ratio but the tree has 2 tiers");
  if (tiers == 2 && two_tier_spines < 0)
    throw InputError(fail_prefix() + std::to_string(L) + " leaves with " + std::to_string(leaf.up) +
                     " up-ports each need more than " + std::to_string(leaf.up) + " spines of " +
                     std::to_string(R) + " ports; a 2-tier tree takes at most " + std::to_string(R / K) +
                     " SUs here: use --tiers 3");
  p.tiers = tiers;
  if (tiers == 2 && p.cables.spine_given)
    throw InputError(fail_prefix() +
                     "--cable-m spine=: this design has 2 tiers, no spine-to-core cables (leaf= "
                     "sets its leaf-to-spine cables; --tiers 3 for a core tier)");

  Fabric f;
  Tier spine{};
  std::int64_t pod_sus = 0, pods = 0;
  int cores_per_group = 0, spines2 = 0;
  if (tiers == 2) {
    spines2 = two_tier_spines;
  } else {
    const int parts2 = r2.down + r2.up;
    if (R % parts2 != 0)
      throw InputError(fail_prefix() + "radix " + std::to_string(R) + " does not split at " + r2.to_string() +
                       " on the spines (down+up = " + std::to_string(parts2) + " must divide it)");
    spine = {R / parts2 * r2.down, R / parts2 * r2.up};
    pod_sus = p.pod_sus.value_or(spine.down / K);
    if (pod_sus < 1 || pod_sus * K > spine.down)
      throw InputError(fail_prefix() + "a pod of " + std::to_string(pod_sus) + " SUs has " +
                       std::to_string(pod_sus * K) + " leaves but a spine has " + std::to_string(spine.down) +
                       " down-ports at " + r2.to_string() + ": --pod-sus at most " +
                       std::to_string(spine.down / K));
    // Exact spine ratio: a spine's down-ports are the pod's leaves; its up-ports follow the ratio.
    const std::int64_t pod_leaves = pod_sus * K;
    if (pod_leaves * r2.up % r2.down != 0)
      throw InputError(fail_prefix() + "pods of " + std::to_string(pod_leaves) +
                       " leaves cannot have spines at " + r2.to_string() + " exactly");
    spine = {static_cast<int>(pod_leaves), static_cast<int>(pod_leaves * r2.up / r2.down)};
    pods = (sus + pod_sus - 1) / pod_sus;
    cores_per_group = spread_switch_count(spine.up, pods * spine.up, R);
    if (cores_per_group < 0)
      throw InputError(fail_prefix() + std::to_string(pods) + " pods need more core ports than " +
                       std::to_string(spine.up) + " groups of " + std::to_string(R) +
                       "-port cores offer: use fewer nodes, a larger --radix or a higher --oversubscription");
  }

  // Switches, plane by plane: leaves (SU-major, rail-minor), spines, cores.
  std::vector<std::vector<NodeId>> leaves(static_cast<std::size_t>(p.planes));
  for (int pl = 0; pl < p.planes; ++pl) {
    const std::string pre = p.planes > 1 ? "plane" + std::to_string(pl) + "-" : "";
    auto& lv = leaves[static_cast<std::size_t>(pl)];
    for (std::int64_t l = 0; l < L; ++l)
      lv.push_back(add_switch(f, pre + "su" + std::to_string(l / K) + "-leaf-" + std::to_string(l % K), R, 1,
                              pl, static_cast<int>(tiers == 3 ? l / K / pod_sus : l / K)));
    if (tiers == 2) {
      std::vector<NodeId> sp;
      for (int s = 0; s < spines2; ++s)
        sp.push_back(add_switch(f, pre + "spine-" + std::to_string(s), R, 2, pl, -1));
      const int par = leaf.up / spines2;
      for (std::int64_t l = 0; l < L; ++l)
        for (int k = 0; k < leaf.up; ++k)
          cable(f, lv[static_cast<std::size_t>(l)], leaf.down + k + 1,
                sp[static_cast<std::size_t>(k % spines2)], static_cast<int>(l * par + k / spines2 + 1),
                p.speed, p.cables.leaf_m);
    } else {
      std::vector<NodeId> sp, cores;
      for (std::int64_t pod = 0; pod < pods; ++pod)
        for (int j = 0; j < leaf.up; ++j)
          sp.push_back(add_switch(f, pre + "pod" + std::to_string(pod) + "-spine-" + std::to_string(j), R, 2,
                                  pl, static_cast<int>(pod)));
      for (int j = 0; j < leaf.up; ++j)
        for (int c = 0; c < cores_per_group; ++c)
          cores.push_back(
              add_switch(f, pre + "core-" + std::to_string(j) + "-" + std::to_string(c), R, 3, pl, -1));
      for (std::int64_t l = 0; l < L; ++l) {
        const std::int64_t pod = l / (pod_sus * K), li = l % (pod_sus * K);
        for (int j = 0; j < leaf.up; ++j)
          cable(f, lv[static_cast<std::size_t>(l)], leaf.down + j + 1,
                sp[static_cast<std::size_t>(pod * leaf.up + j)], static_cast<int>(li + 1), p.speed,
                p.cables.leaf_m);
      }
      const int par = spine.up / cores_per_group;
      for (std::int64_t pod = 0; pod < pods; ++pod)
        for (int j = 0; j < leaf.up; ++j)
          for (int k = 0; k < spine.up; ++k)
            cable(f, sp[static_cast<std::size_t>(pod * leaf.up + j)], spine.down + k + 1,
                  cores[static_cast<std::size_t>(j * cores_per_group + k % cores_per_group)],
                  static_cast<int>(pod * par + k / cores_per_group + 1), p.speed, p.cables.spine_m);
    }
  }

  // HCAs, node-major then plane then rail, so a host's HCAs are consecutive and in rail order.
  for (std::int64_t n = 0; n < p.nodes; ++n) {
    const std::int64_t su = n / p.su_nodes;
    const int slot = static_cast<int>(n % p.su_nodes);
    for (int pl = 0; pl < p.planes; ++pl)
      for (int i = 0; i < K; ++i) {
        Node h;
        h.kind = NodeKind::Hca;
        h.name = "host-" + std::to_string(n) + "-rail-" + std::to_string(pl * K + i);
        h.radix = 1;
        h.tier = 0;
        h.host = static_cast<int>(n);
        h.plane = pl;
        h.group = static_cast<int>(su);
        const NodeId id = f.add_node(std::move(h));
        cable(f, id, 1, leaves[static_cast<std::size_t>(pl)][static_cast<std::size_t>(su * K + i)], slot + 1,
              p.speed, p.cables.host_m);
      }
  }
  if (p.ufm_ports > 0) {
    const std::int64_t su = p.nodes / p.su_nodes;
    const int slot = static_cast<int>(p.nodes % p.su_nodes);
    for (int k = 0; k < p.ufm_ports; ++k) {
      Node u;
      u.kind = NodeKind::Aggregator;
      u.name = "ufm-port-" + std::to_string(k);
      u.description = "UFM appliance port " + std::to_string(k + 1);
      u.radix = 1;
      u.tier = 0;
      const NodeId id = f.add_node(std::move(u));
      cable(f, id, 1, leaves[0][static_cast<std::size_t>(su * K + k)], slot + 1, p.speed, p.cables.host_m);
    }
  }

  std::string ratios = r1.to_string();
  if (tiers == 3) ratios += "," + r2.to_string();
  f.name = std::to_string(tiers) + "-tier rail-optimized fat-tree, " + std::to_string(p.nodes) + " nodes x " +
           std::to_string(K) + " rails, " + std::to_string(sus) + " SUs of " + std::to_string(p.su_nodes);
  f.origin = {
      {"generator", "rail-optimized"},
      {"nodes", p.nodes},
      {"nics_per_node", K},
      {"su_nodes", p.su_nodes},
      {"scalable_units", sus},
      {"tiers", tiers},
      {"radix", R},
      {"oversubscription", ratios},
      {"planes", p.planes},
      {"ufm_ports", p.ufm_ports},
      {"leaf_ports", leaf.down + leaf.up},
      {"speed", p.speed.to_string()},
      {"cable_m", {{"host", p.cables.host_m}, {"leaf", p.cables.leaf_m}, {"spine", p.cables.spine_m}}}};
  if (tiers == 3) f.origin["pod_sus"] = pod_sus;
  // The closed form holds when every SU (and, for 3 tiers, every pod) is full and halves split along them.
  const bool full = p.nodes % p.su_nodes == 0 && p.ufm_ports == 0 &&
                    (tiers == 2 ? sus % 2 == 0 || sus == 1 : sus % (2 * pod_sus) == 0);
  if (full && sus >= 2) f.origin["bisection_closed_form_gbps"] = rail_optimized_bisection_gbps(p);
  f.validate();
  return f;
}

Fabric build_rail_optimized_from_params(const std::map<std::string, std::string>& kv) {
  static const char* const known[] = {
      "nodes",   "nics-per-node", "su-nodes",  "radix", "tiers",   "oversubscription",
      "pod-sus", "planes",        "ufm-ports", "rate",  "cable-m", "max-hosts"};
  for (const auto& [k, v] : kv)
    if (std::find(std::begin(known), std::end(known), k) == std::end(known)) {
      std::string list;
      for (const char* n : known) list += (list.empty() ? "" : ", ") + std::string(n);
      throw InputError("rail-optimized: unknown parameter '" + k + "' (known: " + list + ")");
    }
  auto get = [&](const std::string& k) -> std::optional<std::string> {
    auto it = kv.find(k);
    if (it == kv.end()) return std::nullopt;
    return it->second;
  };
  auto integer = [&](const std::string& k, std::int64_t def) {
    auto v = get(k);
    return v ? parse_positive_int(*v, "rail-optimized " + k) : def;
  };
  RailOptimizedParams p;
  p.nodes = integer("nodes", 32);
  p.nics_per_node = static_cast<int>(integer("nics-per-node", 8));
  p.su_nodes = static_cast<int>(integer("su-nodes", 32));
  p.radix = static_cast<int>(integer("radix", 64));
  if (get("tiers")) p.tiers = static_cast<int>(integer("tiers", 2));
  if (auto o = get("oversubscription"))
    p.oversubscription = parse_ratios(*o, "rail-optimized oversubscription");
  if (get("pod-sus")) p.pod_sus = static_cast<int>(integer("pod-sus", 4));
  p.planes = static_cast<int>(integer("planes", 1));
  if (auto u = get("ufm-ports"))
    p.ufm_ports = *u == "0" ? 0 : static_cast<int>(parse_positive_int(*u, "ufm-ports"));
  p.speed = parse_link_speed(get("rate").value_or("NDR"), "rail-optimized rate");
  if (auto c = get("cable-m")) p.cables = parse_cable_lengths(*c, "rail-optimized cable-m");
  if (get("max-hosts")) p.max_hosts = integer("max-hosts", kDefaultMaxHosts);
  return build_rail_optimized(p);
}

} // namespace ibn::topo
