// HTML report: the SVG curves are parsed back from the page and checked for what they must show (one CDF
// per (ratio, routing), monotone steps, positions proportional to the samples, log axis when the range is
// wide), the tables carry the input values, the output is deterministic and self-contained, bad inputs are
// InputErrors naming the file and key, and `ibnetsim report` writes the same page.
// GCC 12 with -fsanitize=address,undefined at -O2 (build-asan) reports -Wmaybe-uninitialized inside
// libstdc++'s std::regex automaton (std::function moved from a state it considers uninitialised): a false
// positive of the sanitized build; this is the only file that uses <regex>.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "analysis/report.hpp"
#include "tests/apps/run_cli.hpp"
#include "tests/test_util.hpp"

#include "tests/golden.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <tuple>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

using ibn::analysis::load_report_input;
using ibn::analysis::render_report;
using ibn::test::error_of;
using ibn::test::check_golden;
using nlohmann::json;

namespace {

/// Samples of one what-if point: base * ratio_factor * routing_factor * (1, 1.1, 1.25, 1.5, 2).
std::vector<double> point_samples(double base_us, double ratio, bool adaptive) {
  const double f = base_us * (1 + 0.5 * (ratio - 1)) * (adaptive ? 0.8 : 1.0);
  std::vector<double> s;
  for (const double k : {1.0, 1.1, 1.25, 1.5, 2.0}) s.push_back(f * k);
  return s;
}

json stats_of(const std::vector<double>& s) {
  double mean = 0;
  for (const double v : s) mean += v;
  mean /= static_cast<double>(s.size());
  return {{"p50", s[2]}, {"p90", s[4]}, {"p99", s[4]}, {"p999", s[4]}, {"max", s[4]}, {"mean", mean}};
}

/// A small what-if study: 2 sizes x ratios {1:1, 2:1} x routings {static, adaptive}; 2 link tiers.
json small_whatif() {
  json rows = json::array();
  for (const auto& [size, base] :
       std::vector<std::pair<std::uint64_t, double>>{{65536, 20.0}, {1 << 20, 150.0}})
    for (const auto& [label, ratio] : std::vector<std::pair<std::string, double>>{{"1:1", 1.0}, {"2:1", 2.0}})
      for (const bool adaptive : {false, true}) {
        const auto s = point_samples(base, ratio, adaptive);
        const double busbw = static_cast<double>(size) * 8 / (s[2] * 1e3) * 1.875;
        rows.push_back(
            {{"oversubscription", label},
             {"ratio", ratio},
             {"routing", adaptive ? "adaptive" : "static"},
             {"cc", "none"},
             {"op", "allreduce"},
             {"size_bytes", size},
             {"ranks", 16},
             {"iterations", 5},
             {"completion_us", stats_of(s)},
             {"busbw_gbps", {{"p50", busbw}}},
             {"algbw_gbps", {{"p50", busbw / 1.875}}},
             {"samples_us", s},
             {"links",
              {{"by_tier",
                {{{"tier", "leaf->spine"},
                  {"util_mean", 0.2 * ratio + (adaptive ? 0.05 : 0)},
                  {"util_max", 0.9}},
                 {{"tier", "hca->leaf"}, {"util_mean", 0.31}, {"util_max", 0.5}, {"ecn_marks", 0}}}}}},
             {"extra_key_ignored", {1, 2, 3}}});
      }
  return {{"manifest",
           {{"version", "0.1.0-test"},
            {"engine", "packet"},
            {"seed", 7},
            {"config", {{"fabric", {{"radix", 8}, {"rate", "NDR"}}}, {"note", "<hand made>"}}}}},
          {"rows", rows}};
}

struct Polyline {
  std::string cls, series;
  std::vector<std::pair<double, double>> points;
};

std::vector<Polyline> polylines(const std::string& html, const std::string& cls) {
  std::vector<Polyline> out;
  const std::regex re("<polyline class=\"([^\"]*)\" data-series=\"([^\"]*)\"[^>]* points=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), re); it != std::sregex_iterator(); ++it) {
    Polyline p{(*it)[1], (*it)[2], {}};
    if (p.cls != cls) continue;
    std::istringstream pts((*it)[3].str());
    std::string xy;
    while (pts >> xy) {
      const auto comma = xy.find(',');
      p.points.emplace_back(std::stod(xy.substr(0, comma)), std::stod(xy.substr(comma + 1)));
    }
    out.push_back(std::move(p));
  }
  return out;
}

/// The text between the first occurrence of `from` and the next occurrence of `to` after it.
std::string between(const std::string& s, const std::string& from, const std::string& to) {
  const auto a = s.find(from);
  REQUIRE(a != std::string::npos);
  const auto b = s.find(to, a + from.size());
  REQUIRE(b != std::string::npos);
  return s.substr(a, b - a);
}

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + what.size())) ++n;
  return n;
}



} // namespace

