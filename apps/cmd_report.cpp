// `ibnetsim report OUT_DIR`: the HTML report of a what-if study (OUT_DIR/whatif.json) or of one run
// (OUT_DIR/results.json). See analysis/report.hpp and docs/report.md.
#include "analysis/report.hpp"
#include "apps/commands.hpp"
#include "sim/atomic_file.hpp"

#include <filesystem>
#include <iostream>
#include <memory>

namespace ibn::app {
namespace {

struct ReportOpts {
  std::string in;
  std::string out; ///< "" = OUT_DIR/report.html (or next to the file given), "-" = standard output
};

} // namespace

void add_report_command(CLI::App& app) {
  auto o = std::make_shared<ReportOpts>();
  auto* cmd = app.add_subcommand(
      "report",
      "Write a self-contained HTML report (CDFs per ratio, percentiles vs ratio, link heat map) from\n"
      "OUT_DIR/whatif.json, or OUT_DIR/results.json when there is no whatif.json.\n"
      "Example: ibnetsim report whatif-out -o whatif-out/report.html");
  cmd->add_option("OUT_DIR", o->in, "output folder of `whatif` or `run` (or the JSON file itself)")
      ->required();
  cmd->add_option("-o,--output", o->out, "HTML file to write (default OUT_DIR/report.html; - for stdout)");
  cmd->callback([o, cmd] {
    const auto input = analysis::load_report_input(o->in);
    const std::string html = analysis::render_report(input.doc, input.path);
    if (o->out == "-") {
      std::cout << html;
      return;
    }
    std::string out = o->out;
    if (cmd->count("-o") && out.empty()) throw InputError("-o: the output path is empty");
    if (out.empty()) {
      const auto parent = std::filesystem::path(input.path).parent_path();
      out = (parent.empty() ? std::filesystem::path("report.html") : parent / "report.html").string();
    }
    refuse_output_equal_to_input(out, {input.path}, "-o"); // `report out -o out/results.json` destroyed it
    write_file_atomic(out, html);
    std::cerr << "wrote " << out << " (from " << input.path << ")\n";
  });
}

} // namespace ibn::app
