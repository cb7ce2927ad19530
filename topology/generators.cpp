#include "topology/generators.hpp"

#include "sim/error.hpp"
#include "sim/units.hpp"
#include "topology/build_helpers.hpp"
#include "topology/port_split.hpp"
#include "topology/rail_optimized.hpp"
#include "topology/switch_models.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>

namespace ibn::topo {
namespace {

using namespace build;

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) out.push_back(cur);
  if (!s.empty() && s.back() == sep) out.emplace_back();
  return out;
}

std::string hca_name(std::int64_t host, int rail, int rails) {
  std::string s = "host-" + std::to_string(host);
  if (rails > 1) s += "-rail-" + std::to_string(rail);
  return s;
}

std::string plane_prefix(int plane, int rails) {
  return rails > 1 ? "rail" + std::to_string(plane) + "-" : "";
}

/// Smallest divisor s of `u` with s * radix >= needed (the number of switches that can take `needed`
/// cable ends while every lower switch spreads its u uplinks evenly: u/s parallel cables per pair).
int spread_switches(int u, std::int64_t needed, int radix) {
  for (int s = 1; s <= u; ++s)
    if (u % s == 0 && static_cast<std::int64_t>(s) * radix >= needed) return s;
  return -1;
}

struct Split {
  int down = 0;
  int up = 0;
};

std::string unused_ports(int n) {
  return std::to_string(n) + (n == 1 ? " port unused" : " ports unused");
}

/// Splits `radix` ports into down:up = ratio, or explains why it cannot and what would work.
Split split_ports(int radix, const Ratio& r, const std::string& tier_name, const std::string& radix_flag) {
  const int parts = r.down + r.up;
  if (radix % parts == 0) return {radix / parts * r.down, radix / parts * r.up};
  const double down = static_cast<double>(radix) * r.down / parts;
  std::ostringstream msg;
  msg << "radix " << radix << " at " << r.to_string() << " gives " << down << " down-ports per " << tier_name
      << " (must be a whole number). Nearest valid choices:";
  // Exact splits of this port count nearest below and above the ratio asked for: any down:up (in lowest
  // terms), then the ratios planners use (a:1 and 1:b) when they are other ones within a factor of 2 of it
  // (radix 7 at 1:1: 3:4 and 4:3, not 1:6 and 6:1).
  const double want = r.value();
  std::optional<Ratio> below, above, simple_below, simple_above;
  auto offer = [&](const Ratio c, std::optional<Ratio>& lo, std::optional<Ratio>& hi) {
    const double v = c.value();
    if (v < want && (!lo || v > lo->value())) lo = c;
    if (v > want && (!hi || v < hi->value())) hi = c;
  };
  for (int d = 1; d < radix; ++d) {
    const int g = std::gcd(d, radix - d);
    offer(Ratio{d / g, (radix - d) / g}, below, above);
    if (radix % (d + 1) == 0) {
      offer(Ratio{d, 1}, simple_below, simple_above);
      offer(Ratio{1, d}, simple_below, simple_above);
    }
  }
  auto same = [](const std::optional<Ratio>& a, const std::optional<Ratio>& b) {
    return a && b && a->down == b->down && a->up == b->up;
  };
  auto near = [&](const std::optional<Ratio>& c) {
    return c && std::max(c->value() / want, want / c->value()) <= 2.0;
  };
  for (const auto& c :
       {below, above, near(simple_below) && !same(simple_below, below) ? simple_below : std::nullopt,
        near(simple_above) && !same(simple_above, above) ? simple_above : std::nullopt})
    if (c)
      msg << " --oversubscription " << c->to_string() << " (" << radix / (c->down + c->up) * c->down
          << " down/" << radix / (c->down + c->up) * c->up << " up);";
  const int lo = radix / parts * parts, hi = lo + parts;
  if (lo > 0)
    msg << " " << radix_flag << " " << lo << " (" << lo / parts * r.down << " down/" << lo / parts * r.up
        << " up" << (radix_flag == "--leaf-ports" ? ", " + unused_ports(radix - lo) : std::string()) << ");";
  if (radix_flag == "--radix")
    msg << " --radix " << hi << " (" << hi / parts * r.down << " down/" << hi / parts * r.up << " up);";
  if (lo > 0 && radix_flag == "--radix")
    msg << " or keep radix " << radix << " and use --leaf-ports " << lo << " (" << unused_ports(radix - lo)
        << ")";
  throw InputError(msg.str());
}

