#pragma once
// Ring fluid — the flow engine's model for ring-structured collectives too large for their transfer DAG
// (docs/flow-engine.md, "Ring fluid"; scenario key flow.ring_fluid).
//
// A ring moves in lock step: at every step every position sends one chunk to the next, and a step's chunk
// cannot leave before the previous step's arrived. So a ring stage (scenarios/collectives.hpp, RingStages:
// a ring AllReduce/AllGather/ReduceScatter is one stage, a hierarchical AllReduce three) is modelled as one
// coflow: all its network flows (one per ring edge between nodes and channel) progress at one common rate x,
// and the stage's time follows from x in closed form per loop of chunks, with S slices of wire size w per
// chunk, `steps` steps, hop latency L (the mean route delay of the ring's edges plus the per-transfer
// software cost) and a FIFO window of W slices per connection:
//   tau   = w / x                       time of one slice on the wire
//   thr   = max(tau, (tau + L) / W)     a connection's slice period (window-bound when L is long)
//   T     = max(steps x S x thr + L,    bandwidth-bound: every edge streams its slices
//               steps x (tau + L) + (S - 1) x thr)   latency-bound: one slice's dependency chain per step
// NVLink edges use the NVLink rate shared by the copies leaving one GPU and the NVLink latency; thr and the
// last L take the slower edge kind, and the chain's (tau + L) per step is the mean over the ring's edges (a
// flat ring over g GPUs per node crosses the network once every g hops). A tree AllReduce (its double binary
// trees, one stage) pipelines whole chunks: T = 2 x (its deepest rank's hops to the root, each at the path's
// own rate and L) for the first chunk, then thr per further chunk. Stages run one after the other, after the
// collective's launch latency, from the latest rank's ready time.
//
// Sharing between collectives (several jobs on one fabric): each stage in progress is a coflow of F flows
// crossing the fabric's directed links with multiplicities n(l). A flow, while active, shares each link with
// its own coflow's flows on it (all active together, in lock step) and with the other coflows' flows weighted
// by their duty (the fraction of the time their flows are on the wire: bytes / x over T(x)): x = min over its
// links of C(l) / (n_own(l) + sum over the others of n(l) x duty), solved as a fixed point from duties of 1.
// A latency-bound stage thus slows the others little; a bandwidth-bound one takes its fair share. A stage
// progresses at 1 / T(x) of its work per second; rates are re-solved whenever a stage starts or ends.
//
// This is an approximation of the exact flow path (the per-transfer DAG on the same engine), used only when
// that path cannot run (the DAG would exceed kMaxTransfers) or when asked for; its error against the exact
// path where both run is measured in tests/flow/ring_fluid_test.cpp and docs/flow-engine.md.
#include "models/engine.hpp"
#include "models/flow/flow_engine.hpp"
#include "scenarios/collectives.hpp"
#include "scenarios/executor.hpp"
#include "scenarios/runner.hpp"
#include "scenarios/scenario.hpp"
#include "sim/time.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ibn::scen {

/// What in a run the ring-fluid model leaves out, or "" when nothing: background traffic, calibration,
/// adaptive routing, timed faults or bit errors, the variability model, a transfer trace.
std::string ring_fluid_blocker(const Scenario& s, const World& w, bool adaptive_routing, bool variability,
                               bool trace);

/// Whether a run's collectives go on the ring-fluid model (key flow.ring_fluid): "on" always (InputError
/// naming the key when `blocker` is not empty or a collective is not ring, tree or hierarchical); "auto" when
/// nothing blocks it and some collective's DAG would exceed kMaxTransfers, not counting, in a run the
/// symmetric-steps shortcut may take (`shortcut`), the named rings it takes; "off" never. `spec(job, size)`
/// is the collective as the runner builds it. `reason` says why it is used.
struct RingFluidChoice {
  bool use = false;
  std::string reason;
};
RingFluidChoice choose_ring_fluid(const Scenario& s, const std::string& blocker, bool shortcut,
                                  const std::function<CollectiveSpec(std::size_t, std::uint64_t)>& spec);

/// Coflows sharing the fabric's links: each progresses at 1 / T(x) of its work per second, x being its
/// flows' processor share with the other coflows weighted by their duty; re-solved at every start and end.
class CoflowNetwork {
 public:
  struct Use {
    std::uint32_t link = 0;  ///< directed link (FlowEngine::StaticPath numbering)
    std::uint32_t flows = 0; ///< flows of the coflow crossing it
  };
  /// `engine` runs the clock (call_at); `capacity` gives a link's bytes per second.
  CoflowNetwork(eng::Engine& engine, std::function<double(std::uint32_t)> capacity);

