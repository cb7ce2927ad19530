#include "analysis/whatif.hpp"

#include "analysis/points.hpp"
#include "analysis/results.hpp"
#include "scenarios/runner.hpp"
#include "sim/atomic_file.hpp"
#include "sim/error.hpp"
#include "sim/units.hpp"
#include "sim/version.hpp"
#include "topology/describe.hpp"
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

std::string routing_label(const std::string& mode) {
  if (mode == "off") return "static";
  if (mode == "per-packet") return "adaptive";
  return "adaptive-" + mode;
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

} // namespace

std::vector<WhatifPoint> whatif_points(const scen::Scenario& base, const WhatifOptions& opt) {
  std::vector<WhatifPoint> out;
  std::vector<std::pair<std::string, std::string>> ratios; // text, fabric.params override (JSON) or ""
  if (opt.ratios.empty()) {
    const auto own = base.fabric_file.empty() ? base.fabric_params.value("oversubscription", std::string("1:1")) : "file";
    ratios.emplace_back(own, "");
  } else {
    if (!base.fabric_file.empty())
      throw InputError(base.file + ": key 'fabric.file': the what-if study varies the generator's oversubscription; "
                                   "use fabric.generator/fabric.params, or pass --oversubscription \"\" to keep the "
                                   "file's fabric");
    for (const auto& r : opt.ratios) {
      auto params = base.fabric_params;
      params["oversubscription"] = r.to_string();
      if (base.fabric_generator == "fat-tree" && !base.fabric_params.contains("leaf-ports")) {
        const int radix = params.contains("radix") ? std::stoi(params["radix"].is_string()
                                                                  ? params["radix"].get<std::string>()
                                                                  : std::to_string(params["radix"].get<int>()))
                                                  : 64;
        const int group = r.down + r.up;
        if (radix % group != 0) {
          // The split that needs the fewest switches with every leaf full (topology/port_split.hpp), said aloud.
          int lp = radix / group * group;
          if (params.contains("hosts")) {
            const auto h = params["hosts"].is_string() ? std::stoll(params["hosts"].get<std::string>())
                                                       : params["hosts"].get<std::int64_t>();
            const auto& t = params.contains("tiers") ? params["tiers"] : nlohmann::json(2);
            const int tiers = t.is_string() ? std::stoi(t.get<std::string>()) : t.get<int>();
            if (const auto best = topo::cheapest_leaf_ports(tiers, radix, h, r)) lp = best->leaf_ports;
          }
          params["leaf-ports"] = lp;
          if (opt.progress)
            opt.progress(r.to_string() + ": radix " + std::to_string(radix) + " does not split at " + r.to_string() +
                         "; using leaf-ports " + std::to_string(lp));
        }
      }
      ratios.emplace_back(r.to_string(), "fabric.params=" + params.dump());
    }
  }
  const auto ccs = opt.ccs.empty() ? std::vector<std::string>{base.cc} : opt.ccs;
  for (const auto& [text, ov] : ratios) {
    for (const auto& mode : opt.routings) {
      for (const auto& cc : ccs) {
        WhatifPoint p;
        p.oversubscription = text;
        // The CC setting is part of the routing label, so tables and plots keep the points apart.
        p.routing = routing_label(mode) + (cc != "none" ? "+" + cc : "");
        p.cc = cc;
        p.id = ratio_id(text) + "-" + routing_label(mode) + (cc != "none" ? "-" + cc : "");
        if (!ov.empty()) p.overrides.push_back(ov);
        p.overrides.push_back("routing.adaptive=" + mode);
        p.overrides.push_back("cc.algorithm=" + cc);
        if (!opt.engine.empty()) p.overrides.push_back("engine=" + opt.engine);
        out.push_back(std::move(p));
      }
    }
  }
  return out;
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
  const auto results = run_points(base, study, po);
  // The oversubscription the fabric really has, from its graph (differs from the request on partial leaves).
  std::vector<double> measured_ratio(points.size(), 0.0);
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto s = scen::make_scenario(base.effective, base.file, base.base_dir, points[i].overrides);
    const auto w = scen::build_world(s);
    const auto summary = topo::describe(w.fabric);
    if (!summary.per_tier.empty()) measured_ratio[i] = summary.per_tier[0].oversubscription.value_or(0.0);
  }

  nlohmann::json rows = nlohmann::json::array();
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    const auto& r = results[i];
    for (const auto& c : r.at("collectives")) {
      if (c.value("background", false) || !c.contains("completion_us")) continue;
      rows.push_back({{"point", p.id},
                      {"oversubscription", p.oversubscription},
                      {"ratio", p.oversubscription == "file" ? measured_ratio[i] : leaf_ratio(p.oversubscription)},
                      {"ratio_measured", std::round(measured_ratio[i] * 1e4) / 1e4},
                      {"routing", p.routing},
                      {"cc", r.at("manifest").at("config").at("cc").at("algorithm")},
                      {"job", c.at("job")},
                      {"op", c.at("op")},
                      {"algorithm", c.at("algorithm")},
                      {"size_bytes", c.at("size_bytes")},
                      {"ranks", c.at("ranks")},
                      {"iterations", c.at("iterations")},
                      {"completion_us", c.at("completion_us")},
                      {"algbw_gbps", c.at("algbw_gbps")},
                      {"busbw_gbps", c.at("busbw_gbps")},
                      {"samples_us", c.at("samples_us")},
                      {"links", r.at("links")},
                      {"results", "points/" + p.id + "/results.json"}});
    }
  }
  nlohmann::json point_list = nlohmann::json::array();
  for (const auto& p : points) point_list.push_back({{"id", p.id}, {"overrides", p.overrides}});
  std::vector<std::string> ratio_texts;
  for (const auto& r : opt.ratios) ratio_texts.push_back(r.to_string());
  nlohmann::json doc = {{"manifest",
                         {{"version", kVersion},
                          {"engine", results.empty() ? "" : results[0].at("manifest").at("engine")},
                          {"seed", base.seed},
                          {"scenario", base.name},
                          {"source", base.file},
                          {"config", base.effective},
                          {"dimensions", {{"oversubscription", ratio_texts}, {"routing", opt.routings},
                                          {"cc", opt.ccs.empty() ? std::vector<std::string>{base.cc} : opt.ccs}}},
                          {"points", point_list}}},
                        {"rows", rows}};
  write_file_atomic(opt.out_dir + "/whatif.json", doc.dump(2) + "\n");
  return doc;
}

