#pragma once
// Capacity planning (`ibnetsim plan`, docs/planning.md): enumerate rail-optimized fabric designs for a GPU
// count, price each from the parts catalog, run a standard workload on each, and answer with a table, the
// Pareto front (cost vs p99) and a one-line recommendation.
//
// Designs. For every switch model x leaf ratio (x tiers, when given): every scalable-unit size su whose leaf
// split su down : su*up/down up is whole and fits the switch's ports is built (topology/rail_optimized.hpp);
// a design is *exact* when every SU is full (nodes % su == 0) — only exact designs are kept (when a ratio has
// none the plan says so) — and of those the one with the lowest catalog cost is the design for that ratio
// ("cheapest port split first"). The NIC rate must equal the switch's port rate.
//
// Workload (unless --scenario gives one, whose fabric is replaced by each design's): a measured hierarchical
// AllReduce job on half the nodes (spread placement), a measured ring AllGather job on an eighth (spread) and
// a neighbour job on the rest looping 8 MiB AllReduces (random placement); every size of --sizes, --iters
// measured iterations after one warm-up, 20 us compute gaps with lognormal jitter, 2 channels. The jobs share
// the fabric, as in a busy cluster.
//
// Engine: `auto` runs the packet engine when the fabric has at most kPacketMaxHcas HCAs and the flow engine
// above; the plan states the engine of every design. Points run in parallel (-j): packet points on threads,
// flow points in forked child processes (analysis/points.hpp; their progress reaches the plan's progress
// lines), or through PlanOptions::external when a caller sets it. A design whose results.json
// exists with the same configuration is reused (resume after an interrupt).
//
// Confidence intervals: distribution-free order-statistic intervals for p50 and p99 at 95 %
// (analysis/tail_stats.hpp); with too few samples a side is open (null).
#include "scenarios/scenario.hpp"
#include "topology/bom.hpp"
#include "topology/generators.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ibn::analysis {

inline constexpr std::size_t kPacketMaxHcas = 512;

struct PlanOptions {
  std::int64_t gpus = 0;
  int gpus_per_node = 8;
  int nics_per_node = 0; ///< 0 = gpus_per_node
  std::string nic_rate = "NDR";
  std::vector<std::string> switches{"qm9700"};
  std::vector<topo::Ratio> ratios{{1, 1}, {2, 1}, {4, 1}};
  std::vector<int> tiers; ///< empty = the fewest tiers that hold the nodes
  std::vector<std::string> sizes{"1M", "16M", "64M"};
  int iterations = 12;
  std::string engine = "auto"; ///< auto, packet, flow
  std::string scenario_file;   ///< optional workload scenario (its fabric is replaced)
  /// Congestion control settings to compare (cc.algorithm: none, dcqcn, ibcc); every design runs with each.
  /// Empty: the workload's own (the built-in one: none). CC is modelled by the packet engine only.
  std::vector<std::string> cc;
  std::string catalog_path;
  bool simulate = true; ///< false: designs and BOM only
  unsigned jobs = 1;
  std::string out_dir = "plan-out";
  std::function<void(const std::string&)> progress;
  /// Runs one point in a child process (writes results_path). Used for flow points; empty: in-process.
  std::function<void(const nlohmann::json& scenario, const std::string& results_path)> external;
};

struct PlanDesign {
  std::string name, switch_model, ratio;
  std::string cc; ///< cc.algorithm this design runs with; empty: the workload's own
  int tiers = 2, su_nodes = 0, leaf_ports = 0;
  std::int64_t nodes = 0, hcas = 0;
  nlohmann::json fabric_params;
  topo::Bom bom;
  double bisection_gbps = 0;
  std::string engine;
  int alternatives = 0; ///< other exact splits of this ratio (more expensive)
};

/// The designs (no simulation); InputError when the request is impossible (e.g. GPUs not a multiple of
/// GPUs per node, an unknown switch, a NIC rate the switch does not run).
std::vector<PlanDesign> plan_designs(const PlanOptions& opt, const topo::Catalog& catalog,
                                     std::vector<std::string>* notes = nullptr);

/// Runs the whole plan; writes OUT/plan.json and OUT/points/<design>/results.json; returns plan.json.
/// plan.json: designs[{name, ratio, cc (null: the workload's own), switch, tiers, su_nodes, leaf_ports, switches, cables, transceivers,
/// cost_usd, power_w, bisection_gbps, engine, bom, results{"<op> <size>": {p50_us, p99_us, ci_p50_us,
/// ci_p99_us, n, delta_p99_pct}}}], pareto (design names), recommendation, notes, wall_s.
nlohmann::json run_plan(const PlanOptions& opt);

/// The terminal table (design, switches, cables, optics, $, kW, p50/p99 per size, delta vs non-blocking),
/// the Pareto front and the recommendation.
std::string plan_table(const nlohmann::json& plan);

} // namespace ibn::analysis