  /// Starts a coflow now whose flows cross `uses` (must outlive the coflow), each carrying `bytes` wire
  /// bytes, and which would take `time_of_rate(x)` seconds (> 0) at a per-flow rate x held throughout;
  /// `done(end)` is called at its end.
  void start(const std::vector<Use>& uses, double bytes, std::function<double(double)> time_of_rate,
             std::function<void(Time)> done);

  std::uint64_t solves() const { return solves_; }
  std::uint64_t coflows() const { return started_; }

 private:
  struct Active {
    const std::vector<Use>* uses = nullptr;
    double left = 0, rate = 0;  // left: the fraction of its work not done
    double bytes = 0, duty = 1; // wire bytes per flow; the fraction of the time its flows are active
    Time end;                   // the end its pending event stands for
    bool scheduled = false;
    std::function<double(double)> time_of_rate;
    Time last;
    std::uint64_t version = 0;
    std::function<void(Time)> done;
    bool live = false;
  };
  void solve();
  void finish(std::size_t k, std::uint64_t version);

  eng::Engine& engine_;
  std::function<double(std::uint32_t)> capacity_;
  std::vector<Active> act_;
  std::vector<double> weight_; // per link: flows active on it, weighted by duty (solve scratch)
  std::uint64_t solves_ = 0, started_ = 0;
};

/// One collective on the ring-fluid model: its stages' coflows, built once from the job's layout and the
/// flow engine's static routes.
class RingFluid {
 public:
  static std::unique_ptr<RingFluid> make(const RingStages& plan, const JobLayout& layout,
                                         flow::FlowEngine& engine, const ExecOptions& opt);

  /// One execution: rank r ready from ready[r] (empty: all at `now`); `done(end)` at the last stage's end.
  void run(Time now, const std::vector<Time>& ready, CoflowNetwork& net, std::function<void(Time)> done);

  std::uint64_t network_transfers() const { return network_transfers_; } ///< per execution (the DAG's)
  std::uint64_t nvlink_transfers() const { return nvlink_transfers_; }   ///< per execution (the DAG's)
  const RingStages& plan() const { return plan_; }
  /// Time of each stage alone on the fabric (no other collective), for tests and reports.
  std::vector<Time> stage_times_alone() const;

 private:
  struct Loop {
    std::uint64_t chunk = 0, slices = 0, slice_wire = 0, chunk_wire = 0;
  };
  struct PairUse {
    flow::FlowEngine::StaticPath path;
    std::uint64_t edges = 0;
  };
  struct Stage {
    std::vector<CoflowNetwork::Use> uses;
    std::vector<PairUse> pairs;
    std::uint64_t flows = 0, steps = 0;
    std::vector<Loop> loops;
    Time net_latency, nvl_latency; ///< per hop, software cost included
    bool has_net = false, has_nvl = false;
    std::uint32_t window = 1; ///< FIFO window in slices per connection
    double net_share = 1;     ///< network edges / all edges of the stage's rings
    bool tree = false;        ///< a tree stage: chain_net / chain_nvl hops to the root, each way
    std::uint32_t chain_net = 0, chain_nvl = 0;
    double x_line = 0;             ///< the slowest network path's own rate (bytes/s)
    double x_alone = 0;            ///< per-flow network rate alone (bytes/s)
    double nvl_rate = 0;           ///< per-copy NVLink rate (bytes/s)
    /// A channel's stage (a tree's: per lane) on every send (bytes/s of wire; 0: none).
    double stage_rate = 0;
    double bytes = 0;              ///< wire bytes per network flow
    Time alone;                    ///< the stage's time alone
    double time_s(double x) const; ///< its time with per-flow network rate x
  };
  RingFluid(RingStages plan, flow::FlowEngine& engine) : plan_(std::move(plan)), engine_(engine) {}
  void run_stage(std::size_t i, Time t, CoflowNetwork& net, std::function<void(Time)> done);

  RingStages plan_;
  flow::FlowEngine& engine_;
  std::vector<Stage> stages_;
  std::uint64_t network_transfers_ = 0, nvlink_transfers_ = 0;
};

} // namespace ibn::scen
