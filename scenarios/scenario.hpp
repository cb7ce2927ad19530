#pragma once
// Scenario: what a planner describes — fabric, routing and adaptive routing, congestion control, calibration
// profile, jobs (nodes, GPUs and NICs per node, placement, workload) and background traffic, seed and
// engine — as a JSON file validated against one declared schema (scenario_schema(); every key with type,
// unit, default and description, listed in docs/scenarios.md). load_scenario() returns the effective
// configuration (all defaults filled in) and a typed view of it: every choice (engine, adaptive routing,
// congestion control, operation, jitter, background pattern) is parsed once here into its enum, and the
// names a key accepts come from the same tables and registries that parse them.
//
// Conflicting keys are refused, not overwritten: `routing.adaptive` and `packet.ar_mode`, and
// `cc.algorithm` and `packet.cc`, may not both be given with different values. When only the packet key is
// given, the scenario key takes its value (so the effective configuration says what runs).
#include "calibration/variability.hpp"
#include "models/packet/config.hpp"
#include "scenarios/background.hpp"
#include "scenarios/collectives.hpp"
#include "scenarios/faults.hpp"
#include "scenarios/schema.hpp"
#include "sim/choice.hpp"
#include "sim/time.hpp"

#include <nlohmann/json.hpp>

#include <map>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ibn::scen {

/// The declared keys (built once per call; cheap).
const Schema& scenario_schema();

/// The engine that runs a scenario.
enum class EngineKind : std::uint8_t { Packet, Flow };
inline constexpr Choice<EngineKind> kEngines[] = {{EngineKind::Packet, "packet"}, {EngineKind::Flow, "flow"}};
std::string to_string(EngineKind e);
/// "packet" or "flow"; InputError naming `what` otherwise.
EngineKind parse_engine(const std::string& text, const std::string& what);

/// Per-rank extra compute time per iteration.
enum class JitterDist : std::uint8_t { None, Normal, Lognormal, Exponential, Uniform };
inline constexpr Choice<JitterDist> kJitterDists[] = {{JitterDist::None, "none"},
                                                       {JitterDist::Normal, "normal"},
                                                       {JitterDist::Lognormal, "lognormal"},
                                                       {JitterDist::Exponential, "exponential"},
                                                       {JitterDist::Uniform, "uniform"}};

struct JitterSpec {
  JitterDist distribution = JitterDist::None;
  double scale_us = 0; ///< normal: sigma; lognormal: median extra delay; exponential: mean; uniform: width
  double lognormal_sigma = 0.5; ///< shape of the lognormal
};

struct WorkloadSpec {
  CollOp op = CollOp::AllReduce;
  std::vector<std::uint64_t> sizes_bytes;
  std::string algorithm = "auto"; ///< a registered collective algorithm (builtin_collectives()) or "auto"
  std::string protocol = "auto";
  std::uint32_t channels = 0;
  std::uint32_t iterations = 100;
  std::uint32_t warmup = 2;
  double compute_gap_us = 0;
  JitterSpec jitter;
  std::string trace; ///< replay file (JSON trace or NCCL debug log) instead of op/sizes; "" = none
  bool loop = false; ///< keep iterating until every non-looping job is done (a background job)
};

struct JobSpec {
  std::string name;
  std::uint32_t nodes = 2;
  std::uint32_t gpus_per_node = 8;
  std::uint32_t nics_per_node = 8;
  std::string placement = "linear"; ///< a registered placement policy (builtin_placement_policies())
  std::vector<std::string> hosts; ///< explicit placement: host names or node indices
  std::uint32_t sl = 0;
  WorkloadSpec workload;
};

struct BackgroundSpec {
  BackgroundPattern pattern = BackgroundPattern::Permutation;
  double load = 0.5;                   ///< fraction of each sender's link rate
  std::uint64_t message_bytes = 1 << 20;
  std::uint32_t nodes = 0; ///< nodes taken from those left free by the jobs; 0 = all of them
  std::uint32_t nics_per_node = 0;      ///< 0: every HCA of the node
  std::string placement = "linear";
  double start_us = 0;
  double stop_us = 0; ///< 0: until the last non-looping job finishes
  std::uint32_t sl = 0;
};

/// The scenario's `variability.*` keys (each part absent unless given; calibration/variability.hpp).
struct VariabilitySpec {
  bool use_profile = true;
  std::optional<double> state_sigma;
  std::optional<calib::LognormalPareto> launch;
  std::optional<std::uint32_t> stragglers;
  double straggler_rate_factor = 1.0, straggler_delay_us = 0;
};

