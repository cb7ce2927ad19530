#include "analysis/whatif.hpp"

#include "analysis/points.hpp"
#include "analysis/results.hpp"
#include "scenarios/runner.hpp"
#include "sim/atomic_file.hpp"
#include "sim/error.hpp"
#include "sim/units.hpp"
#include "sim/version.hpp"
#include "topology/port_split.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <mutex>
#include <sstream>
#include <thread>

namespace ibn::analysis {

namespace {

std::string routing_label(pkt::ArMode mode) {
  switch (mode) {
  case pkt::ArMode::Off:
    return "static";
  case pkt::ArMode::PerPacket:
    return "adaptive";
  case pkt::ArMode::Bounded:
    break;
  }
  return "adaptive-" + pkt::to_string(mode);
}

std::string ratio_id(const std::string& r) {
  std::string s = r;
  for (auto& c : s)
    if (c == ':') c = 't';
  for (auto& c : s)
    if (c == ',') c = '_';
  return s;
}

double leaf_ratio(const std::string& text) {
  const auto rs = topo::parse_ratios(text, "oversubscription");
  return rs.empty() ? 1.0 : static_cast<double>(rs[0].down) / rs[0].up;
}

std::string fault_id(const std::string& token) {
  std::string s = token;
  for (auto& c : s)
    if (c == '@' || c == ':')
      c = '_';
    else if (c == '.')
      c = 'p';
  return s;
}

int whole(const std::string& text, const std::string& token, const char* what) {
  if (text.empty() || text.size() > 6 || text.find_first_not_of("0123456789") != std::string::npos)
    throw InputError("--faults: token '" + token + "': " + what + " '" + text + "' is not a whole number");
  return std::stoi(text);
}

} // namespace

nlohmann::json fault_token_json(const std::string& token) {
  auto bad = [&](const std::string& why) -> InputError {
    return InputError("--faults: token '" + token + "': " + why +
                      " (tokens: none | K-link[@TIER] | K-switch[@TIER] | degraded-Ppct[:WIDTHxRATE])");
  };
  if (token == "none") return nlohmann::json::object();
  const auto dash = token.find('-');
  if (dash == std::string::npos) throw bad("unknown token");
  const auto head = token.substr(0, dash);
  auto rest = token.substr(dash + 1);
  if (head == "degraded") {
    std::string suffix;
    if (const auto c = rest.find(':'); c != std::string::npos) {
      suffix = rest.substr(c + 1);
      rest = rest.substr(0, c);
    }
    if (rest.size() < 4 || rest.substr(rest.size() - 3) != "pct") throw bad("expected degraded-Ppct");
    const auto num = rest.substr(0, rest.size() - 3);
    double p = 0;
    try {
      std::size_t used = 0;
      p = std::stod(num, &used);
      if (used != num.size()) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      throw bad("'" + num + "' is not a percentage");
    }
    if (!(p > 0 && p <= 100)) throw bad("the percentage must be in (0, 100]");
    nlohmann::json r = {{"degraded_fraction", p / 100.0}};
    if (!suffix.empty()) {
      const auto x = suffix.find_first_of("xX");
      if (x == std::string::npos || x == 0) throw bad("expected WIDTHxRATE like 2xHDR or 1x");
      const int w = whole(suffix.substr(0, x), token, "width");
      if (w != 1 && w != 2 && w != 4 && w != 8 && w != 12) throw bad("width must be 1, 2, 4, 8 or 12");
      r["degraded_width"] = w;
      const auto rate = suffix.substr(x + 1);
      if (!rate.empty()) {
        (void)topo::parse_generation(rate, "--faults: token '" + token + "'");
        r["degraded_speed"] = rate;
      }
    }
    return {{"random", r}};
  }
  std::string tier;
  if (const auto at = rest.find('@'); at != std::string::npos) {
    tier = rest.substr(at + 1);
    rest = rest.substr(0, at);
  }
  const bool link = rest == "link" || rest == "links";
  const bool sw = rest == "switch" || rest == "switches";
  if (!link && !sw) throw bad("unknown token");
  const int k = whole(head, token, "count");
  if (k < 1) throw bad("the count must be at least 1");
  int t = link ? 1 : 2;
  if (!tier.empty()) {
    if (tier.find_first_not_of("0123456789") == std::string::npos)
      t = whole(tier, token, "tier");
    else if (link && tier == "host-leaf")
      t = 0;
    else if (link && tier == "leaf-spine")
      t = 1;
    else if (link && tier == "spine-core")
      t = 2;
    else if (sw && tier == "leaf")
      t = 1;
    else if (sw && tier == "spine")
      t = 2;
    else if (sw && tier == "core")
      t = 3;
    else
      throw bad(std::string("unknown tier '") + tier + "' (" +
                (link ? "host-leaf, leaf-spine, spine-core" : "leaf, spine, core") + " or a number)");
  }
  if (link) return {{"random", {{"links_down", k}, {"link_tier", t}}}};
  return {{"random", {{"switches_down", k}, {"switch_tier", t}}}};
}

std::vector<std::string> parse_stragglers_token(const std::string& token) {
  auto bad = [&](const std::string& why) {
    return InputError("--stragglers: '" + token + "': " + why +
                      " (expected none or KxF[+Dus], e.g. 1x0.5, 2x1+50us)");
  };
  if (token == "none") return {"variability.stragglers.count=0"};
  const auto x = token.find('x');
  if (x == std::string::npos || x == 0) throw bad("no KxF");
  const auto plus = token.find('+', x);
  const std::string k = token.substr(0, x);
  const std::string f = token.substr(x + 1, plus == std::string::npos ? std::string::npos : plus - x - 1);
  std::string d = plus == std::string::npos ? "" : token.substr(plus + 1);
  if (k.find_first_not_of("0123456789") != std::string::npos || k.size() > 6)
    throw bad("K must be a whole number");
  const auto count = std::stoul(k);
  if (count == 0) throw bad("K must be at least 1 (use none)");
  char* end = nullptr;
  const double factor = std::strtod(f.c_str(), &end);
  if (f.empty() || end != f.c_str() + f.size() || !(factor > 0 && factor <= 1))
    throw bad("F must be in (0, 1]");
  std::vector<std::string> out{"variability.stragglers.count=" + k,
                               "variability.stragglers.rate_factor=" + f};
  if (!d.empty()) {
    if (d.size() < 3 || d.substr(d.size() - 2) != "us") throw bad("the delay needs a unit: +50us");
    d = d.substr(0, d.size() - 2);
    const double delay = std::strtod(d.c_str(), &end);
    if (d.empty() || end != d.c_str() + d.size() || !(delay >= 0))
      throw bad("the delay must be a number of us");
    out.push_back("variability.stragglers.delay_us=" + d);
  }
  return out;
}

bool varies_oversubscription(const scen::Scenario& s) {
  return s.fabric_file.empty() &&
         (s.fabric_generator == "fat-tree" || s.fabric_generator == "rail-optimized");
}

std::vector<WhatifPoint> whatif_points(const scen::Scenario& base, const WhatifOptions& opt) {
  std::vector<WhatifPoint> out;
  std::vector<std::pair<std::string, std::string>> ratios; // text, fabric.params override (JSON) or ""
  if (opt.ratios.empty()) {
    // A fabric file, or a generator without a ratio (dragonfly, k-ary n-tree): "file" / "as built", and the
    // rows carry the leaf ratio measured on the fabric.
    const std::string own = !base.fabric_file.empty() ? "file"
                            : varies_oversubscription(base)
                                ? base.fabric_params.value("oversubscription", std::string("1:1"))
                                : "as built";
    ratios.emplace_back(own, "");
  } else {
    if (!base.fabric_file.empty())
      throw InputError(base.file +
                       ": key 'fabric.file': the what-if study varies the generator's oversubscription; "
                       "use fabric.generator/fabric.params, or pass --oversubscription \"\" to keep the "
                       "file's fabric");
    for (const auto& r : opt.ratios) {
      auto params = base.fabric_params;
      params["oversubscription"] = r.to_string();
      if (base.fabric_generator == "fat-tree" && !base.fabric_params.contains("leaf-ports")) {
        const int radix =
            params.contains("radix")
                ? std::stoi(params["radix"].is_string() ? params["radix"].get<std::string>()
                                                        : std::to_string(params["radix"].get<int>()))
                : 64;
        const int group = r.down + r.up;
        if (radix % group != 0) {
          // The split that needs the fewest switches with every leaf full (topology/port_split.hpp), said
          // aloud.
          int lp = radix / group * group;
          if (lp == 0) // 100:1 on radix 64 left "leaf-ports 0", refused later by the generator
            throw InputError("--oversubscription " + r.to_string() + ": a radix-" + std::to_string(radix) +
                             " leaf has fewer ports than " + std::to_string(r.down) + " down + " +
                             std::to_string(r.up) + " up; give a ratio whose parts sum to at most " +
                             std::to_string(radix));
          if (params.contains("hosts")) {
            const auto h = params["hosts"].is_string() ? std::stoll(params["hosts"].get<std::string>())
                                                       : params["hosts"].get<std::int64_t>();
            const auto& t = params.contains("tiers") ? params["tiers"] : nlohmann::json(2);
            const int tiers = t.is_string() ? std::stoi(t.get<std::string>()) : t.get<int>();
            if (const auto best = topo::cheapest_leaf_ports(tiers, radix, h, r)) lp = best->leaf_ports;
          }
          params["leaf-ports"] = lp;
          if (opt.progress)
            opt.progress(r.to_string() + ": radix " + std::to_string(radix) + " does not split at " +
                         r.to_string() + "; using leaf-ports " + std::to_string(lp));
        }
      }
      ratios.emplace_back(r.to_string(), "fabric.params=" + params.dump());
    }
  }
  const auto ccs = opt.ccs.empty() ? std::vector<pkt::CcMode>{base.cc} : opt.ccs;
  // The fault dimension: token, override ("" = none; "none" clears a scenario's own faults).
  std::vector<std::pair<std::string, std::string>> faults;
  for (const auto& t : opt.faults) {
    const auto j = fault_token_json(t);
    faults.emplace_back(t, j.empty() && !base.faults.given ? "" : "faults=" + j.dump());
  }
  if (faults.empty()) faults.emplace_back("", "");
  // Ratio major, then faults: one outer entry per (ratio, fault token).
  struct Outer {
    std::string text, ov, ftoken, fov;
  };
  std::vector<Outer> outer;
  for (const auto& [text, ov] : ratios)
    for (const auto& [ftoken, fov] : faults) outer.push_back({text, ov, ftoken, fov});
  for (const auto& [text, ov, ftoken, fov] : outer) {
    for (const auto mode : opt.routings) {
      for (const auto cc : ccs) {
        const auto cc_name = pkt::to_string(cc);
        const bool with_cc = cc != pkt::CcMode::None;
        WhatifPoint p;
        p.oversubscription = text;
        // The CC setting is part of the routing label, so tables and plots keep the points apart.
        p.routing = routing_label(mode) + (with_cc ? "+" + cc_name : "");
        p.cc = cc;
        p.id = ratio_id(text) + (ftoken.empty() ? "" : "-" + fault_id(ftoken)) + "-" + routing_label(mode) +
               (with_cc ? "-" + cc_name : "");
        p.faults = ftoken;
        if (!ov.empty()) p.overrides.push_back(ov);
        if (!fov.empty()) p.overrides.push_back(fov);
        p.overrides.push_back("routing.adaptive=" + pkt::to_string(mode));
        p.overrides.push_back("cc.algorithm=" + cc_name);
        if (opt.engine) p.overrides.push_back("engine=" + scen::to_string(*opt.engine));
        out.push_back(std::move(p));
      }
    }
  }
  if (!opt.stragglers.empty()) {
    // The straggler dimension, innermost: each point once per token, named in its label (tables, plots) and
    // id (one results.json per point).
    for (const auto& t : opt.stragglers) (void)parse_stragglers_token(t); // a bad token before any run
    std::vector<WhatifPoint> expanded;
    for (const auto& p : out)
      for (const auto& t : opt.stragglers) {
        auto q = p;
        q.stragglers = t;
        q.routing += " s:" + t;
        std::string id = t;
        for (auto& c : id)
          if (c == '.') c = 'p';
          else if (c == '+') c = '-';
        q.id += "-s" + id;
        for (const auto& ov : parse_stragglers_token(t)) q.overrides.push_back(ov);
        expanded.push_back(std::move(q));
      }
    out = std::move(expanded);
  }
  return out;
}

std::vector<WhatifRow> whatif_rows(const std::vector<WhatifPoint>& points,
                                   const std::vector<PointResult>& results) {
  std::vector<WhatifRow> rows;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    const auto& r = results.at(i);
    // The oversubscription the fabric really has, from its graph (differs from the request on partial
    // leaves).
    const double measured = r.fabric.leaf_oversubscription();
    for (const auto& c : r.collectives) {
      if (!c.measured()) continue;
      const bool own_fabric = p.oversubscription == "file" || p.oversubscription == "as built";
      // (A fabric without a leaf tier, a dragonfly, measures 0: its row keeps 1, one ratio.)
      rows.push_back({&p, own_fabric ? (measured > 0 ? measured : 1.0) : leaf_ratio(p.oversubscription),
                      std::round(measured * 1e4) / 1e4, &c, &r});
    }
  }
  return rows;
}

