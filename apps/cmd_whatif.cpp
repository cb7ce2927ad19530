// `ibnetsim whatif`: the planner's study over oversubscription ratios.
//
// Until the packet engine and the collectives exist, the study stops after its first stage: it builds the
// fabrics of the default study (NDR 2-tier fat-trees of 256 hosts at each ratio, leaf ports chosen so the
// ratio is exact on 64-port switches) and describes them. It says so on every run; nothing is simulated.
#include "apps/commands.hpp"
#include "sim/error.hpp"
#include "sim/version.hpp"
#include "topology/describe.hpp"
#include "topology/generators.hpp"

#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>

namespace ibn::app {
namespace {

struct WhatifOpts {
  std::string scenario;
  std::string ratios = "1:1,2:1,4:1";
  std::string engine = "packet";
  std::string out = "whatif-out";
};

/// Leaf ports (<= 64) that split exactly at `r`: the largest multiple of (down+up) not above 64.
int leaf_ports_for(const topo::Ratio& r, int radix) { return radix / (r.down + r.up) * (r.down + r.up); }

} // namespace

void add_whatif_command(CLI::App& app) {
  auto o = std::make_shared<WhatifOpts>();
  auto* cmd = app.add_subcommand("whatif", "What-if study over oversubscription ratios and routing modes.\n"
                                           "Example: ibnetsim whatif -o whatif-out");
  cmd->add_option("SCENARIO", o->scenario, "scenario JSON (not yet supported: the built-in study runs)");
  cmd->add_option("--oversubscription", o->ratios, "leaf ratios to compare")->capture_default_str();
  cmd->add_option("--engine", o->engine, "packet or flow")->check(CLI::IsMember({"packet", "flow"}));
  cmd->add_option("-o,--output", o->out, "output folder")->capture_default_str();
  cmd->callback([o] {
    if (!o->scenario.empty())
      throw InputError(o->scenario + ": scenario files are not supported yet (the collectives and workload layer "
                                     "has not landed); run `ibnetsim whatif` without a scenario");
    const auto ratios = topo::parse_ratios(o->ratios, "--oversubscription");
    std::cerr << "ibnetsim whatif: the packet and flow engines are not built yet; this run builds and describes "
                 "the fabrics of the default study only (no traffic is simulated).\n";
    nlohmann::json rows = nlohmann::json::array();
    std::ostringstream table;
    char line[256];
    std::snprintf(line, sizeof line, "%-8s %6s %10s %7s %7s %15s %8s\n", "ratio", "hosts", "leaf-ports", "leaves",
                  "spines", "bisection Gb/s", "diameter");
    table << line;
    for (const auto& r : ratios) {
      topo::FatTreeParams p;
      p.tiers = 2;
      p.radix = 64;
      p.hosts = 256;
      p.oversubscription = {r};
      p.leaf_ports = leaf_ports_for(r, p.radix);
      p.speed = topo::LinkSpeed{topo::Generation::NDR, 4};
      const auto f = topo::build_fat_tree(p);
      const auto s = topo::describe(f);
      std::size_t leaves = 0, spines = 0;
      for (const auto& t : s.per_tier) (t.tier == 1 ? leaves : spines) += t.switches;
      std::snprintf(line, sizeof line, "%-8s %6zu %10d %7zu %7zu %15.0f %8d\n", r.to_string().c_str(), s.hosts,
                    *p.leaf_ports, leaves, spines, s.bisection_gbps, s.diameter_hops);
      table << line;
      rows.push_back({{"oversubscription", r.to_string()}, {"leaf_ports", *p.leaf_ports}, {"fabric", topo::summary_to_json(s)}});
    }
    std::cout << table.str();
    const nlohmann::json doc = {{"manifest", {{"version", kVersion}, {"engine", "none"}, {"seed", 0},
                                              {"config", {{"oversubscription", o->ratios}, {"hosts", 256},
                                                          {"radix", 64}, {"rate", "4xNDR"}}},
                                              {"note", "fabric stage only: engines not yet implemented"}}},
                                {"rows", rows}};
    write_file_atomic(o->out + "/whatif.json", doc.dump(2) + "\n");
    std::cerr << "wrote " << o->out << "/whatif.json\n";
  });
}

} // namespace ibn::app
