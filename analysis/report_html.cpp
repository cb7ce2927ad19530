// HTML and SVG building blocks of the reports (report_html.hpp). Every number that reaches a page goes
// through fixed() or num(), which use std::to_chars (locale-independent, same bytes on every run).
#include "analysis/report_html.hpp"

#include "sim/markup.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <sstream>

namespace ibn::analysis::html {

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
  return markup_escape(s);
}

std::string px(double v) {
  return fixed(v, 2);
}

// ---------------------------------------------------------------------------------------------------------
// Colours and line styles

/// Okabe-Ito palette (distinguishable with the common colour-vision deficiencies), yellow left out.

std::string stroke_attrs(const Style& s) {
  std::string a = "stroke=\"" + std::string(s.colour) + "\"";
  if (!s.dash.empty()) a += " stroke-dasharray=\"" + s.dash + "\"";
  return a;
}

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
double Axis::frac(double v) const {
  if (log) return (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
  return (v - lo) / (hi - lo);
}

Axis make_axis(double lo, double hi, bool allow_log, bool include_zero, std::string label, double log_ratio) {
  Axis a;
  a.label = std::move(label);
  if (!std::isfinite(lo) || !std::isfinite(hi) || hi < lo) lo = 0, hi = 1;
  if (allow_log && lo > 0 && hi / lo >= log_ratio) {
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
  // A 4x spread already goes logarithmic: the fastest curve keeps its shape beside a slow one's tail.
  const Axis xa = make_axis(lo, hi, true, false, "completion time (\xC2\xB5s)", 4.0);
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

/// Lines with markers over a ratio axis whose ticks are the ratio labels.
std::string xy_plot(const std::vector<XySeries>& series,
                    const std::vector<std::pair<double, std::string>>& xticks, const std::string& title,
                    const std::string& ylabel, const std::string& cls, bool allow_log_y, Frame f,
                    const std::string& xlabel, const std::string& legend_heading) {
  double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
  for (const auto& [x, t] : xticks) xlo = std::min(xlo, x), xhi = std::max(xhi, x);
  for (const auto& s : series)
    for (const auto& p : s.points) {
      ylo = std::min({ylo, p.y, p.err_lo.value_or(p.y)});
      yhi = std::max({yhi, p.y, p.err_hi.value_or(p.y)});
    }
  Axis xa;
  xa.label = xlabel;
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
      if (p.err_lo && p.err_hi)
        marks += "<line class=\"ci\" x1=\"" + px(f.x(xa, p.x)) + "\" y1=\"" + px(f.y(ya, *p.err_lo)) +
                 "\" x2=\"" + px(f.x(xa, p.x)) + "\" y2=\"" + px(f.y(ya, *p.err_hi)) + "\" stroke=\"" +
                 s.style.colour + "\" stroke-width=\"1.5\"><title>" +
                 esc(s.label + ", 95 % CI " + num(*p.err_lo) + " to " + num(*p.err_hi)) + "</title></line>";
    }
    out += "<polyline class=\"series " + cls + "\" data-series=\"" + esc(s.label) +
           "\" fill=\"none\" stroke-width=\"2\" " + stroke_attrs(s.style) + " points=\"" + pts + "\"/>" +
           marks + "\n";
    entries.push_back({s.label, s.style});
  }
  out += legend(f, entries, legend_heading);
  out += "</svg>\n";
  return out;
}

std::string scatter_plot(const std::vector<ScatterPoint>& points, const std::string& title,
                         const std::string& xlabel, const std::string& ylabel, const std::string& cls,
                         Frame f) {
  double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
  for (const auto& p : points) {
    xlo = std::min(xlo, p.x), xhi = std::max(xhi, p.x);
    ylo = std::min({ylo, p.y, p.err_lo.value_or(p.y)}), yhi = std::max({yhi, p.y, p.err_hi.value_or(p.y)});
  }
  // Pad both axes so labels beside the extreme points stay inside the frame.
  const double xpad = xhi > xlo ? (xhi - xlo) * 0.12 : std::max(1.0, std::fabs(xhi) * 0.1);
  const double ypad = yhi > ylo ? (yhi - ylo) * 0.12 : std::max(1.0, std::fabs(yhi) * 0.1);
  const Axis xa = make_axis(xlo - xpad, xhi + xpad, false, false, xlabel);
  const Axis ya = make_axis(std::max(0.0, ylo - ypad), yhi + ypad, false, false, ylabel);
  std::string out = open_plot(f, xa, ya, title, cls);
  std::vector<const ScatterPoint*> front;
  for (const auto& p : points)
    if (p.highlight) front.push_back(&p);
  std::sort(front.begin(), front.end(), [](const auto* a, const auto* b) { return a->x < b->x; });
  if (front.size() > 1) {
    std::string pts;
    for (const auto* p : front) pts += (pts.empty() ? "" : " ") + px(f.x(xa, p->x)) + "," + px(f.y(ya, p->y));
    out += "<polyline class=\"pareto\" fill=\"none\" stroke=\"#888\" stroke-dasharray=\"5 4\" points=\"" +
           pts + "\"/>\n";
  }
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    const double x = f.x(xa, p.x), y = f.y(ya, p.y);
    const std::string colour = kColours[i % kColours.size()];
    if (p.err_lo && p.err_hi)
      out += "<line class=\"ci\" x1=\"" + px(x) + "\" y1=\"" + px(f.y(ya, *p.err_lo)) + "\" x2=\"" + px(x) +
             "\" y2=\"" + px(f.y(ya, *p.err_hi)) + "\" stroke=\"" + colour + "\" stroke-width=\"1.5\"/>";
    out += "<circle class=\"point\" data-label=\"" + esc(p.label) + "\" cx=\"" + px(x) + "\" cy=\"" + px(y) +
           "\" r=\"5\" fill=\"" + colour + "\"><title>" + esc(p.label) + ": " + num(p.x) + ", " + num(p.y) +
           "</title></circle>";
    if (p.highlight)
      out += "<circle cx=\"" + px(x) + "\" cy=\"" + px(y) +
             "\" r=\"9\" fill=\"none\" stroke=\"#222\" "
             "stroke-width=\"1.2\"/>";
    out += "<text class=\"point-label\" x=\"" + px(x + 11) + "\" y=\"" + px(y - 8) + "\">" + esc(p.label) +
           "</text>\n";
  }
  out += "</svg>\n";
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Page

const char* const kCss =
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
svg .point-label{font-size:11.5px;fill:#222}
.headline{font-size:1.25em;background:#eef5fb;border-left:5px solid #0072B2;padding:10px 14px;margin:10px 0 14px}
.headline .sub{display:block;font-size:.8em;color:#444;margin-top:4px}
table.best td{font-weight:600}tr.pick td{background:#eef5fb}
)";

std::string page_open(const std::string& title) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" "
         "content=\"width=device-width, initial-scale=1\">\n<title>" +
         esc(title) + "</title>\n<style>\n" + kCss + "</style>\n</head>\n<body>\n<h1>" + esc(title) +
         "</h1>\n";
}

void flatten(const json& v, const std::string& prefix,
             std::vector<std::pair<std::string, std::string>>& out) {
  if (v.is_object() && !v.empty()) {
    for (const auto& [k, x] : v.items()) flatten(x, prefix.empty() ? k : prefix + "." + k, out);
    return;
  }
  if (v.is_array() && !v.empty()) {
    bool scalars = true;
    for (const auto& x : v) scalars = scalars && !x.is_structured();
    if (scalars) { // a short list of plain values reads best on one line: 1MiB, 4MiB, 16MiB
      std::string line;
      for (const auto& x : v)
        line += (line.empty() ? "" : ", ") + (x.is_string() ? x.get<std::string>() : x.dump());
      out.emplace_back(prefix, line);
      return;
    }
    for (std::size_t i = 0; i < v.size(); ++i) flatten(v[i], prefix + "[" + std::to_string(i) + "]", out);
    return;
  }
  if (v.is_object() || v.is_array())
    out.emplace_back(prefix, "(none)");
  else
    out.emplace_back(prefix, v.is_string() ? v.get<std::string>() : v.dump());
}

std::string kv_table(const std::vector<std::pair<std::string, std::string>>& rows, const std::string& cls) {
  std::string out = "<table class=\"kv " + cls + "\">\n";
  for (const auto& [k, v] : rows) out += "<tr><td>" + esc(k) + "</td><td>" + esc(v) + "</td></tr>\n";
  return out + "</table>\n";
}

} // namespace ibn::analysis::html
