// Scale of the flow engine: ring AllReduce on a 3-tier fat-tree, written against eng::Engine (issue 7 item
// 4). Reports figures, asserts nothing.
//
// Ring AllReduce of S bytes over n ranks, rank r on HCA r (linear placement): 2(n-1) steps; at each step
// every rank sends S/n bytes to rank r+1, and rank r posts step k+1 as soon as it has received step k from
// rank r-1 (step 0 is posted at t = 0). Completion = the last delivery.
//
// Each size runs in its own child process (SimGrid allows one engine per process), so the peak RSS printed
// is that of one simulation. Compare with flow_naive_reference (same ring, one s4u actor per rank, one
// mailbox comm per step per rank, on SimGrid's own fat-tree zone of the same shape).
//
// --steps K runs only the first K of the 2(n-1) steps (every rank still sends K messages) and prints the
// measured rate with the full ring's time extrapolated from it (steps are alike in a linear ring).
//
// --s4u forces the flow engine's s4u Comm path (FlowConfig::s4u_comms) instead of SimGrid's network model.
//
// Usage: flow_scale_bench [--ranks N]... [--size-bytes S] [--radix R] [--steps K] [--ar] [--s4u] [--json]
// Default: --ranks 4096 --ranks 16384 --size-bytes 67108864 --radix 64 (3 tiers, NDR, non-blocking).
#include "models/flow/flow_engine.hpp"
#include "models/routing/routing.hpp"
#include "sim/child_processes.hpp"
#include "topology/generators.hpp"

#include <nlohmann/json.hpp>

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// CPU seconds (user + system) this process has used: less sensitive than wall time to a loaded machine.
double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

double peak_rss_mib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return 0;
}

/// The ring: per-rank step counters only; the delivery callback captures 16 bytes (no allocation).
struct Ring {
  ibn::eng::Engine* engine = nullptr;
  std::uint32_t n = 0;
  std::uint32_t steps = 0;
  std::uint64_t chunk = 0;
  ibn::Time last;

  void post(std::uint32_t rank, std::uint32_t step) {
    ibn::eng::TransferSpec s;
    s.src = rank;
    s.dst = (rank + 1) % n;
    s.bytes = chunk;
    engine->send(s, [this, dst = s.dst, step](ibn::Time t) {
      last = t;
      if (step + 1 < steps) post(dst, step + 1);
    });
  }
};

nlohmann::json run_one(std::uint32_t ranks, std::uint64_t size, int radix, std::uint32_t max_steps, bool ar,
                       bool s4u) {
  const auto t0 = std::chrono::steady_clock::now();
  ibn::topo::FatTreeParams p;
  p.tiers = 3;
  p.radix = radix;
  p.hosts = ranks;
  const ibn::topo::Fabric f = ibn::topo::build_fat_tree(p);
  const ibn::routing::RoutingTables t = ibn::routing::route_ftree(f);
  const double t_fabric = seconds_since(t0);
  if (t.num_hcas() < ranks) throw std::runtime_error("fabric has fewer HCAs than ranks");

  const auto t1 = std::chrono::steady_clock::now();
  ibn::flow::FlowConfig cfg;
  cfg.adaptive_routing = ar;
  cfg.s4u_comms = s4u;
  ibn::flow::FlowEngine e(f, t, cfg);
  const double t_platform = seconds_since(t1);

  Ring ring;
  ring.engine = &e;
  ring.n = ranks;
  const std::uint32_t full_steps = 2 * (ranks - 1);
  ring.steps = max_steps > 0 && max_steps < full_steps ? max_steps : full_steps;
  ring.chunk = size / ranks;
  const auto t2 = std::chrono::steady_clock::now();
  const double c2 = cpu_seconds();
  for (std::uint32_t r = 0; r < ranks; ++r) ring.post(r, 0);
  e.run();
  const double t_run = seconds_since(t2);
  const double cpu_run = cpu_seconds() - c2;
  const auto rep = e.report();

  std::size_t switches = 0;
  for (const auto& nd : f.nodes()) switches += nd.kind == ibn::topo::NodeKind::Switch ? 1 : 0;
  const double messages = static_cast<double>(ranks) * ring.steps;
  return {{"ranks", ranks},
          {"size_bytes", size},
          {"chunk_bytes", ring.chunk},
          {"steps", ring.steps},
          {"full_steps", full_steps},
          {"extrapolated_full_cpu_s", cpu_run * full_steps / ring.steps},
          {"messages", rep.transfers},
          {"switches", switches},
          {"cables", f.num_links()},
          {"adaptive_routing", ar},
          {"simgrid_path", e.simgrid_path()},
          {"simulated_ms", ring.last.to_us() * 1e-3},
          {"wall_fabric_and_routing_s", t_fabric},
          {"wall_platform_s", t_platform},
          {"wall_run_s", t_run},
          {"cpu_run_s", cpu_run},
          {"messages_per_wall_s", messages / t_run},
          {"peak_rss_mib", peak_rss_mib()}};
}

} // namespace

