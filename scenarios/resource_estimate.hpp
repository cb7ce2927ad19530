#pragma once
// Resource bound of a run (docs/robustness.md): before a scenario runs, estimate how much work it asks for
// and refuse (InputError, exit 2) what would run for hours or exhaust memory, naming the estimate and how
// to raise the limit. The fabric's own size is bounded earlier, by the generators (max-hosts).
//
// Estimate, per job and size (traces are not counted: their calls are read later), with n ranks, a buffer
// of S bytes and warmup + iterations repetitions:
//   network bytes   ~ 2 S n per collective (an upper bound for every collective modelled: AllReduce moves
//                     2 S (n-1)/n per rank, the others at most S per rank)
//   packets         = network bytes / MTU (the packet engine simulates each one at every hop)
//   events          packet engine: packets x (2 x switch tiers + 1) hops x 3 (start, arrival, credit);
//                   flow engine: transfers x 4, transfers ~ n (2 (n-1) channels + 2 S / 256 KiB) per call,
//                   at most kMaxTransfers (a larger DAG is refused by build_collective); a ring job the
//                   symmetric-steps shortcut may run (flow.symmetric_steps, ring_shortcut.hpp) costs
//                   kShortcutEventsPerTransfer per transfer it evaluates, without the kMaxTransfers cap;
//                   collectives on the ring-fluid model (flow.ring_fluid, ring_fluid.hpp) cost
//                   kRingFluidEventsPerCollective each.
// The default limit (kDefaultMaxEvents) is about half an hour of packet-engine time on one core; the
// environment variable IBNETSIM_MAX_EVENTS raises (or lowers) it.
#include "scenarios/runner.hpp"

#include <cstdint>
#include <string>

namespace ibn::scen {

inline constexpr double kDefaultMaxEvents = 5e10;
/// What one transfer evaluated by the symmetric-steps shortcut (scenarios/ring_shortcut.hpp) costs, in
/// flow-engine events (4 per transfer on the exact path), measured: wall time per evaluated transfer over
/// wall time per event of the exact path on the same ring (docs/perf-log.md, "Symmetric steps").
inline constexpr double kShortcutEventsPerTransfer = 0.01;
/// Events per collective call on the ring-fluid model: up to three stages, each a start, an end and the
/// re-solves they cause (measured: 851 events for 180 calls of the 16,384-GPU plan workload).
inline constexpr double kRingFluidEventsPerCollective = 12;

struct RunEstimate {
  double collectives = 0; ///< collective calls (all repetitions)
  double max_ranks = 0;   ///< the largest job
  double network_bytes = 0;
  double packets = 0;
  double transfers = 0;          ///< transfers of built DAGs (one SimGrid action each on the flow engine)
  double shortcut_transfers = 0; ///< transfers the flow engine's symmetric-steps shortcut evaluates instead
  bool ring_fluid = false;       ///< the flow engine's ring-fluid model will run the collectives (ring_fluid.hpp)
  double events = 0;             ///< for the engine that will run
};

RunEstimate estimate_run(const Scenario& s, const World& w, const std::string& engine);

/// Estimates the run, refuses it (InputError naming the estimate, the limit and IBNETSIM_MAX_EVENTS) when
/// the events exceed the limit, and otherwise reports the estimate through opt.progress, so a long run says
/// what it is doing before its first collective completes.
void check_run_resources(const Scenario& s, const World& w, const RunOptions& opt);

/// The limit in force: IBNETSIM_MAX_EVENTS when set (a positive number, e.g. 1e12), else kDefaultMaxEvents.
double max_events_limit();

} // namespace ibn::scen