void check_common(int radix, int rails, std::optional<std::int64_t> hosts) {
  if (radix < 2) throw InputError("--radix must be at least 2, got " + std::to_string(radix));
  if (radix > kMaxSwitchRadix)
    throw InputError("--radix " + std::to_string(radix) + " is larger than any switch (max " +
                     std::to_string(kMaxSwitchRadix) + ")");
  if (rails < 1) throw InputError("--rails must be at least 1, got " + std::to_string(rails));
  if (hosts && *hosts < 1) throw InputError("--hosts must be at least 1, got " + std::to_string(*hosts));
}

std::string count_text(double v) {
  if (v < 1e15) {
    std::string digits = std::to_string(static_cast<std::int64_t>(v)), out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
      if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
      out += digits[i];
    }
    return out;
  }
  std::ostringstream s;
  s.precision(3);
  s << v;
  return s.str();
}

} // namespace

void check_fabric_estimate(const FabricEstimate& e, std::int64_t max_hosts, const std::string& what) {
  const double limit = static_cast<double>(max_hosts);
  if (e.hcas <= limit && e.switches <= limit) return;
  const bool hcas = e.hcas > limit;
  throw InputError(what + ": the requested fabric would have " + count_text(e.hosts) + " hosts (" +
                   count_text(e.hcas) + " HCAs), " + count_text(e.switches) + " switches and " +
                   count_text(e.links) + " links; that is more " + (hcas ? "HCAs" : "switches") +
                   " than the limit of " + count_text(limit) +
                   " (raise it with --max-hosts N, or the scenario key fabric.params.max-hosts)");
}

std::vector<Ratio> parse_ratios(const std::string& text, const std::string& what) {
  std::vector<Ratio> out;
  for (const auto& part : split(text, ',')) {
    const auto colon = part.find(':');
    if (colon == std::string::npos)
      throw InputError(what + ": cannot read '" + part +
                       "' (expected down:up such as 2:1, or a list like 2:1,1:1)");
    if (part.find(':', colon + 1) != std::string::npos)
      throw InputError(what + ": '" + part +
                       "' has more than one ':' (one ratio is down:up such as 2:1; give one " +
                       "ratio per tier separated by commas, leaf first: 2:1,1:1)");
    // A ratio splits a switch's ports, so neither side can exceed the largest radix.
    auto side = [&](const std::string& t, const char* name) {
      const std::int64_t v = parse_positive_int(t, what + " (" + name + " side of '" + part + "')");
      if (v > kMaxSwitchRadix)
        throw InputError(what + ": " + name + " side " + t + " of '" + part +
                         "' is larger than any switch radix (max " + std::to_string(kMaxSwitchRadix) + ")");
      return static_cast<int>(v);
    };
    Ratio r;
    r.down = side(part.substr(0, colon), "down");
    r.up = side(part.substr(colon + 1), "up");
    const int g = std::gcd(r.down, r.up);
    r.down /= g;
    r.up /= g;
    out.push_back(r);
  }
  if (out.empty()) throw InputError(what + ": empty oversubscription list");
  return out;
}

CableLengths parse_cable_lengths(const std::string& text, const std::string& what) {
  CableLengths c;
  std::map<std::string, std::string> given; // tier -> its entry: a tier given twice is refused, not last-wins
  for (const auto& part : split(text, ',')) {
    const auto eq = part.find('=');
    if (eq == std::string::npos)
      throw InputError(what + ": cannot read '" + part + "' (expected host=M,leaf=M,spine=M in metres)");
    const std::string key = part.substr(0, eq);
    if (const auto [it, fresh] = given.emplace(key, part); !fresh)
      throw InputError(what + ": tier '" + key + "' is given twice ('" + it->second + "' and '" + part +
                       "'); give each tier once");
    const double v = parse_nonneg_double(part.substr(eq + 1), what + " " + key);
    if (v > kMaxCableLengthM)
      throw InputError(what + " " + key + ": " + part.substr(eq + 1) +
                       " m is longer than the longest cable modelled (" +
                       std::to_string(static_cast<int>(kMaxCableLengthM)) + " m)");
    if (key == "host")
      c.host_m = v;
    else if (key == "leaf")
      c.leaf_m = v;
    else if (key == "spine")
      c.spine_m = v, c.spine_given = true;
    else
      throw InputError(what + ": unknown cable tier '" + key + "' (expected host, leaf or spine)");
  }
  return c;
}