TEST_CASE(
    "report: one monotone CDF step curve per (ratio, routing) per size, x proportional to the samples") {
  const json doc = small_whatif();
  const std::string html = render_report(doc, "whatif.json");
  for (const std::string size : {"64KiB", "1MiB"}) {
    CAPTURE(size);
    const std::string section = between(html, "<h2>allreduce, " + size + ", 16 ranks</h2>", "</section>");
    const auto curves = polylines(section, "series cdf");
    std::set<std::string> names;
    for (const auto& c : curves) names.insert(c.series);
    CHECK(curves.size() == 4);
    CHECK(names == std::set<std::string>{"1:1 adaptive", "1:1 static", "2:1 adaptive", "2:1 static"});
    // Samples by series, to check the x mapping: x = a + b * sample (linear axis: the range is < 20x).
    std::map<std::string, std::vector<double>> samples;
    for (const auto& r : doc["rows"])
      if (r["size_bytes"] == (size == "64KiB" ? 65536 : 1 << 20))
        samples[r["oversubscription"].get<std::string>() + " " + r["routing"].get<std::string>()] =
            r["samples_us"].get<std::vector<double>>();
    double lo = 1e300, hi = -1e300, x_lo = 0, x_hi = 0;
    for (const auto& c : curves) {
      const auto& s = samples.at(c.series);
      REQUIRE(c.points.size() == 2 * s.size()); // a rise at every sample: (x_i, F_{i-1}) -> (x_i, F_i)
      if (s.front() < lo) lo = s.front(), x_lo = c.points.front().first;
      if (s.back() > hi) hi = s.back(), x_hi = c.points.back().first;
    }
    CHECK(section.find("(log scale)") == std::string::npos);
    const double bottom = curves[0].points.front().second, top = curves[0].points.back().second;
    CHECK(top < bottom); // SVG y grows downwards: F = 1 is above F = 0
    for (const auto& c : curves) {
      CAPTURE(c.series);
      const auto& s = samples.at(c.series);
      CHECK(c.points.front().second == bottom);
      CHECK(c.points.back().second == top);
      for (std::size_t i = 1; i < c.points.size(); ++i) {
        CHECK(c.points[i].first >= c.points[i - 1].first);   // x never goes back
        CHECK(c.points[i].second <= c.points[i - 1].second); // F never decreases
      }
      for (std::size_t i = 0; i < s.size(); ++i) {
        const double expect_x = x_lo + (s[i] - lo) / (hi - lo) * (x_hi - x_lo);
        CHECK(std::fabs(c.points[2 * i].first - expect_x) < 0.02); // coordinates are printed with 2 decimals
        // F after sample i is (i + 1) / n of the way from bottom to top.
        const double expect_y =
            bottom + (top - bottom) * static_cast<double>(i + 1) / static_cast<double>(s.size());
        CHECK(std::fabs(c.points[2 * i + 1].second - expect_y) < 0.02);
      }
    }
  }
}

TEST_CASE("report: axes have labels and units, percentiles and busbw vs ratio have one line per routing") {
  const std::string html = render_report(small_whatif(), "whatif.json");
  CHECK(count(html, ">completion time (\xC2\xB5s)</text>") == 2);           // CDF x axis, one per size
  CHECK(count(html, "fraction of iterations \xE2\x89\xA4 x</text>") == 2);  // CDF y axis
  CHECK(count(html, "oversubscription (downlink:uplink)</text>") == 2 * 4); // 3 percentile panels + busbw
  CHECK(html.find("busbw p50 (Gb/s)</text>") != std::string::npos);
  CHECK(html.find("p99.9 completion time (\xC2\xB5s)</text>") != std::string::npos);
  const std::string section = between(html, "<h2>allreduce, 1MiB, 16 ranks</h2>", "</section>");
  for (const std::string pct : {"p50", "p99", "p999"}) {
    const auto lines = polylines(section, "series pct pct-" + pct);
    REQUIRE(lines.size() == 2);
    for (const auto& l : lines) {
      REQUIRE(l.points.size() == 2);
      CHECK(l.points[1].first > l.points[0].first);   // 2:1 right of 1:1
      CHECK(l.points[1].second < l.points[0].second); // and slower (higher on the page) in this input
    }
    // Adaptive is 0.8x static at each ratio: its line lies below (larger SVG y).
    CHECK(lines[0].series == "adaptive");
    CHECK(lines[0].points[0].second > lines[1].points[0].second);
  }
  const auto bw = polylines(section, "series busbw");
  REQUIRE(bw.size() == 2);
  CHECK(bw[0].points[0].second < bw[1].points[0].second); // adaptive is faster: more bus bandwidth, higher
}

