// HTML report renderer. See report.hpp for the contract and docs/report.md for how to read the plots.
//
// Layout: input checking (Checker) -> plain structs (Row, TierRow) -> the sections of the page (plot
// primitives: report_html.hpp). Every number that reaches the page goes through fixed() or num(),
// which use std::to_chars (locale-independent, same bytes on every run).
#include "analysis/report.hpp"

#include "analysis/plan.hpp"
#include "analysis/report_html.hpp"
#include "analysis/tail_stats.hpp"

#include "sim/error.hpp"
#include "sim/units.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>
#include <vector>

namespace ibn::analysis {
namespace {

using nlohmann::json;
using namespace html;

// ---------------------------------------------------------------------------------------------------------
// Input checking

const char* type_name(const json& v) {
  return v.type_name();
}

/// "rows[3]" + "ratio" -> "rows[3].ratio"; at the top level the key alone.
std::string join(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

class Checker {
 public:
  explicit Checker(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& msg) const {
    throw InputError(source_ + ": " + path + ": " + msg);
  }

  /// The member `key` of object `obj` (at `path`), or nullptr when absent or null.
  const json* find(const json& obj, const std::string& key) const {
    const auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return nullptr;
    return &*it;
  }

  std::optional<double> number(const json& obj, const std::string& path, const std::string& key) const {
    const json* v = find(obj, key);
    if (!v) return std::nullopt;
    if (!v->is_number()) fail(join(path, key), std::string("expected a number, got ") + type_name(*v));
    return v->get<double>();
  }

  std::optional<std::string> string(const json& obj, const std::string& path, const std::string& key) const {
    const json* v = find(obj, key);
    if (!v) return std::nullopt;
    if (!v->is_string()) fail(join(path, key), std::string("expected a string, got ") + type_name(*v));
    return v->get<std::string>();
  }

  /// `key` as an object (nullptr when absent); present but not an object -> error.
  const json* object(const json& obj, const std::string& path, const std::string& key) const {
    const json* v = find(obj, key);
    if (v && !v->is_object()) fail(join(path, key), std::string("expected an object, got ") + type_name(*v));
    return v;
  }

  const json* array(const json& obj, const std::string& path, const std::string& key) const {
    const json* v = find(obj, key);
    if (v && !v->is_array()) fail(join(path, key), std::string("expected an array, got ") + type_name(*v));
    return v;
  }

  const std::string& source() const { return source_; }

 private:
  std::string source_;
};

/// A distribution summary: completion_us, busbw_gbps or algbw_gbps. Keys absent in the input are absent here.
using Stats = std::map<std::string, double>;

std::optional<double> stat(const Stats& s, const std::string& key) {
  const auto it = s.find(key);
  if (it == s.end()) return std::nullopt;
  return it->second;
}

Stats read_stats(const Checker& c, const json& obj, const std::string& path, const std::string& key) {
  Stats s;
  const json* o = c.object(obj, path, key);
  if (!o) return s;
  for (const auto& [k, v] : o->items()) {
    // completion_us.ci and .unsupported (results.hpp completion_json) are derived from the samples, which the
    // report reads itself (quantile_of); they are not numbers.
    if (v.is_null() || k == "ci" || k == "unsupported") continue;
    if (!v.is_number())
      c.fail(join(path, key) + "." + k, std::string("expected a number, got ") + type_name(v));
    s[k] = v.get<double>();
  }
  return s;
}

struct TierRow {
  std::string tier;
  std::optional<double> links, util_mean, util_max, queue_max_bytes, ecn_marks, stall_us, pause_us;
};

std::vector<TierRow> read_tiers(const Checker& c, const json& obj, const std::string& path) {
  std::vector<TierRow> out;
  const json* links = c.object(obj, path, "links");
  if (!links) return out;
  const std::string lp = join(path, "links");
  const json* by_tier = c.array(*links, lp, "by_tier");
  if (!by_tier) return out;
  for (std::size_t i = 0; i < by_tier->size(); ++i) {
    const std::string tp = lp + ".by_tier[" + std::to_string(i) + "]";
    const json& t = (*by_tier)[i];
    if (!t.is_object()) c.fail(tp, std::string("expected an object, got ") + type_name(t));
    TierRow r;
    const auto name = c.string(t, tp, "tier");
    if (!name) c.fail(tp, "missing key \"tier\"");
    r.tier = *name;
    r.links = c.number(t, tp, "links");
    r.util_mean = c.number(t, tp, "util_mean");
    r.util_max = c.number(t, tp, "util_max");
    r.queue_max_bytes = c.number(t, tp, "queue_max_bytes");
    r.ecn_marks = c.number(t, tp, "ecn_marks");
    r.stall_us = c.number(t, tp, "stall_us");
    r.pause_us = c.number(t, tp, "pause_us");
    out.push_back(std::move(r));
  }
  return out;
}

/// One whatif row or one results collective.
struct Row {
  std::string path; ///< "rows[3]" — for error messages
  double ratio = 0;
  std::string ratio_label; ///< "2:1"
  std::string routing, cc, op, name, job, algorithm;
  std::optional<double> size_bytes, ranks, iterations;
  Stats completion, busbw, algbw;
  std::vector<double> samples;
  std::vector<TierRow> tiers;
  std::string
      variant;        ///< routing, plus the cc algorithm when the document has several, plus the faults token
  std::string faults; ///< whatif --faults token ("" without that dimension)
  bool background = false; ///< a results.json collective that loops as background traffic
};

void read_common(const Checker& c, const json& r, Row& row) {
  const auto& p = row.path;
  row.op = c.string(r, p, "op").value_or("");
  row.name = c.string(r, p, "name").value_or("");
  row.algorithm = c.string(r, p, "algorithm").value_or("");
  if (const json* j = c.find(r, "job")) row.job = j->is_string() ? j->get<std::string>() : j->dump();
  if (const json* b = c.find(r, "background")) {
    if (!b->is_boolean()) c.fail(p + ".background", std::string("expected a boolean, got ") + type_name(*b));
    row.background = b->get<bool>();
  }
  row.size_bytes = c.number(r, p, "size_bytes");
  row.ranks = c.number(r, p, "ranks");
  row.iterations = c.number(r, p, "iterations");
  row.completion = read_stats(c, r, p, "completion_us");
  row.busbw = read_stats(c, r, p, "busbw_gbps");
  row.algbw = read_stats(c, r, p, "algbw_gbps");
  if (const json* s = c.array(r, p, "samples_us")) {
    row.samples.reserve(s->size());
    for (std::size_t i = 0; i < s->size(); ++i) {
      const json& v = (*s)[i];
      if (!v.is_number())
        c.fail(p + ".samples_us[" + std::to_string(i) + "]",
               std::string("expected a number, got ") + type_name(v));
      row.samples.push_back(v.get<double>());
    }
    std::sort(row.samples.begin(), row.samples.end());
  }
  row.tiers = read_tiers(c, r, p);
}

std::vector<Row> read_whatif_rows(const Checker& c, const json& doc) {
  const json* rows = c.array(doc, "", "rows");
  std::vector<Row> out;
  std::set<std::string> ccs;
  for (std::size_t i = 0; i < rows->size(); ++i) {
    const json& r = (*rows)[i];
    Row row;
    row.path = "rows[" + std::to_string(i) + "]";
    if (!r.is_object()) c.fail(row.path, std::string("expected an object, got ") + type_name(r));
    const auto label = c.string(r, row.path, "oversubscription");
    const auto ratio = c.number(r, row.path, "ratio");
    if (ratio) {
      if (!(*ratio > 0)) c.fail(row.path + ".ratio", "must be positive, got " + num(*ratio));
      row.ratio = *ratio;
    } else if (label) {
      const auto parsed = ratio_value(*label);
      if (!parsed)
        c.fail(row.path + ".oversubscription",
               "expected \"A:B\" with positive A and B, got \"" + *label + "\"");
      row.ratio = *parsed;
    } else {
      c.fail(row.path, "missing key \"ratio\" (or \"oversubscription\")");
    }
    row.ratio_label = label ? *label : num(row.ratio) + ":1";
    row.routing = c.string(r, row.path, "routing").value_or("default");
    row.cc = c.string(r, row.path, "cc").value_or("");
    row.faults = c.string(r, row.path, "faults").value_or(""); // whatif --faults: part of the variant
    read_common(c, r, row);
    ccs.insert(row.cc);
    out.push_back(std::move(row));
  }
  for (auto& row : out) {
    row.variant = ccs.size() > 1 ? row.routing + " cc=" + row.cc : row.routing;
    if (!row.faults.empty()) row.variant += " faults=" + row.faults;
  }
  return out;
}

/// The configuration, last on the page, as readable key/value rows: the engine that ran, version and seed
/// first, then every effective scenario key flattened ("jobs[0].workload.sizes: 1MiB, 4MiB"). A scenario
/// `engine` key that differs from the engine that ran (overridden on the command line) is shown once, as a
/// note on the engine row, never as a second contradicting row.
std::string config_section(const Checker& c, const json& doc) {
  std::string out = "<section class=\"config\">\n<h2>Configuration</h2>\n";
  const json* m = c.object(doc, "", "manifest");
  if (!m) return out + "<p class=\"note\">No manifest in the input.</p>\n</section>\n";
  std::vector<std::pair<std::string, std::string>> rows;
  const std::string ran = c.string(*m, "manifest", "engine").value_or("");
  std::string asked;
  if (const json* cfg = c.object(*m, "manifest", "config"))
    if (const json* e = c.find(*cfg, "engine"); e && e->is_string()) asked = e->get<std::string>();
  if (!ran.empty())
    rows.emplace_back("engine",
                      ran + (!asked.empty() && asked != ran ? " (the scenario's engine key says " + asked +
                                                                  "; the command line chose " + ran + ")"
                                                            : ""));
  for (const char* key : {"version", "seed", "scenario", "source"})
    if (const json* v = c.find(*m, key))
      rows.emplace_back(key, v->is_string() ? v->get<std::string>() : v->dump());
  for (const auto& [k, v] : m->items()) {
    if (k == "version" || k == "engine" || k == "seed" || k == "scenario" || k == "source" || k == "points")
      continue;
    if (k == "config" && v.is_object()) {
      // A key the manifest also carries at its top level (calibration, packet: what was in effect, the
      // profile's values included) is shown once, from there; the page had both, "(none)" above the values.
      for (const auto& [ck, cv] : v.items())
        if (ck != "engine" && !m->contains(ck)) flatten(cv, ck, rows);
      continue;
    }
    flatten(v, k, rows);
  }
  // What the run itself warned about (results.json's top-level warnings: a QP out of retries, the run's
  // time limit): the page said "warnings (none)" beside a run that had stopped early.
  if (const json* w = c.find(doc, "warnings"); w && w->is_array() && !w->empty())
    flatten(*w, "warnings of the run", rows);
  if (m->contains("points"))
    rows.emplace_back("points", std::to_string((*m)["points"].size()) +
                                    " (each point's overrides: whatif.json manifest.points)");
  out += "<p class=\"note\">The effective configuration every point started from; keys as in "
         "docs/scenarios.md.</p>\n";
  out += kv_table(rows, "manifest");
  out += "</section>\n";
  return out;
}

/// Level of a tier end: hca/host 0, leaf 1, spine 2, core 3, "tierN" N; -1 when unknown.
int level_of(const std::string& t) {
  if (t == "hca" || t == "host") return 0;
  if (t == "leaf") return 1;
  if (t == "spine") return 2;
  if (t == "core") return 3;
  if (t.size() > 4 && t.compare(0, 4, "tier") == 0 &&
      t.find_first_not_of("0123456789", 4) == std::string::npos)
    return std::stoi(t.substr(4));
  return -1;
}

/// Sort key of a tier name such as "hca->leaf", "leaf->hca" or "leaf-spine": bottom of the fabric first, the
/// upward direction before the downward one; names that are not two known levels come last (then by name).
std::tuple<int, int, int, std::string> tier_order(const std::string& t) {
  std::size_t sep = t.find("->");
  std::size_t len = 2;
  if (sep == std::string::npos) sep = t.find('-'), len = 1;
  if (sep != std::string::npos) {
    const int a = level_of(t.substr(0, sep));
    const int b = level_of(t.substr(sep + len));
    if (a >= 0 && b >= 0) return {std::min(a, b), std::max(a, b), a > b ? 1 : 0, t};
  }
  return {1 << 20, 0, 0, t};
}

std::vector<std::string> sorted_tiers(const std::vector<const Row*>& rows) {
  std::set<std::string> names;
  for (const Row* r : rows)
    for (const auto& t : r->tiers) names.insert(t.tier);
  std::vector<std::string> v(names.begin(), names.end());
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return tier_order(a) < tier_order(b); });
  return v;
}

std::string link_tier_table(const std::vector<TierRow>& tiers) {
  std::string out =
      "<table class=\"links\">\n<tr><th>tier</th><th>links</th><th>util mean</th><th>util max</th>"
      "<th>max queue (bytes)</th><th>ECN marks</th><th>credit stall (&#181;s)</th>"
      "<th>PFC pause (&#181;s)</th></tr>\n";
  for (const auto& t : tiers) {
    out += "<tr><td>" + esc(t.tier) + "</td>";
    for (const auto& v :
         {t.links, t.util_mean, t.util_max, t.queue_max_bytes, t.ecn_marks, t.stall_us, t.pause_us})
      out += "<td class=\"n\">" + num(v) + "</td>";
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

/// Heat map: one row per (ratio, variant), one column per tier, colour = util_mean, text = util_mean.
std::string heat_map(const std::vector<const Row*>& rows, const std::string& title) {
  const auto tiers = sorted_tiers(rows);
  if (tiers.empty()) return "<p class=\"note\">No link statistics in these rows.</p>\n";
  double scale = 1.0; // utilization is a fraction of link capacity; the scale grows if the input exceeds 1
  for (const Row* r : rows)
    for (const auto& t : r->tiers)
      if (t.util_mean && std::isfinite(*t.util_mean)) scale = std::max(scale, *t.util_mean);
  const double label_w = 170, cell_w = 112, cell_h = 30, top = 58, bar_w = 18, bar_gap = 34;
  const double grid_w = cell_w * static_cast<double>(tiers.size());
  const double width = label_w + grid_w + bar_gap + bar_w + 60;
  const double height = std::max(top + cell_h * static_cast<double>(rows.size()) + 14, top + 130.0);
  std::ostringstream s;
  s << "<svg class=\"plot heat-plot\" width=\"" << px(width) << "\" height=\"" << px(height)
    << "\" viewBox=\"0 0 " << px(width) << " " << px(height) << "\" role=\"img\" aria-label=\"" << esc(title)
    << "\">\n<title>" << esc(title) << "</title>\n";
  s << "<text class=\"plot-title\" x=\"4\" y=\"18\">" << esc(title) << "</text>\n";
  s << "<text class=\"heat-head\" x=\"4\" y=\"" << px(top - 10) << "\">ratio, routing</text>\n";
  for (std::size_t j = 0; j < tiers.size(); ++j)
    s << "<text class=\"heat-head\" text-anchor=\"middle\" x=\"" << px(label_w + cell_w * (j + 0.5))
      << "\" y=\"" << px(top - 10) << "\">" << esc(tiers[j]) << "</text>\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = *rows[i];
    const double y = top + cell_h * static_cast<double>(i);
    const std::string row_label = r.ratio_label + ", " + r.variant;
    s << "<text class=\"heat-head\" x=\"4\" y=\"" << px(y + cell_h / 2 + 4) << "\">" << esc(row_label)
      << "</text>\n";
    for (std::size_t j = 0; j < tiers.size(); ++j) {
      const double x = label_w + cell_w * static_cast<double>(j);
      const auto it =
          std::find_if(r.tiers.begin(), r.tiers.end(), [&](const TierRow& t) { return t.tier == tiers[j]; });
      std::optional<double> u;
      if (it != r.tiers.end()) u = it->util_mean;
      std::string fill = "#dddddd", text_fill = "#222", text = "&#8212;", value = "";
      if (u) {
        const Rgb c = viridis(*u / scale);
        fill = hex(c);
        text_fill = luminance(c) < 0.5 ? "#ffffff" : "#000000";
        text = fixed(*u, 3);
        value = fixed(*u, 6);
      }
      s << "<rect class=\"heat\" data-row=\"" << esc(row_label) << "\" data-tier=\"" << esc(tiers[j])
        << "\" data-value=\"" << value << "\" x=\"" << px(x) << "\" y=\"" << px(y) << "\" width=\""
        << px(cell_w - 2) << "\" height=\"" << px(cell_h - 2) << "\" fill=\"" << fill << "\"><title>"
        << esc(row_label) << ", " << esc(tiers[j]) << ": util_mean "
        << (u ? fixed(u.value(), 4) : std::string("missing"));
      if (it != r.tiers.end() && it->util_max) s << ", util_max " << fixed(*it->util_max, 4);
      s << "</title></rect>";
      s << "<text class=\"heat-text\" x=\"" << px(x + (cell_w - 2) / 2) << "\" y=\"" << px(y + cell_h / 2 + 3)
        << "\" fill=\"" << text_fill << "\">" << text << "</text>\n";
    }
  }
  // Colour bar: 0 at the bottom, `scale` at the top.
  const double bx = label_w + grid_w + bar_gap, by = top, bh = 110;
  constexpr int kBarSteps = 20;
  for (int k = 0; k < kBarSteps; ++k) {
    const double t0 = static_cast<double>(k) / kBarSteps;
    s << "<rect x=\"" << px(bx) << "\" y=\"" << px(by + bh * (1 - t0 - 1.0 / kBarSteps)) << "\" width=\""
      << px(bar_w) << "\" height=\"" << px(bh / kBarSteps + 0.5) << "\" fill=\""
      << hex(viridis(t0 + 0.5 / kBarSteps)) << "\"/>";
  }
  s << "\n<rect class=\"frame\" x=\"" << px(bx) << "\" y=\"" << px(by) << "\" width=\"" << px(bar_w)
    << "\" height=\"" << px(bh) << "\"/>\n";
  for (const double t : {0.0, 0.5, 1.0})
    s << "<text class=\"tick\" x=\"" << px(bx + bar_w + 4) << "\" y=\"" << px(by + bh * (1 - t) + 4) << "\">"
      << fixed(t * scale, 2) << "</text>\n";
  s << "<text class=\"tick\" x=\"" << px(bx - 6) << "\" y=\"" << px(by - 10) << "\">util_mean</text>\n";
  s << "</svg>\n";
  return s.str();
}

std::string size_text(const std::optional<double>& b) {
  if (!b) return "&#8212;";
  if (*b >= 0 && *b == std::floor(*b) && *b < 1.8e19) return esc(format_size(static_cast<std::uint64_t>(*b)));
  return num(*b);
}

std::string stats_cells(const Row& r) {
  std::string out;
  for (const char* k : {"p50", "p90", "p99", "p999", "max", "mean"})
    out += "<td class=\"n\">" + num(stat(r.completion, k)) + "</td>";
  out += "<td class=\"n\">" + num(stat(r.algbw, "p50")) + "</td><td class=\"n\">" +
         num(stat(r.busbw, "p50")) + "</td>";
  return out;
}

constexpr const char* kStatsHeader =
    "<th>p50 (&#181;s)</th><th>p90 (&#181;s)</th><th>p99 (&#181;s)</th><th>p99.9 (&#181;s)</th>"
    "<th>max (&#181;s)</th><th>mean (&#181;s)</th><th>algbw p50 (Gb/s)</th><th>busbw p50 (Gb/s)</th>";

/// The key rows are grouped by: one section per (job, op, size, ranks).
using GroupKey = std::tuple<std::string, std::string, double, double>;

GroupKey group_key(const Row& r) {
  return {r.job, r.op, r.size_bytes.value_or(-1), r.ranks.value_or(-1)};
}

std::string group_title(const Row& r) {
  std::string t = r.job.empty() ? "" : r.job + ": ";
  t += r.op.empty() ? "collective" : r.op;
  if (r.size_bytes) t += ", " + std::string(size_text(r.size_bytes));
  if (r.ranks) t += ", " + num(*r.ranks) + " ranks";
  return t;
}

/// p50/p99 with their 95 % order-statistic intervals (analysis/tail_stats.hpp quantile_ci) from a row's
/// samples.
struct Quantile {
  std::optional<double> value, lo, hi;
};
Quantile quantile_of(const Row& r, const char* key, double q) {
  Quantile out;
  out.value = stat(r.completion, key);
  if (!r.samples.empty()) {
    const auto [lo, hi] = quantile_ci(r.samples, q);
    if (std::isfinite(lo)) out.lo = lo;
    if (std::isfinite(hi)) out.hi = hi;
  }
  return out;
}

std::string ci_text(const Quantile& q) {
  if (!q.lo) return "&#8212;";
  return num(*q.lo) + " &#8211; " + (q.hi ? num(*q.hi) : std::string("open (too few samples)"));
}

std::string pct_text(double v) {
  return (v >= 0 ? "+" : "&#8722;") + fixed(std::fabs(v), 1) + " %";
}

/// The headline of a what-if study and the key table under it: for the largest size measured, p99 at each
/// ratio against the lowest ratio (same routing), with the 95 % CI of every p99.
std::string whatif_headline(const std::vector<Row>& rows) {
  const Row* big = nullptr;
  for (const auto& r : rows)
    if (stat(r.completion, "p99") && (!big || r.size_bytes.value_or(0) > big->size_bytes.value_or(0)))
      big = &r;
  if (!big) return "<p class=\"headline\">No completion times in this study.</p>\n";
  const GroupKey key = group_key(*big);
  std::vector<const Row*> g;
  for (const auto& r : rows)
    if (group_key(r) == key && stat(r.completion, "p99")) g.push_back(&r);
  std::set<std::string> variants;
  for (const Row* r : g) variants.insert(r->variant);
  const std::string ref_variant = variants.count("static")               ? "static"
                                  : variants.count("static faults=none") ? "static faults=none"
                                                                         : *variants.begin();
  const Row* ref = nullptr;
  for (const Row* r : g)
    if (r->variant == ref_variant && (!ref || r->ratio < ref->ratio)) ref = r;
  const Row* worst = nullptr;
  for (const Row* r : g)
    if (r->variant == ref_variant && (!worst || r->ratio > worst->ratio)) worst = r;
  const double ref99 = *stat(ref->completion, "p99");
  std::string head;
  const std::string where = size_text(big->size_bytes) + " " + (big->op.empty() ? "" : big->op + " ") +
                            (big->ranks ? "on " + num(*big->ranks) + " ranks" : std::string());
  if (worst != ref) {
    const double d = 100.0 * (*stat(worst->completion, "p99") / ref99 - 1.0);
    head = esc(worst->ratio_label) + " costs " + pct_text(d) + " p99 at " + where + " against " +
           esc(ref->ratio_label) + " (" + esc(ref_variant) +
           " routing): " + num(*stat(worst->completion, "p99")) + " vs " + num(ref99) + " &#181;s.";
  } else {
    head = "p99 at " + where + ": " + num(ref99) + " &#181;s (" + esc(ref->ratio_label) + ", " +
           esc(ref_variant) + ").";
  }
  std::string sub;
  for (const auto& v : variants) {
    if (v == ref_variant) continue;
    const Row* same = nullptr;
    for (const Row* r : g)
      if (r->variant == v && r->ratio == (worst ? worst->ratio : ref->ratio)) same = r;
    if (same)
      sub +=
          esc(v) + " at " + esc(same->ratio_label) + ": p99 " + num(*stat(same->completion, "p99")) +
          " &#181;s (" +
          pct_text(100.0 *
                   (*stat(same->completion, "p99") / *stat((worst ? worst : ref)->completion, "p99") - 1.0)) +
          " against " + esc(ref_variant) + "). ";
  }
  std::string out = "<p class=\"headline\">" + head +
                    (sub.empty() ? "" : "<span class=\"sub\">" + sub + "</span>") + "</p>\n";
  out += "<table class=\"summary best\">\n<tr><th>oversubscription</th><th>routing</th><th>p50 (&#181;s)</th>"
         "<th>p99 (&#181;s)</th><th>p99 95 % CI (&#181;s)</th><th>p99 vs " +
         esc(ref->ratio_label) + "</th><th>busbw p50 (Gb/s)</th><th>samples</th></tr>\n";
  for (const Row* r : g) {
    const Row* base = nullptr;
    for (const Row* b : g)
      if (b->variant == r->variant && (!base || b->ratio < base->ratio)) base = b;
    const double d = 100.0 * (*stat(r->completion, "p99") / *stat(base->completion, "p99") - 1.0);
    out += "<tr><td>" + esc(r->ratio_label) + "</td><td>" + esc(r->variant) + "</td><td class=\"n\">" +
           num(stat(r->completion, "p50")) + "</td><td class=\"n\">" + num(stat(r->completion, "p99")) +
           "</td><td class=\"n\">" + ci_text(quantile_of(*r, "p99", 0.99)) + "</td><td class=\"n\">" +
           (base == r ? std::string("reference") : pct_text(d)) + "</td><td class=\"n\">" +
           num(stat(r->busbw, "p50")) + "</td><td class=\"n\">" + std::to_string(r->samples.size()) +
           "</td></tr>\n";
  }
  out += "</table>\n<p class=\"note\">" + esc(group_title(*big)) +
         ". Intervals: 95 % distribution-free (order statistics) from the measured iterations.</p>\n";
  return out;
}

std::string render_whatif(const Checker& c, const json& doc) {
  std::vector<Row> rows = read_whatif_rows(c, doc);
  // Ratios in numeric order, variants alphabetically: the report does not depend on the input's row order.
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return std::tuple(group_key(a), a.ratio, a.variant) < std::tuple(group_key(b), b.ratio, b.variant);
  });
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const Row& a = rows[i - 1];
    const Row& b = rows[i];
    if (group_key(a) == group_key(b) && a.ratio == b.ratio && a.variant == b.variant)
      c.fail(b.path, "same job, op, size, ranks, ratio and routing as " + a.path);
  }
  std::set<std::string> variant_set;
  std::map<double, std::string> ratio_labels;
  for (const auto& r : rows) {
    variant_set.insert(r.variant);
    ratio_labels.emplace(r.ratio, r.ratio_label);
  }
  const std::vector<std::string> variants(variant_set.begin(), variant_set.end());
  std::map<double, std::size_t> ratio_index;
  for (const auto& [ratio, label] : ratio_labels) ratio_index.emplace(ratio, ratio_index.size());
  auto variant_index = [&](const std::string& v) {
    return static_cast<std::size_t>(std::find(variants.begin(), variants.end(), v) - variants.begin());
  };
  std::vector<std::pair<double, std::string>> xticks(ratio_labels.begin(), ratio_labels.end());

  std::string out = page_open("ibnetsim what-if report");
  out += whatif_headline(rows);
  bool any_results = false;
  for (const auto& r : rows) any_results = any_results || !r.completion.empty() || !r.samples.empty();
  if (rows.empty())
    out += "<p class=\"note\">The study has no rows.</p>\n";
  else if (!any_results)
    out +=
        "<p class=\"note\">These rows carry no completion times (no traffic was simulated), so there are no "
        "plots; the summary table lists what the rows hold.</p>\n";

  std::map<GroupKey, std::vector<const Row*>> groups;
  std::vector<GroupKey> group_order;
  for (const auto& r : rows) {
    auto& g = groups[group_key(r)];
    if (g.empty()) group_order.push_back(group_key(r));
    g.push_back(&r);
  }
  for (const auto& key : group_order) {
    const auto& g = groups[key];
    bool has_samples = false, has_pct = false, has_busbw = false, has_tiers = false;
    for (const Row* r : g) {
      has_samples = has_samples || !r->samples.empty();
      has_pct = has_pct || !r->completion.empty();
      has_busbw = has_busbw || stat(r->busbw, "p50").has_value();
      has_tiers = has_tiers || !r->tiers.empty();
    }
    if (!has_samples && !has_pct && !has_busbw && !has_tiers) continue;
    const std::string title = group_title(*g.front());
    out += "<section class=\"group\">\n<h2>" + esc(title) + "</h2>\n";
    if (has_pct) {
      out +=
          "<h3>Completion time percentiles vs oversubscription</h3>\n<p class=\"note\">Bars: 95 % confidence "
          "intervals of p50 and p99 (order statistics of the measured iterations; none when too few).</p>\n"
          "<div class=\"row\">\n";
      Frame f;
      f.width = 430;
      f.height = 300;
      f.right = 110;
      for (const auto& [key_pct, name] : std::vector<std::pair<std::string, std::string>>{
               {"p50", "p50"}, {"p99", "p99"}, {"p999", "p99.9"}}) {
        std::vector<XySeries> series;
        for (const auto& v : variants) {
          XySeries s{
              v,
              Style{kColours[variant_index(v) % kColours.size()], kDashes[variant_index(v) % kDashes.size()]},
              {}};
          for (const Row* r : g)
            if (r->variant == v)
              if (const auto p = stat(r->completion, key_pct)) {
                XyPoint pt{r->ratio, *p, r->ratio_label + ": " + name + " " + num(*p) + " \xC2\xB5s", {}, {}};
                if (key_pct != "p999") {
                  const auto q = quantile_of(*r, key_pct.c_str(), key_pct == "p50" ? 0.5 : 0.99);
                  if (q.lo && q.hi) pt.err_lo = q.lo, pt.err_hi = q.hi;
                }
                s.points.push_back(std::move(pt));
              }
          series.push_back(std::move(s));
        }
        if (std::all_of(series.begin(), series.end(), [](const XySeries& x) { return x.points.empty(); }))
          continue;
        out += xy_plot(series, xticks, name + " completion time", name + " completion time (\xC2\xB5s)",
                       "pct pct-" + key_pct, true, f);
      }
      out += "</div>\n";
    }
    if (has_samples) {
      std::vector<CdfSeries> series;
      for (const Row* r : g)
        series.push_back({r->ratio_label + " " + r->variant,
                          Style{kColours[ratio_index[r->ratio] % kColours.size()],
                                kDashes[variant_index(r->variant) % kDashes.size()]},
                          &r->samples});
      out += "<h3>Completion time CDF</h3>\n";
      out += cdf_plot(series, "CDF of completion time, " + title, "ratio, routing");
    }
    if (has_busbw) {
      std::vector<XySeries> series;
      for (const auto& v : variants) {
        XySeries s{
            v,
            Style{kColours[variant_index(v) % kColours.size()], kDashes[variant_index(v) % kDashes.size()]},
            {}};
        for (const Row* r : g)
          if (r->variant == v)
            if (const auto p = stat(r->busbw, "p50"))
              s.points.push_back({r->ratio, *p, r->ratio_label + ": busbw p50 " + num(*p) + " Gb/s", {}, {}});
        series.push_back(std::move(s));
      }
      Frame f;
      f.width = 560;
      f.height = 320;
      f.right = 120;
      out += "<h3>Bus bandwidth vs oversubscription</h3>\n";
      out += xy_plot(series, xticks, "p50 bus bandwidth, " + title, "busbw p50 (Gb/s)", "busbw", false, f);
    }
    out += "</section>\n";
  }
  // Link statistics cover a point's whole run (every size of every job), so they are shown once per point,
  // not repeated under each size with the same numbers.
  {
    std::vector<const Row*> per_point;
    std::set<std::pair<std::string, std::string>> seen;
    for (const auto& r : rows)
      if (!r.tiers.empty() && seen.insert({r.ratio_label, r.variant}).second) per_point.push_back(&r);
    if (!per_point.empty()) {
      out +=
          "<section class=\"links\">\n<h2>Link utilization per point</h2>\n<p class=\"note\">Mean "
          "utilization "
          "of each tier's links over the point's whole run (all sizes and jobs together): the engines record "
          "link statistics per run, not per collective size.</p>\n";
      out += heat_map(per_point, "Mean link utilization by tier and point");
      out += "</section>\n";
    }
  }

  out += "<section class=\"summary\">\n<h2>All rows</h2>\n<table "
         "class=\"summary\">\n<tr><th>oversubscription</th>"
         "<th>routing</th><th>cc</th><th>job</th><th>op</th><th>size</th><th>ranks</th><th>iterations</th>";
  out += kStatsHeader;
  out += "</tr>\n";
  for (const auto& r : rows) {
    out += "<tr><td>" + esc(r.ratio_label) + "</td><td>" + esc(r.routing) + "</td><td>" + esc(r.cc) +
           "</td><td>" + esc(r.job) + "</td><td>" + esc(r.op) + "</td><td class=\"n\">" +
           size_text(r.size_bytes) + "</td><td class=\"n\">" + num(r.ranks) + "</td><td class=\"n\">" +
           num(r.iterations) + "</td>" + stats_cells(r) + "</tr>\n";
  }
  out += "</table>\n</section>\n";
  out += config_section(c, doc);
  return out;
}