double fat_tree_bisection_closed_form_gbps(const FatTreeParams& p, std::int64_t hosts) {
  // model-reference.md §6.2: BB = N·b/2 · min(1, 1/r1 [, 1/(r1·r2)]) per plane, times the planes.
  const double b = p.speed.rate_gbps();
  const double r1 = p.oversubscription.size() > 0 ? p.oversubscription[0].value() : 1.0;
  const double r2 = p.oversubscription.size() > 1 ? p.oversubscription[1].value() : 1.0;
  double factor = std::min(1.0, 1.0 / r1);
  if (p.tiers == 3) factor = std::min(factor, 1.0 / (r1 * r2));
  return static_cast<double>(hosts) * b / 2.0 * factor * p.rails;
}

Fabric build_fat_tree(const FatTreeParams& p) {
  check_common(p.radix, p.rails, p.hosts);
  if (p.tiers != 2 && p.tiers != 3)
    throw InputError("--tiers must be 2 or 3, got " + std::to_string(p.tiers));
  if (static_cast<int>(p.oversubscription.size()) > p.tiers - 1)
    throw InputError("--oversubscription gives " + std::to_string(p.oversubscription.size()) +
                     " ratios but a " + std::to_string(p.tiers) + "-tier tree has " +
                     std::to_string(p.tiers - 1) +
                     " tiers with up-links (leaf first; the top tier has none)");
  if (p.tiers == 2 && p.cables.spine_given)
    throw InputError(
        "--cable-m spine=: a 2-tier tree has no spine-to-core cables (leaf= sets its leaf-to-spine "
        "cables)");
  const Ratio r1 = p.oversubscription.size() > 0 ? p.oversubscription[0] : Ratio{1, 1};
  const Ratio r2 = p.oversubscription.size() > 1 ? p.oversubscription[1] : Ratio{1, 1};
  const int leaf_ports = p.leaf_ports.value_or(p.radix);
  if (leaf_ports < 2 || leaf_ports > p.radix)
    throw InputError("--leaf-ports must be between 2 and the radix " + std::to_string(p.radix) + ", got " +
                     std::to_string(leaf_ports));
  Split leaf;
  try {
    leaf = split_ports(leaf_ports, r1, "leaf", p.leaf_ports ? "--leaf-ports" : "--radix");
  } catch (const InputError& e) {
    // With a host count, name the split that needs the fewest switches (exact leaves first).
    const auto hints =
        p.hosts ? leaf_port_hints(p.tiers, p.radix, *p.hosts, r1,
                                  p.oversubscription.size() > 1 ? p.oversubscription[1] : Ratio{1, 1})
                : std::string();
    if (hints.empty()) throw;
    throw InputError(std::string(e.what()) + ". For " + std::to_string(*p.hosts) +
                     " hosts the cheapest:" + hints);
  }
  const int R = p.radix;
  const int d1 = leaf.down, u1 = leaf.up;

  Fabric f;
  std::int64_t hosts = 0;
  bool closed_form_exact = false;

  if (p.tiers == 2) {
    const std::int64_t max_hosts = static_cast<std::int64_t>(R) * d1;
    hosts = p.hosts.value_or(max_hosts);
    if (hosts > max_hosts)
      throw InputError("a 2-tier fat-tree of radix " + std::to_string(R) + " at " + r1.to_string() +
                       " holds at most " + std::to_string(max_hosts) + " hosts (" + std::to_string(R) +
                       " leaves x " + std::to_string(d1) + "); asked for " + std::to_string(hosts) +
                       ": use --tiers 3, a larger --radix, or a higher --oversubscription");
    const std::int64_t L = (hosts + d1 - 1) / d1;
    const int S = spread_switches(u1, L * u1, R);
    const double rails = p.rails;
    check_fabric_estimate({static_cast<double>(hosts), static_cast<double>(hosts) * rails,
                           rails * static_cast<double>(L + S), rails * static_cast<double>(L * u1 + hosts)},
                          p.max_hosts, "fat-tree");
    const int par = u1 / S;
    closed_form_exact = hosts % (2LL * d1) == 0;
    for (int pl = 0; pl < p.rails; ++pl) {
      const std::string pre = plane_prefix(pl, p.rails);
      std::vector<NodeId> leaves, spines;
      for (std::int64_t l = 0; l < L; ++l)
        leaves.push_back(add_switch(f, pre + "leaf-" + std::to_string(l), R, 1, pl, -1));
      for (int s = 0; s < S; ++s)
        spines.push_back(add_switch(f, pre + "spine-" + std::to_string(s), R, 2, pl, -1));
      for (std::int64_t l = 0; l < L; ++l)
        for (int k = 0; k < u1; ++k)
          cable(f, leaves[static_cast<std::size_t>(l)], d1 + k + 1, spines[static_cast<std::size_t>(k % S)],
                static_cast<int>(l * par + k / S + 1), p.speed, p.cables.leaf_m);
    }
    // HCAs last, host-major, so NodeId order of HCAs is leaf order within each plane's halves.
    for (std::int64_t h = 0; h < hosts; ++h)
      for (int pl = 0; pl < p.rails; ++pl) {
        const NodeId leaf_id = static_cast<NodeId>(pl * (L + S) + h / d1);
        const NodeId hca = add_hca(f, hca_name(h, pl, p.rails), static_cast<int>(h), pl, -1);
        cable(f, hca, 1, leaf_id, static_cast<int>(h % d1 + 1), p.speed, p.cables.host_m);
      }
  } else {
    const Split agg = split_ports(p.radix, r2, "pod spine", "--radix");
    const int d2 = agg.down, u2 = agg.up;
    const std::int64_t leaves_per_pod = d2;
    const std::int64_t max_pods = R;
    const std::int64_t max_hosts = max_pods * leaves_per_pod * d1;
    hosts = p.hosts.value_or(max_hosts);
    if (hosts > max_hosts)
      throw InputError("a 3-tier fat-tree of radix " + std::to_string(R) + " at " + r1.to_string() + "," +
                       r2.to_string() + " holds at most " + std::to_string(max_hosts) + " hosts; asked for " +
                       std::to_string(hosts) + ": use a larger --radix or higher --oversubscription");
    const std::int64_t L = (hosts + d1 - 1) / d1;
    const std::int64_t P = (L + leaves_per_pod - 1) / leaves_per_pod;
    const int C = spread_switches(u2, P * u2, R); // cores per group (one group per pod-spine index)
    const double rails = p.rails;
    check_fabric_estimate({static_cast<double>(hosts), static_cast<double>(hosts) * rails,
                           rails * static_cast<double>(L + P * u1 + static_cast<std::int64_t>(u1) * C),
                           rails * static_cast<double>(L * u1 + P * u1 * u2 + hosts)},
                          p.max_hosts, "fat-tree");
    const int par = u2 / C;
    closed_form_exact = P >= 2 && hosts % (2LL * d1 * d2) == 0;
    const std::int64_t per_plane = L + P * u1 + static_cast<std::int64_t>(u1) * C;
    for (int pl = 0; pl < p.rails; ++pl) {
      const std::string pre = plane_prefix(pl, p.rails);
      std::vector<NodeId> leaves, spines, cores;
      for (std::int64_t l = 0; l < L; ++l)
        leaves.push_back(add_switch(f,
                                    pre + "pod" + std::to_string(l / leaves_per_pod) + "-leaf-" +
                                        std::to_string(l % leaves_per_pod),
                                    R, 1, pl, static_cast<int>(l / leaves_per_pod)));
      for (std::int64_t pod = 0; pod < P; ++pod)
        for (int j = 0; j < u1; ++j)
          spines.push_back(add_switch(f, pre + "pod" + std::to_string(pod) + "-spine-" + std::to_string(j), R,
                                      2, pl, static_cast<int>(pod)));
      for (int j = 0; j < u1; ++j)
        for (int c = 0; c < C; ++c)
          cores.push_back(
              add_switch(f, pre + "core-" + std::to_string(j) + "-" + std::to_string(c), R, 3, pl, -1));
      for (std::int64_t l = 0; l < L; ++l) {
        const std::int64_t pod = l / leaves_per_pod, li = l % leaves_per_pod;
        for (int j = 0; j < u1; ++j)
          cable(f, leaves[static_cast<std::size_t>(l)], d1 + j + 1,
                spines[static_cast<std::size_t>(pod * u1 + j)], static_cast<int>(li + 1), p.speed,
                p.cables.leaf_m);
      }
      for (std::int64_t pod = 0; pod < P; ++pod)
        for (int j = 0; j < u1; ++j)
          for (int k = 0; k < u2; ++k)
            cable(f, spines[static_cast<std::size_t>(pod * u1 + j)], d2 + k + 1,
                  cores[static_cast<std::size_t>(j * C + k % C)], static_cast<int>(pod * par + k / C + 1),
                  p.speed, p.cables.spine_m);
    }
    for (std::int64_t h = 0; h < hosts; ++h)
      for (int pl = 0; pl < p.rails; ++pl) {
        const NodeId leaf_id = static_cast<NodeId>(pl * per_plane + h / d1);
        const NodeId hca = add_hca(f, hca_name(h, pl, p.rails), static_cast<int>(h), pl,
                                   static_cast<int>(h / d1 / leaves_per_pod));
        cable(f, hca, 1, leaf_id, static_cast<int>(h % d1 + 1), p.speed, p.cables.host_m);
      }
  }

  f.name = std::to_string(p.tiers) + "-tier fat-tree, radix " + std::to_string(R) + ", " +
           std::to_string(hosts) + " hosts";
  std::string ratios;
  for (int t = 0; t < p.tiers - 1; ++t)
    ratios += (t ? "," : "") + (t < static_cast<int>(p.oversubscription.size())
                                    ? p.oversubscription[static_cast<std::size_t>(t)]
                                    : Ratio{1, 1})
                                   .to_string();
  f.origin = {
      {"generator", "fat-tree"},
      {"tiers", p.tiers},
      {"radix", R},
      {"hosts", hosts},
      {"oversubscription", ratios},
      {"rails", p.rails},
      {"leaf_ports", leaf_ports},
      {"speed", p.speed.to_string()},
      {"cable_m", {{"host", p.cables.host_m}, {"leaf", p.cables.leaf_m}, {"spine", p.cables.spine_m}}}};
  if (closed_form_exact)
    f.origin["bisection_closed_form_gbps"] = fat_tree_bisection_closed_form_gbps(p, hosts);
  f.validate();
  return f;
}