TEST_CASE("report: heat map has a cell per (ratio x routing, tier) with the util_mean as text and colour") {
  const json doc = small_whatif();
  const std::string html = render_report(doc, "whatif.json");
  // Link statistics are per point (whole run): one heat map for the study, rows = points.
  const std::string section = between(html, "<h2>Link utilization per point</h2>", "</section>");
  CHECK(html.find("<h2>Link utilization per point</h2>") > html.find("<h2>allreduce, 1MiB, 16 ranks</h2>"));
  CHECK(count(html, "class=\"plot heat-plot\"") == 1);
  const std::regex cell(
      "<rect class=\"heat\" data-row=\"([^\"]*)\" data-tier=\"([^\"]*)\" data-value=\"([^\"]*)\"[^>]* "
      "fill=\"(#[0-9a-f]{6})\">");
  std::map<std::pair<std::string, std::string>, std::pair<double, std::string>> cells;
  std::vector<std::string> tier_order;
  for (auto it = std::sregex_iterator(section.begin(), section.end(), cell); it != std::sregex_iterator();
       ++it) {
    cells[{(*it)[1], (*it)[2]}] = {std::stod((*it)[3]), (*it)[4]};
    if (std::find(tier_order.begin(), tier_order.end(), (*it)[2]) == tier_order.end())
      tier_order.push_back((*it)[2]);
  }
  CHECK(cells.size() == 4 * 2);
  CHECK(tier_order ==
        std::vector<std::string>{"hca-&gt;leaf", "leaf-&gt;spine"}); // bottom of the fabric first
  CHECK(cells.at({"2:1, static", "leaf-&gt;spine"}).first == doctest::Approx(0.4));
  CHECK(cells.at({"2:1, adaptive", "leaf-&gt;spine"}).first == doctest::Approx(0.45));
  CHECK(cells.at({"1:1, static", "hca-&gt;leaf"}).first == doctest::Approx(0.31));
  // Same value, same colour; different values, different colours.
  CHECK(cells.at({"1:1, static", "hca-&gt;leaf"}).second ==
        cells.at({"2:1, adaptive", "hca-&gt;leaf"}).second);
  CHECK(cells.at({"1:1, static", "leaf-&gt;spine"}).second !=
        cells.at({"2:1, static", "leaf-&gt;spine"}).second);
  CHECK(section.find(">0.450</text>") != std::string::npos); // the value printed in the cell
}

TEST_CASE("report: summary table lists every row with its values") {
  const std::string html = render_report(small_whatif(), "whatif.json");
  const std::string table = between(html, "<table class=\"summary\">", "</table>");
  CHECK(count(table, "<tr><td>") == 8);
  // 1MiB, 1:1, static: samples 150 * (1, 1.1, 1.25, 1.5, 2) -> p50 = 187.5, p90 = max = 300, mean = 205.5.
  CHECK(table.find(
            "<tr><td>1:1</td><td>static</td><td>none</td><td></td><td>allreduce</td><td class=\"n\">1MiB</td>"
            "<td class=\"n\">16</td><td class=\"n\">5</td><td class=\"n\">187.5</td><td "
            "class=\"n\">300</td>") != std::string::npos);
  CHECK(table.find("<td class=\"n\">205.5</td>") != std::string::npos);
  // busbw p50 of 64KiB, 1:1, static = 65536 * 8 / (25 us * 1e3) * 1.875 = 39.3216 Gb/s -> "39.32".
  CHECK(table.find("<td class=\"n\">39.32</td></tr>") != std::string::npos);
  // The configuration, last, as key/value rows with scenario keys unprefixed, escaped.
  CHECK(html.find("<td>note</td><td>&lt;hand made&gt;</td>") != std::string::npos);
  CHECK(html.find("<td>fabric.radix</td><td>8</td>") != std::string::npos);
  CHECK(html.find("<h2>Configuration</h2>") > html.find("<h2>All rows</h2>"));
  CHECK(html.find("class=\"headline\"") < html.find("<svg"));
}