struct Scenario {
  std::string file;         ///< where it came from ("built-in" for the default study)
  std::string base_dir;     ///< relative paths inside the scenario resolve against this folder
  nlohmann::json effective; ///< the validated document with every default filled in
  std::string name;
  std::uint64_t seed = 1;
  EngineKind engine = EngineKind::Packet;
  // fabric
  std::string fabric_file;
  std::string fabric_generator = "fat-tree";
  nlohmann::json fabric_params;
  // routing, congestion control, calibration, device models
  std::string routing = "auto"; ///< a registered routing algorithm or "auto"
  pkt::ArMode adaptive_routing = pkt::ArMode::Off;
  pkt::CcMode cc = pkt::CcMode::None;
  nlohmann::json cc_params;
  std::string calibration;
  nlohmann::json packet; ///< PacketConfig keys given in the scenario (they override a calibration profile)
  double nvlink_gbps = 3600;
  double nvlink_latency_us = 0.7;
  double max_sim_time_ms = 0; ///< 0: no limit
  bool nccl_costs = true;     ///< NCCL's software costs in the DAGs (scenarios/nccl_cost.hpp)
  std::string nccl_version;   ///< "" = the tuning model's reference (2.20.3)
  std::uint32_t nccl_min_channels = 0; ///< NCCL_MIN_NCHANNELS (nccl.min_channels); 0 = no bound
  std::uint32_t nccl_max_channels = 0; ///< NCCL_MAX_NCHANNELS (nccl.max_channels); 0 = no bound
  /// The system offers NVLS (nccl.nvls: NVSwitch with multicast) and CollNet/SHARP (nccl.collnet: SHARP
  /// switches); a job's "auto" then means NCCL's choice among ring, tree and the offered ones.
  bool nccl_nvls = false, nccl_collnet = false;
  std::uint32_t segment_iterations =
      0; ///< 0: one run; else segments of this many iterations (analysis/segments.hpp)
  /// flow.symmetric_steps: the flow engine's symmetric-steps shortcut for ring jobs
  /// (scenarios/ring_shortcut.hpp).
  bool flow_symmetric_steps = true;
  /// flow.solver = "simgrid": SimGrid computes the flow engine's sharing (default: the native solver).
  bool flow_simgrid_solver = false;
  /// flow.ring_fluid: "auto" (when a collective's DAG would exceed kMaxTransfers), "on" or "off"
  /// (scenarios/ring_fluid.hpp).
  std::string flow_ring_fluid = "auto";
  std::vector<JobSpec> jobs;
  std::vector<BackgroundSpec> background;
  FaultSpec faults; ///< the `faults` section (scenarios/faults.hpp)
  VariabilitySpec variability;
  /// Keys the scenario gives that change nothing as it stands (a straggler delay with no straggler, a jitter
  /// scale with no distribution, cc.params with cc none, flow.* on the packet engine): a run reports them as
  /// warnings, since a value the user wrote that is silently inert looks like a result.
  std::vector<std::string> no_effect;
  std::vector<std::string>
      overrides; ///< the "path=value" overrides applied to the file (--set, a study's point)
  std::string
      flow_key_given; ///< the first flow.* key the scenario gives ("" = none): inert on the packet engine
  /// The keys as the user gave them (file and --set, before defaults): a study's points judge `no_effect`
  /// by these, against the point's own effective configuration.
  nlohmann::json given;
};

/// The variability model a run applies: the profile's (when `profile` has one and use_profile), with the
/// parts the scenario gives replacing the profile's. Empty model = none.
calib::VariabilityModel effective_variability(const Scenario& s, const calib::VariabilityModel* profile);

/// Applies the scenario's packet-engine settings to `cfg` (after a calibration profile, if any): the
/// `packet` keys, then cc.algorithm with cc.params and routing.adaptive; validates. InputError naming the file.
void apply_packet_settings(const Scenario& s, pkt::PacketConfig& cfg);

/// `msg` (an error "FILE: key 'K': ...") with the override that set K, or a key under or above it, named:
/// "... (K=VALUE is from the command line, not the file)". Errors found after the schema check name the
/// scenario file and key; when the value came from an override, the file does not hold it. A message that
/// carries the note already is returned as it is (make_scenario, build_world and run_scenario each add it).
std::string note_override(const std::vector<std::string>& overrides, std::string msg);

/// Parses and validates `doc`; `where` names it in errors; overrides are "path=value" applied first.
Scenario make_scenario(const nlohmann::json& doc, const std::string& where, const std::string& base_dir,
                       const std::vector<std::string>& overrides = {});
/// A study's point: `base` (as loaded, its overrides applied) with the point's overrides on top. Errors note
/// overrides of both (note_override); the inert-key warnings are the base's.
Scenario point_scenario(const Scenario& base, const std::vector<std::string>& point_overrides);
/// A study's "no effect" warnings, one line each: `inert` counts the points whose no_effect holds each line
/// ("no effect on 2 of 4 points: ..." when not all of `points`).
std::vector<std::string> study_no_effect(const std::map<std::string, std::size_t>& inert, std::size_t points);
/// Reads a scenario file (malformed JSON is an InputError with the line and column).
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides = {});
/// The built-in default study's scenario (256-HCA NDR 2-tier fat-tree, a 128-GPU AllReduce job beside a
/// 128-GPU background job): see default_scenario_json() for the document.
nlohmann::json default_scenario_json();

} // namespace ibn::scen
