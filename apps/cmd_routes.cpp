// `ibnetsim topo routes`: placeholder until models/routing lands.
#include "apps/commands.hpp"
namespace ibn::app {
void add_routes_command(CLI::App& topo) { (void)topo; }
} // namespace ibn::app