Fabric build_kary_ntree(const KaryNTreeParams& p) {
  if (p.k < 2) throw InputError("k-ary n-tree: k must be at least 2, got " + std::to_string(p.k));
  if (p.n < 1 || p.n > 3)
    throw InputError("k-ary n-tree: n must be 1, 2 or 3 (switch tiers), got " + std::to_string(p.n));
  std::int64_t per_level = 1;
  for (int i = 0; i < p.n - 1; ++i) per_level *= p.k;
  const std::int64_t hosts = per_level * p.k;
  if (2 * static_cast<std::int64_t>(p.k) > kMaxSwitchRadix)
    throw InputError("k-ary n-tree: k = " + std::to_string(p.k) +
                     " needs switches of radix 2k = " + std::to_string(2 * static_cast<std::int64_t>(p.k)) +
                     ", more than any switch (max " + std::to_string(kMaxSwitchRadix) + ")");
  check_fabric_estimate({static_cast<double>(hosts), static_cast<double>(hosts),
                         static_cast<double>(per_level) * p.n, static_cast<double>(hosts) * p.n},
                        p.max_hosts, "k-ary n-tree");
  Fabric f;
  const int radix = 2 * p.k;
  std::vector<std::vector<NodeId>> level(static_cast<std::size_t>(p.n));
  for (int l = 0; l < p.n; ++l)
    for (std::int64_t w = 0; w < per_level; ++w)
      level[static_cast<std::size_t>(l)].push_back(
          add_switch(f, "l" + std::to_string(l + 1) + "-sw-" + std::to_string(w), radix, l + 1, 0, -1));
  const double lens[] = {p.cables.leaf_m, p.cables.spine_m, p.cables.spine_m};
  // Switch (l, w) up-port j goes to switch (l+1, w with base-k digit l replaced by j), arriving on that
  // switch's down-port (digit l of w) + 1.
  std::int64_t pow_l = 1;
  for (int l = 0; l + 1 < p.n; ++l, pow_l *= p.k)
    for (std::int64_t w = 0; w < per_level; ++w) {
      const std::int64_t digit = (w / pow_l) % p.k;
      for (int j = 0; j < p.k; ++j) {
        const std::int64_t w2 = w - digit * pow_l + j * pow_l;
        cable(f, level[static_cast<std::size_t>(l)][static_cast<std::size_t>(w)], p.k + j + 1,
              level[static_cast<std::size_t>(l + 1)][static_cast<std::size_t>(w2)],
              static_cast<int>(digit + 1), p.speed, lens[l]);
      }
    }
  for (std::int64_t h = 0; h < hosts; ++h) {
    const NodeId hca = add_hca(f, hca_name(h, 0, 1), static_cast<int>(h), 0, -1);
    cable(f, hca, 1, level[0][static_cast<std::size_t>(h / p.k)], static_cast<int>(h % p.k + 1), p.speed,
          p.cables.host_m);
  }
  f.name = std::to_string(p.k) + "-ary " + std::to_string(p.n) + "-tree";
  f.origin = {{"generator", "kary-ntree"}, {"k", p.k}, {"n", p.n}, {"speed", p.speed.to_string()}};
  // Full bisection: N·b/2 (k^n hosts split into halves along the top digit).
  if (p.n >= 2)
    f.origin["bisection_closed_form_gbps"] = static_cast<double>(hosts) * p.speed.rate_gbps() / 2.0;
  f.validate();
  return f;
}