TEST_CASE("report: deterministic, independent of row order, self-contained, golden") {
  json doc = small_whatif();
  const std::string a = render_report(doc, "whatif.json");
  CHECK(render_report(doc, "other-name.json") == a); // the source name only appears in errors
  auto& rows = doc["rows"];
  std::reverse(rows.begin(), rows.end());
  std::swap(rows[1], rows[5]);
  CHECK(render_report(doc, "whatif.json") == a);
  for (const char* banned : {"<script", "http://", "https://", "url(", "@import", "<link", "<img", "<iframe"})
    CHECK_MESSAGE(a.find(banned) == std::string::npos, banned);
  CHECK(a.rfind("<!DOCTYPE html>", 0) == 0);
  check_golden("report/whatif-small.html", a);
}

TEST_CASE("report: log time axis when the samples span a wide range") {
  json doc = small_whatif();
  json& rows = doc["rows"];
  // Keep the 64KiB rows only; samples from 1 to 1000 us.
  json keep = json::array();
  for (auto& r : rows)
    if (r["size_bytes"] == 65536) keep.push_back(r);
  keep[0]["samples_us"] = {1.0, 10.0, 100.0, 1000.0};
  keep[1]["samples_us"] = {2.0, 3.0};
  doc["rows"] = keep;
  const std::string html = render_report(doc, "whatif.json");
  const std::string cdf = between(html, "<svg class=\"plot cdf-plot\"", "</svg>");
  CHECK(cdf.find("completion time (\xC2\xB5s) (log scale)") != std::string::npos);
  const std::regex tick("<text class=\"tick x-tick\" x=\"([0-9.]+)\" y=\"[0-9.]+\">([^<]*)</text>");
  std::vector<std::pair<double, std::string>> ticks;
  for (auto it = std::sregex_iterator(cdf.begin(), cdf.end(), tick); it != std::sregex_iterator(); ++it)
    ticks.emplace_back(std::stod((*it)[1]), (*it)[2]);
  REQUIRE(ticks.size() == 4);
  CHECK(ticks[0].second == "1");
  CHECK(ticks[3].second == "1000");
  // Decades are equally spaced.
  CHECK(ticks[1].first - ticks[0].first == doctest::Approx(ticks[3].first - ticks[2].first));
  // A curve's sample at 10 sits at the "10" tick, 100 at the "100" tick.
  const auto curves = polylines(cdf, "series cdf");
  const auto wide =
      std::find_if(curves.begin(), curves.end(), [](const Polyline& p) { return p.points.size() == 8; });
  REQUIRE(wide != curves.end());
  CHECK(wide->points[2].first == doctest::Approx(ticks[1].first));
  CHECK(wide->points[4].first == doctest::Approx(ticks[2].first));
}

TEST_CASE("report: results.json gives a CDF per collective and the link table") {
  const json doc = {
      {"manifest", {{"version", "0.1.0"}, {"engine", "flow"}, {"seed", 1}, {"config", {{"jobs", 2}}}}},
      {"collectives",
       {{{"name", "train/allreduce/1048576"},
         {"job", "train"},
         {"op", "allreduce"},
         {"algorithm", "ring"},
         {"size_bytes", 1048576},
         {"ranks", 8},
         {"iterations", 3},
         {"completion_us", {{"p50", 100.5}, {"p99", 130.0}, {"max", 130.0}}},
         {"busbw_gbps", {{"p50", 146.1}}},
         {"samples_us", {130.0, 100.5, 99.0}}},
        {{"name", "noise <bg>"}, {"op", "alltoall"}, {"background", true}, {"samples_us", {5.0, 6.0}}}}},
      {"links",
       {{"by_tier",
         {{{"tier", "spine->leaf"}, {"util_mean", 0.000125}, {"util_max", 0.5}, {"queue_max_bytes", 65536}},
          {{"tier", "leaf->spine"}, {"util_mean", 0.125}, {"ecn_marks", 17}, {"stall_us", 2.5}}}}}},
      {"engine", {{"events", 123456}, {"wall_s", 0.5}, {"events_per_s", 246912}}}};
  const std::string html = render_report(doc, "results.json");
  CHECK(html.find("<title>ibnetsim run report</title>") != std::string::npos);
  const auto curves = polylines(html, "series cdf");
  REQUIRE(curves.size() == 2);
  CHECK(curves[0].series == "train/allreduce/1048576");
  CHECK(curves[1].series == "noise &lt;bg&gt;");
  CHECK(curves[0].points.size() == 6);
  for (std::size_t i = 1; i < curves[0].points.size(); ++i)
    CHECK(curves[0].points[i].first >= curves[0].points[i - 1].first);
  CHECK(html.find("noise &lt;bg&gt; (background)</td>") != std::string::npos);
  const std::string links = between(html, "<table class=\"links\">", "</table>");
  // Upward direction first.
  CHECK(links.find("leaf-&gt;spine") < links.find("spine-&gt;leaf"));
  CHECK(links.find("<tr><td>leaf-&gt;spine</td><td class=\"n\">&#8212;</td><td class=\"n\">0.125</td><td "
                   "class=\"n\">&#8212;</td><td class=\"n\">&#8212;</td><td class=\"n\">17</td><td "
                   "class=\"n\">2.500</td>") != std::string::npos);
  CHECK(links.find("<td class=\"n\">65536</td>") != std::string::npos);
  CHECK(links.find("<td class=\"n\">0.000125</td>") != std::string::npos); // small values keep their digits
  CHECK(html.find("<td>events</td><td class=\"n\">123456</td>") != std::string::npos);
}

