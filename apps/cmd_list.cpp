// `ibnetsim list`: prints every registry (topology generators, routing, AR policies, CC, collectives).
#include "apps/commands.hpp"
#include "models/engines.hpp"
#include "models/packet/config.hpp"
#include "models/routing/routing.hpp"
#include "scenarios/collectives.hpp"
#include "scenarios/placement.hpp"
#include "scenarios/scenario.hpp"
#include "topology/generators.hpp"

#include <iostream>
#include <memory>

namespace ibn::app {

void add_list_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("list", "List registered topology generators, routing algorithms, AR policies, "
                                         "congestion-control algorithms and collectives.\nExample: ibnetsim list");
  auto keys = std::make_shared<bool>(false);
  cmd->add_flag("--keys", *keys, "print every scenario key (type, unit, default, description) as Markdown");
  cmd->callback([keys] {
    if (*keys) {
      std::cout << scen::scenario_schema().markdown();
      return;
    }
    auto print = [](const auto& reg) {
      // Plural of the registry's kind ("policy" -> "policies").
      std::string kind = reg.kind();
      kind = kind.size() > 1 && kind.back() == 'y' ? kind.substr(0, kind.size() - 1) + "ies" : kind + "s";
      std::cout << kind << ":\n";
      for (const auto& e : reg.entries())
        std::cout << "  " << e.name << std::string(e.name.size() < 18 ? 18 - e.name.size() : 1, ' ')
                  << e.description << "\n";
    };
    const auto engines = eng::builtin_engines();
    print(engines);
    for (const auto& e : engines.entries()) {
      std::cout << "  " << e.name << " models:";
      for (const auto& c : e.factory.capabilities.names()) std::cout << " " << c;
      std::cout << "\n";
    }
    print(topo::builtin_generators());
    print(routing::builtin_routing());
    std::cout << "adaptive routing policies:\n";
    for (const auto& m : choice_names(pkt::kArModes)) std::cout << "  " << m << "\n";
    std::cout << "congestion control:\n";
    for (const auto& c : choice_names(pkt::kCcModes)) std::cout << "  " << c << "\n";
    std::cout << "engine key values (scenario `engine`):\n";
    for (const auto& e : choice_names(scen::kEngines)) std::cout << "  " << e << "\n";
    print(scen::builtin_collectives());
    print(scen::builtin_placement_policies());
  });
}

} // namespace ibn::app
