// Routing-table build time and memory on large fabrics. Reports figures, asserts nothing.
//
// Usage: routing_bench [--tiers T] [--radix R] [--algo NAME]... [--deadlock]
// Default: the 65,536-host 3-tier radix-64 fat-tree (`topo generate fat-tree --tiers 3 --radix 64`), ftree.
#include "models/routing/deadlock.hpp"
#include "models/routing/routing.hpp"
#include "sim/rng.hpp"
#include "topology/generators.hpp"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Peak and current resident set size of this process in MiB (Linux /proc; 0 elsewhere).
std::pair<double, double> rss_mib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  double peak = 0, cur = 0;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) peak = std::stod(line.substr(6)) / 1024.0;
    if (line.rfind("VmRSS:", 0) == 0) cur = std::stod(line.substr(6)) / 1024.0;
  }
  return {peak, cur};
}

} // namespace

int main(int argc, char** argv) {
  int tiers = 3, radix = 64;
  bool deadlock = false;
  std::vector<std::string> algos;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--tiers" && i + 1 < argc)
      tiers = std::stoi(argv[++i]);
    else if (a == "--radix" && i + 1 < argc)
      radix = std::stoi(argv[++i]);
    else if (a == "--algo" && i + 1 < argc)
      algos.emplace_back(argv[++i]);
    else if (a == "--deadlock")
      deadlock = true;
    else {
      std::fprintf(stderr, "usage: %s [--tiers T] [--radix R] [--algo NAME]... [--deadlock]\n", argv[0]);
      return 2;
    }
  }
  if (algos.empty()) algos.emplace_back("ftree");

  auto t0 = std::chrono::steady_clock::now();
  ibn::topo::FatTreeParams p;
  p.tiers = tiers;
  p.radix = radix;
  const auto fabric = ibn::topo::build_fat_tree(p);
  std::printf("fabric: %s: %zu HCAs, %zu switches, %zu links; generated in %.2f s\n", fabric.name.c_str(),
              fabric.hcas().size(), fabric.switches().size(), fabric.num_links(), seconds_since(t0));
  auto [peak0, cur0] = rss_mib();
  std::printf("rss after generation: %.0f MiB (peak %.0f MiB)\n", cur0, peak0);

  const auto reg = ibn::routing::builtin_routing();
  for (const auto& name : algos) {
    t0 = std::chrono::steady_clock::now();
    const auto tables = reg.get(name).factory(fabric, {});
    const double build_s = seconds_since(t0);
    auto [peak, cur] = rss_mib();
    std::printf("%s: built in %.2f s; tables %.1f MiB (%s); rss %.0f MiB, peak %.0f MiB\n", name.c_str(),
                build_s, static_cast<double>(tables.memory_bytes()) / (1024.0 * 1024.0),
                tables.storage_description().c_str(), cur, peak);

    // Lookup and path speed: 1M random next_hop lookups, 100k random routes.
    ibn::Rng rng(1);
    const auto& sw = tables.switch_nodes();
    const auto n = tables.num_hcas();
    t0 = std::chrono::steady_clock::now();
    std::uint64_t sum = 0;
    for (int i = 0; i < 1'000'000; ++i)
      sum += tables.next_hop(sw[rng.uniform_below(sw.size())],
                             static_cast<ibn::routing::HcaIndex>(rng.uniform_below(n)));
    const double lookup_s = seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    std::size_t links = 0;
    for (int i = 0; i < 100'000; ++i)
      links += tables
                   .route(static_cast<ibn::routing::HcaIndex>(rng.uniform_below(n)),
                          static_cast<ibn::routing::HcaIndex>(rng.uniform_below(n)))
                   .size();
    const double route_s = seconds_since(t0);
    std::printf("%s: next_hop %.1f ns/lookup (checksum %llu); route() %.2f us/path, mean %.2f cables\n",
                name.c_str(), lookup_s * 1e3, static_cast<unsigned long long>(sum), route_s * 10.0,
                static_cast<double>(links) / 100'000.0);
    if (deadlock) {
      t0 = std::chrono::steady_clock::now();
      const auto rep = ibn::routing::check_deadlock_free(fabric, tables, ibn::routing::single_vl());
      std::printf("%s: deadlock check %.2f s: %s, %zu channels, %zu dependencies\n", name.c_str(),
                  seconds_since(t0), rep.deadlock_free ? "acyclic" : "CYCLE", rep.channels, rep.dependencies);
    }
  }
  return 0;
}
