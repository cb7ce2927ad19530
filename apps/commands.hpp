#pragma once
// Each apps/cmd_*.cpp adds one family of subcommands to the ibnetsim command line.
// Subcommand callbacks throw ibn::InputError for bad input (exit 2); main() maps exceptions to exit codes.
#include <CLI/CLI.hpp>

#include "scenarios/schema.hpp"
#include "sim/atomic_file.hpp"
#include "sim/error.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

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

/// A study's list option, each value once: a value twice would run its point (or build its design) twice.
/// Validator of an output-folder option (-o of run, whatif, sweep, plan, experiment, calibrate measure,
/// nccl-tests): an empty path (it wrote into the current folder's parent: `run -o ''` wrote /results.json)
/// and '-' (standard output: these commands write several files) are refused.
inline const CLI::Validator kOutputFolder(
    [](std::string& v) -> std::string {
      if (v.empty()) return "empty path: name the output folder";
      if (v == "-")
        return "'-' means standard output, but this command writes a folder of files: name a folder";
      if (names_stdout(v))
        return v + " is standard output, but this command writes a folder of files: name a folder";
      std::error_code ec;
      if (std::filesystem::exists(v, ec) && !std::filesystem::is_directory(v, ec))
        return v + " is a file, not a folder";
      return {};
    },
    "FOLDER");

/// Validator of --seed: a whole number from 0 to 9.2e18 (the scenario key's range). "-1" wrapped to 2^64 - 1
/// in unsigned options, and CLI11's NonNegativeNumber printed a 309-digit bound.
inline const CLI::Validator kSeed(
    [](std::string& v) -> std::string {
      const bool digits = !v.empty() && v.find_first_not_of("0123456789") == std::string::npos;
      if (!digits || v.size() > 19 || (v.size() == 19 && v > "9200000000000000000"))
        return "'" + v + "': a seed is a whole number from 0 to 9200000000000000000";
      return {};
    },
    "SEED");

/// Validator of a count flag (--nodes, --ppn): a whole number >= 1 (CLI11's PositiveNumber printed a
/// 309-digit bound).
inline const CLI::Validator kCount(
    [](std::string& v) -> std::string {
      const bool digits = !v.empty() && v.find_first_not_of("0123456789") == std::string::npos;
      if (!digits || v.find_first_not_of('0') == std::string::npos || v.size() > 9)
        return "'" + v + "': expected a whole number from 1 to 999999999";
      return {};
    },
    "N");

/// The items of a comma-separated flag value ("1M,4M"), empty items dropped.
inline std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    const auto end = std::min(s.find(',', start), s.size());
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

/// A comma-separated flag value with an empty item ("64K,,1M", "1M,", ",1M"): split_list would drop it
/// silently. InputError naming the flag.
inline void refuse_empty_items(const std::string& s, const std::string& flag) {
  if (s.empty() || s.front() == ',' || s.back() == ',' || s.find(",,") != std::string::npos)
    throw InputError(flag + " '" + s + "': an empty item in the list (two commas, or one at an end)");
}

/// A value given twice in a list flag, compared by `values` (parsed: 64K and 65536 are one size) and named
/// by `spelled` (as the user wrote each).
template <typename T>
void refuse_listed_twice(const std::vector<T>& values, const std::vector<std::string>& spelled,
                         const std::string& flag) {
  for (std::size_t i = 0; i < values.size(); ++i)
    for (std::size_t k = 0; k < i; ++k)
      if (values[i] == values[k])
        throw InputError(flag + ": '" + spelled[i] + "'" +
                         (spelled[i] == spelled[k] ? "" : " (the same as '" + spelled[k] + "')") +
                         " is listed twice");
}
inline void refuse_listed_twice(const std::vector<std::string>& values, const std::string& flag) {
  refuse_listed_twice(values, values, flag);
}

/// A --set key in one spelling, as the scenario's key parser reads it (scen::parse_key_path): "jobs.0.nodes",
/// "jobs[0].nodes", "jobs[0]nodes" and "jobs[00].nodes" are all "jobs[0].nodes". A path the parser refuses
/// is returned as written (the set itself then fails with the parser's error).
inline std::string canonical_set_key(const std::string& key) {
  std::vector<scen::PathToken> tokens;
  try {
    tokens = scen::parse_key_path(key, "--set");
  } catch (const InputError&) {
    return key;
  }
  std::string out;
  for (const auto& t : tokens)
    out +=
        t.is_index && !out.empty() ? "[" + std::to_string(t.index) + "]" : (out.empty() ? "" : ".") + t.key;
  return out;
}

