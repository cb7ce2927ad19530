#pragma once
// HTML report of a what-if study (whatif.json), of one run (results.json) or of a capacity plan (plan.json).
// Every page answers first: a headline and the key table, then the plots, the configuration last.
//
// The report is one self-contained HTML file: inline CSS and inline SVG plots, no scripts, no fonts or
// images from the network. The same input gives the same bytes (fixed number formatting, no timestamps, no
// file paths), and the order of rows in the input does not matter (everything is sorted).
//
// whatif.json ({"manifest", "rows": [...]}) gives, per (op, size, ranks): the CDF of completion time with
// one curve per (ratio, routing); p50 / p99 / p99.9 of completion time vs oversubscription ratio, one line
// per routing mode; p50 bus bandwidth vs ratio; a link-utilization heat map by tier; then a summary table.
// results.json ({"manifest", "collectives": [...], "links", "engine"}) gives a CDF per collective, the
// collectives table and the link table by tier. docs/report.md says how to read each plot.
//
// Input checking: a key that is present must have the right type (a number where a number is expected,
// etc.); violations are InputErrors naming `source` and the key path ("whatif.json:
// rows[3].completion_us.p50: expected a number, got string"). Missing result keys are tolerated: the plot or
// cell is left out or shows a dash. A whatif row needs `ratio` (a number) or `oversubscription` ("A:B").
#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace ibn::analysis {

/// Renders report.html from a parsed whatif.json (has "rows") or results.json (has "collectives").
/// `source` names the input in error messages only; it does not appear in the HTML.
std::string render_report(const nlohmann::json& whatif_or_results, const std::string& source = "input");

/// Renders the report of a capacity plan (plan.json, analysis/plan.hpp): the recommendation first, the design
/// table, cost vs p99 with the Pareto front, p99 vs ratio with 95 % CIs, the bill of materials of each
/// design, the request last. analysis/report_plan.cpp.
std::string render_plan_report(const nlohmann::json& plan, const std::string& source = "plan.json");
/// Writes render_plan_report(plan) to `path` atomically.
void write_plan_report(const nlohmann::json& plan, const std::string& path);

/// "A:B" -> A/B, or nullopt when the text is not two positive numbers around a colon.
std::optional<double> ratio_value(const std::string& text);

/// A parsed report input and the file it came from.
struct ReportInput {
  std::string path;
  nlohmann::json doc;
};

/// Reads OUT_DIR/plan.json if present, else OUT_DIR/whatif.json, else OUT_DIR/results.json. `path` may also
/// name one of those files directly. A missing folder, a folder with neither file, or a file that is not
/// valid JSON -> InputError naming the file (and the line for a JSON syntax error).
ReportInput load_report_input(const std::string& path);

} // namespace ibn::analysis
