#pragma once
// Runner: turns a Scenario into one simulation — builds the fabric and its routing, the engine, places the
// jobs, builds each job's collectives as transfer DAGs and runs iterations (compute gap + per-rank jitter,
// then the collective) while background traffic and looping jobs load the fabric — and returns the raw
// samples. analysis/results.hpp turns them into results.json, CSV and tables.
//
// Iteration timing: iteration k of a job starts when iteration k-1 finished (the first at t = 0). Every
// rank computes for compute_gap_us plus its own jitter draw; rank r may start communicating at
// ready_r = start + gap + jitter_r. A sample is the collective's completion time measured from the
// earliest ready_r to the last delivery of the collective (with no jitter: from the common start, as
// nccl-tests measures after its barrier). Warm-up iterations are run and not recorded. A job runs its sizes
// one after the other, each for warmup + iterations; a looping job cycles through its sizes until every
// finite job is done, then stops at its next iteration boundary.
#include "calibration/profile.hpp"
#include "models/engine.hpp"
#include "models/packet/config.hpp"
#include "models/routing/routing.hpp"
#include "scenarios/placement.hpp"
#include "scenarios/scenario.hpp"
#include "topology/describe.hpp"
#include "topology/fabric.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ibn {
struct ProgressSlot;
}

namespace ibn::scen {

/// What a study reads of a fabric (topo::describe(), computed once when the world is built): results carry
/// it, so a study never rebuilds a fabric to learn its oversubscription.
struct FabricFacts {
  std::size_t hcas = 0, switches = 0, links = 0;
  int tiers = 0; ///< switch tiers
  /// Per switch tier from the leaves up: down-link / up-link bandwidth (empty for the top tier).
  std::vector<std::optional<double>> oversubscription;
  double bisection_gbps = 0;
  /// The leaves' ratio (0 when the fabric has no up-links).
  double leaf_oversubscription() const {
    return oversubscription.empty() ? 0.0 : oversubscription[0].value_or(0.0);
  }
  bool operator==(const FabricFacts&) const = default;
};
FabricFacts fabric_facts(const topo::FabricSummary& summary);

/// Fabric, routing and device configuration of a scenario.
struct World {
  topo::Fabric fabric;
  FabricFacts facts;         ///< from the fabric's graph, computed by build_world()
  std::string fabric_source; ///< file path or "generated: <generator>"
  std::string routing_name;  ///< the algorithm actually used (auto resolved)
  std::unique_ptr<routing::RoutingTables> tables;
  pkt::PacketConfig packet; ///< effective packet-engine configuration (after calibration)
  std::optional<calib::Profile> profile; ///< the calibration profile, when the scenario names one
  nlohmann::json calibration = nlohmann::json::object(); ///< the applied profile's summary, if any
  std::vector<std::string> warnings;
  /// Faults (scenarios/faults.hpp): those at t = 0 are already in `fabric` (removed cables, new speeds);
  /// these come later (LinkIds of `fabric`). `faults` lists every fault, for the results.
  std::vector<FaultAction> timed_faults;
  std::vector<std::string> faults;
  /// The fabric's node slots grouped by placement_nics(s) (after the faults at t = 0), built once with the
  /// routing tables: fabric-sized work that a run placing 8 nodes should not repeat (issue 19 item 3). Null
  /// when NodePool::from_fabric refused the fabric: the run then builds it itself and reports that error.
  std::shared_ptr<const NodePool> pool;
  /// topo::cable_directions_by_tier(fabric), for the engines' reports (idle links per tier).
  std::shared_ptr<const topo::CableDirections> cable_directions;
  /// packet.num_vls was raised to 2 by the world (dragonfly MIN routing), not given by the scenario.
  bool auto_vls = false;
};
World build_world(const Scenario& s);
/// The scenario's fabric alone (loaded or generated, before faults and routing): build_world's first step.
topo::Fabric build_fabric(const Scenario& s, std::vector<std::string>* warnings = nullptr,
                          std::string* source = nullptr);
/// Placement as the run does it: the pool groups HCAs by the largest NIC count a job or background asks
/// for; requests are the jobs, then the background traffic on the nodes they leave free.
std::uint32_t placement_nics(const Scenario& s);
std::vector<JobPlacementRequest> placement_requests(const Scenario& s, std::size_t pool_size);
/// Places the scenario's jobs on `f` as the run would and discards the result: the InputError a run would
/// throw at its start (more nodes than are free, an unknown explicit host), before anything runs. Then the
/// faults at t = 0 as the run applies them (more cables asked than the tier has, an HCA cut off): studies
/// check every point this way before running the first.
/// Returns placement_notes() for the study to print.
std::vector<std::string> check_placement(const Scenario& s, const topo::Fabric& f);
/// Warnings about how the scenario's jobs land on `pool`: a job of fewer NICs per node than the nodes hold
/// (consecutive one-HCA hosts only) and the hosts left out for owning too few HCAs.
std::vector<std::string> placement_notes(const Scenario& s, const NodePool& pool);
/// The routing algorithm a run on `f` uses: the scenario's, or for "auto" ftree on generated fat-trees
/// (and rail-optimized, k-ary n-trees), df-min on dragonflies, updn otherwise.
std::string resolved_routing(const Scenario& s, const topo::Fabric& f);
/// The data VLs `routing` needs on the packet engine to be deadlock-free: 2 for dragonfly MIN (the VL goes
/// up after the global hop; build_world raises packet.num_vls to it), else 1.
int routing_min_vls(const std::string& routing);
/// What a "no effect" warning says of service levels given where `num_vls` < 2 (every SL shares VL0).
std::vector<std::string> sl_notes(const Scenario& s, std::uint32_t num_vls);
/// InputError naming `file`'s routing.algorithm when `algo` is a routing the engines cannot run (df-valiant,
/// df-ugal: tables only); build_world and check_placement call it.
void refuse_tables_only_routing(const std::string& file, const std::string& algo);
/// The fastest link rate at HCA `hca` (an index into the routing tables' HCAs), Gb/s; 0 without links.
double hca_link_gbps(const World& w, std::uint32_t hca);
/// The engine's latency of a message from HCA `hca` to another HCA of its leaf switch (the shortest
/// inter-node path): NIC transmit and receive, two cables, one switch, over the HCA's fastest such link
/// (its cable counted for both ends). The host path's per-message latency (staging, cross-NUMA, SR-IOV) is
/// not in it: NCCL's hwLat was measured with GPUDirect, so it stays charged whole.
Time hca_leaf_latency(const World& w, std::uint32_t hca);
/// A packet run that deadlocked (DeadlockError): when the world's routing has a credit loop on its fabric
/// (routing::check_deadlock_free over the routes the run could take), InputError naming the scenario's
/// routing.algorithm with the loop and the run's wait-for cycle; otherwise nothing (the caller rethrows: a
/// deadlock on a loop-free routing is the engine's fault). Checked only after a deadlock, so runs pay
/// nothing.
void explain_deadlock(const Scenario& s, const World& w, const std::exception& deadlock);
/// A collective's InputError under `where` ("FILE: key 'jobs[i].workload.op'"): "WHERE: job 'J', 1MiB
/// allreduce: WHAT"; an algorithm's refusal ("algorithm: 'direct' does not do allreduce") names the job's
/// workload.algorithm key instead.
InputError collective_error(const std::string& where, const std::string& job, std::uint64_t size, CollOp op,
                            const InputError& e);
/// A path the scenario names, relative to the scenario's folder unless absolute.
std::string scenario_path(const Scenario& s, const std::string& p);

struct CollectiveSamples {
  std::string job;
  std::string op, algorithm, protocol; ///< as built (an "auto" algorithm or protocol resolved)
  std::uint64_t size_bytes = 0;
  std::uint32_t ranks = 0, nodes = 0, channels = 0;
  bool looping = false;              ///< a background (looping) job
  std::vector<double> samples_us;    ///< measured iterations, in order
  std::size_t network_transfers = 0; ///< per iteration
  std::size_t nvlink_transfers = 0;  ///< per iteration
  double launch_us = 0;              ///< the fixed cost before a rank's first transfer (launch_latency)
  double busbw_factor = 1;           ///< nccl-tests factor for this op and rank count
};

/// One transfer of a traced collective (RunOptions::trace_limit).
struct TransferSpan {
  std::uint32_t job = 0;
  std::size_t collective = 0; ///< index into RunResult::collectives
  std::uint32_t src = 0, dst = 0, step = 0, channel = 0;
  std::uint64_t bytes = 0;
  bool network = false;       ///< over the fabric (else an NVLink copy)
  Time posted, delivered;
};

struct RunOptions {
  /// Record the transfers of the first measured iteration of each collective, up to this many spans in
  /// all (0 = no trace).
  std::size_t trace_limit = 0;
  std::optional<EngineKind> engine;                      ///< empty: the scenario's
  std::function<void(const std::string& line)> progress; ///< called now and then with a status line
  /// Segment of a point run in segments (analysis/segments.hpp): 0 uses the scenario's own random streams;
  /// s > 0 draws jitter, noise, background traffic and the engine's streams from segment_seed(seed, s) (the
  /// placement stays the scenario's), so a segment depends only on (scenario, seed, s).
  std::uint32_t segment = 0;
  /// Per job: measured iterations (trace replay: passes) of this run, replacing workload.iterations of the
  /// finite jobs (looping jobs ignore it); empty: the scenario's.
  std::vector<std::uint32_t> iterations;
  /// Updated with the transfers delivered by the finite jobs (sim/progress.hpp); null: none.
  ProgressSlot* progress_slot = nullptr;
};

/// The seed of segment s's random streams: the seed itself for s = 0.
std::uint64_t segment_seed(std::uint64_t seed, std::uint32_t segment);

/// What produced a result: version, engine, seed, scenario, its effective configuration, the fabric's
/// source, the routing used and the effective packet-engine settings.
struct RunManifest {
  std::string version;
  std::string build; ///< the binary's GNU build-id (sim/build_id.hpp); "" in results of older builds
  std::string engine;
  std::uint64_t seed = 0;
  std::string scenario, source;
  nlohmann::json config; ///< the effective scenario (engine as run)
  std::string fabric_source, routing;
  nlohmann::json packet;      ///< PacketConfig::to_json()
  nlohmann::json calibration; ///< the applied profile's summary ({} without one)
  /// Settings in effect that `config` leaves out when the scenario does not give them (their keys are
  /// written only when given, so that results without them stay as they were): the flow engine's
  /// (flow runs only) and the variability model that ran, from the scenario or the profile (null: none).
  nlohmann::json flow, variability;
  std::vector<std::string> warnings; ///< what the scenario asks for that the engine ignores (models/engines.hpp)
  nlohmann::json segments;           ///< null, or how the run was segmented (analysis/segments.hpp)
  nlohmann::json tail_precision;     ///< null, or the tail-precision target and what was reached
  bool operator==(const RunManifest&) const = default;
};

/// The one result type of a run (sim::Simulation's run() returns its own RunStats).
struct RunResult {
  RunManifest manifest;
  std::vector<CollectiveSamples> collectives;
  eng::EngineReport engine;
  Time sim_time; ///< when the last event ran
  double wall_s = 0;
  nlohmann::json placement = nlohmann::json::array(); ///< per job: nodes, HCAs, leaves spanned
  nlohmann::json background = nlohmann::json::array();
  std::vector<std::string> warnings;
  std::vector<TransferSpan> trace; ///< when RunOptions::trace_limit > 0
  FabricFacts fabric;              ///< the world's, copied
};

/// Runs the scenario (a ScenarioRunner job driver in runner.cpp: place jobs, build their collectives and
/// background traffic, then iterate until every finite job is done). Throws InputError for bad input
/// (placement that does not fit, impossible collective).
RunResult run_scenario(const Scenario& s, const RunOptions& opt = {});
/// The same on an already built world.
RunResult run_scenario(const Scenario& s, const World& world, const RunOptions& opt = {});

} // namespace ibn::scen
