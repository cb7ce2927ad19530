// The capacity-plan page (report.hpp render_plan_report): the recommendation and the design table first, then
// cost vs p99 (Pareto front), p99 vs ratio with confidence intervals, each design's bill of materials, and
// the request last.
#include "analysis/report.hpp"
#include "analysis/report_html.hpp"
#include "sim/atomic_file.hpp"
#include "sim/error.hpp"
#include "topology/generators.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace ibn::analysis {
namespace {

using nlohmann::json;
using namespace html;

std::string money(double usd) {
  return "$" + fixed(usd / 1e6, 2) + "M";
}

std::optional<double> opt_num(const json& j, const std::string& key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return std::nullopt;
  return j[key].get<double>();
}

std::string ci_cell(const json& r, const std::string& key) {
  if (!r.contains(key) || !r[key].is_array() || r[key].size() != 2 || !r[key][0].is_number())
    return "&#8212;";
  return num(r[key][0].get<double>()) + " &#8211; " +
         (r[key][1].is_number() ? num(r[key][1].get<double>()) : std::string("open"));
}

void need(const json& j, const char* key, const std::string& where, bool (json::*is)() const) {
  if (!j.contains(key) || !(j[key].*is)())
    throw InputError(where + ": key '" + key + "' is missing or has the wrong type");
}

} // namespace