TEST_CASE("report: rows without results (fabric-only study) render a page that says so") {
  const json doc = {
      {"manifest", {{"engine", "none"}}},
      {"rows", {{{"oversubscription", "2:1"}, {"leaf_ports", 63}}, {{"oversubscription", "1:1"}}}}};
  const std::string html = render_report(doc, "whatif.json");
  CHECK(html.find("no completion times") != std::string::npos);
  CHECK(html.find("<svg") == std::string::npos);
  CHECK(count(between(html, "<table class=\"summary\">", "</table>"), "<tr><td>") == 2);
}

TEST_CASE("report: bad documents are InputErrors naming the source and the key") {
  auto err = [](const json& d) { return error_of([&] { render_report(d, "out/whatif.json"); }); };
  CHECK(err(json::array()) == "out/whatif.json: document: expected a JSON object, got array");
  CHECK(err(json::object()).find("neither \"rows\" (whatif.json) nor \"collectives\"") != std::string::npos);
  CHECK(err({{"rows", 3}}) == "out/whatif.json: rows: expected an array, got number");
  json d = small_whatif();
  d["rows"][1]["completion_us"]["p50"] = "fast";
  CHECK(err(d) == "out/whatif.json: rows[1].completion_us.p50: expected a number, got string");
  d = small_whatif();
  d["rows"][2].erase("ratio");
  d["rows"][2]["oversubscription"] = "2to1";
  CHECK(err(d).find("rows[2].oversubscription: expected \"A:B\"") != std::string::npos);
  d = small_whatif();
  d["rows"][0].erase("ratio");
  d["rows"][0].erase("oversubscription");
  CHECK(err(d) == "out/whatif.json: rows[0]: missing key \"ratio\" (or \"oversubscription\")");
  d = small_whatif();
  d["rows"][3]["samples_us"][2] = nullptr;
  CHECK(err(d) == "out/whatif.json: rows[3].samples_us[2]: expected a number, got null");
  d = small_whatif();
  d["rows"][4]["links"]["by_tier"][1].erase("tier");
  CHECK(err(d) == "out/whatif.json: rows[4].links.by_tier[1]: missing key \"tier\"");
  d = small_whatif();
  d["rows"][5] = d["rows"][4];
  CHECK(err(d).find("same job, op, size, ranks, ratio and routing as rows[4]") != std::string::npos);
  d = small_whatif();
  d["rows"][0]["ratio"] = -2;
  CHECK(err(d).find("rows[0].ratio: must be positive") != std::string::npos);
  CHECK(error_of([] {
          render_report({{"collectives", {{{"size_bytes", "1M"}}}}}, "r.json");
        }) == "r.json: collectives[0].size_bytes: expected a number, got string");
}

