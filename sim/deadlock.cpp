#include "sim/deadlock.hpp"

#include <cstdio>
#include <string_view>
#include <unordered_map>

namespace ibn {
namespace {

constexpr std::size_t kMaxListedEdges = 20;

std::string format_time(Time t) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%lld ps (%.6f us)", static_cast<long long>(t.count_ps()), t.to_us());
  return buf;
}

std::string build_message(Time when, std::uint64_t in_flight, const std::vector<WaitEdge>& cycle,
                          const std::vector<WaitEdge>& all) {
  std::string m = "deadlock at t=" + format_time(when) + ": " + std::to_string(in_flight) +
                  " packet(s) in flight and no pending event can move them; ";
  if (!cycle.empty()) {
    m += "wait-for cycle of " + std::to_string(cycle.size()) + ":";
    for (const auto& e : cycle) m += "\n  " + describe(e);
    m += "\n  (and so back to " + cycle.front().waiter + ")";
  } else {
    m += "no wait-for cycle among " + std::to_string(all.size()) + " wait edge(s)";
    for (std::size_t i = 0; i < all.size() && i < kMaxListedEdges; ++i) m += "\n  " + describe(all[i]);
    if (all.size() > kMaxListedEdges) m += "\n  ...";
  }
  return m;
}

} // namespace

std::string describe(const WaitEdge& e) {
  if (e.resource.empty()) return e.waiter + " waits for " + e.holder;
  return e.waiter + " waits for " + e.resource + " from " + e.holder;
}

std::vector<std::size_t> find_wait_cycle(const std::vector<WaitEdge>& edges) {
  // Number the nodes in order of first appearance; out[v] lists v's out-edges in input order.
  std::unordered_map<std::string_view, std::size_t> id;
  std::vector<std::vector<std::size_t>> out;
  auto node = [&](const std::string& name) {
    const auto [it, inserted] = id.try_emplace(name, out.size());
    if (inserted) out.emplace_back();
    return it->second;
  };
  std::vector<std::size_t> head(edges.size());
  for (std::size_t i = 0; i < edges.size(); ++i) {
    const std::size_t w = node(edges[i].waiter);
    out[w].push_back(i);
    head[i] = node(edges[i].holder);
  }

  // Iterative DFS with three colours; an edge into a node on the stack closes a cycle.
  enum : unsigned char { White, OnStack, Done };
  std::vector<unsigned char> colour(out.size(), White);
  struct Frame {
    std::size_t node;
    std::size_t next; // position in out[node]
    std::size_t in_edge;
  };
  std::vector<Frame> stack;
  for (std::size_t root = 0; root < out.size(); ++root) {
    if (colour[root] != White) continue;
    stack.push_back({root, 0, 0});
    colour[root] = OnStack;
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.next == out[f.node].size()) {
        colour[f.node] = Done;
        stack.pop_back();
        continue;
      }
      const std::size_t e = out[f.node][f.next++];
      const std::size_t v = head[e];
      if (colour[v] == White) {
        colour[v] = OnStack;
        stack.push_back({v, 0, e});
      } else if (colour[v] == OnStack) {
        std::size_t j = stack.size() - 1;
        while (stack[j].node != v) --j;
        std::vector<std::size_t> cycle;
        for (std::size_t k = j + 1; k < stack.size(); ++k) cycle.push_back(stack[k].in_edge);
        cycle.push_back(e);
        return cycle;
      }
    }
  }
  return {};
}

DeadlockError::DeadlockError(Time when, std::uint64_t packets_in_flight, std::vector<WaitEdge> cycle_edges,
                             const std::vector<WaitEdge>& all_edges)
    : std::runtime_error(build_message(when, packets_in_flight, cycle_edges, all_edges)), when_(when),
      packets_in_flight_(packets_in_flight), cycle_edges_(std::move(cycle_edges)) {
  for (const auto& e : cycle_edges_) cycle_.push_back(e.waiter);
}

} // namespace ibn
