// `ibnetsim whatif`: placeholder until the engines land (see issue tracker). Kept so the README command works.
#include "apps/commands.hpp"

#include <iostream>

namespace ibn::app {
void add_whatif_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("whatif", "What-if study over oversubscription ratios and routing modes.");
  cmd->callback([] { std::cout << "whatif: not yet implemented\n"; });
}
} // namespace ibn::app
