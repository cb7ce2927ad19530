// Scale benchmark for the foundation: generate and describe a 3-tier radix-64 non-blocking fat-tree
// (65,536 hosts, 5,120 switches, 196,608 cables), then save and reload it as JSON.
// Prints wall seconds per phase and peak resident memory. Reports figures only; asserts nothing.
// Usage: topo_scale_bench [radix] [tiers]
#include "topology/describe.hpp"
#include "topology/fabric_io.hpp"
#include "topology/generators.hpp"

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

namespace {
double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
double peak_rss_mib() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0; // Linux reports KiB
}
} // namespace

int main(int argc, char** argv) {
  ibn::topo::FatTreeParams p;
  p.radix = argc > 1 ? std::atoi(argv[1]) : 64;
  p.tiers = argc > 2 ? std::atoi(argv[2]) : 3;
  p.oversubscription = {{1, 1}, {1, 1}};
  p.oversubscription.resize(static_cast<std::size_t>(p.tiers - 1));
  const double t0 = now_s();
  const auto f = ibn::topo::build_fat_tree(p);
  const double t1 = now_s();
  const auto s = ibn::topo::describe(f);
  const double t2 = now_s();
  std::ostringstream js;
  ibn::topo::save_fabric_json(f, js);
  const double t3 = now_s();
  const auto j = nlohmann::json::parse(js.str());
  const auto g = ibn::topo::fabric_from_json(j, "<memory>");
  const double t4 = now_s();
  std::printf("fat-tree tiers=%d radix=%d: hosts=%zu switches=%zu links=%zu\n", p.tiers, p.radix, s.hosts,
              s.switches, s.links);
  std::printf("bisection=%.0f Gb/s (closed form %.0f) diameter=%d paths min/mean/max=%.0f/%.1f/%.0f\n",
              s.bisection_gbps, s.bisection_closed_form_gbps.value_or(0), s.diameter_hops, s.path_diversity_min,
              s.path_diversity_mean, s.path_diversity_max);
  std::printf("generate_s=%.3f describe_s=%.3f generate+describe_s=%.3f json_save_s=%.3f json_load_s=%.3f "
              "json_mib=%.1f reloaded_links=%zu peak_rss_mib=%.0f\n",
              t1 - t0, t2 - t1, t2 - t0, t3 - t2, t4 - t3, static_cast<double>(js.str().size()) / 1048576.0,
              g.num_links(), peak_rss_mib());
  return 0;
}
