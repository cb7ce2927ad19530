#pragma once
// HTML and SVG building blocks shared by the report pages (analysis/report.cpp for whatif and run,
// analysis/report_plan.cpp for plan): locale-independent number formatting, escaping, the colour-blind-safe
// palette, axes (linear or log), plot frames, legends, CDF / line / scatter plots and the page frame.
// Self-contained output: inline CSS and SVG, no scripts, no fonts or images from the network.
#include <nlohmann/json.hpp>

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ibn::analysis::html {

/// `v` with exactly `decimals` decimals; "-0.00" is written "0.00". Non-finite -> "nan".
std::string fixed(double v, int decimals);
/// A measured value for a table: whole numbers without decimals, else about 3-4 significant digits.
std::string num(double v);
std::string num(const std::optional<double>& v); ///< an em dash when absent
/// Escapes text for HTML element content and attribute values.
std::string esc(std::string_view s);
std::string px(double v);

/// Okabe-Ito palette (distinguishable with the common colour-vision deficiencies), yellow left out.
inline constexpr std::array<const char*, 7> kColours = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                                        "#E69F00", "#56B4E9", "#000000"};
inline constexpr std::array<const char*, 4> kDashes = {"", "7 4", "2 3", "8 3 2 3"};

struct Style {
  std::string colour;
  std::string dash;
};
std::string stroke_attrs(const Style& s);

struct Rgb {
  double r, g, b;
};
/// Viridis colour map (perceptually uniform, dark = low, yellow = high).
Rgb viridis(double t);
std::string hex(const Rgb& c);
double luminance(const Rgb& c);

/// Above this max/min ratio a time axis switches to a log scale.
inline constexpr double kLogRangeRatio = 20.0;

struct Axis {
  double lo = 0, hi = 1;
  bool log = false;
  std::string label;
  std::vector<std::pair<double, std::string>> ticks;
  double frac(double v) const;
};
std::string tick_label(double v, double step);
double nice_step(double raw);
/// An axis covering [lo, hi]: log (decades) when allow_log, lo > 0 and hi/lo >= log_ratio, else linear with
/// about 5 "nice" ticks. include_zero extends a linear axis to 0.
Axis make_axis(double lo, double hi, bool allow_log, bool include_zero, std::string label,
               double log_ratio = kLogRangeRatio);

/// Pixel geometry of one plot: the plot area is [left, width - right] x [top, height - bottom].
struct Frame {
  double width = 720, height = 360;
  double left = 72, right = 190, top = 34, bottom = 52;
  double x(const Axis& a, double v) const { return left + a.frac(v) * (width - left - right); }
  double y(const Axis& a, double v) const { return (height - bottom) - a.frac(v) * (height - top - bottom); }
};
/// Opens an <svg> with title, background, grid, ticks and axis labels.
std::string open_plot(const Frame& f, const Axis& xa, const Axis& ya, const std::string& title,
                      const std::string& cls);

struct LegendEntry {
  std::string label;
  Style style;
};
std::string legend(const Frame& f, const std::vector<LegendEntry>& entries, const std::string& heading);

/// At most this many points per CDF curve; longer sample lists are thinned to evenly spaced ranks.
inline constexpr std::size_t kMaxCdfSteps = 1000;

struct CdfSeries {
  std::string label;
  Style style;
  const std::vector<double>* samples; ///< sorted
};
/// Empirical CDF, one step curve per series. The time axis spans the smallest to the largest sample and
/// turns logarithmic already at a 4x range, so a fast curve is not squeezed against the axis by a slow one.
std::string cdf_plot(const std::vector<CdfSeries>& series, const std::string& title,
                     const std::string& legend_heading);

struct XyPoint {
  double x, y;
  std::string note;                     ///< tooltip
  std::optional<double> err_lo, err_hi; ///< a confidence interval drawn as a vertical bar
};
struct XySeries {
  std::string label;
  Style style;
  std::vector<XyPoint> points; ///< sorted by x
};
/// Lines with markers (and CI bars) over an axis whose ticks are given (e.g. the ratio labels).
std::string xy_plot(const std::vector<XySeries>& series,
                    const std::vector<std::pair<double, std::string>>& xticks, const std::string& title,
                    const std::string& ylabel, const std::string& cls, bool allow_log_y, Frame f,
                    const std::string& xlabel = "oversubscription (downlink:uplink)",
                    const std::string& legend_heading = "routing");
/// Points (no lines) on two numeric axes, each labelled; `highlight` points get a ring (e.g. a Pareto front,
/// joined by a dashed line in x order).
struct ScatterPoint {
  double x, y;
  std::string label;
  bool highlight = false;
  std::optional<double> err_lo, err_hi;
};
std::string scatter_plot(const std::vector<ScatterPoint>& points, const std::string& title,
                         const std::string& xlabel, const std::string& ylabel, const std::string& cls,
                         Frame f);

extern const char* const kCss;
std::string page_open(const std::string& title);
/// Flattens JSON into "a.b[0].c" -> text rows: objects and lists of objects recurse, lists of plain values
/// join with ", ", strings are shown without quotes — never escaped JSON.
void flatten(const nlohmann::json& v, const std::string& prefix,
             std::vector<std::pair<std::string, std::string>>& out);
std::string kv_table(const std::vector<std::pair<std::string, std::string>>& rows, const std::string& cls);

} // namespace ibn::analysis::html
