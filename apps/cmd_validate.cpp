// `ibnetsim validate nccl-tests LOG [--fabric F] [--profile P] [--json]`: measured vs simulated busbw per
// size.
#include "analysis/validate.hpp"
#include "apps/commands.hpp"
#include "sim/units.hpp"

#include <iostream>
#include <memory>

namespace ibn::app {

void add_validate_command(CLI::App& app) {
  auto* v = app.add_subcommand("validate", "Compare real measurements with simulated ones.");
  v->require_subcommand(1);
  auto o = std::make_shared<analysis::ValidateOptions>();
  auto log = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto max = std::make_shared<std::string>();
  auto* c = v->add_subcommand("nccl-tests",
                              "Simulate the job of a real nccl-tests output and compare busbw per size.\n"
                              "Example: ibnetsim validate nccl-tests all_reduce.log --profile p.json --json");
  c->add_option("LOG", *log, "nccl-tests output (with its NCCL INFO lines when available)")->required();
  c->add_option("--fabric", o->fabric, "fabric file (default: a non-blocking NDR fat-tree that fits)");
  c->add_option("--profile", o->profile, "calibration profile JSON");
  c->add_option("--engine", o->engine, "packet or flow")
      ->check(CLI::IsMember({"packet", "flow"}))
      ->capture_default_str();
  c->add_option("-n,--iters", o->iters, "simulated iterations per size")->capture_default_str();
  c->add_option("--nics", o->nics_per_node, "NICs per node (default: from the log, else one per GPU)");
  c->add_option("--max-bytes", *max, "skip sizes above this");
  c->add_option("--test", o->tests, "compare this test only (repeatable; default: every test in LOG)");
  c->add_option("--set", o->sets, "override a scenario key, e.g. nvlink.bandwidth_gbps=2900 (repeatable)");
  c->add_flag("--json", *json, "print JSON rows and summary");
  c->callback([o, log, json, max] {
    if (!max->empty()) o->max_bytes = parse_size_bytes(*max, "--max-bytes");
    const auto v = analysis::validate_nccl_tests(*log, *o);
    if (*json)
      std::cout << v.dump(2) << "\n";
    else
      std::cout << analysis::validate_table(v);
  });
}

} // namespace ibn::app
