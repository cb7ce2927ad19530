// ibnetsim — the one command-line entry point. See docs/CLI.md for the contract.
#include "apps/commands.hpp"
#include "sim/atomic_file.hpp"
#include "sim/error.hpp"
#include "sim/version.hpp"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>

namespace ibn::app {

void write_file_atomic(const std::string& path, const std::string& content) {
  ibn::write_file_atomic(path, content);
}

} // namespace ibn::app

int main(int argc, char** argv) {
  CLI::App app{"ibnetsim " + std::string(ibn::kVersion) +
               " - discrete-event simulator of InfiniBand/RoCE GPU clusters"};
  app.set_version_flag("--version", std::string(ibn::kVersion));
  app.require_subcommand(1);
  ibn::app::add_topo_commands(app);
  ibn::app::add_list_command(app);
  ibn::app::add_whatif_command(app);
  ibn::app::add_perftest_command(app);
  ibn::app::add_run_command(app);
  ibn::app::add_sweep_command(app);
  ibn::app::add_validate_command(app);
  ibn::app::add_nccl_tests_command(app);
  ibn::app::add_calibrate_command(app);
  ibn::app::add_report_command(app);
  ibn::app::add_experiment_command(app);
  ibn::app::add_plan_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  } catch (const ibn::InputError& e) {
    std::cerr << "ibnetsim: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "ibnetsim: internal error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