GlobalArrangement parse_arrangement(const std::string& text, const std::string& what) {
  if (text == "absolute") return GlobalArrangement::Absolute;
  if (text == "relative") return GlobalArrangement::Relative;
  if (text == "circulant") return GlobalArrangement::Circulant;
  throw InputError(what + ": unknown arrangement '" + text + "' (expected absolute, relative or circulant)");
}

std::string to_string(GlobalArrangement a) {
  switch (a) {
  case GlobalArrangement::Absolute:
    return "absolute";
  case GlobalArrangement::Relative:
    return "relative";
  case GlobalArrangement::Circulant:
    return "circulant";
  }
  return "?";
}

DragonflyParams complete_dragonfly(DragonflyParams p) {
  if (p.a < 0 || p.p < 0 || p.h < 0 || p.g < 0)
    throw InputError("dragonfly: --a, --p, --h, --g must not be negative");
  if (p.a == 0 && p.p == 0 && p.h == 0)
    throw InputError("dragonfly: give at least one of --a (routers per group), --p (hosts per router) or --h "
                     "(global links per router); the others default to a balanced dragonfly (a = 2p = 2h)");
  if (p.p == 0) p.p = p.h ? p.h : p.a / 2;
  if (p.h == 0) p.h = p.p;
  if (p.a == 0) p.a = 2 * p.p;
  if (p.p < 1)
    throw InputError("dragonfly: --a " + std::to_string(p.a) + " alone gives p = a/2 = 0 hosts per router");
  if (p.a < 1 || p.h < 1) throw InputError("dragonfly: a and h must be at least 1");
  const std::int64_t router_radix = static_cast<std::int64_t>(p.p) + p.a - 1 + p.h;
  if (router_radix > kMaxSwitchRadix)
    throw InputError("dragonfly: routers would need p + (a-1) + h = " + std::to_string(router_radix) +
                     " ports (p=" + std::to_string(p.p) + ", a=" + std::to_string(p.a) +
                     ", h=" + std::to_string(p.h) + "), more than any switch (max " +
                     std::to_string(kMaxSwitchRadix) + ")");
  const int max_g = p.a * p.h + 1;
  if (p.g == 0) p.g = max_g;
  if (p.g < 2) throw InputError("dragonfly: --g must be at least 2, got " + std::to_string(p.g));
  if (p.g > max_g)
    throw InputError("dragonfly: g = " + std::to_string(p.g) + " groups is more than a*h+1 = " +
                     std::to_string(max_g) + " (each group has a*h = " + std::to_string(p.a * p.h) +
                     " global links, one per other group at least)");
  if ((p.a * p.h) % (p.g - 1) != 0) {
    std::string valid;
    for (int d = 1; d <= p.a * p.h; ++d)
      if ((p.a * p.h) % d == 0) valid += (valid.empty() ? "" : ", ") + std::to_string(d + 1);
    throw InputError("dragonfly: the a*h = " + std::to_string(p.a * p.h) +
                     " global links of a group cannot be " + "spread evenly over the other " +
                     std::to_string(p.g - 1) + " groups; valid --g: " + valid);
  }
  return p;
}

