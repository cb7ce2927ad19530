// describe(): per-tier ports and oversubscription, bisection (max-flow), diameter and path diversity.
#include "topology/describe.hpp"

#include "sim/error.hpp"

#include <boost/graph/push_relabel_max_flow.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <tuple>

namespace ibn::topo {
namespace {

constexpr std::uint32_t kNone = ~std::uint32_t{0};

bool forwards(NodeKind k) {
  return k == NodeKind::Switch || k == NodeKind::Router;
}

/// Undirected switch graph with parallel cables merged: neighbours of i are nbr[offset[i]..offset[i+1]),
/// each with the number of cables `mult`.
struct SwitchGraph {
  std::vector<std::uint32_t> index; ///< NodeId -> switch index, kNone for HCAs and aggregators
  std::vector<std::uint32_t> offset;
  std::vector<std::uint32_t> nbr;
  std::vector<double> mult;
  std::size_t size() const { return offset.empty() ? 0 : offset.size() - 1; }
};

SwitchGraph build_switch_graph(const Fabric& f) {
  SwitchGraph g;
  g.index.assign(f.num_nodes(), kNone);
  std::uint32_t m = 0;
  for (NodeId i = 0; i < f.num_nodes(); ++i)
    if (forwards(f.node(i).kind)) g.index[i] = m++;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> arcs;
  arcs.reserve(2 * f.num_links());
  for (const Link& l : f.links()) {
    const std::uint32_t u = g.index[l.a.node], v = g.index[l.b.node];
    if (u == kNone || v == kNone) continue;
    arcs.emplace_back(u, v);
    arcs.emplace_back(v, u);
  }
  std::sort(arcs.begin(), arcs.end());
  g.offset.assign(m + 1, 0);
  for (std::size_t i = 0; i < arcs.size();) {
    std::size_t j = i;
    while (j < arcs.size() && arcs[j] == arcs[i]) ++j;
    g.nbr.push_back(arcs[i].second);
    g.mult.push_back(static_cast<double>(j - i));
    ++g.offset[arcs[i].first + 1];
    i = j;
  }
  for (std::uint32_t i = 0; i < m; ++i) g.offset[i + 1] += g.offset[i];
  return g;
}

/// HCAs with the same attachment (switches and cable counts) are interchangeable for distances and path
/// counts. HCAs cabled straight to another HCA get a class of their own.
struct HcaClass {
  int plane = 0;
  std::vector<std::pair<std::uint32_t, double>> att;    ///< (switch index, cables), sorted
  double count = 0;                                     ///< HCAs in the class
  std::vector<std::pair<std::uint32_t, double>> direct; ///< (other class, cables) for HCA-HCA cables
};

std::vector<HcaClass> hca_classes(const Fabric& f, const SwitchGraph& g) {
  using Sig = std::vector<std::pair<std::uint32_t, std::uint32_t>>;
  std::map<std::pair<int, Sig>, std::uint32_t> by_sig; // (plane, attachment) -> class
  std::vector<HcaClass> classes;
  std::vector<std::uint32_t> class_of(f.num_nodes(), kNone);
  std::vector<std::pair<NodeId, NodeId>> direct_cables;
  Sig sig;
  for (NodeId h = 0; h < f.num_nodes(); ++h) {
    if (f.node(h).kind != NodeKind::Hca) continue;
    sig.clear();
    bool has_direct = false;
    for (LinkId lid : f.links_of(h)) {
      const NodeId o = f.link(lid).other(h);
      if (g.index[o] != kNone)
        sig.emplace_back(g.index[o], 1);
      else if (f.node(o).kind == NodeKind::Hca) {
        has_direct = true;
        if (h < o) direct_cables.emplace_back(h, o);
      }
    }
    std::sort(sig.begin(), sig.end());
    Sig merged;
    for (const auto& [s, c] : sig) {
      if (!merged.empty() && merged.back().first == s)
        merged.back().second += c;
      else
        merged.emplace_back(s, c);
    }
    std::uint32_t cls = 0;
    const int plane = f.node(h).plane;
    auto it = has_direct ? by_sig.end() : by_sig.find(std::pair{plane, merged});
    if (it != by_sig.end())
      cls = it->second;
    else {
      cls = static_cast<std::uint32_t>(classes.size());
      HcaClass c;
      c.plane = plane;
      for (const auto& [s, m] : merged) c.att.emplace_back(s, static_cast<double>(m));
      classes.push_back(std::move(c));
      if (!has_direct) by_sig.emplace(std::pair{plane, std::move(merged)}, cls);
    }
    classes[cls].count += 1;
    class_of[h] = cls;
  }
  for (const auto& [h, o] : direct_cables) {
    for (auto [x, y] : {std::pair{class_of[h], class_of[o]}, std::pair{class_of[o], class_of[h]}}) {
      auto& d = classes[x].direct;
      const auto other = y; // a copy: clang before 16 cannot capture a structured binding in a lambda
      auto it = std::find_if(d.begin(), d.end(), [&](const auto& e) { return e.first == other; });
      if (it != d.end())
        it->second += 1;
      else
        d.emplace_back(y, 1.0);
    }
  }
  return classes;
}

struct PathStats {
  int diameter = 0;
  double div_min = 0, div_mean = 0, div_max = 0;
  bool connected = true;
};

PathStats path_stats(const Fabric& f) {
  const SwitchGraph g = build_switch_graph(f);
  const std::vector<HcaClass> classes = hca_classes(f, g);
  PathStats r;
  const std::size_t n = g.size();
  std::vector<std::int32_t> dist(n, -1);
  std::vector<double> cnt(n, 0.0);
  std::vector<std::uint32_t> queue(n);

  double weight_sum = 0, weighted_div = 0;
  double dmin = std::numeric_limits<double>::infinity(), dmax = 0;
  auto eligible = [&](double pairs, double paths) {
    weight_sum += pairs;
    weighted_div += pairs * paths;
    dmin = std::min(dmin, paths);
    dmax = std::max(dmax, paths);
  };

  for (std::size_t ai = 0; ai < classes.size(); ++ai) {
    const HcaClass& a = classes[ai];
    // Multi-source BFS from the switches of class `a`, counting shortest paths (cables are distinct).
    std::size_t head = 0, tail = 0;
    for (const auto& [s, m] : a.att) {
      dist[s] = 0;
      cnt[s] = m;
      queue[tail++] = s;
    }
    const std::uint32_t* off = g.offset.data();
    const std::uint32_t* nbr = g.nbr.data();
    const double* mult = g.mult.data();
    std::int32_t* d = dist.data();
    double* c = cnt.data();
    while (head < tail) {
      const std::uint32_t u = queue[head++];
      const std::int32_t du = d[u] + 1;
      const double cu = c[u];
      for (std::uint32_t e = off[u], end = off[u + 1]; e < end; ++e) {
        const std::uint32_t v = nbr[e];
        if (d[v] < 0) {
          d[v] = du;
          c[v] = cu * mult[e];
          queue[tail++] = v;
        } else if (d[v] == du) {
          c[v] += cu * mult[e];
        }
      }
    }

    for (std::size_t bi = 0; bi < classes.size(); ++bi) {
      const HcaClass& b = classes[bi];
      if (bi == ai) {
        const double pairs = a.count * (a.count - 1);
        if (pairs <= 0) continue;
        if (!a.att.empty())
          r.diameter = std::max(r.diameter, 2); // same leaf
        else {
          r.connected = false;
          eligible(pairs, 0);
        }
        continue;
      }
      const double pairs = a.count * b.count;
      const auto direct =
          std::find_if(a.direct.begin(), a.direct.end(), [&](const auto& e) { return e.first == bi; });
      if (direct != a.direct.end()) {
        r.diameter = std::max(r.diameter, 1);
        eligible(pairs, direct->second);
        continue;
      }
      std::int32_t best = -1;
      double paths = 0;
      for (const auto& [s, m] : b.att) {
        const std::int32_t ds = d[s];
        if (ds < 0) continue;
        if (best < 0 || ds < best) {
          best = ds;
          paths = c[s] * m;
        } else if (ds == best) {
          paths += c[s] * m;
        }
      }
      if (best < 0) {
        if (a.plane != b.plane) continue; // separate rail planes: not expected to reach each other
        r.connected = false;
        eligible(pairs, 0);
      } else {
        r.diameter = std::max(r.diameter, best + 2);
        if (best > 0) eligible(pairs, paths); // best == 0: the pair shares a leaf
      }
    }
    // Reset only what this BFS touched.
    for (std::size_t i = 0; i < tail; ++i) {
      dist[queue[i]] = -1;
      cnt[queue[i]] = 0;
    }
  }
  if (weight_sum > 0) {
    r.div_min = dmin;
    r.div_max = dmax;
    r.div_mean = weighted_div / weight_sum;
  } else if (f.hcas().size() >= 2) {
    r.div_min = r.div_mean = r.div_max = 1; // every HCA on one leaf
  }
  return r;
}

std::string fmt_num(double v, int precision) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", precision, v);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

} // namespace

double max_flow_bps(const Fabric& f, const std::vector<NodeId>& sources, const std::vector<NodeId>& sinks) {
  // Flow network: vertex 0 = all sources contracted, 1 = all sinks contracted, 2.. = other switches and
  // routers. HCAs and aggregators that are not terminals do not forward traffic and are left out.
  constexpr std::uint32_t kSrc = 0, kSink = 1;
  std::vector<std::uint32_t> vmap(f.num_nodes(), kNone);
  for (NodeId s : sources) vmap.at(s) = kSrc;
  for (NodeId t : sinks) {
    if (vmap.at(t) == kSrc)
      throw InputError("max-flow: node '" + f.node(t).name + "' is both a source and a sink");
    vmap[t] = kSink;
  }
  if (sources.empty() || sinks.empty()) return 0;
  std::uint32_t nv = 2;
  for (NodeId i = 0; i < f.num_nodes(); ++i)
    if (vmap[i] == kNone && forwards(f.node(i).kind)) vmap[i] = nv++;

  // Undirected capacities between contracted vertices, parallel cables summed.
  std::vector<std::tuple<std::uint32_t, std::uint32_t, std::int64_t>> caps;
  caps.reserve(f.num_links());
  for (const Link& l : f.links()) {
    std::uint32_t u = vmap[l.a.node], v = vmap[l.b.node];
    if (u == kNone || v == kNone || u == v) continue;
    if (u > v) std::swap(u, v);
    caps.emplace_back(u, v, static_cast<std::int64_t>(l.rate_bps()));
  }
  std::sort(caps.begin(), caps.end());

  using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
  using Graph = boost::adjacency_list<
      boost::vecS, boost::vecS, boost::directedS, boost::no_property,
      boost::property<boost::edge_capacity_t, std::int64_t,
                      boost::property<boost::edge_residual_capacity_t, std::int64_t,
                                      boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;
  Graph g(nv);
  auto cap = boost::get(boost::edge_capacity, g);
  auto rev = boost::get(boost::edge_reverse, g);
  // Each direction of a cable is an arc with its own zero-capacity reverse arc, as push-relabel expects.
  auto add_arc = [&](std::uint32_t u, std::uint32_t v, std::int64_t c) {
    const auto e = boost::add_edge(u, v, g).first;
    const auto r = boost::add_edge(v, u, g).first;
    cap[e] = c;
    cap[r] = 0;
    rev[e] = r;
    rev[r] = e;
  };
  bool touches_src = false, touches_sink = false;
  for (std::size_t i = 0; i < caps.size();) {
    const std::uint32_t u = std::get<0>(caps[i]), v = std::get<1>(caps[i]);
    std::int64_t c = 0;
    for (; i < caps.size() && std::get<0>(caps[i]) == u && std::get<1>(caps[i]) == v; ++i)
      c += std::get<2>(caps[i]);
    touches_src = touches_src || u == kSrc;
    touches_sink = touches_sink || u == kSink || v == kSink;
    add_arc(u, v, c);
    add_arc(v, u, c);
  }
  if (!touches_src || !touches_sink) return 0;
  return static_cast<double>(boost::push_relabel_max_flow(g, kSrc, kSink));
}

FabricSummary describe(const Fabric& f) {
  FabricSummary s;
  s.name = f.name;
  s.hosts = f.num_hosts();
  s.links = f.num_links();
  const std::vector<NodeId> hcas = f.hcas();
  s.hcas = hcas.size();

  // Per-tier ports and bandwidth, over the tiers that switches occupy.
  struct Acc {
    TierSummary t;
    std::uint64_t down_bps = 0, up_bps = 0;
  };
  std::map<int, Acc> tiers;
  for (const Node& n : f.nodes())
    if (forwards(n.kind)) {
      ++s.switches;
      Acc& a = tiers[n.tier];
      a.t.tier = n.tier;
      ++a.t.switches;
    }
  std::vector<Acc*> acc_of(f.num_nodes(), nullptr);
  for (NodeId i = 0; i < f.num_nodes(); ++i)
    if (forwards(f.node(i).kind)) acc_of[i] = &tiers[f.node(i).tier];
  std::vector<std::uint64_t> sw_down_bps(f.num_nodes(), 0), sw_up_bps(f.num_nodes(), 0); // per switch
  std::map<std::pair<int, int>, std::uint64_t> fastest;                                  // per tier pair
  for (const Link& l : f.links()) {
    const Node& na = f.node(l.a.node);
    const Node& nb = f.node(l.b.node);
    const auto key = std::minmax(na.tier, nb.tier);
    auto& fmax = fastest[key];
    fmax = std::max(fmax, l.rate_bps());
    for (const auto& [self, other] : {std::pair{l.a.node, l.b.node}, std::pair{l.b.node, l.a.node}}) {
      Acc* a = acc_of[self];
      if (a == nullptr || f.node(other).kind == NodeKind::Aggregator) continue;
      const int t_self = f.node(self).tier, t_other = f.node(other).tier;
      if (t_other < t_self) {
        ++a->t.down_ports;
        a->down_bps += l.rate_bps();
        sw_down_bps[self] += l.rate_bps();
      } else if (t_other > t_self) {
        ++a->t.up_ports;
        a->up_bps += l.rate_bps();
        sw_up_bps[self] += l.rate_bps();
      } else {
        ++a->t.lateral_ports;
      }
    }
  }
  for (const Link& l : f.links())
    if (l.rate_bps() < fastest[std::minmax(f.node(l.a.node).tier, f.node(l.b.node).tier)]) ++s.degraded_links;
  for (NodeId i = 0; i < f.num_nodes(); ++i) {
    if (acc_of[i] == nullptr || sw_up_bps[i] == 0) continue;
    const double r = static_cast<double>(sw_down_bps[i]) / static_cast<double>(sw_up_bps[i]);
    auto& worst = acc_of[i]->t.oversubscription_max;
    worst = std::max(worst.value_or(r), r);
  }
  for (auto& [tier, a] : tiers) {
    if (a.up_bps > 0) a.t.oversubscription = static_cast<double>(a.down_bps) / static_cast<double>(a.up_bps);
    s.per_tier.push_back(a.t);
  }
  s.tiers = static_cast<int>(tiers.size());

  // Bisection: first half of the HCAs against the second (the middle one of an odd count goes second).
  if (hcas.size() >= 2) {
    const auto half = static_cast<std::ptrdiff_t>(hcas.size() / 2);
    const std::vector<NodeId> first(hcas.begin(), hcas.begin() + half),
        second(hcas.begin() + half, hcas.end());
    s.bisection_gbps = max_flow_bps(f, first, second) * 1e-9;
  }
  if (const auto it = f.origin.find("bisection_closed_form_gbps"); it != f.origin.end() && it->is_number())
    s.bisection_closed_form_gbps = it->get<double>();

  const PathStats p = path_stats(f);
  s.diameter_hops = p.diameter;
  s.path_diversity_min = p.div_min;
  s.path_diversity_mean = p.div_mean;
  s.path_diversity_max = p.div_max;
  s.connected = p.connected;
  return s;
}

nlohmann::json summary_to_json(const FabricSummary& s) {
  nlohmann::json j;
  j["name"] = s.name;
  j["hosts"] = s.hosts;
  j["hcas"] = s.hcas;
  j["switches"] = s.switches;
  j["links"] = s.links;
  j["tiers"] = s.tiers;
  nlohmann::json tiers = nlohmann::json::array();
  for (const TierSummary& t : s.per_tier) {
    nlohmann::json jt;
    jt["tier"] = t.tier;
    jt["switches"] = t.switches;
    jt["down_ports"] = t.down_ports;
    jt["up_ports"] = t.up_ports;
    jt["lateral_ports"] = t.lateral_ports;
    jt["oversubscription"] =
        t.oversubscription ? nlohmann::json(*t.oversubscription) : nlohmann::json(nullptr);
    jt["oversubscription_max"] =
        t.oversubscription_max ? nlohmann::json(*t.oversubscription_max) : nlohmann::json(nullptr);
    tiers.push_back(std::move(jt));
  }
  j["per_tier"] = std::move(tiers);
  j["bisection_gbps"] = s.bisection_gbps;
  if (s.bisection_closed_form_gbps) j["bisection_closed_form_gbps"] = *s.bisection_closed_form_gbps;
  j["diameter_hops"] = s.diameter_hops;
  j["path_diversity"] = {
      {"min", s.path_diversity_min}, {"mean", s.path_diversity_mean}, {"max", s.path_diversity_max}};
  j["degraded_links"] = s.degraded_links;
  j["connected"] = s.connected;
  return j;
}

std::string summary_to_text(const FabricSummary& s) {
  std::string out;
  auto row = [&](const char* key, const std::string& value) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%-18s", key);
    out += buf + value + "\n";
  };
  row("fabric", s.name.empty() ? "(unnamed)" : s.name);
  row("hosts", std::to_string(s.hosts));
  row("HCAs", std::to_string(s.hcas));
  row("switches", std::to_string(s.switches));
  row("links", std::to_string(s.links));
  row("switch tiers", std::to_string(s.tiers));
  std::string bis = fmt_num(s.bisection_gbps, 1) + " Gb/s per direction";
  if (s.bisection_closed_form_gbps)
    bis += " (closed form " + fmt_num(*s.bisection_closed_form_gbps, 1) + " Gb/s)";
  row("bisection", bis);
  row("diameter", std::to_string(s.diameter_hops) + " hops" + (s.connected ? "" : " (over reachable pairs)"));
  row("path diversity", "min " + fmt_num(s.path_diversity_min, 0) + ", mean " +
                            fmt_num(s.path_diversity_mean, 2) + ", max " + fmt_num(s.path_diversity_max, 0));
  row("degraded links", std::to_string(s.degraded_links));
  if (!s.connected) row("connected", "NO: some HCA pairs have no path");
  if (!s.per_tier.empty()) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "\n%4s  %8s  %10s  %10s  %10s  %16s  %12s\n", "tier", "switches",
                  "down ports", "up ports", "lateral", "oversubscription", "worst switch");
    out += buf;
    for (const TierSummary& t : s.per_tier) {
      const std::string ratio = t.oversubscription ? fmt_num(*t.oversubscription, 2) + ":1" : "-";
      const std::string worst = t.oversubscription_max ? fmt_num(*t.oversubscription_max, 2) + ":1" : "-";
      std::snprintf(buf, sizeof buf, "%4d  %8zu  %10zu  %10zu  %10zu  %16s  %12s\n", t.tier, t.switches,
                    t.down_ports, t.up_ports, t.lateral_ports, ratio.c_str(), worst.c_str());
      out += buf;
    }
  }
  return out;
}

} // namespace ibn::topo
