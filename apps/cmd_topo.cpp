#include "apps/commands.hpp"
namespace ibn::app {
void add_topo_commands(CLI::App& app) { app.add_subcommand("topo", "Generate, import, describe and export fabrics."); }
}
