// `ibnetsim topo routes`: build routing tables for a fabric and dump the LFTs in ibroute's layout.
#include "apps/commands.hpp"
#include "apps/fabric_loader.hpp"
#include "models/routing/dump.hpp"
#include "models/routing/routing.hpp"
#include "sim/atomic_file.hpp"

#include <iostream>
#include <memory>
#include <sstream>

namespace ibn::app {
namespace {

struct RoutesOpts {
  std::string input, routing = "minhop", roots, out = "-";
};

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, ','))
    if (!cur.empty()) out.push_back(cur);
  return out;
}

} // namespace

void add_routes_command(CLI::App& topo) {
  auto o = std::make_shared<RoutesOpts>();
  std::string names;
  const auto registry = routing::builtin_routing();
  for (const auto& e : registry.entries()) names += (names.empty() ? "" : ", ") + e.name;
  auto* c =
      topo.add_subcommand("routes", "Compute routing tables and print each switch's LFT (ibroute layout).\n"
                                    "Example: ibnetsim topo routes fabric.json --routing ftree -o lfts.txt");
  c->add_option("FABRIC", o->input, "fabric JSON or ibnetdiscover output")->required();
  c->add_option("--routing", o->routing, "routing algorithm: " + names + " (see `ibnetsim list`)")
      ->capture_default_str();
  c->add_option("--roots", o->roots, "updn: comma-separated root switch names (default: the highest tier)");
  c->add_option("-o,--output", o->out, "output file ('-' = stdout)")->capture_default_str();
  c->callback([o, c] {
    if (o->out != "-") refuse_output_equal_to_input(o->out, {o->input}, "-o");
    const auto reg = routing::builtin_routing();
    const auto& algo = reg.get(o->routing); // unknown name: InputError listing the known ones
    const auto loaded = load_fabric_any(o->input);
    for (const auto& w : loaded.warnings) std::cerr << "warning: " << w << "\n";
    routing::RoutingOptions opt;
    opt.roots = split_commas(o->roots);
    if (c->count("--roots") && o->routing != "updn")
      throw InputError("--roots: only updn takes root switches, not '" + o->routing + "'");
    if (c->count("--roots") && opt.roots.empty()) throw InputError("--roots: no switch name given");
    refuse_listed_twice(opt.roots, "--roots");
    const auto tables = algo.factory(loaded.fabric, opt);
    for (const auto& n : tables.notes()) std::cerr << "note: " << n << "\n";
    if (tables.lids().max_lid() > routing::kMaxUnicastLid)
      std::cerr << "warning: LIDs go up to " << tables.lids().max_lid()
                << ", beyond InfiniBand's unicast range 0x0001-0xBFFF (49151); a real subnet this size needs "
                   "several subnets\n";
    std::ostringstream s;
    if (const std::size_t synthetic = routing::write_lft_dump(loaded.fabric, tables, s); synthetic > 0)
      std::cerr
          << "note: " << synthetic << " node(s) have no GUID in " << o->input
          << " (generated fabrics carry none): the dump gives them synthetic ones, 0x1000000000000000 + "
             "node index + 1\n";
    if (o->out == "-")
      std::cout << s.str();
    else {
      write_file_atomic(o->out, s.str());
      std::cerr << "wrote " << o->out << ": " << tables.switch_nodes().size() << " switches x "
                << tables.num_hcas() << " destinations (" << tables.algorithm() << ")\n";
    }
  });
}

} // namespace ibn::app