nlohmann::json run_whatif(const scen::Scenario& base, const WhatifOptions& opt) {
  const auto points = whatif_points(base, opt);
  std::vector<StudyPoint> study;
  for (const auto& p : points) study.push_back({p.id, p.overrides});
  PointsOptions po;
  po.threads = opt.threads;
  po.out_dir = opt.out_dir;
  po.progress = opt.progress;
  po.external = opt.external;
  po.tail_precision = opt.tail_precision;
  po.max_iterations = opt.max_iterations;
  std::vector<PointResult> results;
  for (auto& r : run_points(base, study, po))
    results.push_back(std::move(r.value())); // one rank: every point

  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : whatif_rows(points, results)) {
    const auto& p = *row.point;
    const auto& c = *row.collective;
    rows.push_back({{"point", p.id},
                    {"oversubscription", p.oversubscription},
                    {"ratio", row.ratio},
                    // (null where the graph has no leaf ratio: a dragonfly, as the point's results.json says)
                    {"ratio_measured",
                     row.ratio_measured > 0 ? nlohmann::json(row.ratio_measured) : nlohmann::json(nullptr)},
                    {"routing", p.routing},
                    {"cc", pkt::to_string(p.cc)},
                    {"job", c.job},
                    {"op", c.op},
                    {"algorithm", c.algorithm},
                    {"size_bytes", c.size_bytes},
                    {"ranks", c.ranks},
                    {"iterations", c.iterations()},
                    {"completion_us", completion_json(c)},
                    {"algbw_gbps", bandwidth_json(c.algbw_gbps)},
                    {"busbw_gbps", bandwidth_json(c.busbw_gbps)},
                    {"samples_us", c.samples_us},
                    {"links", links_json(row.result->links_by_tier)},
                    {"results", "points/" + p.id + "/results.json"}});
    // With --tail-precision: the target, the half-width reached and whether it was (the point's manifest).
    if (!row.result->manifest.tail_precision.is_null())
      rows.back()["tail_precision"] = row.result->manifest.tail_precision;
    if (!p.faults.empty()) rows.back()["faults"] = p.faults;
    if (!p.stragglers.empty()) rows.back()["stragglers"] = p.stragglers;
  }
  nlohmann::json point_list = nlohmann::json::array();
  for (const auto& p : points) point_list.push_back({{"id", p.id}, {"overrides", p.overrides}});
  std::vector<std::string> ratio_texts, routing_texts, cc_texts;
  for (const auto& r : opt.ratios) ratio_texts.push_back(r.to_string());
  for (const auto m : opt.routings) routing_texts.push_back(pkt::to_string(m));
  for (const auto c : opt.ccs.empty() ? std::vector<pkt::CcMode>{base.cc} : opt.ccs)
    cc_texts.push_back(pkt::to_string(c));
  nlohmann::json dims = {{"oversubscription", ratio_texts}, {"routing", routing_texts}, {"cc", cc_texts}};
  if (!opt.stragglers.empty()) dims["stragglers"] = opt.stragglers;
  nlohmann::json doc = {
      {"manifest",
       {{"version", kVersion},
        {"engine", results.empty() ? "" : results[0].manifest.engine},
        {"seed", base.seed},
        {"scenario", base.name},
        {"source", base.file},
        {"config", base.effective},
        {"dimensions", dims},
        {"points", point_list}}},
      {"rows", rows}};
  if (!opt.faults.empty()) doc["manifest"]["dimensions"]["faults"] = opt.faults;
  if (const auto notes = unmeasured_notes(study, results); !notes.empty())
    doc["manifest"]["warnings"] = notes;
  write_file_atomic(opt.out_dir + "/whatif.json", doc.dump(2) + "\n");
  return doc;
}