std::string render_plan_report(const json& plan, const std::string& source) {
  need(plan, "designs", source, &json::is_array);
  need(plan, "recommendation", source, &json::is_string);
  const auto& designs = plan["designs"];
  for (std::size_t i = 0; i < designs.size(); ++i) {
    const std::string w = source + ": designs[" + std::to_string(i) + "]";
    need(designs[i], "name", w, &json::is_string);
    need(designs[i], "ratio", w, &json::is_string);
    need(designs[i], "cost_usd", w, &json::is_number);
    need(designs[i], "power_w", w, &json::is_number);
    need(designs[i], "results", w, &json::is_object);
  }
  const std::string headline = plan.value("headline_metric", std::string());
  const auto& req = plan.value("request", json::object());
  std::string title = "ibnetsim capacity plan";
  if (req.contains("gpus")) title += ": " + req["gpus"].dump() + " GPUs";
  std::string out = page_open(title);

  // Headline: the recommendation, then what it rests on.
  std::set<std::string> pareto;
  for (const auto& n : plan.value("pareto", json::array())) pareto.insert(n.get<std::string>());
  std::set<std::string> engines;
  for (const auto& d : designs)
    engines.insert(d.value("engine", std::string("?")) +
                   (d.value("ring_fluid", false)
                        ? " engine on its ring-fluid model (an approximation, see the notes)"
                        : " engine"));
  std::string eng;
  for (const auto& e : engines) eng += (eng.empty() ? "" : ", ") + e;
  out += "<p class=\"headline\">" + esc(plan["recommendation"].get<std::string>()) + "<span class=\"sub\">" +
         std::to_string(designs.size()) + " designs; " +
         (headline.empty() ? "no workload simulated" : "compared on " + esc(headline) + " p99") + "; " +
         esc(eng) +
         ". Prices come from the parts catalog and are estimates "
         "where it says so (see the bill of materials).</span></p>\n";

  // The design table.
  std::vector<std::string> keys;
  for (const auto& d : designs)
    for (const auto& [k, v] : d["results"].items())
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  out +=
      "<table class=\"summary designs\">\n<tr><th>design</th><th>ratio</th><th>tiers</th><th>SU nodes / leaf "
      "ports</th><th>switches</th><th>cables</th><th>optics</th><th>cost</th><th>kW</th><th>bisection "
      "(Tb/s)</th><th>engine</th>";
  if (!headline.empty())
    out += "<th>" + esc(headline) +
           " p50 (&#181;s)</th><th>p99 (&#181;s)</th><th>p99 95 % CI</th><th>p99 vs "
           "non-blocking</th>";
  out += "</tr>\n";
  for (const auto& d : designs) {
    const bool front = pareto.count(d["name"].get<std::string>()) > 0;
    out += std::string("<tr") + (front ? " class=\"pick\"" : "") + "><td>" +
           esc(d["name"].get<std::string>()) + (front ? " &#9733;" : "") + "</td><td>" +
           esc(d["ratio"].get<std::string>()) + "</td><td class=\"n\">" + num(opt_num(d, "tiers")) +
           "</td><td class=\"n\">" + num(opt_num(d, "su_nodes")) + " / " + num(opt_num(d, "leaf_ports")) +
           "</td><td class=\"n\">" + num(opt_num(d, "switches")) + "</td><td class=\"n\">" +
           num(opt_num(d, "cables")) + "</td><td class=\"n\">" + num(opt_num(d, "transceivers")) +
           "</td><td class=\"n\">" + money(d["cost_usd"].get<double>()) + "</td><td class=\"n\">" +
           fixed(d["power_w"].get<double>() / 1000.0, 1) + "</td><td class=\"n\">" +
           (opt_num(d, "bisection_gbps") ? fixed(*opt_num(d, "bisection_gbps") / 1000.0, 1) : "&#8212;") +
           "</td><td>" + esc(d.value("engine", std::string())) + "</td>";
    if (!headline.empty()) {
      const auto& r = d["results"].value(headline, json::object());
      out +=
          "<td class=\"n\">" + num(opt_num(r, "p50_us")) + "</td><td class=\"n\">" +
          num(opt_num(r, "p99_us")) + "</td><td class=\"n\">" + ci_cell(r, "ci_p99_us") +
          "</td><td class=\"n\">" +
          (opt_num(r, "delta_p99_pct") ? (std::string(*opt_num(r, "delta_p99_pct") >= 0 ? "+" : "&#8722;") +
                                          fixed(std::fabs(*opt_num(r, "delta_p99_pct")), 1) + " %")
                                       : std::string("&#8212;")) +
          "</td>";
    }
    out += "</tr>\n";
  }
  out +=
      "</table>\n<p class=\"note\">&#9733; = on the Pareto front (no other design is both cheaper and faster "
      "at p99). Cost covers switches, NICs, cables and transceivers; power is typical draw of the same "
      "parts.</p>\n";

  // Cost vs p99.
  if (!headline.empty()) {
    std::vector<ScatterPoint> pts;
    for (const auto& d : designs) {
      const auto& r = d["results"].value(headline, json::object());
      if (!opt_num(r, "p99_us")) continue;
      ScatterPoint p{d["cost_usd"].get<double>() / 1e6,
                     *opt_num(r, "p99_us"),
                     d["ratio"].get<std::string>() + " " + d.value("switch", std::string()),
                     pareto.count(d["name"].get<std::string>()) > 0,
                     {},
                     {}};
      if (r.contains("ci_p99_us") && r["ci_p99_us"].is_array() && r["ci_p99_us"].size() == 2 &&
          r["ci_p99_us"][0].is_number() && r["ci_p99_us"][1].is_number())
        p.err_lo = r["ci_p99_us"][0].get<double>(), p.err_hi = r["ci_p99_us"][1].get<double>();
      pts.push_back(std::move(p));
    }
    Frame f;
    f.width = 640;
    f.height = 360;
    f.right = 40;
    out += "<section class=\"tradeoff\">\n<h2>Cost vs tail latency</h2>\n<div class=\"row\">\n";
    out += scatter_plot(pts, "cost vs " + headline + " p99 (ringed: Pareto front)", "cost (million USD)",
                        headline + " p99 (\xC2\xB5s)", "scatter-plot cost-p99", f);
    // p99 vs ratio, one line per size (and per congestion control setting when a plan compares several),
    // with CIs.
    std::vector<std::string> ccs; // in order of first appearance; "" = the workload's own
    for (const auto& d : designs) {
      const std::string cc = d.contains("cc") && d["cc"].is_string() ? d["cc"].get<std::string>() : "";
      if (std::find(ccs.begin(), ccs.end(), cc) == ccs.end()) ccs.push_back(cc);
    }
    std::map<double, std::string> ratios;
    std::vector<XySeries> series;
    for (std::size_t k = 0; k < keys.size() * ccs.size(); ++k) {
      const std::string& key = keys[k / ccs.size()];
      const std::string& cc = ccs[k % ccs.size()];
      XySeries s{key + (ccs.size() > 1 ? ", cc " + cc : std::string()),
                 Style{kColours[k % kColours.size()], kDashes[(k / kColours.size()) % kDashes.size()]},
                 {}};
      for (const auto& d : designs) {
        if ((d.contains("cc") && d["cc"].is_string() ? d["cc"].get<std::string>() : "") != cc) continue;
        const auto& r = d["results"].value(key, json::object());
        if (!opt_num(r, "p99_us")) continue;
        const double x = topo::parse_ratios(d["ratio"].get<std::string>(), source + " ratio").front().value();
        ratios[x] = d["ratio"].get<std::string>();
        XyPoint p{x,
                  *opt_num(r, "p99_us"),
                  d["name"].get<std::string>() + ": p99 " + num(*opt_num(r, "p99_us")) + " \xC2\xB5s",
                  {},
                  {}};
        if (r.contains("ci_p99_us") && r["ci_p99_us"].is_array() && r["ci_p99_us"].size() == 2 &&
            r["ci_p99_us"][0].is_number() && r["ci_p99_us"][1].is_number())
          p.err_lo = r["ci_p99_us"][0].get<double>(), p.err_hi = r["ci_p99_us"][1].get<double>();
        s.points.push_back(std::move(p));
      }
      std::sort(s.points.begin(), s.points.end(),
                [](const XyPoint& a, const XyPoint& b) { return a.x < b.x; });
      series.push_back(std::move(s));
    }
    Frame g;
    g.width = 620;
    g.height = 360;
    g.right = 170;
    out += xy_plot(series, std::vector<std::pair<double, std::string>>(ratios.begin(), ratios.end()),
                   "p99 vs leaf ratio (bars: 95 % CI)", "p99 completion time (\xC2\xB5s)", "pct ratio-p99",
                   true, g, "leaf downlink:uplink", "collective, size");
    out += "</div>\n</section>\n";

    out += "<section class=\"results\">\n<h2>Every measured collective</h2>\n<table "
           "class=\"summary\">\n<tr><th>design"
           "</th><th>collective</th><th>samples</th><th>p50 (&#181;s)</th><th>p50 95 % CI</th><th>p99 "
           "(&#181;s)</th>"
           "<th>p99 95 % CI</th><th>p99 vs non-blocking</th></tr>\n";
    for (const auto& d : designs)
      for (const auto& k : keys) {
        const auto& r = d["results"].value(k, json::object());
        if (r.empty()) continue;
        out += "<tr><td>" + esc(d["name"].get<std::string>()) + "</td><td>" + esc(k) +
               "</td><td class=\"n\">" + num(opt_num(r, "n")) + "</td><td class=\"n\">" +
               num(opt_num(r, "p50_us")) + "</td><td class=\"n\">" + ci_cell(r, "ci_p50_us") +
               "</td><td class=\"n\">" + num(opt_num(r, "p99_us")) + "</td><td class=\"n\">" +
               ci_cell(r, "ci_p99_us") + "</td><td class=\"n\">" +
               (opt_num(r, "delta_p99_pct") ? fixed(*opt_num(r, "delta_p99_pct"), 1) + " %"
                                            : std::string("&#8212;")) +
               "</td></tr>\n";
      }
    out += "</table>\n</section>\n";
  }

  // Bills of materials.
  out += "<section class=\"bom\">\n<h2>Bill of materials per design</h2>\n";
  for (const auto& d : designs) {
    if (!d.contains("bom") || !d["bom"].is_object()) continue;
    const auto& b = d["bom"];
    out += "<h3>" + esc(d["name"].get<std::string>()) +
           "</h3>\n<table class=\"summary\">\n<tr><th>tier</th><th>"
           "switches</th><th>ports used</th><th>ports free</th><th>cables (down)</th><th>by class</th><th>"
           "transceivers</th></tr>\n";
    for (const auto& t : b.value("by_tier", json::array())) {
      std::string classes;
      const json by_class = t.value("cables_by_class", json::object());
      for (const auto& [k, v] : by_class.items())
        classes += (classes.empty() ? "" : ", ") + k + " " + v.dump();
      out += "<tr><td>" + esc(t.value("tier", std::string())) + "</td><td class=\"n\">" +
             num(opt_num(t, "switches")) + "</td><td class=\"n\">" + num(opt_num(t, "ports_used")) +
             "</td><td class=\"n\">" + num(opt_num(t, "ports_free")) + "</td><td class=\"n\">" +
             num(opt_num(t, "cables")) + "</td><td>" + esc(classes) + "</td><td class=\"n\">" +
             num(opt_num(t, "transceivers")) + "</td></tr>\n";
    }
    out += "</table>\n<table "
           "class=\"summary\">\n<tr><th>item</th><th>model</th><th>tier</th><th>count</th><th>unit "
           "$</th><th>cost $</th><th>power W</th><th>price</th></tr>\n";
    for (const auto& l : b.value("lines", json::array()))
      out += "<tr><td>" + esc(l.value("item", std::string())) + "</td><td>" +
             esc(l.value("model", std::string())) + "</td><td>" + esc(l.value("tier", std::string())) +
             "</td><td class=\"n\">" + num(opt_num(l, "count")) + "</td><td class=\"n\">" +
             num(opt_num(l, "unit_price_usd")) + "</td><td class=\"n\">" + num(opt_num(l, "cost_usd")) +
             "</td><td class=\"n\">" + num(opt_num(l, "power_w")) + "</td><td>" +
             (l.value("price_is_estimate", false) ? "estimate" : "catalog") + "</td></tr>\n";
    out += "</table>\n";
  }
  out += "</section>\n";

  if (plan.contains("notes") && plan["notes"].is_array() && !plan["notes"].empty()) {
    out += "<section class=\"notes\">\n<h2>Notes</h2>\n<ul>\n";
    for (const auto& n : plan["notes"])
      out += "<li>" + esc(n.is_string() ? n.get<std::string>() : n.dump()) + "</li>\n";
    out += "</ul>\n</section>\n";
  }
  // The request, last.
  std::vector<std::pair<std::string, std::string>> rows;
  flatten(req, "", rows);
  if (plan.contains("catalog") && plan["catalog"].is_string()) rows.emplace_back("catalog", plan["catalog"]);
  if (plan.contains("version") && plan["version"].is_string()) rows.emplace_back("version", plan["version"]);
  out += "<section class=\"config\">\n<h2>Configuration</h2>\n" + kv_table(rows, "manifest") + "</section>\n";
  out += "<footer><p class=\"note\">Generated by ibnetsim plan. Times in &#181;s, cost in USD, power in kW "
         "(typical)."
         "</p></footer>\n</body>\n</html>\n";
  return out;
}

void write_plan_report(const json& plan, const std::string& path) {
  write_file_atomic(path, render_plan_report(plan, path));
}

} // namespace ibn::analysis
