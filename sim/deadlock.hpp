#pragma once
// Deadlock reporting: the wait-for graph the engine describes when it stops making progress, the cycle
// search over it, and the error a stalled Simulation throws.
//
// A WaitEdge says "waiter cannot move until holder releases resource", with human names, e.g.
//   {"switch s3 port 2 VL0", "switch s4 port 1 VL0", "credits"}
//   -> "switch s3 port 2 VL0 waits for credits from switch s4 port 1 VL0".
// Nodes are identified by their names (equal strings are the same node).
#include "sim/time.hpp"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace ibn {

struct WaitEdge {
  std::string waiter;
  std::string holder;
  std::string resource; ///< what is awaited, e.g. "credits"; may be empty
};

/// "<waiter> waits for <resource> from <holder>" (or "<waiter> waits for <holder>" without a resource).
std::string describe(const WaitEdge& e);

/// Finds a directed cycle in the wait-for graph. Returns the indices (into `edges`) of the cycle's edges
/// in wait order: edges[r[i]].holder == edges[r[i+1]].waiter, and the last edge's holder is the first
/// edge's waiter. Empty if the graph is acyclic. Deterministic: nodes are explored in order of first
/// appearance in `edges`, and out-edges in their order in `edges`. O(V + E).
std::vector<std::size_t> find_wait_cycle(const std::vector<WaitEdge>& edges);

/// Thrown by Simulation::run when packets are in flight but no event is left that could move them.
/// cycle() holds the node names of the wait-for cycle in wait order (cycle[i] waits for cycle[i+1], the
/// last waits for the first); it is empty if the stall has no cycle (a component forgot to reschedule).
/// what() lists the cycle one edge per line (or, without a cycle, the first wait edges).
class DeadlockError : public std::runtime_error {
 public:
  /// `cycle_edges` in wait order (as selected by find_wait_cycle); `all_edges` is the whole graph.
  DeadlockError(Time when, std::uint64_t packets_in_flight, std::vector<WaitEdge> cycle_edges,
                const std::vector<WaitEdge>& all_edges);

  Time when() const { return when_; }
  std::uint64_t packets_in_flight() const { return packets_in_flight_; }
  const std::vector<std::string>& cycle() const { return cycle_; }
  const std::vector<WaitEdge>& cycle_edges() const { return cycle_edges_; }

 private:
  Time when_;
  std::uint64_t packets_in_flight_;
  std::vector<WaitEdge> cycle_edges_;
  std::vector<std::string> cycle_;
};

} // namespace ibn