Fabric build_dragonfly(const DragonflyParams& in) {
  const DragonflyParams p = complete_dragonfly(in);
  {
    const double routers = static_cast<double>(p.a) * p.g, hosts = routers * p.p;
    check_fabric_estimate({hosts, hosts, routers, routers * (p.a - 1) / 2.0 + routers * p.h / 2.0 + hosts},
                          p.max_hosts, "dragonfly");
  }
  const int radix = p.p + (p.a - 1) + p.h;
  const int slots = p.a * p.h; // global links per group
  const int others = p.g - 1;
  Fabric f;
  auto router = [&](int g, int r) { return static_cast<NodeId>(g * p.a + r); };
  for (int g = 0; g < p.g; ++g)
    for (int r = 0; r < p.a; ++r)
      add_switch(f, "g" + std::to_string(g) + "-r" + std::to_string(r), radix, 1, 0, g);
  // Local links: all-to-all inside a group. Router i reaches router j on port p + idx(j) + 1 where idx skips
  // i.
  for (int g = 0; g < p.g; ++g)
    for (int i = 0; i < p.a; ++i)
      for (int j = i + 1; j < p.a; ++j)
        cable(f, router(g, i), p.p + (j - 1) + 1, router(g, j), p.p + i + 1, p.speed, p.local_cable_m);
  // Global links. Slot k of group G (router k / h, global port k % h) has copy c = k / (g-1) and offset index
  // o = k % (g-1); the arrangement maps o to a target group T and to the partner slot index o' at T.
  std::vector<int> circ; // circulant offsets: +1, -1, +2, -2, ... (+g/2 once when g is even)
  for (int i = 1; i <= others / 2; ++i) {
    circ.push_back(i);
    circ.push_back(p.g - i);
  }
  if (others % 2 == 1) circ.push_back(p.g / 2);
  auto target = [&](int G, int o, int& T, int& o2) {
    switch (p.arrangement) {
    case GlobalArrangement::Absolute:
      T = o < G ? o : o + 1;
      o2 = G < T ? G : G - 1;
      break;
    case GlobalArrangement::Relative:
      T = (G + o + 1) % p.g;
      o2 = p.g - (o + 1) - 1;
      break;
    case GlobalArrangement::Circulant: {
      T = (G + circ[static_cast<std::size_t>(o)]) % p.g;
      const int back = (p.g - circ[static_cast<std::size_t>(o)]) % p.g;
      o2 = static_cast<int>(std::find(circ.begin(), circ.end(), back) - circ.begin());
      break;
    }
    }
  };
  for (int G = 0; G < p.g; ++G)
    for (int k = 0; k < slots; ++k) {
      const int c = k / others, o = k % others;
      int T = 0, o2 = 0;
      target(G, o, T, o2);
      const int k2 = c * others + o2;
      if (std::pair(G, k) >= std::pair(T, k2)) continue; // each cable once, from the lower (group, slot)
      cable(f, router(G, k / p.h), p.p + p.a - 1 + k % p.h + 1, router(T, k2 / p.h),
            p.p + p.a - 1 + k2 % p.h + 1, p.speed, p.global_cable_m);
    }
  int host = 0;
  for (int g = 0; g < p.g; ++g)
    for (int r = 0; r < p.a; ++r)
      for (int i = 0; i < p.p; ++i, ++host) {
        const NodeId hca = add_hca(f, hca_name(host, 0, 1), host, 0, g);
        cable(f, hca, 1, router(g, r), i + 1, p.speed, p.host_cable_m);
      }
  f.name = "dragonfly a=" + std::to_string(p.a) + " p=" + std::to_string(p.p) + " h=" + std::to_string(p.h) +
           " g=" + std::to_string(p.g);
  f.origin = {{"generator", "dragonfly"},
              {"a", p.a},
              {"p", p.p},
              {"h", p.h},
              {"g", p.g},
              {"arrangement", to_string(p.arrangement)},
              {"speed", p.speed.to_string()}};
  if (p.g % 2 == 0) {
    // Group-aligned cut: (g/2)^2 group pairs x l = a·h/(g-1) cables each, capped by the hosts' own links.
    const double l = static_cast<double>(slots) / others;
    const double b = p.speed.rate_gbps();
    const double global = (p.g / 2.0) * (p.g / 2.0) * l * b;
    const double host_side = static_cast<double>(p.a) * p.p * p.g / 2.0 * b;
    f.origin["bisection_closed_form_gbps"] = std::min(global, host_side);
  }
  f.validate();
  return f;
}

