#pragma once
// Test support (testing/, shared by tests/ and bench/, which never include each other).
// Packet engine vs flow engine on the same workloads (issue 7 item 3), shared by
// tests/flow/flow_vs_packet_test.cpp, tests/flow/flow_vs_packet_slow_test.cpp and
// bench/flow_vs_packet_bench.cpp. A workload is written once against eng::Engine; compare() runs it on the
// packet engine in this process and on the flow engine in a forked child (SimGrid: one engine per process),
// the flow engine configured from the same PacketConfig (flow::flow_config_from).
#include "models/engine.hpp"
#include "models/flow/flow_engine.hpp"
#include "models/packet/config.hpp"
#include "models/packet/packet_engine.hpp"
#include "models/routing/routing.hpp"
#include "sim/child_processes.hpp"
#include "topology/fabric.hpp"
#include "topology/generators.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace ibn::xval {

/// Ring AllReduce of `size` bytes over ranks placed on `hcas` (rank r on hcas[r]): 2(n-1) steps of size/n
/// bytes; rank r posts step k+1 to rank r+1 when it has received step k from rank r-1.
/// Returns the completion time (the last delivery).
inline Time ring_allreduce(eng::Engine& e, const std::vector<routing::HcaIndex>& hcas, std::uint64_t size) {
  struct Ring {
    eng::Engine* e;
    const std::vector<routing::HcaIndex>* hcas;
    std::uint32_t n, steps;
    std::uint64_t chunk;
    Time last;
    void post(std::uint32_t r, std::uint32_t k) {
      const std::uint32_t to = (r + 1) % n;
      e->send({(*hcas)[r], (*hcas)[to], chunk, 0, 0}, [this, to, k](Time t) {
        last = t;
        if (k + 1 < steps) post(to, k + 1);
      });
    }
  };
  const auto n = static_cast<std::uint32_t>(hcas.size());
  Ring ring{&e, &hcas, n, 2 * (n - 1), size / n, {}};
  for (std::uint32_t r = 0; r < n; ++r) ring.post(r, 0);
  e.run();
  return ring.last;
}

/// Linear placement: rank r on HCA r.
inline std::vector<routing::HcaIndex> linear(std::uint32_t n) {
  std::vector<routing::HcaIndex> v(n);
  for (std::uint32_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

/// Incast: every HCA of `senders` sends `bytes` to `dst` at t = 0. Returns {first, last} delivery times.
inline std::pair<Time, Time> incast(eng::Engine& e, const std::vector<routing::HcaIndex>& senders,
                                    routing::HcaIndex dst, std::uint64_t bytes) {
  std::optional<Time> first;
  Time last;
  for (const routing::HcaIndex s : senders)
    e.send({s, dst, bytes, 0, 0}, [&](Time t) {
      if (!first) first = t;
      last = t;
    });
  e.run();
  return {first.value_or(Time::zero()), last};
}

/// A shift permutation HCA i -> (i + shift) mod n, `bytes` each, all at t = 0. Returns the last delivery.
inline Time shift_permutation(eng::Engine& e, std::uint32_t n, std::uint32_t shift, std::uint64_t bytes) {
  Time last;
  for (std::uint32_t i = 0; i < n; ++i)
    e.send({i, (i + shift) % n, bytes, 0, 0}, [&](Time t) { last = std::max(last, t); });
  e.run();
  return last;
}

/// One workload's figure (ps) on both engines.
struct Comparison {
  double packet_ps = 0;
  double flow_ps = 0;
  std::string flow_path; ///< FlowEngine::simgrid_path() of the flow run
  /// (flow - packet) / packet
  double rel() const { return (flow_ps - packet_ps) / packet_ps; }
};

/// Runs `work` (engine -> a time in ps) on the packet engine here and on the flow engine in a child.
inline Comparison compare(const topo::Fabric& f, const routing::RoutingTables& t, const pkt::PacketConfig& pc,
                          const std::function<double(eng::Engine&)>& work, std::uint64_t seed = 1) {
  Comparison c;
  {
    pkt::PacketEngine pe(f, t, pc, seed);
    c.packet_ps = work(pe);
  }
  const auto out = nlohmann::json::parse(run_in_child_process([&] {
    flow::FlowEngine fe(f, t, flow::flow_config_from(pc));
    const double ps = work(fe);
    return nlohmann::json{{"ps", ps}, {"path", fe.simgrid_path()}}.dump();
  }));
  c.flow_ps = out["ps"].get<double>();
  c.flow_path = out["path"].get<std::string>();
  return c;
}

/// A non-blocking fat-tree (ftree routing needs the tables to outlive the engines: keep both here).
struct Tree {
  topo::Fabric fabric;
  routing::RoutingTables tables;
};
inline Tree fat_tree(int tiers, int radix, std::optional<std::int64_t> hosts = std::nullopt,
                     std::vector<topo::Ratio> oversubscription = {}) {
  topo::FatTreeParams p;
  p.tiers = tiers;
  p.radix = radix;
  p.hosts = hosts;
  p.oversubscription = std::move(oversubscription);
  topo::Fabric f = topo::build_fat_tree(p);
  routing::RoutingTables t = routing::route_ftree(f);
  return {std::move(f), std::move(t)};
}

} // namespace ibn::xval
