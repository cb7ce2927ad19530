// `ibnetsim experiment FILE.json -o DIR`: one congestion-control experiment (scenarios/cc_experiments.hpp,
// docs/congestion-control.md): N senders into one port, run per variant; writes rates, throughput and queue
// time series as CSV, a summary.json and SVG charts into DIR, and prints one summary line per variant.
#include "apps/commands.hpp"
#include "scenarios/cc_experiments.hpp"
#include "sim/atomic_file.hpp"
#include "sim/error.hpp"
#include "sim/json_text.hpp"

#include <cstdio>
#include <memory>

namespace ibn::app {

void add_experiment_command(CLI::App& app) {
  struct Opts {
    std::string file, out;
  };
  auto o = std::make_shared<Opts>();
  auto* c = app.add_subcommand(
      "experiment", "Run a congestion-control experiment (DCQCN paper style: N senders into one port, "
                    "one run per variant) and write CSV time series, summary.json and SVG charts.\n"
                    "Definitions: scenarios/examples/cc/*.json (docs/congestion-control.md).\n"
                    "Example: ibnetsim experiment scenarios/examples/cc/two_flows.json -o out/two_flows");
  c->add_option("FILE", o->file, "experiment definition (JSON)")->required();
  c->add_option("-o,--out", o->out, "output folder (created)")->required()->check(kOutputFolder);
  c->callback([o] {
    const nlohmann::json j = parse_json_text(read_file(o->file), o->file);
    const auto e = scen::CcExperiment::from_json(j, o->file);
    for (const auto& w : e.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
    const auto runs = scen::run_cc_experiment(e);
    scen::write_cc_results(e, runs, o->out);
    for (const auto& r : runs) {
      // Jain and goodput need an interval in which every sender is active (and something delivered in it).
      char jv[32] = "";
      if (r.jain_second_half) std::snprintf(jv, sizeof jv, "%.4f", *r.jain_second_half);
      const std::string jain = r.jain_second_half ? jv : "n/a (" + r.jain_note + ")";
      char gp[64] = "n/a";
      if (r.bottleneck_gbps) std::snprintf(gp, sizeof gp, "%.1f Gb/s", *r.bottleneck_gbps);
      std::printf("%-28s Jain(2nd half) %s  queue mean %.0f B max %.0f B  goodput %s  marks %llu  CNPs %llu  "
                  "pauses %llu\n",
                  r.label.c_str(), jain.c_str(), r.mean_queue_bytes, r.max_queue_bytes, gp,
                  static_cast<unsigned long long>(r.ecn_marks + r.fecn_marks),
                  static_cast<unsigned long long>(r.cnps), static_cast<unsigned long long>(r.pause_frames));
    }
    std::printf("wrote %s/{rates,throughput,queue}.{csv,svg}, summary.json\n", o->out.c_str());
  });
}

} // namespace ibn::app