namespace {

/// Reads generator parameters given as key=value strings, rejecting unknown keys.
class Params {
 public:
  Params(const std::map<std::string, std::string>& kv, std::string gen, std::vector<std::string> known)
      : kv_(kv), gen_(std::move(gen)) {
    for (const auto& [k, v] : kv_)
      if (std::find(known.begin(), known.end(), k) == known.end()) {
        std::string list;
        for (const auto& n : known) list += (list.empty() ? "" : ", ") + n;
        throw InputError(gen_ + ": unknown parameter '" + k + "' (known: " + list + ")");
      }
  }
  std::optional<std::string> get(const std::string& k) const {
    auto it = kv_.find(k);
    if (it == kv_.end()) return std::nullopt;
    return it->second;
  }
  int integer(const std::string& k, int def) const {
    auto v = get(k);
    if (!v) return def;
    const std::int64_t n = parse_positive_int(*v, gen_ + " " + k);
    if (n > std::numeric_limits<int>::max())
      throw InputError(gen_ + " " + k + ": " + *v + " is too large (at most " +
                       std::to_string(std::numeric_limits<int>::max()) + ")");
    return static_cast<int>(n);
  }
  LinkSpeed speed() const { return parse_link_speed(get("rate").value_or("NDR"), gen_ + " rate"); }
  std::int64_t max_hosts() const {
    auto v = get("max-hosts");
    return v ? parse_positive_int(*v, gen_ + " max-hosts") : kDefaultMaxHosts;
  }

