// `ibnetsim run SCENARIO.json`: one simulation of a scenario; writes OUT_DIR/results.json and results.csv.
#include "analysis/results.hpp"
#include "analysis/segments.hpp"
#include "analysis/trace.hpp"
#include "apps/commands.hpp"
#include "scenarios/runner.hpp"
#include "scenarios/scenario.hpp"
#include "sim/atomic_file.hpp"
#include "sim/error.hpp"
#include "sim/progress.hpp"
#include "sim/units.hpp"

#include <chrono>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>

namespace ibn::app {
namespace {

struct RunOpts {
  std::string scenario;
  std::string engine;
  std::int64_t seed = -1;
  std::vector<std::string> sets;
  std::string out = "run-out";
  bool quiet = false;
  std::string trace;
  std::size_t trace_limit = 200000;
  std::string tail_precision;
  std::int64_t max_iters = 10000;
};

std::string format_double(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

/// `run` with run.segment_iterations or --tail-precision (analysis/segments.hpp): checkpoints under OUT_DIR.
void run_in_segments(const scen::Scenario& s, const RunOpts& o, ProgressBoard& board,
                     ProgressPrinter& printer) {
  if (!o.trace.empty())
    throw InputError(
        "--trace: not available with run.segment_iterations or --tail-precision (trace one run)");
  analysis::SegmentOptions so;
  so.checkpoint_dir = o.out;
  if (!o.tail_precision.empty()) {
    so.tail_precision = analysis::parse_tail_precision(o.tail_precision, "--tail-precision");
    if (o.max_iters < 1) throw InputError("--max-iters must be at least 1");
    so.max_iterations = static_cast<std::uint64_t>(o.max_iters);
  }
  so.progress = &board.slot(0);
  if (!o.quiet) so.log = [](const std::string& line) { std::cerr << "  " << line << "\n"; };
  // The flow engine: one SimGrid per process, so each segment runs in a child and this thread prints.
  so.segments_in_child_processes = s.engine == scen::EngineKind::Flow;
  if (so.segments_in_child_processes)
    so.on_wait = [&printer] { printer.tick(); };
  else
    printer.start_thread();
  // Timed here: segments run in child processes or read back from checkpoints carry no wall time.
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = analysis::run_point_segmented(s, so);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  printer.stop();
  for (const auto& w : r.warnings) std::cerr << "warning: " << w << "\n";
  write_file_atomic(o.out + "/results.json", analysis::to_json(r).dump(2) + "\n");
  write_file_atomic(o.out + "/results.csv", analysis::results_csv(r));
  std::cout << analysis::results_table(r);
  if (const auto& t = r.manifest.tail_precision; t.is_object()) {
    const auto& h = t.at("half_width_pct");
    std::cerr << "tail precision: p99's 95 % interval half-width "
              << (h.is_null() ? std::string("unbounded") : format_double(h.get<double>()) + " %")
              << " of p99 after " << t.at("iterations").get<std::uint64_t>() << " iterations (target "
              << format_double(t.at("target_pct").get<double>()) << " %, "
              << (t.at("reached").get<bool>() ? "reached" : "not reached within --max-iters") << ")\n";
  }
  std::cerr << "wrote " << o.out << "/results.json and results.csv ("
            << r.manifest.segments.at("count").get<std::size_t>() << " segment(s), " << r.engine.events
            << " events, " << wall << " s)\n";
}

} // namespace

void add_run_command(CLI::App& app) {
  auto o = std::make_shared<RunOpts>();
  auto* cmd =
      app.add_subcommand("run", "Run one scenario and write OUT_DIR/results.json and results.csv.\n"
                                "Example: ibnetsim run scenarios/examples/two-jobs-background.json -o out");
  cmd->add_option("SCENARIO", o->scenario, "scenario JSON (keys: docs/scenarios.md)")->required();
  cmd->add_option("--engine", o->engine, "packet or flow (default: the scenario's engine key)")
      ->check(CLI::IsMember(choice_names(scen::kEngines)));
  cmd->add_option("--seed", o->seed, "seed (overrides the scenario's)")->check(kSeed);
  cmd->add_option("--set", o->sets, "override a key: --set jobs[0].nodes=8 (repeatable)");
  cmd->add_option("-o,--output", o->out, "output folder")->capture_default_str()->check(kOutputFolder);
  cmd->add_flag("-q,--quiet", o->quiet, "no progress lines");
  auto* trace = cmd->add_option(
      "--trace", o->trace,
      "write a Chrome/Perfetto trace of the transfers of each collective's first measured iteration");
  cmd->add_option("--trace-limit", o->trace_limit, "most spans in the trace")->capture_default_str();
  add_tail_precision_options(cmd, o->tail_precision, o->max_iters);
  cmd->callback([o, trace] {
    refuse_set_twice(o->sets);
    refuse_folders_in_output(o->out, {"results.json", "results.csv"});
    // The trace file is written after the run: a path that cannot be one is refused before it.
    std::error_code ec;
    if (trace->count() > 0 && o->trace.empty()) throw InputError("--trace: empty path: name the trace file");
    if (!o->trace.empty() && std::filesystem::is_directory(o->trace, ec))
      throw InputError("--trace " + o->trace + ": is a folder; give a file name (for example " +
                       (std::filesystem::path(o->trace) / "trace.json").string() + ")");
    auto sets = o->sets;
    refuse_flag_and_set(o->sets, "seed", "--seed", o->seed >= 0);
    refuse_flag_and_set(o->sets, "engine", "--engine", !o->engine.empty());
    if (o->seed >= 0) sets.push_back("seed=" + std::to_string(o->seed));
    if (!o->engine.empty()) sets.push_back("engine=" + o->engine);
    const auto s = scen::load_scenario(o->scenario, sets);
    // Progress: percentage, elapsed time and ETA on stderr (sim/progress.hpp).
    ProgressBoard board(1);
    ProgressPrinter printer(
        board, {""}, o->quiet ? std::function<void(const std::string&)>() : [](const std::string& line) {
          std::cerr << "  " << line << "\n";
        });
    board.slot(0).start();
    if (s.segment_iterations > 0 || !o->tail_precision.empty()) {
      run_in_segments(s, *o, board, printer);
      return;
    }
    scen::RunOptions ro;
    ro.progress_slot = &board.slot(0);
    if (!o->quiet)
      ro.progress = [](const std::string& line) { std::cerr << "  " << line << "\n"; }; // the estimate
    if (!o->trace.empty()) ro.trace_limit = o->trace_limit;
    printer.start_thread();
    const auto r = scen::run_scenario(s, ro);
    printer.stop();
    for (const auto& w : r.warnings) std::cerr << "warning: " << w << "\n";
    write_file_atomic(o->out + "/results.json", analysis::to_json(analysis::point_result(r)).dump(2) + "\n");
    write_file_atomic(o->out + "/results.csv", analysis::results_csv(r));
    std::cout << analysis::results_table(r);
    if (!o->trace.empty()) {
      std::vector<analysis::TraceSpan> spans;
      analysis::TraceOptions to;
      for (std::size_t j = 0; j < s.jobs.size(); ++j)
        to.job_names[static_cast<std::uint32_t>(j)] = s.jobs[j].name;
      for (const auto& t : r.trace) {
        const auto& c = r.collectives[t.collective];
        spans.push_back({c.op + " " + format_size(c.size_bytes) + " step " + std::to_string(t.step) +
                             (t.network ? " (net)" : " (nvlink)"),
                         t.job, t.src, t.posted, t.delivered,
                         nlohmann::json{{"to_rank", t.dst},
                                        {"bytes", t.bytes},
                                        {"channel", t.channel},
                                        {"algorithm", c.algorithm}}});
      }
      write_file_atomic(o->trace, analysis::render_chrome_trace(spans, to));
      std::cerr << "wrote " << o->trace << " (" << spans.size() << " spans";
      if (spans.size() >= o->trace_limit) std::cerr << ", capped by --trace-limit";
      std::cerr << ")\n";
    }
    std::cerr << "wrote " << o->out << "/results.json and results.csv (" << r.engine.events << " events, "
              << r.wall_s << " s)\n";
  });
}

} // namespace ibn::app
