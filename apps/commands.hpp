#pragma once
// Each apps/cmd_*.cpp adds one family of subcommands to the ibnetsim command line.
// Subcommand callbacks throw ibn::InputError for bad input (exit 2); main() maps exceptions to exit codes.
#include <CLI/CLI.hpp>

namespace ibn::app {

void add_topo_commands(CLI::App& app);
/// `topo routes` (apps/cmd_routes.cpp), added under the `topo` subcommand.
void add_routes_command(CLI::App& topo);
void add_list_command(CLI::App& app);
void add_whatif_command(CLI::App& app);
void add_perftest_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_sweep_command(CLI::App& app);
void add_validate_command(CLI::App& app);
void add_nccl_tests_command(CLI::App& app);
void add_calibrate_command(CLI::App& app);
void add_report_command(CLI::App& app);
void add_experiment_command(CLI::App& app);
void add_plan_command(CLI::App& app);

/// Writes `content` to `path` atomically (temporary file in the same folder, then rename).
void write_file_atomic(const std::string& path, const std::string& content);

} // namespace ibn::app