TEST_CASE("report: loader prefers whatif.json, falls back to results.json, names bad files") {
  const auto dir = ibn::test::scratch_dir("report_loader");
  CHECK(error_of([&] { load_report_input((dir / "missing").string()); }).find("no such folder or file") !=
        std::string::npos);
  CHECK(error_of([&] { load_report_input(dir.string()); }) ==
        dir.string() + ": none of plan.json, whatif.json, results.json or points/ (a sweep) in this folder");
  std::ofstream(dir / "results.json") << R"({"collectives": []})";
  auto in = load_report_input(dir.string());
  CHECK(in.path == (dir / "results.json").string());
  std::ofstream(dir / "whatif.json") << "{\n  \"rows\": [\n    {\"ratio\": 2,}\n  ]\n}\n";
  const std::string e = error_of([&] { load_report_input(dir.string()); });
  INFO(e);
  CHECK(e.find((dir / "whatif.json").string() + ":3:") == 0); // file:line:col
  CHECK(e.find(": invalid JSON") != std::string::npos);
  std::ofstream(dir / "whatif.json") << small_whatif().dump();
  in = load_report_input(dir.string());
  CHECK(in.path == (dir / "whatif.json").string());
  CHECK(load_report_input((dir / "results.json").string()).doc == json::parse(R"({"collectives": []})"));
}

TEST_CASE("report: `ibnetsim report` writes the rendered page, bad input exits 2 naming the file") {
  const auto dir = ibn::test::scratch_dir("report_cli");
  const json doc = small_whatif();
  std::ofstream(dir / "whatif.json") << doc.dump(2);
  auto r = ibn::test::run_cli("report " + dir.string() + " -o " + (dir / "r.html").string());
  CHECK(r.code == 0);
  CHECK(ibn::test::read_text_file((dir / "r.html").string()) == render_report(doc));
  r = ibn::test::run_cli("report " + dir.string());
  CHECK(r.code == 0);
  CHECK(ibn::test::read_text_file((dir / "report.html").string()) == render_report(doc));
  r = ibn::test::run_cli("report " + dir.string() + " -o -");
  CHECK(r.out.find("<!DOCTYPE html>") == 0);
  std::ofstream(dir / "whatif.json") << R"({"rows": [{"ratio": "two"}]})";
  r = ibn::test::run_cli("report " + dir.string() + " -o " + (dir / "bad.html").string());
  CHECK(r.code == 2);
  CHECK(r.out.find((dir / "whatif.json").string() + ": rows[0].ratio: expected a number, got string") !=
        std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "bad.html"));
}

TEST_CASE("report: the configuration reads as key/value text, the engine that ran shown once") {
  json doc = small_whatif();
  doc["manifest"]["engine"] = "flow";
  doc["manifest"]["config"]["engine"] = "packet";
  doc["manifest"]["config"]["jobs"] = json::array({{{"name", "train"}, {"workload", {{"sizes", {"1M", "4M"}}}}}});
  const std::string html = render_report(doc, "whatif.json");
  const std::string config = between(html, "<h2>Configuration</h2>", "</section>");
  CHECK(count(config, "<td>engine</td>") == 1);
  CHECK(config.find("<td>engine</td><td>flow (the scenario&#39;s engine key says packet") != std::string::npos);
  CHECK(config.find("<td>jobs[0].workload.sizes</td><td>1M, 4M</td>") != std::string::npos);
  CHECK(config.find("&quot;") == std::string::npos); // no JSON text anywhere in the configuration
  CHECK(config.find('{') == std::string::npos);
}

TEST_CASE("report: a sweep folder (points/*/results.json) renders as a study over the varied ratio") {
  const auto dir = std::filesystem::temp_directory_path() / "ibnetsim-report-sweep";
  std::filesystem::remove_all(dir);
  for (const auto& [id, ratio, scale] : {std::tuple{"a", "1:1", 1.0}, std::tuple{"b", "2:1", 1.5}}) {
    std::filesystem::create_directories(dir / "points" / id);
    json samples = json::array();
    for (int k = 0; k < 10; ++k) samples.push_back(scale * (100 + k));
    json r = {{"manifest",
               {{"version", "t"}, {"engine", "packet"}, {"seed", 1},
                {"config", {{"fabric", {{"params", {{"oversubscription", ratio}}}}}, {"routing", {{"adaptive", "off"}}}}}}},
              {"collectives",
               {{{"name", "train/allreduce/1048576"}, {"job", "train"}, {"op", "allreduce"}, {"size_bytes", 1048576},
                 {"ranks", 16}, {"iterations", 10}, {"completion_us", {{"p50", scale * 104}, {"p99", scale * 109}}},
                 {"samples_us", samples}}}}};
    std::ofstream(dir / "points" / id / "results.json") << r.dump();
  }
  const auto in = load_report_input(dir.string());
  CHECK(in.doc.at("rows").size() == 2);
  const auto html = render_report(in.doc, in.path);
  CHECK(html.find("2:1 costs +50.0 % p99 at 1MiB allreduce on 16 ranks against 1:1 (static routing)") !=
        std::string::npos);
}
