// The flow engine's symmetric-steps shortcut (scenarios/ring_shortcut.hpp, key flow.symmetric_steps) beside
// the exact path (one SimGrid action per transfer of the built DAG), side by side: the scenario
// `ibnetsim nccl-tests all_reduce_perf -b S -e S -g G --nodes N --algo ring -n 1 -w 0 --engine flow` builds
// (analysis::nccl_tests_scenario), on a 3-tier radix-64 non-blocking NDR fat-tree that fits the job, run both
// ways in child processes (one flow engine per process). Prints per rank count: simulated time, wall time
// (world + run), peak RSS, transfers, and the relative difference. Asserts nothing.
//
// Usage: symmetric_steps_bench [--nodes N]... [-g G] [--size-bytes S] [--exact-max-ranks R] [--json]
// Default: --nodes 256 --nodes 1024 --nodes 4096, -g 1, 64 MiB, exact up to 1,024 ranks.
#include "analysis/nccl_tests.hpp"
#include "scenarios/runner.hpp"
#include "scenarios/scenario.hpp"
#include "sim/child_processes.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace {

double peak_rss_mib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return 0;
}

nlohmann::json run_one(std::uint32_t nodes, std::uint32_t g, std::uint64_t size, bool symmetric) {
  const auto t0 = std::chrono::steady_clock::now();
  ibn::analysis::NcclTestsOptions o;
  o.test = "all_reduce_perf";
  o.nodes = nodes;
  o.gpus_per_node = g;
  o.algorithm = "ring";
  o.engine = "flow";
  o.iters = 1;
  o.warmup = 0;
  o.min_bytes = o.max_bytes = size;
  auto doc = ibn::analysis::nccl_tests_scenario(o);
  const std::uint32_t hosts = nodes * g;
  doc["fabric"] = {{"generator", "fat-tree"},
                   {"params",
                    {{"tiers", 3},
                     {"radix", 64},
                     {"hosts", std::max<std::uint32_t>(hosts, 64)},
                     {"oversubscription", "1:1,1:1"},
                     {"rate", "NDR"}}}};
  const auto s = ibn::scen::make_scenario(
      doc, "bench", "", {std::string("flow.symmetric_steps=") + (symmetric ? "true" : "false")});
  const auto w = ibn::scen::build_world(s);
  const double world_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto r = ibn::scen::run_scenario(s, w);
  const auto& c = r.collectives.at(0);
  double mean = 0;
  for (const double x : c.samples_us) mean += x / static_cast<double>(c.samples_us.size());
  return {{"ranks", hosts},
          {"symmetric_steps", symmetric},
          {"shortcut_used", r.engine.extra.contains("symmetric_steps") &&
                                r.engine.extra["symmetric_steps"].value("collectives", 0) > 0},
          {"mean_us", mean},
          {"network_transfers", c.network_transfers},
          {"engine_events", r.engine.events},
          {"world_s", world_s},
          {"run_s", r.wall_s},
          {"peak_rss_mib", peak_rss_mib()}};
}

} // namespace

int main(int argc, char** argv) {
  std::vector<std::uint32_t> nodes;
  std::uint32_t g = 1, exact_max = 1024;
  std::uint64_t size = 64ull << 20;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--nodes" && i + 1 < argc)
      nodes.push_back(static_cast<std::uint32_t>(std::stoul(argv[++i])));
    else if (a == "-g" && i + 1 < argc)
      g = static_cast<std::uint32_t>(std::stoul(argv[++i]));
    else if (a == "--size-bytes" && i + 1 < argc)
      size = std::stoull(argv[++i]);
    else if (a == "--exact-max-ranks" && i + 1 < argc)
      exact_max = static_cast<std::uint32_t>(std::stoul(argv[++i]));
    else if (a == "--json")
      json = true;
    else {
      std::fprintf(stderr,
                   "usage: %s [--nodes N]... [-g G] [--size-bytes S] [--exact-max-ranks R] [--json]\n",
                   argv[0]);
      return 2;
    }
  }
  if (nodes.empty()) nodes = {256, 1024, 4096};
  nlohmann::json all = nlohmann::json::array();
  if (!json)
    std::printf("%8s %-9s %14s %9s %9s %9s %12s %10s\n", "ranks", "path", "simulated_us", "world_s", "run_s",
                "rss_MiB", "transfers", "diff_%");
  for (const std::uint32_t n : nodes) {
    nlohmann::json row;
    for (const bool sym : {true, false}) {
      if (!sym && n * g > exact_max) continue;
      const auto j =
          nlohmann::json::parse(ibn::run_in_child_process([&] { return run_one(n, g, size, sym).dump(); }));
      row[sym ? "shortcut" : "exact"] = j;
    }
    all.push_back(row);
    if (json) continue;
    for (const char* path : {"shortcut", "exact"}) {
      if (!row.contains(path)) continue;
      const auto& j = row[path];
      double diff = NAN;
      if (row.contains("exact") && row.contains("shortcut"))
        diff = 100.0 * (row["shortcut"]["mean_us"].get<double>() - row["exact"]["mean_us"].get<double>()) /
               row["exact"]["mean_us"].get<double>();
      std::printf("%8u %-9s %14.3f %9.2f %9.2f %9.0f %12llu %10.6f%s\n", n * g, path,
                  j["mean_us"].get<double>(), j["world_s"].get<double>(), j["run_s"].get<double>(),
                  j["peak_rss_mib"].get<double>(), j["network_transfers"].get<unsigned long long>(), diff,
                  std::string(path) == "shortcut" && !j["shortcut_used"].get<bool>() ? " (fell back)" : "");
    }
    std::fflush(stdout);
  }
  if (json) std::printf("%s\n", all.dump(2).c_str());
  return 0;
}
