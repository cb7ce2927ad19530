// ibnetsim — the one command-line entry point. See docs/CLI.md for the contract.
#include "apps/commands.hpp"
#include "sim/atomic_file.hpp"
#include "sim/child_processes.hpp"
#include "sim/error.hpp"
#include "sim/version.hpp"

#include <nlohmann/json.hpp>

#include <iostream>

namespace ibn::app {

void write_file_atomic(const std::string& path, const std::string& content) {
  ibn::write_file_atomic(path, content);
}

} // namespace ibn::app

int main(int argc, char** argv) {
  // SIGINT/SIGTERM reach forked children (the flow engine's) and are waited for before we exit.
  ibn::install_signal_forwarding();
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
    // An unknown command word (`ibnetsim foo`, `topo describe`) drew CLI11's "A subcommand is required":
    // name it and the commands of that level instead.
    const CLI::App* level = &app;
    std::string path = "ibnetsim";
    for (int i = 1; i < argc; ++i) {
      const std::string word = argv[i];
      const auto subs = level->get_subcommands([](const CLI::App*) { return true; });
      if (word.empty() || word[0] == '-' || subs.empty()) break;
      const CLI::App* next = nullptr;
      std::string known;
      for (const auto* sc : subs) {
        if (sc->check_name(word)) next = sc;
        known += (known.empty() ? "" : ", ") + sc->get_name();
      }
      if (next == nullptr) {
        if (!level->get_options([](const CLI::Option* o) { return o->get_positional(); }).empty()) break;
        throw ibn::InputError("'" + word + "' is not a command of " + path + " (commands: " + known + "; " +
                              path + " --help lists them)");
      }
      level = next;
      path += " " + next->get_name();
    }
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  } catch (const ibn::InputError& e) {
    std::cerr << "ibnetsim: error: " << e.what() << "\n";
    return 2;
  } catch (const nlohmann::json::parse_error& e) {
    // Readers of user JSON go through ibn::parse_json_text (file, line, key); this is the safety net.
    std::cerr << "ibnetsim: error: invalid JSON input: " << e.what() << "\n";
    return 2;
  } catch (const nlohmann::json::out_of_range& e) {
    if (e.id != 406) { // 406: a number in the input overflows a double
      std::cerr << "ibnetsim: internal error: " << e.what() << "\n";
      return 1;
    }
    std::cerr << "ibnetsim: error: invalid JSON input: " << e.what() << "\n";
    return 2;
  } catch (const nlohmann::json::type_error& e) {
    if (e.id != 316) { // 316: text from an input that is not UTF-8 cannot be written as JSON
      std::cerr << "ibnetsim: internal error: " << e.what() << "\n";
      return 1;
    }
    std::cerr << "ibnetsim: error: an input holds bytes that are not UTF-8 and cannot be written to JSON: "
              << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "ibnetsim: internal error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
