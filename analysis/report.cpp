// HTML report renderer. See report.hpp for the contract and docs/report.md for how to read the plots.
//
// Layout: input checking (Checker) -> plain structs (Row, TierRow) -> SVG plot primitives (Axis, Frame,
// legend) -> the sections of the page. Every number that reaches the page goes through fixed() or num(),
// which use std::to_chars (locale-independent, same bytes on every run).
#include "analysis/report.hpp"

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

// ---------------------------------------------------------------------------------------------------------
// Formatting

/// `v` with exactly `decimals` decimals; "-0.00" is written "0.00". Non-finite -> "nan".
std::string fixed(double v, int decimals) {
  if (!std::isfinite(v)) return "nan";
  std::array<char, 400> buf{};
  const auto r = std::to_chars(buf.data(), buf.data() + buf.size(), v, std::chars_format::fixed, decimals);
  if (r.ec != std::errc{}) return "nan";
  std::string s(buf.data(), r.ptr);
  if (s[0] == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);
  return s;
}

/// A measured value for a table: whole numbers without decimals, else about 3-4 significant digits.
std::string num(double v) {
  if (!std::isfinite(v)) return "nan";
  const double a = std::fabs(v);
  if (a < 1e15 && v == std::floor(v)) return fixed(v, 0);
  if (a >= 1000) return fixed(v, 0);
  if (a >= 100) return fixed(v, 1);
  if (a >= 10) return fixed(v, 2);
  if (a >= 0.1) return fixed(v, 3);
  // Small values keep 3 significant digits (a utilization of 0.000123 must not print as 0.000).
  return fixed(v, std::min(9, 2 - static_cast<int>(std::floor(std::log10(a)))));
}

std::string num(const std::optional<double>& v) {
  return v ? num(*v) : "&#8212;";
}

/// Escapes text for HTML element content and attribute values.
std::string esc(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&#39;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

std::string px(double v) {
  return fixed(v, 2);
}

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
    if (v.is_null()) continue;
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
  std::string variant;     ///< routing, plus the cc algorithm when the document has several
  bool background = false; ///< a results.json collective that loops as background traffic
};

/// "A:B" -> A/B, or nullopt when the text is not two positive numbers around a colon.
std::optional<double> parse_ratio(const std::string& s) {
  const auto colon = s.find(':');
  if (colon == std::string::npos) return std::nullopt;
  double a = 0, b = 0;
  const char* p = s.data();
  const auto ra = std::from_chars(p, p + colon, a);
  const auto rb = std::from_chars(p + colon + 1, p + s.size(), b);
  if (ra.ec != std::errc{} || ra.ptr != p + colon || rb.ec != std::errc{} || rb.ptr != p + s.size())
    return {};
  if (!(a > 0) || !(b > 0)) return std::nullopt;
  return a / b;
}

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
      const auto parsed = parse_ratio(*label);
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
    read_common(c, r, row);
    ccs.insert(row.cc);
    out.push_back(std::move(row));
  }
  for (auto& row : out) row.variant = ccs.size() > 1 ? row.routing + " cc=" + row.cc : row.routing;
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Colours and line styles

/// Okabe-Ito palette (distinguishable with the common colour-vision deficiencies), yellow left out.
constexpr std::array<const char*, 7> kColours = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                                 "#E69F00", "#56B4E9", "#000000"};
constexpr std::array<const char*, 4> kDashes = {"", "7 4", "2 3", "8 3 2 3"};

struct Style {
  std::string colour;
  std::string dash;
};

std::string stroke_attrs(const Style& s) {
  std::string a = "stroke=\"" + std::string(s.colour) + "\"";
  if (!s.dash.empty()) a += " stroke-dasharray=\"" + s.dash + "\"";
  return a;
}

struct Rgb {
  double r, g, b;
};

