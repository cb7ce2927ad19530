// Packet engine vs flow engine on the same workloads (issue 7 item 3: where and why they diverge). Reports
// figures, asserts nothing (the < 3 % agreement on uncongested rings is asserted in tests/flow/).
//
// Each workload is written once against eng::Engine (testing/flow_vs_packet.hpp) and run on the packet
// engine in this process and on the flow engine in a forked child (SimGrid allows one engine per process),
// the flow engine configured from the same PacketConfig. Printed: the simulated figure on each engine, the
// flow engine's deviation, and the CPU seconds each engine took.
//
// Cases (2-tier radix-8 fat-trees, NDR, ftree routing, IB framing):
//   ring-<size>     ring AllReduce, linear placement, non-blocking, 16 ranks (bandwidth-bound at >= 16 MiB,
//                   latency-bound for small sizes);
//   incast          7 HCAs send 4 MiB each to one HCA at t = 0: first and last delivery; the same with
//                   16 KiB messages (last delivery);
//   stream-small    1,000 messages of 2 KiB posted at once on one QP (one packet each);
//   perm-static     a random permutation (seed 1) of 4 MiB messages on a 3:1 oversubscribed tree, D-mod-k;
//   perm-ar         the same with adaptive routing (packet: per-packet AR; flow: per-message least-loaded).
//
// Usage: flow_vs_packet_bench [--quick] [--json]
#include "testing/flow_vs_packet.hpp"

#include <nlohmann/json.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

using namespace ibn;

