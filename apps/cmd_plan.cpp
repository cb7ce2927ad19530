// `ibnetsim plan`: capacity planning — rail-optimized designs for a GPU count, their bill of materials, cost,
// power and bisection, a standard workload on each, the Pareto front and a recommendation (docs/planning.md).
#include "analysis/plan.hpp"
#include "analysis/report.hpp"
#include "apps/catalog_path.hpp"
#include "apps/commands.hpp"
#include "sim/error.hpp"
#include "sim/units.hpp"

#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>
#include <thread>

namespace ibn::app {
namespace {

struct PlanCli {
  std::int64_t gpus = 0;
  int gpus_per_node = 8, nics_per_node = 0, iters = 12;
  unsigned jobs = 0;
  std::string nic = "NDR", switches = "qm9700", ratios = "1:1,2:1,4:1", tiers, cc, sizes = "1M,16M,64M",
              engine = "auto", scenario, catalog, out = "plan-out";
  bool json = false, no_sim = false;
};

} // namespace

void add_plan_command(CLI::App& app) {
  auto o = std::make_shared<PlanCli>();
  auto* cmd = app.add_subcommand(
      "plan",
      "Capacity planning: enumerate rail-optimized fabric designs (exact ratios, cheapest port split first), "
      "price them from the parts catalog (switches, cables, optics, $, kW), run a standard workload on each "
      "and print the table, the Pareto front and a recommendation.\n"
      "Example: ibnetsim plan --gpus 1024 --gpus-per-node 8 --nic NDR --switch qm9700 --ratios 1:1,2:1,4:1 "
      "-o plan-out");
  cmd->add_option("--gpus", o->gpus, "GPUs in the cluster")->required();
  cmd->add_option("--gpus-per-node", o->gpus_per_node, "GPUs per node")->capture_default_str();
  cmd->add_option("--nics-per-node", o->nics_per_node, "NICs (rails) per node (default: one per GPU)");
  cmd->add_option("--nic", o->nic, "NIC rate: HDR, NDR, XDR, NDR200")->capture_default_str();
  cmd->add_option("--switch", o->switches, "switch model(s) from the catalog, comma-separated")
      ->capture_default_str();
  cmd->add_option("--ratios", o->ratios, "leaf downlink:uplink ratios to compare")->capture_default_str();
  cmd->add_option("--tiers", o->tiers, "tiers to consider, comma-separated (default: the fewest that fit)");
  cmd->add_option("--sizes", o->sizes, "collective sizes")->capture_default_str();
  cmd->add_option("-n,--iters", o->iters, "measured iterations per size")->capture_default_str();
  cmd->add_option("--engine", o->engine, "auto (packet up to 512 HCAs, flow above), packet or flow")
      ->check(CLI::IsMember({"auto", "packet", "flow"}))
      ->capture_default_str();
  cmd->add_option("--cc", o->cc,
                  "congestion control settings to compare, comma-separated: none, dcqcn, ibcc (packet "
                  "engine only; default: the workload's own)");
  cmd->add_option("--scenario", o->scenario,
                  "workload scenario JSON (its fabric is replaced by each design's)");
  cmd->add_option("--catalog", o->catalog, "parts catalog JSON (default: data/catalog/parts.json)");
  cmd->add_flag("--no-sim", o->no_sim, "designs, BOM, cost and power only; run no workload");
  cmd->add_option("-j,--jobs", o->jobs, "parallel workers (default: the cores)");
  cmd->add_flag("--json", o->json, "print plan.json instead of the table");
  cmd->add_option("-o,--output", o->out, "output folder (plan.json, report.html, points/)")
      ->capture_default_str()
      ->check(kOutputFolder);
  cmd->callback([o, cmd] {
    refuse_folders_in_output(o->out, {"plan.json", "report.html"});
    // Lists name each value once (a value twice would build two designs of one name).
    auto once = [](std::vector<std::string> v, const std::string& opt) {
      refuse_listed_twice(v, opt);
      return v;
    };
    if (o->gpus_per_node < 1)
      throw InputError("--gpus-per-node: " + std::to_string(o->gpus_per_node) + " (at least 1)");
    if (!cmd->count("--nics-per-node") && o->gpus_per_node > 64)
      throw InputError("--gpus-per-node " + std::to_string(o->gpus_per_node) +
                       ": the NICs default to one per GPU, at most 64 per node; give --nics-per-node");
    if (cmd->count("--nics-per-node") && o->nics_per_node < 1)
      throw InputError("--nics-per-node: " + std::to_string(o->nics_per_node) + " (expected 1..64)");
    if (!o->scenario.empty())
      for (const char* flag : {"--sizes", "--iters"})
        if (cmd->count(flag))
          throw InputError(std::string(flag) + ": with --scenario the workload (its sizes and iterations) is "
                                               "the scenario's; edit the scenario instead");
    analysis::PlanOptions p;
    p.gpus = o->gpus;
    p.gpus_per_node = o->gpus_per_node;
    p.nics_per_node = o->nics_per_node;
    p.nic_rate = o->nic;
    p.switches = once(split_list(o->switches), "--switch");
    if (p.switches.empty()) throw InputError("--switch: give at least one model");
    refuse_listed_twice(split_list(o->ratios), "--ratios");
    p.ratios = topo::parse_ratios(o->ratios, "--ratios");
    refuse_equal_ratios(p.ratios, "--ratios", split_list(o->ratios));
    for (const auto& t : once(split_list(o->tiers), "--tiers")) {
      const auto v = parse_positive_int(t, "--tiers");
      if (v != 2 && v != 3) throw InputError("--tiers: " + t + " (expected 2 or 3)");
      p.tiers.push_back(static_cast<int>(v));
    }
    p.sizes = split_list(o->sizes);
    if (p.sizes.empty()) throw InputError("--sizes: give at least one size");
    std::vector<std::uint64_t> sizes_bytes;
    for (const auto& s : p.sizes) {
      sizes_bytes.push_back(parse_size_bytes(s, "--sizes"));
      if (sizes_bytes.back() == 0)
        throw InputError("--sizes: " + s + " (a collective of 0 bytes measures nothing)");
    }
    refuse_listed_twice(sizes_bytes, p.sizes, "--sizes");
    if (o->iters < 1) throw InputError("--iters must be at least 1");
    p.iterations = o->iters;
    p.engine = o->engine;
    p.scenario_file = o->scenario;
    p.cc = once(split_list(o->cc), "--cc");
    p.catalog_path = catalog_path(o->catalog);
    p.simulate = !o->no_sim;
    if (cmd->count("--jobs") && o->jobs == 0) throw InputError("-j: at least 1"); // as whatif says it
    p.jobs = o->jobs ? o->jobs : std::max(1u, std::thread::hardware_concurrency());
    p.out_dir = o->out;
    p.progress = [](const std::string& line) { std::cerr << "plan: " << line << "\n"; };
    const auto t0 = std::chrono::steady_clock::now();
    const auto plan = analysis::run_plan(p);
    analysis::write_plan_report(plan, o->out + "/report.html");
    if (o->json)
      std::cout << plan.dump(2) << "\n";
    else
      std::cout << analysis::plan_table(plan);
    std::cerr << "wrote " << o->out << "/plan.json and report.html (" << std::fixed
              << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() << " s)\n";
  });
}

} // namespace ibn::app