 private:
  const std::map<std::string, std::string>& kv_;
  std::string gen_;
};

/// Every generator takes `switch-model` besides its own keys: the catalog model of its switches, "quantum-2"
/// or per tier "leaf=spectrum-3,spine=spectrum-4" (topology/switch_models.hpp); the switches name none
/// without it (the engines' default latency).
GeneratorFactory with_switch_model(const std::string& gen, GeneratorFactory build) {
  return [gen, build](const std::map<std::string, std::string>& kv) {
    auto it = kv.find("switch-model");
    if (it == kv.end()) return build(kv);
    std::map<std::string, std::string> rest = kv;
    rest.erase("switch-model");
    Fabric f = build(rest);
    apply_switch_models(f, it->second, gen + " switch-model");
    return f;
  };
}

} // namespace

Registry<GeneratorFactory> builtin_generators() {
  Registry<GeneratorFactory> reg("topology generator");
  reg.add("fat-tree",
          "2- or 3-tier folded Clos; keys: tiers, radix, leaf-ports, hosts, oversubscription, rails, rate, "
          "cable-m, max-hosts, switch-model",
          with_switch_model("fat-tree", [](const std::map<std::string, std::string>& kv) {
            Params ps(kv, "fat-tree",
                      {"tiers", "radix", "leaf-ports", "hosts", "oversubscription", "rails", "rate",
                       "cable-m", "max-hosts"});
            FatTreeParams p;
            p.tiers = ps.integer("tiers", 2);
            p.radix = ps.integer("radix", 64);
            if (ps.get("leaf-ports")) p.leaf_ports = ps.integer("leaf-ports", p.radix);
            if (auto h = ps.get("hosts")) p.hosts = parse_positive_int(*h, "fat-tree hosts");
            if (auto o = ps.get("oversubscription"))
              p.oversubscription = parse_ratios(*o, "fat-tree oversubscription");
            p.rails = ps.integer("rails", 1);
            p.speed = ps.speed();
            if (auto c = ps.get("cable-m")) p.cables = parse_cable_lengths(*c, "fat-tree cable-m");
            p.max_hosts = ps.max_hosts();
            return build_fat_tree(p);
          }));
  reg.add(
      "rail-optimized",
      "SuperPOD-style rails: NIC i of every node of a scalable unit on leaf i of that SU; keys: nodes, "
      "nics-per-node, su-nodes, radix, tiers, oversubscription, pod-sus, planes, ufm-ports, rate, cable-m, "
      "max-hosts, switch-model",
      with_switch_model("rail-optimized", [](const std::map<std::string, std::string>& kv) {
        return build_rail_optimized_from_params(kv);
      }));
  reg.add("kary-ntree",
          "k-ary n-tree (k^n hosts, n levels of 2k-port switches); keys: k, n, rate, max-hosts, switch-model",
          with_switch_model("kary-ntree", [](const std::map<std::string, std::string>& kv) {
            Params ps(kv, "kary-ntree", {"k", "n", "rate", "max-hosts"});
            KaryNTreeParams p;
            p.k = ps.integer("k", 4);
            p.n = ps.integer("n", 2);
            p.speed = ps.speed();
            p.max_hosts = ps.max_hosts();
            return build_kary_ntree(p);
          }));
  reg.add("dragonfly",
          "dragonfly groups of all-to-all routers; keys: a, p, h, g, arrangement, rate, max-hosts, switch-model",
          with_switch_model("dragonfly", [](const std::map<std::string, std::string>& kv) {
            Params ps(kv, "dragonfly", {"a", "p", "h", "g", "arrangement", "rate", "max-hosts"});
            DragonflyParams p;
            p.a = ps.integer("a", 0);
            p.p = ps.integer("p", 0);
            p.h = ps.integer("h", 0);
            p.g = ps.integer("g", 0);
            if (auto a = ps.get("arrangement"))
              p.arrangement = parse_arrangement(*a, "dragonfly arrangement");
            p.speed = ps.speed();
            p.max_hosts = ps.max_hosts();
            return build_dragonfly(p);
          }));
  return reg;
}

} // namespace ibn::topo