/// Viridis colour map (perceptually uniform, dark = low, yellow = high), piecewise linear between 9 anchors.
Rgb viridis(double t) {
  static constexpr std::array<Rgb, 9> kAnchors = {{{68, 1, 84},
                                                   {71, 44, 122},
                                                   {59, 81, 139},
                                                   {44, 113, 142},
                                                   {33, 144, 141},
                                                   {39, 173, 129},
                                                   {92, 200, 99},
                                                   {170, 220, 50},
                                                   {253, 231, 37}}};
  t = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0);
  const double x = t * (kAnchors.size() - 1);
  const auto i = std::min(static_cast<std::size_t>(x), kAnchors.size() - 2);
  const double f = x - static_cast<double>(i);
  const auto& a = kAnchors[i];
  const auto& b = kAnchors[i + 1];
  return {a.r + (b.r - a.r) * f, a.g + (b.g - a.g) * f, a.b + (b.b - a.b) * f};
}

std::string hex(const Rgb& c) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s = "#";
  for (const double v : {c.r, c.g, c.b}) {
    const int n = std::clamp(static_cast<int>(std::lround(v)), 0, 255);
    s += kDigits[n / 16];
    s += kDigits[n % 16];
  }
  return s;
}

/// Relative luminance in 0..1 (sRGB weights on the 8-bit values; good enough to pick black or white text).
double luminance(const Rgb& c) {
  return (0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b) / 255.0;
}

// ---------------------------------------------------------------------------------------------------------
// Axes and plot frames

/// Above this max/min ratio a time axis switches to a log scale.
constexpr double kLogRangeRatio = 20.0;

struct Axis {
  double lo = 0, hi = 1;
  bool log = false;
  std::string label;
  std::vector<std::pair<double, std::string>> ticks;

  double frac(double v) const {
    if (log) return (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
    return (v - lo) / (hi - lo);
  }
};

/// Label of a tick value on an axis whose tick step is `step`.
std::string tick_label(double v, double step) {
  const int dec = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  return fixed(v, std::clamp(dec, 0, 9));
}

double nice_step(double raw) {
  const double e = std::floor(std::log10(raw));
  const double base = std::pow(10.0, e);
  const double f = raw / base;
  const double nf = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
  return nf * base;
}

/// An axis covering [lo, hi]: log (decades) when allow_log, lo > 0 and hi/lo >= kLogRangeRatio, else linear
/// with about 5 "nice" ticks (1, 2 or 5 times a power of ten). include_zero extends a linear axis to 0.
Axis make_axis(double lo, double hi, bool allow_log, bool include_zero, std::string label) {
  Axis a;
  a.label = std::move(label);
  if (!std::isfinite(lo) || !std::isfinite(hi) || hi < lo) lo = 0, hi = 1;
  if (allow_log && lo > 0 && hi / lo >= kLogRangeRatio) {
    a.log = true;
    const int e_lo = static_cast<int>(std::floor(std::log10(lo) + 1e-12));
    int e_hi = static_cast<int>(std::ceil(std::log10(hi) - 1e-12));
    if (e_hi <= e_lo) e_hi = e_lo + 1;
    a.lo = std::pow(10.0, e_lo);
    a.hi = std::pow(10.0, e_hi);
    const bool minor = e_hi - e_lo <= 2;
    for (int e = e_lo; e <= e_hi; ++e) {
      for (const double m : {1.0, 2.0, 5.0}) {
        if (m != 1.0 && (!minor || e == e_hi)) continue;
        const double v = m * std::pow(10.0, e);
        const std::string text = e > 5 ? fixed(m, 0) + "e" + std::to_string(e) : fixed(v, std::max(0, -e));
        a.ticks.emplace_back(v, text);
      }
    }
    return a;
  }
  if (include_zero) lo = std::min(lo, 0.0), hi = std::max(hi, 0.0);
  if (hi == lo) {
    if (lo == 0)
      hi = 1;
    else
      lo -= std::fabs(lo) * 0.1, hi += std::fabs(hi) * 0.1;
  }
  const double step = nice_step((hi - lo) / 5);
  a.lo = std::floor(lo / step + 1e-9) * step;
  a.hi = std::ceil(hi / step - 1e-9) * step;
  if (a.hi <= a.lo) a.hi = a.lo + step;
  const int n = static_cast<int>(std::lround((a.hi - a.lo) / step));
  for (int k = 0; k <= n; ++k) {
    const double v = a.lo + k * step;
    a.ticks.emplace_back(v, tick_label(v, step));
  }
  return a;
}

/// Pixel geometry of one plot: the plot area is [left, width - right] x [top, height - bottom].
struct Frame {
  double width = 720, height = 360;
  double left = 72, right = 190, top = 34, bottom = 52;