std::string whatif_table(const nlohmann::json& w) {
  std::ostringstream s;
  char line[256];
  std::snprintf(line, sizeof line, "%-10s %-8s %-9s %-14s %-6s %11s %11s %11s %12s\n", "size", "job", "ratio",
                "routing", "cc", "p50 us", "p99 us", "p99.9 us", "busbw Gb/s");
  s << line;
  // Group by size, then in point order.
  std::vector<std::uint64_t> sizes;
  for (const auto& r : w.at("rows")) {
    const auto b = r.at("size_bytes").get<std::uint64_t>();
    if (std::find(sizes.begin(), sizes.end(), b) == sizes.end()) sizes.push_back(b);
  }
  std::sort(sizes.begin(), sizes.end());
  for (const auto b : sizes) {
    for (const auto& r : w.at("rows")) {
      if (r.at("size_bytes").get<std::uint64_t>() != b) continue;
      const auto& c = r.at("completion_us");
      std::snprintf(line, sizeof line, "%-10s %-8s %-9s %-14s %-6s %11.2f %11.2f %11.2f %12.2f\n",
                    format_size(b).c_str(), r.at("job").get<std::string>().c_str(),
                    r.at("oversubscription").get<std::string>().c_str(), r.at("routing").get<std::string>().c_str(),
                    r.at("cc").get<std::string>().c_str(), c.at("p50").get<double>(), c.at("p99").get<double>(),
                    c.at("p999").get<double>(), r.at("busbw_gbps").at("p50").get<double>());
      s << line;
    }
  }
  return s.str();
}

} // namespace ibn::analysis