std::string whatif_table(const nlohmann::json& w) {
  std::ostringstream s;
  char line[320];
  // A faults column only when the study has that dimension (the table is otherwise as before).
  bool with_faults = false;
  for (const auto& r : w.at("rows")) with_faults |= r.contains("faults");
  auto fcol = [&](const std::string& t) {
    if (!with_faults) return std::string();
    char b[64];
    std::snprintf(b, sizeof b, "%-16s ", t.c_str());
    return std::string(b);
  };
  // The routing column grows to its longest entry ("adaptive s:1x0.5" with a stragglers dimension).
  int rw = 14;
  for (const auto& r : w.at("rows"))
    rw = std::max(rw, static_cast<int>(r.at("routing").get<std::string>().size()));
  std::snprintf(line, sizeof line, "%-10s %-8s %-9s %s%-*s %-6s %6s %11s %11s %-21s %11s %12s\n", "size",
                "job", "ratio", fcol("faults").c_str(), rw, "routing", "cc", "n", "p50 us", "p99 us",
                "p99 95% CI us", "p99.9 us", "busbw Gb/s");
  s << line;
  // Group by size, then in point order.
  std::vector<std::uint64_t> sizes;
  for (const auto& r : w.at("rows")) {
    const auto b = r.at("size_bytes").get<std::uint64_t>();
    if (std::find(sizes.begin(), sizes.end(), b) == sizes.end()) sizes.push_back(b);
  }
  std::sort(sizes.begin(), sizes.end());
  std::vector<std::string> notes;
  std::size_t short_of_target = 0;
  double target = 0;
  std::string tail_note;
  auto side = [](const nlohmann::json& v) {
    if (v.is_null()) return std::string("open");
    char b[32];
    std::snprintf(b, sizeof b, "%.2f", v.get<double>());
    return std::string(b);
  };
  for (const auto b : sizes) {
    for (const auto& r : w.at("rows")) {
      if (r.at("size_bytes").get<std::uint64_t>() != b) continue;
      const auto& c = r.at("completion_us");
      std::string ci = "-";
      if (c.contains("ci"))
        ci = "[" + side(c.at("ci").at("p99").at(0)) + ", " + side(c.at("ci").at("p99").at(1)) + "]";
      const auto n = c.value("n", r.value("iterations", std::size_t{0}));
      std::snprintf(line, sizeof line, "%-10s %-8s %-9s %s%-*s %-6s %6zu %11.2f %11.2f %-21s %11.2f %12.2f\n",
                    format_size(b).c_str(), r.at("job").get<std::string>().c_str(),
                    r.at("oversubscription").get<std::string>().c_str(),
                    fcol(r.value("faults", std::string())).c_str(), rw,
                    r.at("routing").get<std::string>().c_str(), r.at("cc").get<std::string>().c_str(), n,
                    c.at("p50").get<double>(), c.at("p99").get<double>(), ci.c_str(),
                    c.at("p999").get<double>(), r.at("busbw_gbps").at("p50").get<double>());
      s << line;
      for (const auto& u : c.value("unsupported", nlohmann::json::array()))
        if (std::find(notes.begin(), notes.end(), u.get<std::string>()) == notes.end()) notes.push_back(u);
      if (r.contains("tail_precision") && !r.at("tail_precision").value("reached", true)) ++short_of_target;
      if (r.contains("tail_precision")) target = r.at("tail_precision").value("target_pct", 0.0);
    }
  }
  if (target > 0) {
    char b[200];
    std::snprintf(b, sizeof b,
                  "--tail-precision %.4g %%: %zu row(s) stopped at --max-iters short of the target "
                  "(rows[].tail_precision in whatif.json)",
                  target, short_of_target);
    tail_note = b;
  }
  s << "n = measured iterations; p99 CI: 95 % order-statistic interval, 'open' where the samples cannot "
       "bound it.\n";
  // (The table's percentile columns are p50, p99 and p99.9: a note about another percentile, p90, is left
  // out.)
  for (const auto& nte : notes)
    if (nte.rfind("p50", 0) == 0 || nte.rfind("p99", 0) == 0)
      s << "note: " << nte << " (that column is the largest sample)\n";
  if (!tail_note.empty()) s << "note: " << tail_note << "\n";
  return s.str();
}

} // namespace ibn::analysis