  double x(const Axis& a, double v) const { return left + a.frac(v) * (width - left - right); }
  double y(const Axis& a, double v) const { return (height - bottom) - a.frac(v) * (height - top - bottom); }
};

/// Opens an <svg> with title, background, grid, ticks and axis labels.
std::string open_plot(const Frame& f, const Axis& xa, const Axis& ya, const std::string& title,
                      const std::string& cls) {
  std::ostringstream s;
  s << "<svg class=\"plot " << cls << "\" width=\"" << px(f.width) << "\" height=\"" << px(f.height)
    << "\" viewBox=\"0 0 " << px(f.width) << " " << px(f.height) << "\" role=\"img\" aria-label=\""
    << esc(title) << "\">\n<title>" << esc(title) << "</title>\n";
  const double x0 = f.left, x1 = f.width - f.right, y0 = f.height - f.bottom, y1 = f.top;
  s << "<text class=\"plot-title\" x=\"" << px(x0) << "\" y=\"" << px(f.top - 12) << "\">" << esc(title)
    << "</text>\n";
  s << "<rect class=\"area\" x=\"" << px(x0) << "\" y=\"" << px(y1) << "\" width=\"" << px(x1 - x0)
    << "\" height=\"" << px(y0 - y1) << "\"/>\n";
  for (const auto& [v, text] : xa.ticks) {
    const double x = f.x(xa, v);
    s << "<line class=\"grid\" x1=\"" << px(x) << "\" y1=\"" << px(y1) << "\" x2=\"" << px(x) << "\" y2=\""
      << px(y0) << "\"/>";
    s << "<text class=\"tick x-tick\" x=\"" << px(x) << "\" y=\"" << px(y0 + 16) << "\">" << esc(text)
      << "</text>\n";
  }
  for (const auto& [v, text] : ya.ticks) {
    const double y = f.y(ya, v);
    s << "<line class=\"grid\" x1=\"" << px(x0) << "\" y1=\"" << px(y) << "\" x2=\"" << px(x1) << "\" y2=\""
      << px(y) << "\"/>";
    s << "<text class=\"tick y-tick\" x=\"" << px(x0 - 6) << "\" y=\"" << px(y + 4) << "\">" << esc(text)
      << "</text>\n";
  }
  s << "<rect class=\"frame\" x=\"" << px(x0) << "\" y=\"" << px(y1) << "\" width=\"" << px(x1 - x0)
    << "\" height=\"" << px(y0 - y1) << "\"/>\n";
  s << "<text class=\"axis-label x-label\" x=\"" << px((x0 + x1) / 2) << "\" y=\"" << px(f.height - 10)
    << "\">" << esc(xa.label + (xa.log ? " (log scale)" : "")) << "</text>\n";
  s << "<text class=\"axis-label y-label\" transform=\"translate(16 " << px((y0 + y1) / 2)
    << ") rotate(-90)\">" << esc(ya.label + (ya.log ? " (log scale)" : "")) << "</text>\n";
  return s.str();
}

struct LegendEntry {
  std::string label;
  Style style;
};

/// Legend in the right margin: a line sample in each entry's style and its label.
std::string legend(const Frame& f, const std::vector<LegendEntry>& entries, const std::string& heading) {
  std::ostringstream s;
  const double x = f.width - f.right + 14;
  double y = f.top + 4;
  s << "<g class=\"legend\">";
  if (!heading.empty()) {
    s << "<text class=\"legend-heading\" x=\"" << px(x) << "\" y=\"" << px(y + 4) << "\">" << esc(heading)
      << "</text>";
    y += 18;
  }
  for (const auto& e : entries) {
    s << "<line x1=\"" << px(x) << "\" y1=\"" << px(y) << "\" x2=\"" << px(x + 26) << "\" y2=\"" << px(y)
      << "\" " << stroke_attrs(e.style) << " stroke-width=\"2.5\"/>";
    s << "<text class=\"legend-label\" x=\"" << px(x + 32) << "\" y=\"" << px(y + 4) << "\">" << esc(e.label)
      << "</text>\n";
    y += 18;
  }
  s << "</g>\n";
  return s.str();
}

// ---------------------------------------------------------------------------------------------------------
// Plots

/// At most this many points per CDF curve; longer sample lists are thinned to evenly spaced ranks.
constexpr std::size_t kMaxCdfSteps = 1000;

struct CdfSeries {
  std::string label;
  Style style;
  const std::vector<double>* samples; ///< sorted
};

/// Empirical CDF, one step curve per series: F(x) = (number of samples <= x) / n.
std::string cdf_plot(const std::vector<CdfSeries>& series, const std::string& title,
                     const std::string& legend_heading) {
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& s : series) {
    if (s.samples->empty()) continue;
    lo = std::min(lo, s.samples->front());
    hi = std::max(hi, s.samples->back());
  }
  Frame f;
  const Axis xa = make_axis(lo, hi, true, false, "completion time (\xC2\xB5s)");
  const Axis ya = make_axis(0, 1, false, true, "fraction of iterations \xE2\x89\xA4 x");
  std::string out = open_plot(f, xa, ya, title, "cdf-plot");
  std::vector<LegendEntry> entries;
  for (const auto& s : series) {
    const auto& v = *s.samples;
    if (v.empty()) continue;
    const std::size_t n = v.size();
    const std::size_t steps = std::min(n, kMaxCdfSteps);
    std::string pts;
    double prev_y = 0;
    for (std::size_t k = 0; k < steps; ++k) {
      // Step k shows the sample of rank i (0-based): F jumps from prev_y to (i + 1) / n at x = v[i].
      const std::size_t i = steps == n ? k : (k + 1) * n / steps - 1;
      const double x = f.x(xa, v[i]);
      const double fy = static_cast<double>(i + 1) / static_cast<double>(n);
      pts +=
          (pts.empty() ? "" : " ") + px(x) + "," + px(f.y(ya, prev_y)) + " " + px(x) + "," + px(f.y(ya, fy));
      prev_y = fy;
    }
    out += "<polyline class=\"series cdf\" data-series=\"" + esc(s.label) +
           "\" fill=\"none\" stroke-width=\"2\" " + stroke_attrs(s.style) + " points=\"" + pts +
           "\"><title>" + esc(s.label) + ": " + std::to_string(n) + " samples, " + num(v.front()) + " to " +
           num(v.back()) + " \xC2\xB5s</title></polyline>\n";
    entries.push_back({s.label, s.style});
  }
  out += legend(f, entries, legend_heading);
  out += "</svg>\n";
  return out;
}

