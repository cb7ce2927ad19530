// `ibnetsim list`: prints every registry (topology generators, routing, AR policies, CC, collectives).
#include "apps/commands.hpp"
#include "models/packet/config.hpp"
#include "models/routing/routing.hpp"
#include "topology/generators.hpp"

#include <iostream>

namespace ibn::app {

void add_list_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("list", "List registered topology generators, routing algorithms, AR policies, "
                                         "congestion-control algorithms and collectives.\nExample: ibnetsim list");
  cmd->callback([] {
    auto print = [](const auto& reg) {
      std::cout << reg.kind() << "s:\n";
      for (const auto& e : reg.entries()) std::cout << "  " << e.name << std::string(e.name.size() < 18 ? 18 - e.name.size() : 1, ' ') << e.description << "\n";
    };
    print(topo::builtin_generators());
    print(routing::builtin_routing());
    std::cout << "adaptive routing policies:\n";
    for (auto m : {pkt::ArMode::Off, pkt::ArMode::PerPacket, pkt::ArMode::Bounded})
      std::cout << "  " << pkt::to_string(m) << "\n";
  });
}

} // namespace ibn::app
