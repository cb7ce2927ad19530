#include "topology/bom.hpp"

#include "sim/atomic_file.hpp"
#include "sim/error.hpp"
#include "sim/json_text.hpp"
#include "sim/units.hpp"
#include "topology/link_speed.hpp"
#include "topology/switch_models.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <set>
#include <sstream>

namespace ibn::topo {
namespace {

double rate_text_gbps(const std::string& text) {
  if (text.empty()) return 0;
  try {
    return parse_link_speed(text, "rate").rate_gbps();
  } catch (const InputError&) {
    return static_cast<double>(parse_plain_rate_bps(text, "rate")) * 1e-9;
  }
}

/// Figures each kind of entry must have (and source).
std::vector<std::string> figures_of(const std::string& kind) {
  if (kind == "switch") return {"ports", "rate", "power_w", "price_usd"};
  if (kind == "nic") return {"ports", "rate", "power_w", "price_usd"};
  if (kind == "cable") return {"max_length_m", "power_w", "price_usd", "price_per_m_usd"};
  return {"ports", "rate", "power_w", "price_usd"};
}

Part parse_part(const nlohmann::json& e, const std::string& kind, const std::string& where) {
  if (!e.is_object()) throw InputError(where + ": must be an object");
  const auto figures = figures_of(kind);
  static const std::set<std::string> common = {"model", "name", "sources", "ports_per_cage", "notes"};
  for (const auto& [k, v] : e.items())
    if (!common.count(k) && std::find(figures.begin(), figures.end(), k) == figures.end())
      throw InputError(where + ": unknown key '" + k + "'");
  Part p;
  p.kind = kind;
  if (!e.contains("model") || !e["model"].is_string() || e["model"].get<std::string>().empty())
    throw InputError(where + ": key 'model' (a non-empty string) is required");
  p.model = e["model"];
  const std::string at = where + " (" + p.model + ")";
  p.name = e.value("name", p.model);
  if (!e.contains("sources") || !e["sources"].is_object())
    throw InputError(at + ": key 'sources' is required: every figure needs {source, date}");
  const auto& src = e["sources"];
  for (const auto& f : figures) {
    if (!e.contains(f)) throw InputError(at + ": key '" + f + "' is required");
    if (!src.contains(f) || !src[f].is_object())
      throw InputError(at + ": figure '" + f + "' has no source (sources." + f + " = {source, date})");
    PartSource s;
    s.source = src[f].value("source", std::string());
    s.date = src[f].value("date", std::string());
    s.estimate = src[f].value("estimate", false);
    if (s.source.empty() || s.date.empty())
      throw InputError(at + ": sources." + f + " needs a non-empty 'source' and 'date'");
    p.sources[f] = s;
    if (f == "rate") {
      if (!e[f].is_string()) throw InputError(at + ": key 'rate' must be a string such as NDR or 800Gbps");
      p.rate = e[f];
      try {
        rate_text_gbps(p.rate); // validates
      } catch (const InputError& err) {
        throw InputError(at + ": key 'rate': " + err.what());
      }
      continue;
    }
    if (!e[f].is_number()) throw InputError(at + ": key '" + f + "' must be a number");
    const double v = e[f].get<double>();
    if (!(v >= 0) || !std::isfinite(v)) throw InputError(at + ": key '" + f + "' must be >= 0");
    if (f == "ports")
      p.ports = static_cast<int>(v);
    else if (f == "power_w")
      p.power_w = v;
    else if (f == "price_usd")
      p.price_usd = v;
    else if (f == "max_length_m")
      p.max_length_m = v;
    else if (f == "price_per_m_usd")
      p.price_per_m_usd = v;
  }
  for (const auto& [k, v] : src.items())
    if (std::find(figures.begin(), figures.end(), k) == figures.end() && k != "ports_per_cage")
      throw InputError(at + ": sources." + k + " names no figure of a " + kind);
  if (e.contains("ports_per_cage")) {
    if (!e["ports_per_cage"].is_number_integer() || e["ports_per_cage"].get<int>() < 1)
      throw InputError(at + ": key 'ports_per_cage' must be a positive integer");
    p.ports_per_cage = e["ports_per_cage"];
  }
  if ((kind == "switch" || kind == "nic" || kind == "transceiver") && p.ports < 1)
    throw InputError(at + ": key 'ports' must be at least 1");
  return p;
}

std::string tier_name(int t) {
  switch (t) {
  case 1:
    return "leaf";
  case 2:
    return "spine";
  case 3:
    return "core";
  default:
    return "tier-" + std::to_string(t);
  }
}

bool any_estimate(const Part& p, const std::string& figure) {
  auto it = p.sources.find(figure);
  return it != p.sources.end() && it->second.estimate;
}

} // namespace

double Part::rate_gbps() const {
  return rate_text_gbps(rate);
}

Catalog Catalog::parse(const nlohmann::json& doc, const std::string& where) {
  if (!doc.is_object()) throw InputError(where + ": a catalog is a JSON object");
  static const std::set<std::string> keys = {"catalog",  "currency", "read_on", "notes",
                                             "switches", "nics",     "cables",  "transceivers"};
  for (const auto& [k, v] : doc.items())
    if (!keys.count(k)) throw InputError(where + ": unknown key '" + k + "'");
  if (doc.contains("currency") && doc["currency"] != "USD")
    throw InputError(where + ": key 'currency': only USD is supported");
  Catalog c;
  c.file = where;
  auto list = [&](const char* key, const char* kind, std::vector<Part>& out) {
    if (!doc.contains(key)) return;
    if (!doc[key].is_array()) throw InputError(where + ": key '" + key + "' must be a list");
    std::set<std::string> seen;
    for (std::size_t i = 0; i < doc[key].size(); ++i) {
      out.push_back(parse_part(doc[key][i], kind, where + ": " + key + "[" + std::to_string(i) + "]"));
      if (!seen.insert(out.back().model).second)
        throw InputError(where + ": " + key + ": model '" + out.back().model + "' appears twice");
    }
  };
  list("switches", "switch", c.switches);
  list("nics", "nic", c.nics);
  list("cables", "cable", c.cables);
  list("transceivers", "transceiver", c.transceivers);
  if (c.switches.empty()) throw InputError(where + ": the catalog lists no switches");
  if (c.cables.empty()) throw InputError(where + ": the catalog lists no cables");
  std::stable_sort(c.cables.begin(), c.cables.end(),
                   [](const Part& a, const Part& b) { return a.max_length_m < b.max_length_m; });
  return c;
}

Catalog Catalog::load(const std::string& path) {
  refuse_folder(path, "a parts catalog");
  std::ifstream in(path);
  if (!in) throw InputError("--catalog: cannot open '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return parse(parse_json_text(text.str(), path, "not valid JSON"), path); // file:line:col, overflow, nesting
}

const Part* Catalog::find(const std::vector<Part>& list, const std::string& model) const {
  std::string want = model;
  std::transform(want.begin(), want.end(), want.begin(), [](unsigned char ch) { return std::tolower(ch); });
  for (const auto& p : list)
    if (p.model == want) return &p;
  return nullptr;
}

std::string default_catalog_path(const std::string& exe_path, const std::string& source_dir) {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("IBNETSIM_CATALOG"); env && *env) return env;
  std::vector<fs::path> tries;
  if (!exe_path.empty()) {
    std::error_code ec;
    fs::path exe = fs::weakly_canonical(fs::path(exe_path), ec);
    const fs::path dir = exe.parent_path();
    tries.push_back(dir / "data/catalog/parts.json");
    tries.push_back(dir.parent_path() / "data/catalog/parts.json");
    tries.push_back(dir.parent_path() / "share/ibnetsim/parts.json");
  }
  if (!source_dir.empty()) tries.push_back(fs::path(source_dir) / "data/catalog/parts.json");
  for (const auto& t : tries)
    if (fs::exists(t)) return t.string();
  std::string list;
  for (const auto& t : tries) list += (list.empty() ? "" : ", ") + t.string();
  throw InputError("no parts catalog found (looked in " + list + "); pass --catalog FILE");
}

Bom bill_of_materials(const Fabric& f, const Catalog& c, const BomOptions& opt) {
  Bom b;
  b.catalog = c.file;
  // Fabric rate: the most common link rate.
  std::map<double, std::size_t> rates;
  for (const Link& l : f.links()) ++rates[l.speed.rate_gbps()];
  double rate = 0;
  std::size_t best = 0;
  for (const auto& [r, n] : rates)
    if (n > best) rate = r, best = n;

  const Part* forced = nullptr;
  if (!opt.switch_model.empty()) {
    forced = c.find(c.switches, opt.switch_model);
    if (!forced) {
      std::string list;
      for (const auto& s : c.switches) list += (list.empty() ? "" : ", ") + s.model;
      throw InputError("--switch: '" + opt.switch_model + "' is not in the catalog " + c.file +
                       " (known: " + list + ")");
    }
  }
  // A part of another rate than the fabric's links is priced as asked, and said (plan refuses the same).
  auto other_rate = [&](const Part* p, const std::string& flag) {
    if (p && p->rate_gbps() > 0 && std::abs(p->rate_gbps() - rate) > 1e-6) {
      char m[160];
      std::snprintf(m, sizeof m,
                    "%s %s runs %g Gb/s ports but the fabric's links run %g Gb/s: priced as asked",
                    flag.c_str(), p->model.c_str(), p->rate_gbps(), rate);
      b.warnings.push_back(m);
    }
  };
  other_rate(forced, "--switch");
  // The fabric's own model of a switch (Node::switch_model, a topology/switch_models.hpp id such as
  // "quantum-2"): the catalog part that model names, the one with the switch's radix first.
  std::map<std::string, std::size_t> model_not_in_catalog; // fabric model -> switches priced by radix instead
  // `narrow`: every cable of the switch is 2x or narrower, so it may run in split mode (twice the ports).
  auto part_of_model = [&](const Node& node, std::int64_t used, bool narrow) -> const Part* {
    const Part* pick = nullptr;
    for (const auto& s : c.switches) {
      const SwitchModel* m = find_switch_model(s.model);
      if (!m || node.switch_model != m->id || (narrow ? 2 : 1) * s.ports < used) continue;
      if (!pick || (s.ports == node.radix && pick->ports != node.radix)) pick = &s;
    }
    if (!pick) ++model_not_in_catalog[node.switch_model];
    return pick;
  };
  auto switch_part = [&](int radix) -> const Part* {
    if (forced) return forced;
    const Part* pick = nullptr;
    for (const auto& s : c.switches)
      if (s.ports == radix && std::abs(s.rate_gbps() - rate) < 1e-6) return &s;
    for (const auto& s : c.switches)
      if (s.ports >= radix && std::abs(s.rate_gbps() - rate) < 1e-6 && (!pick || s.ports < pick->ports))
        pick = &s;
    if (pick) return pick;
    std::ostringstream m;
    m << "the catalog " << c.file << " has no " << rate << " Gb/s switch with " << radix
      << " ports or more; pass --switch MODEL or add one to the catalog";
    throw InputError(m.str());
  };
  const Part* nic = nullptr;
  if (!opt.nic_model.empty()) {
    nic = c.find(c.nics, opt.nic_model);
    if (!nic) throw InputError("--nic-model: '" + opt.nic_model + "' is not in the catalog " + c.file);
    other_rate(nic, "--nic-model");
  } else {
    for (const auto& n : c.nics)
      if (std::abs(n.rate_gbps() - rate) < 1e-6) {
        nic = &n;
        break;
      }
  }
  auto cable_part = [&](double len) -> const Part& {
    for (const auto& p : c.cables)
      if (p.max_length_m >= len) return p;
    return c.cables.back();
  };
  const Part* twin = nullptr;
  const Part* single = nullptr;
  for (const auto& t : c.transceivers) {
    if (std::abs(t.rate_gbps() - rate) > 1e-6 && t.rate_gbps() > 0) continue;
    if (t.ports == 1 && !single) single = &t;
    if (t.ports >= 2 && !twin) twin = &t;
  }
  // Only a module of the link's rate is priced (an NDR module on an XDR port would be the wrong part):
  // without one, the modules are counted and a warning says they are not priced.

  std::map<int, BomTier> tiers;
  std::size_t split_switches = 0; // counted in split mode (twice the model's ports)
  std::map<std::string, std::pair<const Part*, std::int64_t>> sw_count; // model -> part, count
  std::map<std::pair<std::string, int>, std::int64_t> sw_by_tier;
  std::vector<const Part*> part_of(f.num_nodes(), nullptr);
  for (NodeId n : f.switches()) {
    const Node& node = f.node(n);
    const auto used = static_cast<std::int64_t>(f.links_of(n).size());
    bool narrow = true;
    for (const auto l : f.links_of(n)) narrow = narrow && f.link(l).speed.width <= 2;
    const Part* p = !forced && !node.switch_model.empty() ? part_of_model(node, used, narrow) : nullptr;
    if (!p) p = switch_part(node.radix);
    // The ports bought are the model's, not the fabric's radix (a radix-40 fabric priced as 64-port QM9700s
    // has 24 more free ports per switch than its radix says).
    // A switch in split mode (NDR200 on a QM9700: each 4x cage as two 2x ports, 128 ports on a 64-port model)
    // has up to twice the model's ports when every cable it carries is 2x or narrower; such a switch reports
    // them (ibnetdiscover: "Switch 129" for a QM9700 in split mode, port 0 included).
    std::int64_t ports = p->ports;
    if (used > ports || node.radix > ports) {
      if (narrow && used <= 2 * ports) {
        ports *= 2;
        ++split_switches;
      } else if (used > ports) {
        throw InputError((forced ? "--switch " + p->model : "switch model " + p->model) + ": " +
                         std::to_string(p->ports) + " ports, but switch '" + node.name + "' has " +
                         std::to_string(used) + " cabled ports");
      }
    }
    part_of[n] = p;
    auto& t = tiers[node.tier];
    t.index = node.tier;
    t.tier = tier_name(node.tier);
    ++t.switches;
    ++t.switches_by_model[p->model];
    t.ports += ports;
    t.ports_used += used;
    t.ports_free += ports - used;
    auto& sc = sw_count[p->model];
    sc.first = p;
    ++sc.second;
    ++sw_by_tier[{p->model, node.tier}];
  }
  if (split_switches > 0) // (the cable warning is added after the loop over cables, below)
    b.warnings.push_back(
        std::to_string(split_switches) +
        " switch(es) in split mode (more ports, reported or cabled, than the model has, all "
        "cables 2x or narrower): counted with twice the model's ports (a 64-port QM9700 as 128 "
        "NDR200 ports)");
  // Cables and transceivers.
  std::map<std::pair<std::string, int>, std::pair<std::int64_t, double>> cable_lines; // (model, tier) -> n, m
  std::map<int, std::int64_t> twin_by_tier, single_by_tier;
  std::set<std::pair<NodeId, int>> cages_with_fibre;
  std::int64_t hca_modules = 0, too_long = 0;
  double longest = 0;
  for (const Link& l : f.links()) {
    const Node& a = f.node(l.a.node);
    const Node& bnode = f.node(l.b.node);
    const int upper = std::max(a.tier, bnode.tier);
    const Part& cp = cable_part(l.length_m);
    if (cp.max_length_m < l.length_m) ++too_long, longest = std::max(longest, l.length_m);
    auto& t = tiers[upper];
    t.index = upper;
    t.tier = tier_name(upper);
    ++t.cables;
    ++t.cables_by_class[cp.model];
    t.cable_m += l.length_m;
    auto& cl = cable_lines[{cp.model, upper}];
    ++cl.first;
    cl.second += l.length_m;
    const bool fibre = cp.model == "fibre" || cp.model == "fiber"; // needs a transceiver at each end
    if (!fibre) continue;
    for (const PortRef& end : {l.a, l.b}) {
      const Node& n = f.node(end.node);
      if (n.kind == NodeKind::Switch || n.kind == NodeKind::Router) {
        const Part* sp = part_of[end.node];
        const int per_cage = sp ? sp->ports_per_cage : 1;
        if (per_cage >= 2) { // one module per cage, whatever the catalog holds
          if (cages_with_fibre.insert({end.node, (end.port - 1) / per_cage}).second) ++twin_by_tier[n.tier];
        } else {
          ++single_by_tier[n.tier];
        }
      } else {
        ++hca_modules;
      }
    }
  }
  if (too_long > 0) {
    char m[32];
    std::snprintf(m, sizeof m, "%g", longest);
    b.warnings.push_back(std::to_string(too_long) + " cable(s) longer than any catalog cable spans (up to " +
                         m + " m; the longest, " + c.cables.back().model + ", reaches " +
                         std::to_string(static_cast<long long>(c.cables.back().max_length_m)) +
                         " m): priced as " + c.cables.back().model + ", which no such link can use");
  }
  for (auto& [idx, t] : tiers) {
    if (auto it = twin_by_tier.find(idx); it != twin_by_tier.end()) t.transceivers += it->second;
    if (auto it = single_by_tier.find(idx); it != single_by_tier.end()) t.transceivers += it->second;
  }
  for (const auto& [idx, t] : tiers) b.tiers.push_back(t);
  b.tiers.erase(std::remove_if(b.tiers.begin(), b.tiers.end(), [](const BomTier& t) { return t.index == 0; }),
                b.tiers.end());

  auto add_line = [&](BomLine line, const Part* p) {
    if (p) {
      line.model = p->model;
      line.unit_price_usd = p->price_usd;
      line.unit_power_w = p->power_w;
      line.cost_usd = p->price_usd * static_cast<double>(line.count) + p->price_per_m_usd * line.metres;
      line.power_w = p->power_w * static_cast<double>(line.count);
      line.estimate = any_estimate(*p, "price_usd") || any_estimate(*p, "price_per_m_usd");
    }
    b.cost_usd += line.cost_usd;
    b.power_w += line.power_w;
    b.prices_estimated = b.prices_estimated || line.estimate;
    b.lines.push_back(std::move(line));
  };
  for (const auto& [key, n] : sw_by_tier) {
    BomLine line;
    line.item = "switch";
    line.tier = tier_name(key.second);
    line.count = n;
    add_line(line, sw_count[key.first].first);
    b.switches += n;
  }
  const auto hcas = static_cast<std::int64_t>(f.hcas().size());
  // A multi-plane rail-optimized fabric gives each NIC one port (one HCA node) per plane
  // (topology/rail_optimized.hpp): the NICs to buy are the HCA ports over the planes.
  std::int64_t planes = 1;
  if (f.origin.value("generator", std::string()) == "rail-optimized" && f.origin.contains("planes") &&
      f.origin["planes"].is_number_integer())
    planes = std::max<std::int64_t>(1, f.origin["planes"].get<std::int64_t>());
  const std::int64_t nic_count = hcas % planes == 0 ? hcas / planes : hcas;
  b.nics = nic_count;
  {
    BomLine line;
    line.item = "nic";
    line.tier = "host";
    line.count = nic_count;
    if (!nic) {
      line.model = "(not in catalog)";
      b.warnings.push_back("no catalog NIC at " + std::to_string(static_cast<int>(rate)) +
                           " Gb/s: NICs counted, not priced");
    }
    add_line(line, nic);
  }
  for (const auto& [key, v] : cable_lines) {
    BomLine line;
    line.item = "cable";
    line.tier = tier_name(key.second);
    line.count = v.first;
    line.metres = v.second;
    add_line(line, c.find(c.cables, key.first));
    b.cables += v.first;
  }
  std::int64_t unpriced_twin = 0, unpriced_single = 0;
  auto add_modules = [&](const std::string& tier, std::int64_t n, const Part* part, bool twin_cage) {
    BomLine line;
    line.item = "transceiver";
    line.tier = tier;
    line.count = n;
    if (!part) {
      line.model = twin_cage ? "(twin-port module not in catalog)" : "(module not in catalog)";
      (twin_cage ? unpriced_twin : unpriced_single) += n;
    }
    add_line(line, part);
    b.transceivers += n;
  };
  for (const auto& [tier, n] : twin_by_tier) add_modules(tier_name(tier), n, twin, true);
  for (const auto& [tier, n] : single_by_tier) add_modules(tier_name(tier), n, single, false);
  if (hca_modules > 0) add_modules("host", hca_modules, single, false);
  const std::string at = " at " + std::to_string(static_cast<int>(std::lround(rate))) + " Gb/s";
  if (unpriced_twin > 0)
    b.warnings.push_back("no catalog twin-port transceiver" + at + ": " + std::to_string(unpriced_twin) +
                         " module(s) (one per twin cage) counted, not priced");
  if (unpriced_single > 0)
    b.warnings.push_back("no catalog single-port transceiver" + at + ": " + std::to_string(unpriced_single) +
                         " module(s) counted, not priced");
  for (const auto& [model, n] : model_not_in_catalog)
    b.warnings.push_back(std::to_string(n) + " switch(es) of model " + model +
                         " (the fabric's) have no part of " + "that model in the catalog " + c.file +
                         " with enough ports: priced by radix and rate");
  for (const auto& t : b.tiers)
    if (t.index == 1) b.spare_ports = t.ports_free;
  return b;
}

/// How ports and free ports are counted, printed with every BOM.
constexpr const char* kPortsRule =
    "ports = the catalog switch model's ports; ports free = model ports - cabled ports";

nlohmann::json bom_to_json(const Bom& b) {
  nlohmann::json by_tier = nlohmann::json::array();
  for (const auto& t : b.tiers)
    by_tier.push_back({{"tier", t.tier},
                       {"switches", t.switches},
                       {"switches_by_model", t.switches_by_model},
                       {"ports", t.ports},
                       {"ports_used", t.ports_used},
                       {"ports_free", t.ports_free},
                       {"cables", t.cables},
                       {"cables_by_class", t.cables_by_class},
                       {"cable_m", std::round(t.cable_m * 100.0) / 100.0},
                       {"transceivers", t.transceivers}});
  // Money in cents, metres and watts to 0.01 (sums of floating-point products print as 92108.79999999942).
  auto c2 = [](double v) { return std::round(v * 100.0) / 100.0; };
  nlohmann::json lines = nlohmann::json::array();
  for (const auto& l : b.lines)
    lines.push_back({{"item", l.item},
                     {"model", l.model},
                     {"tier", l.tier},
                     {"count", l.count},
                     {"metres", c2(l.metres)},
                     {"unit_price_usd", c2(l.unit_price_usd)},
                     {"cost_usd", c2(l.cost_usd)},
                     {"unit_power_w", c2(l.unit_power_w)},
                     {"power_w", c2(l.power_w)},
                     {"price_is_estimate", l.estimate}});
  return {{"switches", b.switches},
          {"ports_rule", kPortsRule},
          {"cables", b.cables},
          {"transceivers", b.transceivers},
          {"nics", b.nics},
          {"spare_leaf_ports", b.spare_ports},
          {"cost_usd", std::round(b.cost_usd)},
          {"power_w", std::round(b.power_w)},
          {"prices_are_estimates", b.prices_estimated},
          {"by_tier", by_tier},
          {"lines", lines},
          {"catalog", b.catalog},
          {"warnings", b.warnings}};
}

std::string bom_to_text(const Bom& b) {
  std::ostringstream o;
  o << "Bill of materials (catalog " << b.catalog << ")\n\n";
  o << std::left << std::setw(7) << "tier" << std::right << std::setw(10) << "switches" << std::setw(12)
    << "ports used" << std::setw(12) << "ports free" << std::setw(9) << "cables"
    << "  by class" << std::setw(20) << "transceivers\n";
  for (const auto& t : b.tiers) {
    std::string classes;
    for (const auto& [k, n] : t.cables_by_class)
      classes += (classes.empty() ? "" : " ") + k + "=" + std::to_string(n);
    o << std::left << std::setw(7) << t.tier << std::right << std::setw(10) << t.switches << std::setw(12)
      << t.ports_used << std::setw(12) << t.ports_free << std::setw(9) << t.cables << "  " << std::left
      << std::setw(26) << classes << std::right << std::setw(6) << t.transceivers << "\n";
  }
  o << "(" << kPortsRule << ")\n";
  o << "\n"
    << std::left << std::setw(12) << "item" << std::setw(18) << "model" << std::setw(7) << "tier"
    << std::right << std::setw(8) << "count" << std::setw(12) << "unit $" << std::setw(14) << "cost $"
    << std::setw(11) << "power W"
    << "\n";
  for (const auto& l : b.lines)
    o << std::left << std::setw(12) << l.item << std::setw(18) << l.model << std::setw(7) << l.tier
      << std::right << std::setw(8) << l.count << std::setw(12) << std::fixed << std::setprecision(0)
      << l.unit_price_usd << std::setw(14) << l.cost_usd << std::setw(11) << l.power_w
      << (l.estimate ? "  (price estimated)" : "") << "\n";
  o << "\nTotal: " << b.switches << " switches, " << b.cables << " cables (host cables included), "
    << b.transceivers << " transceivers, " << b.nics << " NICs, " << b.spare_ports << " spare leaf ports\n";
  o << "Cost $" << std::fixed << std::setprecision(0) << b.cost_usd
    << (b.prices_estimated ? " (estimated prices)" : "") << ", power " << std::setprecision(1)
    << b.power_w / 1000.0 << " kW\n";
  for (const auto& w : b.warnings) o << "warning: " << w << "\n";
  return o.str();
}

std::string bom_to_csv(const Bom& b) {
  // Fixed notation with two decimals (cents, watts, metres): a default stream prints 3.80926e+06 for
  // $3,809,259, which a spreadsheet reads as a rounded number.
  auto num = [](double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2f", v);
    return std::string(buf);
  };
  std::ostringstream o;
  o << "item,model,tier,count,metres,unit_price_usd,cost_usd,unit_power_w,power_w,price_is_estimate\n";
  for (const auto& l : b.lines)
    o << l.item << "," << l.model << "," << l.tier << "," << l.count << "," << num(l.metres) << ","
      << num(l.unit_price_usd) << "," << num(l.cost_usd) << "," << num(l.unit_power_w) << ","
      << num(l.power_w) << "," << (l.estimate ? "true" : "false") << "\n";
  o << "total,,," << b.switches + b.cables + b.transceivers + b.nics << ",,," << num(b.cost_usd) << ",,"
    << num(b.power_w) << "," << (b.prices_estimated ? "true" : "false") << "\n";
  return o.str();
}

} // namespace ibn::topo