int main(int argc, char** argv) {
  std::vector<std::uint32_t> ranks;
  std::uint64_t size = 64ull << 20;
  int radix = 64;
  bool ar = false, json = false, s4u = false;
  std::uint32_t steps = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--ranks" && i + 1 < argc)
      ranks.push_back(static_cast<std::uint32_t>(std::stoul(argv[++i])));
    else if (a == "--size-bytes" && i + 1 < argc)
      size = std::stoull(argv[++i]);
    else if (a == "--radix" && i + 1 < argc)
      radix = std::stoi(argv[++i]);
    else if (a == "--steps" && i + 1 < argc)
      steps = static_cast<std::uint32_t>(std::stoul(argv[++i]));
    else if (a == "--ar")
      ar = true;
    else if (a == "--json")
      json = true;
    else if (a == "--s4u")
      s4u = true;
    else {
      std::fprintf(
          stderr,
          "usage: %s [--ranks N]... [--size-bytes S] [--radix R] [--steps K] [--ar] [--s4u] [--json]\n",
          argv[0]);
      return 2;
    }
  }
  if (ranks.empty()) ranks = {4096, 16384};
  nlohmann::json all = nlohmann::json::array();
  for (const std::uint32_t n : ranks) {
    const std::string out =
        ibn::run_in_child_process([&] { return run_one(n, size, radix, steps, ar, s4u).dump(); });
    const auto j = nlohmann::json::parse(out);
    all.push_back(j);
    if (!json)
      std::printf("flow ring allreduce: %6u ranks, %llu B (chunk %llu B), %u of %u steps, %llu messages: "
                  "simulated %.4f ms, "
                  "run wall %.2f s (cpu %.2f s) + %.2f s fabric/routing + %.2f s platform, %.0f msg/s, peak "
                  "RSS %.0f MiB [%s]\n",
                  n, static_cast<unsigned long long>(size), j["chunk_bytes"].get<unsigned long long>(),
                  j["steps"].get<unsigned>(), j["full_steps"].get<unsigned>(),
                  j["messages"].get<unsigned long long>(), j["simulated_ms"].get<double>(),
                  j["wall_run_s"].get<double>(), j["cpu_run_s"].get<double>(),
                  j["wall_fabric_and_routing_s"].get<double>(), j["wall_platform_s"].get<double>(),
                  j["messages_per_wall_s"].get<double>(), j["peak_rss_mib"].get<double>(),
                  j["simgrid_path"].get<std::string>().c_str());
    if (j["steps"] != j["full_steps"])
      std::printf("  full ring extrapolated: %.0f s cpu\n", j["extrapolated_full_cpu_s"].get<double>());
    std::fflush(stdout);
  }
  if (json) std::printf("%s\n", all.dump(2).c_str());
  return 0;
}
