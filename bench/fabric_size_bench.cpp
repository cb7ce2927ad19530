// Cost that follows the work (issue 19, item 3): the same job — 8 nodes x 1 GPU, a 4 MiB ring AllReduce, 20
// iterations — on a 40-host fat-tree (3 tiers, radix 8) and inside a 40,000-host one (3 tiers, radix 64),
// through the scenario runner (scen::run_scenario), on both engines, in one run. Reports the engine time
// (RunResult::wall_s, what `ibnetsim run` prints as "(N events, X s)": engine construction to the end of
// the run, the world — fabric, routing tables — built before), the world's build time, peak RSS, and the
// 40,000 / 40 ratio of engine time per engine. Reports figures, asserts nothing.
//
// Usage: fabric_size_bench [--engine packet|flow|both] [--reps R] [--no-symmetric-steps]
// --no-symmetric-steps: the flow engine runs the ring's transfer DAG through SimGrid
// (flow.symmetric_steps off) instead of the symmetric-steps shortcut, its default for this job.
// Each run is a child process (its own peak RSS; SimGrid runs once per process); with --reps R the fastest
// engine time of R repetitions is reported. The last line starts with "RESULT" (key=value pairs).
#include "scenarios/runner.hpp"
#include "scenarios/scenario.hpp"
#include "sim/child_processes.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

using namespace ibn;

std::uint64_t peak_rss_bytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  return 0;
}

nlohmann::json scenario(int radix, int hosts, bool symmetric_steps) {
  return {{"name", "eight-nodes-in-" + std::to_string(hosts)},
          {"flow", {{"symmetric_steps", symmetric_steps}}},
          {"seed", 1},
          {"fabric",
           {{"generator", "fat-tree"},
            {"params", {{"tiers", 3}, {"radix", radix}, {"hosts", hosts}, {"rate", "NDR"}}}}},
          {"routing", {{"algorithm", "ftree"}, {"adaptive", "off"}}},
          {"jobs",
           {{{"name", "train"},
             {"nodes", 8},
             {"gpus_per_node", 1},
             {"nics_per_node", 1},
             {"placement", "linear"},
             {"workload",
              {{"op", "allreduce"},
               {"sizes", {"4M"}},
               {"algorithm", "ring"},
               {"iterations", 20},
               {"warmup", 2}}}}}}};
}

struct Figures {
  double engine_s = 0, world_s = 0;
  std::uint64_t events = 0, rss = 0;
  double mean_us = 0; ///< the AllReduce's mean measured time
};

Figures run_once(int radix, int hosts, scen::EngineKind engine, bool symmetric_steps) {
  const std::string text = run_in_child_process([&] {
    const scen::Scenario s = scen::make_scenario(scenario(radix, hosts, symmetric_steps), "bench", ".");
    const auto t0 = std::chrono::steady_clock::now();
    const scen::World w = scen::build_world(s);
    const double world_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    scen::RunOptions opt;
    opt.engine = engine;
    const scen::RunResult r = scen::run_scenario(s, w, opt);
    const auto& us = r.collectives.at(0).samples_us;
    double mean_us = 0;
    for (const double u : us) mean_us += u / static_cast<double>(us.size());
    return nlohmann::json{{"engine_s", r.wall_s},
                          {"world_s", world_s},
                          {"events", r.engine.events},
                          {"rss", peak_rss_bytes()},
                          {"mean_us", mean_us}}
        .dump();
  });
  const auto j = nlohmann::json::parse(text);
  return {j["engine_s"], j["world_s"], j["events"], j["rss"], j["mean_us"]};
}

} // namespace

int main(int argc, char** argv) {
  std::vector<scen::EngineKind> engines{scen::EngineKind::Packet, scen::EngineKind::Flow};
  int reps = 1;
  bool symmetric_steps = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--engine" && i + 1 < argc) {
      const std::string e = argv[++i];
      if (e != "both") engines = {scen::parse_engine(e, "--engine")};
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--no-symmetric-steps") {
      symmetric_steps = false;
    } else {
      std::fprintf(
          stderr, "usage: fabric_size_bench [--engine packet|flow|both] [--reps R] [--no-symmetric-steps]\n");
      return 2;
    }
  }
  std::string result = "RESULT";
  for (const auto engine : engines) {
    const std::string name = scen::to_string(engine);
    Figures small, large;
    for (int r = 0; r < reps; ++r) {
      const Figures s = run_once(8, 40, engine, symmetric_steps),
                    l = run_once(64, 40000, engine, symmetric_steps);
      if (r == 0 || s.engine_s < small.engine_s) small = s;
      if (r == 0 || l.engine_s < large.engine_s) large = l;
    }
    const double ratio = small.engine_s > 0 ? large.engine_s / small.engine_s : 0;
    for (const auto& [hosts, f] : {std::pair{40, small}, std::pair{40000, large}})
      std::printf("%-6s %6d hosts: engine %.4f s (%llu events), world %.3f s, peak RSS %.0f MB, mean %.2f us\n",
                  name.c_str(), hosts, f.engine_s, static_cast<unsigned long long>(f.events), f.world_s,
                  static_cast<double>(f.rss) / 1e6, f.mean_us);
    std::printf("%-6s engine time 40,000 / 40 hosts: %.2fx\n", name.c_str(), ratio);
    char buf[256];
    std::snprintf(buf, sizeof buf, " %s_engine_s_40=%.4f %s_engine_s_40000=%.4f %s_ratio=%.2f %s_rss_mb_40000=%.0f",
                  name.c_str(), small.engine_s, name.c_str(), large.engine_s, name.c_str(), ratio, name.c_str(),
                  static_cast<double>(large.rss) / 1e6);
    result += buf;
  }
  std::printf("%s\n", result.c_str());
  return 0;
}