namespace {

double cpu_seconds(int who) {
  rusage u{};
  getrusage(who, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

struct Row {
  std::string name;
  std::string what;
  xval::Comparison c;
  double packet_cpu_s = 0, flow_cpu_s = 0;
};

/// compare() with CPU seconds: the packet engine runs here (RUSAGE_SELF), the flow engine in a child that
/// has been waited for (RUSAGE_CHILDREN).
Row measure(const std::string& name, const std::string& what, const xval::Tree& t,
            const pkt::PacketConfig& pc, const std::function<double(eng::Engine&)>& work) {
  Row r{name, what, {}, 0, 0};
  const double self0 = cpu_seconds(RUSAGE_SELF), child0 = cpu_seconds(RUSAGE_CHILDREN);
  // Split the two runs to time them separately: packet first (here), then flow (child).
  {
    pkt::PacketEngine pe(t.fabric, t.tables, pc, 1);
    r.c.packet_ps = work(pe);
  }
  r.packet_cpu_s = cpu_seconds(RUSAGE_SELF) - self0;
  const auto out = nlohmann::json::parse(run_in_child_process([&] {
    flow::FlowEngine fe(t.fabric, t.tables, flow::flow_config_from(pc));
    const double ps = work(fe);
    return nlohmann::json{{"ps", ps}, {"path", fe.simgrid_path()}}.dump();
  }));
  r.c.flow_ps = out["ps"].get<double>();
  r.c.flow_path = out["path"].get<std::string>();
  r.flow_cpu_s = cpu_seconds(RUSAGE_CHILDREN) - child0;
  return r;
}

double ps_of(Time t) {
  return static_cast<double>(t.count_ps());
}

} // namespace

int main(int argc, char** argv) {
  bool quick = false, json = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick")
      quick = true;
    else if (a == "--json")
      json = true;
    else {
      std::fprintf(stderr, "usage: %s [--quick] [--json]\n", argv[0]);
      return 2;
    }
  }
  std::vector<Row> rows;
  const pkt::PacketConfig pc;

  // Rings on a non-blocking tree: bandwidth-bound at large sizes, latency-bound at small ones.
  {
    const xval::Tree t = xval::fat_tree(2, 8, 16);
    const auto hcas = xval::linear(16);
    std::vector<std::uint64_t> sizes = {4ull << 10, 64ull << 10, 1ull << 20, 16ull << 20, 64ull << 20};
    if (!quick) sizes.push_back(256ull << 20);
    for (const std::uint64_t s : sizes) {
      const std::string name = s >= (1ull << 20) ? "ring-" + std::to_string(s >> 20) + "MiB"
                                                 : "ring-" + std::to_string(s >> 10) + "KiB";
      rows.push_back(measure(name, "completion, 16 ranks", t, pc,
                             [&](eng::Engine& e) { return ps_of(xval::ring_allreduce(e, hcas, s)); }));
    }
  }
  // Congestion: incast of 7 senders into one HCA (one leaf's 3 neighbours + 4 remote HCAs).
  {
    const xval::Tree t = xval::fat_tree(2, 8, 8);
    const std::vector<routing::HcaIndex> senders = {1, 2, 3, 4, 5, 6, 7};
    rows.push_back(measure("incast-first", "first delivery, 7 x 4 MiB -> 1", t, pc, [&](eng::Engine& e) {
      return ps_of(xval::incast(e, senders, 0, 4ull << 20).first);
    }));
    rows.push_back(measure("incast-last", "last delivery, 7 x 4 MiB -> 1", t, pc, [&](eng::Engine& e) {
      return ps_of(xval::incast(e, senders, 0, 4ull << 20).second);
    }));
    rows.push_back(measure("incast-small", "last delivery, 7 x 16 KiB -> 1", t, pc, [&](eng::Engine& e) {
      return ps_of(xval::incast(e, senders, 0, 16ull << 10).second);
    }));
    // Many small messages on one QP each way: per-message costs dominate.
    rows.push_back(measure("stream-small", "last of 1000 x 2 KiB, one QP", t, pc, [&](eng::Engine& e) {
      Time last;
      for (int k = 0; k < 1000; ++k) e.send({0, 5, 2048, 0, 0}, [&](Time d) { last = d; });
      e.run();
      return ps_of(last);
    }));
  }
  // A random permutation on a 3:1 oversubscribed tree, static routes vs adaptive routing.
  {
    const xval::Tree t = xval::fat_tree(2, 8, std::nullopt, {{3, 1}});
    const auto n = static_cast<std::uint32_t>(t.tables.num_hcas());
    std::vector<std::uint32_t> perm(n);
    for (std::uint32_t i = 0; i < n; ++i) perm[i] = i;
    std::mt19937_64 rng(1);
    std::shuffle(perm.begin(), perm.end(), rng);
    auto work = [&](eng::Engine& e) {
      Time last;
      for (std::uint32_t i = 0; i < n; ++i)
        if (perm[i] != i) e.send({i, perm[i], 4ull << 20, 0, 0}, [&](Time d) { last = std::max(last, d); });
      e.run();
      return ps_of(last);
    };
    rows.push_back(
        measure("perm-static", "last delivery, " + std::to_string(n) + " HCAs, 4 MiB, 3:1", t, pc, work));
    pkt::PacketConfig ar = pc;
    ar.ar_mode = pkt::ArMode::PerPacket;
    rows.push_back(measure("perm-ar", "the same, adaptive routing", t, ar, work));
  }

  nlohmann::json out = nlohmann::json::array();
  if (!json)
    std::printf("%-14s %-34s %14s %14s %9s %10s %10s %s\n", "case", "figure", "packet us", "flow us",
                "flow-pkt", "pkt cpu s", "flow cpu s", "flow path");
  for (const Row& r : rows) {
    out.push_back({{"case", r.name},
                   {"figure", r.what},
                   {"packet_us", r.c.packet_ps * 1e-6},
                   {"flow_us", r.c.flow_ps * 1e-6},
                   {"flow_minus_packet_pct", r.c.rel() * 100},
                   {"packet_cpu_s", r.packet_cpu_s},
                   {"flow_cpu_s", r.flow_cpu_s},
                   {"flow_path", r.c.flow_path}});
    if (!json)
      std::printf("%-14s %-34s %14.3f %14.3f %+8.2f%% %10.3f %10.3f %s\n", r.name.c_str(), r.what.c_str(),
                  r.c.packet_ps * 1e-6, r.c.flow_ps * 1e-6, r.c.rel() * 100, r.packet_cpu_s, r.flow_cpu_s,
                  r.c.flow_path.c_str());
  }
  if (json) std::printf("%s\n", out.dump(2).c_str());
  return 0;
}