std::string render_results(const Checker& c, const json& doc) {
  const json* cols = c.array(doc, "", "collectives");
  std::vector<Row> rows;
  for (std::size_t i = 0; i < cols->size(); ++i) {
    const json& j = (*cols)[i];
    Row r;
    r.path = "collectives[" + std::to_string(i) + "]";
    if (!j.is_object()) c.fail(r.path, std::string("expected an object, got ") + type_name(j));
    read_common(c, j, r);
    rows.push_back(std::move(r));
  }
  std::vector<TierRow> tiers = read_tiers(c, doc, "");
  std::stable_sort(tiers.begin(), tiers.end(), [](const TierRow& a, const TierRow& b) {
    return tier_order(a.tier) < tier_order(b.tier);
  });

  std::string out = page_open("ibnetsim run report");
  // Headline: the largest measured (non-background) collective of each job.
  {
    std::map<std::string, const Row*> largest;
    for (const auto& r : rows)
      if (!r.background && stat(r.completion, "p99") &&
          (!largest[r.job] || r.size_bytes.value_or(0) > largest[r.job]->size_bytes.value_or(0)))
        largest[r.job] = &r;
    std::string head;
    for (const auto& [job, r] : largest) {
      if (!r) continue;
      const auto q = quantile_of(*r, "p99", 0.99);
      head += (head.empty() ? "" : "<br>") + esc(group_title(*r)) + ": p50 " +
              num(stat(r->completion, "p50")) + " &#181;s, p99 " + num(stat(r->completion, "p99")) +
              " &#181;s" + (q.lo ? " (95 % CI " + ci_text(q) + ")" : std::string()) + ", busbw p50 " +
              num(stat(r->busbw, "p50")) + " Gb/s";
    }
    std::string engine;
    if (const json* m = c.object(doc, "", "manifest"))
      engine = c.string(*m, "manifest", "engine").value_or("");
    out += "<p class=\"headline\">" +
           (head.empty() ? std::string("No measured collectives in this run.") : head) +
           (engine.empty() ? "" : "<span class=\"sub\">" + esc(engine) + " engine</span>") + "</p>\n";
  }
  out += "<section class=\"collectives\">\n<h2>Collectives</h2>\n<table class=\"summary\">\n<tr><th>name</th>"
         "<th>job</th><th>op</th><th>algorithm</th><th>size</th><th>ranks</th><th>iterations</th>";
  out += kStatsHeader;
  out += "</tr>\n";
  for (const auto& r : rows)
    out += "<tr><td>" + esc(r.name) + (r.background ? " (background)" : "") + "</td><td>" + esc(r.job) +
           "</td><td>" + esc(r.op) + "</td><td>" + esc(r.algorithm) + "</td><td class=\"n\">" +
           size_text(r.size_bytes) + "</td><td class=\"n\">" + num(r.ranks) + "</td><td class=\"n\">" +
           num(r.iterations) + "</td>" + stats_cells(r) + "</tr>\n";
  out += "</table>\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    if (r.samples.empty()) continue;
    const std::string label = r.name.empty() ? group_title(r) : r.name;
    out += "<h3>" + esc(label) + "</h3>\n";
    out += cdf_plot({{label, Style{kColours[i % kColours.size()], ""}, &r.samples}},
                    "CDF of completion time, " + label, "collective");
  }
  out += "</section>\n<section class=\"links\">\n<h2>Links by tier</h2>\n";
  out += tiers.empty() ? "<p class=\"note\">No link statistics in the input.</p>\n" : link_tier_table(tiers);
  out += "</section>\n";
  if (const json* e = c.object(doc, "", "engine")) {
    out += "<section class=\"engine\">\n<h2>Engine</h2>\n<table class=\"kv engine\">\n";
    // wall_s and events_per_s: results of builds before 2026-12-07 (later ones write no wall-clock figure).
    for (const char* k : {"events", "transfers", "simulated_us", "wall_s", "events_per_s"})
      if (e->contains(k))
        out += std::string("<tr><td>") + k + "</td><td class=\"n\">" + num(c.number(*e, "engine", k)) +
               "</td></tr>\n";
    out += "</table>\n</section>\n";
  }
  out += config_section(c, doc);
  return out;
}

} // namespace

std::string render_report(const json& doc, const std::string& source) {
  const Checker c(source);
  if (!doc.is_object()) c.fail("document", std::string("expected a JSON object, got ") + type_name(doc));
  std::string body;
  if (doc.contains("designs") && doc.contains("recommendation")) return render_plan_report(doc, source);
  if (doc.contains("rows"))
    body = render_whatif(c, doc);
  else if (doc.contains("collectives"))
    body = render_results(c, doc);
  else
    c.fail("document", "neither \"rows\" (whatif.json) nor \"collectives\" (results.json)");
  std::string version;
  if (const json* m = c.object(doc, "", "manifest"))
    version = c.string(*m, "manifest", "version").value_or("");
  body += "<footer><p class=\"note\">Generated by ibnetsim report" +
          (version.empty() ? "" : " from a " + esc(version) + " run") +
          ". Times in &#181;s, bandwidths in Gb/s, utilization as a fraction of link capacity.</p></footer>\n"
          "</body>\n</html>\n";
  return body;
}

} // namespace ibn::analysis
