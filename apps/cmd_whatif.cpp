// `ibnetsim whatif [SCENARIO.json]`: the planner's study — completion-time distributions of the scenario's
// collectives at each oversubscription ratio, with adaptive routing off and on. Without a scenario it runs
// the built-in default study (scen::default_scenario_json()). Writes OUT_DIR/whatif.json, one results.json
// per point under OUT_DIR/points/, and OUT_DIR/report.html.
#include "analysis/points.hpp"
#include "analysis/report.hpp"
#include "analysis/segments.hpp"
#include "analysis/whatif.hpp"
#include "apps/commands.hpp"
#include "scenarios/runner.hpp"
#include "scenarios/scenario.hpp"
#include "sim/error.hpp"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <memory>
#include <thread>

namespace ibn::app {
namespace {

struct WhatifOpts {
  std::string scenario;
  std::string ratios = "1:1,2:1,4:1";
  std::string routing = "off,per-packet";
  std::string cc;
  std::string stragglers;
  std::string engine;
  std::string faults;
  std::vector<std::string> sets;
  unsigned jobs = 0;
  std::string out = "whatif-out";
  bool quiet = false;
  std::string tail_precision;
  std::int64_t max_iters = 10000;
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else if (c != ' ') {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

} // namespace

void add_whatif_command(CLI::App& app) {
  auto o = std::make_shared<WhatifOpts>();
  auto* cmd = app.add_subcommand(
      "whatif",
      "What-if study: collective completion times (p50, p99, p99.9, busbw) per oversubscription ratio and\n"
      "routing mode. Without SCENARIO: the built-in default study (16 nodes x 8 GPUs of hierarchical\n"
      "AllReduce, 1/4/16 MiB, beside a looping 8-node neighbour job on a 256-HCA NDR 2-tier fat-tree).\n"
      "Example: ibnetsim whatif -o whatif-out");
  cmd->add_option("SCENARIO", o->scenario,
                  "scenario JSON (keys: docs/scenarios.md); default: the built-in study");
  cmd->add_option("--oversubscription", o->ratios,
                  "leaf ratios to compare (\"\" = the scenario's fabric only)")
      ->capture_default_str();
  cmd->add_option("--routing", o->routing, "adaptive-routing modes to compare: off, per-packet, bounded")
      ->capture_default_str();
  cmd->add_option("--cc", o->cc,
                  "congestion-control settings to compare: none, dcqcn, ibcc (default: the scenario's)");
  cmd->add_option(
      "--faults", o->faults,
      "fault settings to compare: none, K-link[@TIER], K-switch[@TIER], degraded-Ppct[:WIDTHxRATE] "
      "(drawn per seed, from t = 0; docs/cli.md)");
  cmd->add_option(
      "--stragglers", o->stragglers,
      "straggler settings to compare: none, KxF[+Dus] (K slow nodes per job, NIC at F x its rate, "
      "ranks D us late), e.g. none,1x0.5,2x0.5+20us (default: the dimension is absent)");
  cmd->add_option("--engine", o->engine, "packet or flow (default: the scenario's)")
      ->check(CLI::IsMember(choice_names(scen::kEngines)));
  cmd->add_option("--set", o->sets,
                  "override a scenario key (repeatable), e.g. --set jobs[0].workload.iterations=20");
  cmd->add_option(
      "-j,--jobs", o->jobs,
      "points run in parallel, on both engines (flow: one child process each; default: the cores)");
  add_tail_precision_options(cmd, o->tail_precision, o->max_iters);
  cmd->add_option("-o,--output", o->out, "output folder")->capture_default_str()->check(kOutputFolder);
  cmd->add_flag("-q,--quiet", o->quiet, "no progress lines");
  cmd->callback([o, cmd] {
    const auto t0 = std::chrono::steady_clock::now();
    refuse_set_twice(o->sets);
    refuse_flag_and_set(o->sets, "engine", "--engine", !o->engine.empty());
    refuse_folders_in_output(o->out, {"whatif.json", "report.html"});
    const auto s = o->scenario.empty() ? scen::make_scenario(scen::default_scenario_json(),
                                                             "built-in default study", "", o->sets)
                                       : scen::load_scenario(o->scenario, o->sets);
    // A token twice would run its points twice and collide in whatif.json: refused before anything runs.
    for (const auto& [flag, list] :
         {std::pair<const char*, const std::string*>{"--oversubscription", &o->ratios},
          {"--routing", &o->routing},
          {"--cc", &o->cc},
          {"--faults", &o->faults},
          {"--stragglers", &o->stragglers}}) {
      const auto tokens = split(*list);
      refuse_listed_twice(tokens, flag);
      if (!list->empty() && tokens.empty()) throw InputError(std::string(flag) + ": give at least one token");
    }
    if (o->jobs == 0 && cmd->count("--jobs")) throw InputError("-j: at least 1");
    analysis::WhatifOptions wo;
    // The ratio dimension needs a generator that takes a ratio (fat-tree, rail-optimized). With another
    // generator or a fabric file, the default ratios are dropped with a note (the shipped dragonfly example
    // failed "unknown parameter 'oversubscription'", blaming the scenario); ratios given explicitly are
    // refused, naming the flag.
    std::string ratios = o->ratios;
    if (!analysis::varies_oversubscription(s) && !ratios.empty()) {
      const std::string fabric =
          s.fabric_file.empty() ? "generator '" + s.fabric_generator + "'" : "file " + s.fabric_file;
      if (cmd->count("--oversubscription"))
        throw InputError("--oversubscription " + ratios + ": the scenario's fabric (" + fabric +
                         ") has no oversubscription ratio to vary; pass --oversubscription \"\" to keep it");
      std::cerr << "note: the scenario's fabric (" << fabric
                << ") has no oversubscription ratio to vary: the study keeps it as it is\n";
      ratios.clear();
    }
    wo.ratios =
        ratios.empty() ? std::vector<topo::Ratio>{} : topo::parse_ratios(ratios, "--oversubscription");
    refuse_equal_ratios(wo.ratios, "--oversubscription", split_list(ratios));
    wo.routings.clear();
    for (const auto& m : split(o->routing)) wo.routings.push_back(pkt::parse_ar_mode(m, "--routing"));
    if (wo.routings.empty()) throw InputError("--routing: give at least one mode (off, per-packet, bounded)");
    for (const auto& c : split(o->cc)) wo.ccs.push_back(pkt::parse_cc_mode(c, "--cc"));
    for (const auto& f : split(o->faults)) {
      // Two spellings of one setting ("1-link" and "1-link@leaf-spine") would run it twice.
      const auto j = analysis::fault_token_json(f);
      for (const auto& g : wo.faults)
        if (analysis::fault_token_json(g) == j)
          throw InputError("--faults: '" + f + "' and '" + g + "' are the same setting");
      wo.faults.push_back(f);
    }
    if (!o->faults.empty() && wo.faults.empty()) throw InputError("--faults: give at least one token");
    wo.stragglers = split(o->stragglers);
    if (!o->engine.empty()) wo.engine = scen::parse_engine(o->engine, "--engine");
    // The flow engine does not model congestion control (it warns per point, in results.json only): rows
    // labelled dcqcn/ibcc would be copies of `none`. Refused, as plan refuses it.
    if (wo.engine.value_or(s.engine) == scen::EngineKind::Flow)
      for (const auto cc : wo.ccs)
        if (cc != pkt::CcMode::None)
          throw InputError("--cc " + o->cc +
                           ": the flow engine does not model congestion control (its rows would "
                           "equal 'none'); compare CC with --engine packet");
    wo.threads = o->jobs ? o->jobs : std::max(1u, std::thread::hardware_concurrency());
    if (!o->tail_precision.empty()) {
      wo.tail_precision = analysis::parse_tail_precision(o->tail_precision, "--tail-precision");
      if (o->max_iters < 1) throw InputError("--max-iters must be at least 1");
      wo.max_iterations = static_cast<std::uint64_t>(o->max_iters);
    }
    wo.out_dir = o->out;
    if (!o->quiet) wo.progress = [](const std::string& line) { std::cerr << "  " << line << "\n"; };
    auto count_only = wo; // the count for the banner; run_whatif says the leaf-port choices itself
    count_only.progress = nullptr;
    const auto points = analysis::whatif_points(s, count_only);
    // Two tokens of one setting (`--stragglers 1x0.5,1x0.50`, `--faults degraded-5pct:2xNDR,degraded-5pct` on
    // NDR) give two points the same scenario: refused, naming both, before anything runs.
    // Every point's fabric, placement and faults at t = 0 are checked too, as sweep does: `--oversubscription
    // 100:1` or `--faults 1000-link` failed only when their point ran, after the points before it.
    std::vector<analysis::StudyPoint> study;
    for (const auto& p : points) study.push_back({p.id, p.overrides});
    for (const auto& w : analysis::check_points(
             s, study,
             [](const std::string&first, const std::string&id) {
               return "points " + first + " and " + id +
                      " are the same scenario (two tokens of one setting); give each setting once";
             },
             [](const analysis::StudyPoint&p, const std::string&m) { return "point " + p.id + ": " + m; },
             wo.engine))
      std::cerr << "warning: " << w << "\n";
    const bool flow = wo.engine.value_or(s.engine) == scen::EngineKind::Flow;
    std::cerr << "ibnetsim whatif: " << s.name << ", " << points.size() << " points, " << wo.threads
              << (flow ? " child process(es)" : " thread(s)") << " at a time, writing " << o->out << "/\n";
    const auto doc = analysis::run_whatif(s, wo);
    for (const auto& w : doc.at("manifest").value("warnings", nlohmann::json::array()))
      std::cerr << "warning: " << w.get<std::string>() << "\n";
    std::cout << analysis::whatif_table(doc);
    write_file_atomic(o->out + "/report.html", analysis::render_report(doc, o->out + "/whatif.json"));
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cerr << "wrote " << o->out << "/whatif.json, " << o->out << "/report.html and " << points.size()
              << " point results in " << static_cast<int>(wall + 0.5) << " s\n";
  });
}

} // namespace ibn::app