/// `--set KEY=VALUE` given twice for one KEY (in any spelling), or a key inside an object that a later --set
/// gives whole (`fabric.params.radix=8`, then `fabric.params={...}`): the later one used to win silently.
/// InputError naming both. A member after its whole object refines it and is kept. Items without '=' are
/// left to the set itself ("expected key=value").
inline void refuse_set_twice(const std::vector<std::string>& sets, const std::string& flag = "--set") {
  std::vector<std::string> keys;
  for (const auto& kv : sets)
    keys.push_back(kv.find('=') == std::string::npos ? std::string()
                                                     : canonical_set_key(kv.substr(0, kv.find('='))));
  auto inside = [](const std::string& inner, const std::string& outer) {
    return inner.size() > outer.size() && inner.compare(0, outer.size(), outer) == 0 &&
           (inner[outer.size()] == '.' || inner[outer.size()] == '[');
  };
  for (std::size_t i = 0; i < keys.size(); ++i)
    for (std::size_t k = 0; k < i && !keys[i].empty(); ++k) {
      if (keys[i] == keys[k])
        throw InputError(flag + " " + sets[i] + ": key '" + keys[i] + "' is already set by " + flag + " " +
                         sets[k] + "; give each key once");
      if (!keys[k].empty() && inside(keys[k], keys[i]))
        throw InputError(flag + " " + sets[i] + ": it sets '" + keys[i] + "' whole, which drops '" + keys[k] +
                         "' set before by " + flag + " " + sets[k] +
                         "; give the member after the object, or "
                         "put it in the object");
    }
}

/// A key a command-line flag sets (--engine: engine, --seed: seed) also given as --set: one would win
/// silently. InputError when `flag_given` and a --set names `key` (in any spelling).
inline void refuse_flag_and_set(const std::vector<std::string>& sets, const std::string& key,
                                const std::string& flag, bool flag_given) {
  if (!flag_given) return;
  for (const auto& kv : sets)
    if (kv.find('=') != std::string::npos && canonical_set_key(kv.substr(0, kv.find('='))) == key)
      throw InputError("--set " + kv + ": key '" + key + "' is also set by " + flag + "; give one of them");
}

/// The files a command writes into its -o folder: one that exists as a folder would fail only after the
/// whole run (`plan` wrote plan.json, then failed on a report.html folder). Refused before anything runs.
inline void refuse_folders_in_output(const std::string& out, const std::vector<std::string>& files) {
  std::error_code ec;
  for (const auto& f : files)
    if (const auto p = std::filesystem::path(out) / f; std::filesystem::is_directory(p, ec))
      throw InputError("-o " + out + ": " + p.string() + " is a folder, where this command writes its " + f +
                       "; remove it or choose another -o");
}

/// Ratios compared by value (1:1 and 2:2 are one ratio): `R` has value() and to_string() (topo::Ratio).
/// `spelled`: the tokens as the user wrote them (same count), named in the error ("2:2 and 1:1 are ...").
template <typename R>
void refuse_equal_ratios(const std::vector<R>& ratios, const std::string& flag,
                         const std::vector<std::string>& spelled = {}) {
  auto name = [&](std::size_t i) {
    return spelled.size() == ratios.size() ? spelled[i] : ratios[i].to_string();
  };
  for (std::size_t i = 0; i < ratios.size(); ++i)
    for (std::size_t k = 0; k < i; ++k)
      if (ratios[i].value() == ratios[k].value())
        throw InputError(flag + ": " + name(i) + " and " + name(k) + " are the same ratio");
}

/// `--tail-precision P%` and `--max-iters N` (run, whatif): the same flags, help and default on both.
inline void add_tail_precision_options(CLI::App* cmd, std::string& tail_precision, std::int64_t& max_iters) {
  auto* tp = cmd->add_option(
      "--tail-precision", tail_precision,
      "run more iterations (in segments) until the 95 % interval of every p99 is within P % of it, "
      "e.g. 5%");
  // Signed, so that a negative count is refused rather than wrapped to a huge one.
  cmd->add_option("--max-iters", max_iters, "with --tail-precision: most measured iterations per collective")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{100000000}))
      ->needs(tp);
}

/// Writes `content` to `path` atomically (temporary file in the same folder, then rename).
void write_file_atomic(const std::string& path, const std::string& content);

} // namespace ibn::app