struct XyPoint {
  double x, y;
  std::string note; ///< tooltip
};

struct XySeries {
  std::string label;
  Style style;
  std::vector<XyPoint> points; ///< sorted by x
};

/// Lines with markers over a ratio axis whose ticks are the ratio labels.
std::string xy_plot(const std::vector<XySeries>& series,
                    const std::vector<std::pair<double, std::string>>& xticks, const std::string& title,
                    const std::string& ylabel, const std::string& cls, bool allow_log_y, Frame f) {
  double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
  for (const auto& [x, t] : xticks) xlo = std::min(xlo, x), xhi = std::max(xhi, x);
  for (const auto& s : series)
    for (const auto& p : s.points) ylo = std::min(ylo, p.y), yhi = std::max(yhi, p.y);
  Axis xa;
  xa.label = "oversubscription (downlink:uplink)";
  const double pad = xhi > xlo ? (xhi - xlo) * 0.06 : 0.5;
  xa.lo = xlo - pad;
  xa.hi = xhi + pad;
  xa.ticks = xticks;
  const Axis ya =
      make_axis(ylo, yhi, allow_log_y, !(allow_log_y && ylo > 0 && yhi / ylo >= kLogRangeRatio), ylabel);
  std::string out = open_plot(f, xa, ya, title, cls + "-plot");
  std::vector<LegendEntry> entries;
  for (const auto& s : series) {
    if (s.points.empty()) continue;
    std::string pts;
    std::string marks;
    for (const auto& p : s.points) {
      const std::string xy = px(f.x(xa, p.x)) + "," + px(f.y(ya, p.y));
      pts += (pts.empty() ? "" : " ") + xy;
      marks += "<circle cx=\"" + px(f.x(xa, p.x)) + "\" cy=\"" + px(f.y(ya, p.y)) + "\" r=\"3.5\" fill=\"" +
               s.style.colour + "\"><title>" + esc(s.label + ", " + p.note) + "</title></circle>";
    }
    out += "<polyline class=\"series " + cls + "\" data-series=\"" + esc(s.label) +
           "\" fill=\"none\" stroke-width=\"2\" " + stroke_attrs(s.style) + " points=\"" + pts + "\"/>" +
           marks + "\n";
    entries.push_back({s.label, s.style});
  }
  out += legend(f, entries, "routing");
  out += "</svg>\n";
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Page sections

constexpr const char* kCss =
    R"(body{font-family:system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:24px;color:#222;max-width:1300px}
h1{font-size:1.6em;margin-bottom:4px}h2{font-size:1.3em;border-bottom:1px solid #ccc;padding-bottom:3px;margin-top:32px}
h3{font-size:1.05em;margin:18px 0 6px}p.note{color:#555;font-size:.92em;margin:4px 0 10px}
table{border-collapse:collapse;font-size:.88em;margin:6px 0}th,td{border:1px solid #ccc;padding:3px 8px}
th{background:#f2f2f2;text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}
table.kv td:first-child{font-weight:600;background:#fafafa}
.row{display:flex;flex-wrap:wrap;gap:8px}
svg.plot{background:#fff;margin:4px 0;font-size:12px}svg .area{fill:#fff}svg .frame{fill:none;stroke:#444;stroke-width:1}
svg .grid{stroke:#e3e3e3;stroke-width:1}svg .tick{fill:#333;font-size:11px}svg .x-tick{text-anchor:middle}
svg .y-tick{text-anchor:end}svg .axis-label{fill:#222;font-size:12px;text-anchor:middle}
svg .plot-title{font-weight:600;font-size:13px;fill:#222}svg .legend-label,svg .legend-heading{font-size:11.5px;fill:#222}
svg .legend-heading{font-weight:600}svg .heat-text{font-size:11.5px;text-anchor:middle}svg .heat-head{font-size:11.5px;font-weight:600;fill:#222}
)";

std::string page_open(const std::string& title) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" "
         "content=\"width=device-width, initial-scale=1\">\n<title>" +
         esc(title) + "</title>\n<style>\n" + kCss + "</style>\n</head>\n<body>\n<h1>" + esc(title) +
         "</h1>\n";
}

/// Flattens a JSON value into "a.b.c" -> compact text rows (objects recurse; arrays and scalars are dumped).
void flatten(const json& v, const std::string& prefix,
             std::vector<std::pair<std::string, std::string>>& out) {
  if (v.is_object() && !v.empty()) {
    for (const auto& [k, x] : v.items()) flatten(x, prefix.empty() ? k : prefix + "." + k, out);
    return;
  }
  out.emplace_back(prefix, v.is_string() ? v.get<std::string>() : v.dump());
}

std::string manifest_section(const Checker& c, const json& doc) {
  std::string out = "<section class=\"manifest\">\n<h2>Run</h2>\n";
  const json* m = c.object(doc, "", "manifest");
  if (!m) return out + "<p class=\"note\">No manifest in the input.</p>\n</section>\n";
  std::vector<std::pair<std::string, std::string>> rows;
  for (const char* key : {"version", "engine", "seed"})
    if (const json* v = c.find(*m, key))
      rows.emplace_back(key, v->is_string() ? v->get<std::string>() : v->dump());
  for (const auto& [k, v] : m->items())
    if (k != "version" && k != "engine" && k != "seed") flatten(v, k, rows);
  out += "<table class=\"kv manifest\">\n";
  for (const auto& [k, v] : rows) out += "<tr><td>" + esc(k) + "</td><td>" + esc(v) + "</td></tr>\n";
  out += "</table>\n</section>\n";
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
  out += manifest_section(c, doc);
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
    if (has_pct) {
      out += "<h3>Completion time percentiles vs oversubscription</h3>\n<div class=\"row\">\n";
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
              if (const auto p = stat(r->completion, key_pct))
                s.points.push_back(
                    {r->ratio, *p, r->ratio_label + ": " + name + " " + num(*p) + " \xC2\xB5s"});
          series.push_back(std::move(s));
        }
        out += xy_plot(series, xticks, name + " completion time", name + " completion time (\xC2\xB5s)",
                       "pct pct-" + key_pct, true, f);
      }
      out += "</div>\n";
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
              s.points.push_back({r->ratio, *p, r->ratio_label + ": busbw p50 " + num(*p) + " Gb/s"});
        series.push_back(std::move(s));
      }
      Frame f;
      f.width = 560;
      f.height = 320;
      f.right = 120;
      out += "<h3>Bus bandwidth vs oversubscription</h3>\n";
      out += xy_plot(series, xticks, "p50 bus bandwidth, " + title, "busbw p50 (Gb/s)", "busbw", false, f);
    }
    if (has_tiers) {
      out += "<h3>Link utilization by tier</h3>\n";
      out += heat_map(g, "Mean link utilization by tier, " + title);
    }
    out += "</section>\n";
  }

  out += "<section class=\"summary\">\n<h2>Summary</h2>\n<table "
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
  out += manifest_section(c, doc);
  if (const json* e = c.object(doc, "", "engine")) {
    out += "<h3>Engine</h3>\n<table class=\"kv engine\">\n";
    for (const char* k : {"events", "wall_s", "events_per_s"})
      out += std::string("<tr><td>") + k + "</td><td class=\"n\">" + num(c.number(*e, "engine", k)) +
             "</td></tr>\n";
    out += "</table>\n";
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
  return out;
}

} // namespace

std::string render_report(const json& doc, const std::string& source) {
  const Checker c(source);
  if (!doc.is_object()) c.fail("document", std::string("expected a JSON object, got ") + type_name(doc));
  std::string body;
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

ReportInput load_report_input(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path file = path;
  if (fs::is_directory(path, ec)) {
    if (fs::exists(file / "whatif.json", ec))
      file /= "whatif.json";
    else if (fs::exists(file / "results.json", ec))
      file /= "results.json";
    else
      throw InputError(path + ": neither whatif.json nor results.json in this folder");
  } else if (!fs::exists(path, ec)) {
    throw InputError(path + ": no such folder or file");
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(file.string() + ": cannot open for reading");
  std::ostringstream text;
  text << in.rdbuf();
  ReportInput r;
  r.path = file.string();
  try {
    r.doc = json::parse(text.str());
  } catch (const json::parse_error& e) {
    throw InputError(r.path + ": invalid JSON: " + e.what());
  }
  return r;
}

} // namespace ibn::analysis
