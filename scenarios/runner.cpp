#include "scenarios/runner.hpp"

#include "models/engines.hpp"
#include "models/packet/packet_engine.hpp"
#include "scenarios/background.hpp"
#include "scenarios/collectives.hpp"
#include "scenarios/executor.hpp"
#include "scenarios/jitter.hpp"
#include "scenarios/placement.hpp"
#include "scenarios/repeat_skip.hpp"
#include "scenarios/replay.hpp"
#include "scenarios/resource_estimate.hpp"
#include "scenarios/ring_fluid.hpp"
#include "scenarios/ring_shortcut.hpp"
#include "scenarios/timed_faults.hpp"
#include "sim/build_id.hpp"
#include "sim/deadlock.hpp"
#include "sim/error.hpp"
#include "sim/progress.hpp"
#include "sim/rng.hpp"
#include "sim/units.hpp"
#include "sim/version.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numbers>
#include <optional>

namespace ibn::scen {

namespace {

struct JobRun {
  const JobSpec* spec = nullptr;
  std::size_t index = 0;
  JobLayout layout;
  double nic_gbps = 0; ///< the job's NIC rate (input of the tuning model)
  /// Per distinct collective (op, size, requested algorithm): its DAG, executor and result entry.
  struct Collective {
    CollOp op;
    std::uint64_t size_bytes = 0;
    std::string requested_algorithm; ///< may be "auto"
    std::unique_ptr<TransferDag> dag;
    std::unique_ptr<DagExecutor> exec;
    std::unique_ptr<RingShortcut> shortcut; ///< flow.symmetric_steps: instead of dag and exec
    CollectiveSpec spec;                    ///< what the DAG is built from (also after a shortcut's fallback)
    std::string where;                      ///< names the collective in errors
    std::size_t result = 0;                 ///< index into RunResult::collectives
    std::unique_ptr<RingFluid> fluid;       ///< flow.ring_fluid: instead of dag and exec
  };
  std::vector<Collective> colls;
  /// Transfers one execution of `c` delivers (the progress count).
  static std::uint64_t transfers_of(const Collective& c) {
    if (c.fluid) return c.fluid->network_transfers() + c.fluid->nvlink_transfers();
    return c.dag ? c.dag->size() : c.shortcut->network_transfers() + c.shortcut->nvlink_transfers();
  }
  std::unique_ptr<Rng> rng;
  std::unique_ptr<Jitter> jitter;
  // Variability (calibration/variability.hpp; only when the model is not empty).
  std::unique_ptr<Rng> var_rng;          ///< launch-jitter draws
  double state_z = 0;                    ///< the run's state draw
  std::vector<std::uint32_t> slow_nodes; ///< straggler job nodes
  std::vector<bool> slow;                ///< per job node
  // What the job runs, in order: entries (one per size; or one per call of a replayed trace), each repeated
  // `reps` times, the whole list `passes` times. Sizes: reps = warmup + iterations, passes = 1; trace:
  // reps = 1, passes = warmup + iterations.
  struct Entry {
    std::size_t coll = 0;
    Time gap;               // compute time before the call (dependent calls)
    std::optional<Time> at; // timed call: offset from the start of the pass
  };
  std::vector<Entry> entries;
  bool trace = false;
  std::uint32_t reps = 1, passes = 1;
  std::size_t entry = 0;
  std::uint32_t rep = 0, pass = 0;
  Time pass_start;
  bool recording() const { return (trace ? pass : rep) >= spec->workload.warmup; }
  /// Moves to the next call; false when the job's list is exhausted.
  bool advance() {
    if (++rep < reps) return true;
    rep = 0;
    if (++entry < entries.size()) return true;
    entry = 0;
    return ++pass < passes;
  }
  Time iter_start;
  Time first_ready;
  bool finished = false;
};

/// One run of a scenario on a built world: a job driver. The constructor builds everything (engine,
/// placement, collectives, background traffic); run() starts every job at t = 0 and drives iterations
/// (start_iteration -> the collective's executor -> on_done -> start_iteration ...) until every finite
/// job is done, then stops looping jobs and background traffic at their next boundary.
class ScenarioRunner {
 public:
  ScenarioRunner(const Scenario& s, const World& w, const RunOptions& opt)
      : s_(s), w_(w), opt_(opt), engine_kind_(opt.engine.value_or(s.engine)),
        wall0_(std::chrono::steady_clock::now()), seed_(segment_seed(s.seed, opt.segment)),
        noise_rng_(
            Rng::for_stream(seed_, opt.segment ? "noise/segment/" + std::to_string(opt.segment) : "noise")) {
    var_ = effective_variability(s, w.profile && w.profile->variability ? &*w.profile->variability : nullptr);
    place(); // first: the engine is told which HCAs the jobs and background patterns use
    make_engine();
    build_jobs();
    build_background();
  }
  ScenarioRunner(const ScenarioRunner&) = delete;
  ScenarioRunner& operator=(const ScenarioRunner&) = delete;

  RunResult run();

 private:
  void make_engine();
  void schedule_faults();
  void place();
  void build_jobs();
  void build_job(std::size_t i);
  void add_replayed_calls(JobRun& jr, Time gap);
  /// The job's collective for (op, size, algorithm), built on first use.
  std::size_t collective_for(JobRun& jr, CollOp op, std::uint64_t size, const std::string& algorithm,
                             const std::string& where);
  void build_background();
  void start_iteration(JobRun& jr);
  void on_done(JobRun& jr, Time end);
  void finish_job(JobRun& jr);
  void report_progress();
  /// Measured iterations of job i in this run (RunOptions::iterations, else the scenario's).
  std::uint32_t iterations_of(std::size_t i) const {
    return i < opt_.iterations.size() && !s_.jobs[i].workload.loop ? opt_.iterations[i]
                                                                   : s_.jobs[i].workload.iterations;
  }
  void record_transfer(const JobRun& jr, std::size_t coll, const TransferDag& dag, TransferId t, Time posted,
                       Time delivered);
  RunManifest manifest() const;
  void report_faults();
  /// Builds the collective's DAG and executor (the exact path).
  void make_exact(JobRun& jr, JobRun::Collective& c);
  /// The flow engine when the symmetric-steps shortcut may run this scenario's collectives (one job alone on
  /// the fabric, static routing, no calibration, no trace, no time limit), else nullptr.
  flow::FlowEngine* shortcut_engine() const;
  /// The collective spec of job i for (op, size, algorithm), as collective_for() builds it.
  CollectiveSpec spec_for(std::size_t i, CollOp op, std::uint64_t size, const std::string& algorithm) const;
  /// The NIC rate of job i's first HCA (input of the tuning model), 0 when unknown.
  double job_nic_gbps(std::size_t i) const;
  Time job_hw_net_latency(std::size_t i) const;
  /// Whether this run's collectives go on the ring-fluid model (flow.ring_fluid; ring_fluid.hpp): sets
  /// fluid_ and fluid_report_. InputError when flow.ring_fluid is "on" and the run cannot use it.
  void decide_ring_fluid();

  const Scenario& s_;
  const World& w_;
  const RunOptions& opt_;
  const EngineKind engine_kind_;
  std::vector<std::string> ignored_; // what the scenario asks for that the engine ignores (manifest.warnings)
  std::uint64_t capped_draws_ = 0;   // launch-jitter draws held at LognormalPareto::kMaxDrawUs
  const std::chrono::steady_clock::time_point wall0_;
  RunResult out_;
  std::unique_ptr<eng::Engine> engine_;
  std::vector<JobPlacement> placed_; // jobs, then background patterns
  std::vector<JobRun> jobs_;
  std::vector<std::unique_ptr<BackgroundDriver>> drivers_;
  const std::uint64_t seed_; // the seed of this run's (segment's) streams; placement uses s_.seed
  Rng noise_rng_;
  calib::VariabilityModel var_; // empty: none (today's behaviour)
  ExecOptions exec_opts_;
  bool stopping_ = false; // every finite job is done: looping work stops
  bool time_up_ = false;  // run.max_sim_time_ms reached: no job starts another iteration
  // Repeat skips (scenarios/repeat_skip.hpp): allowed when nothing is random and nothing else shares the engine.
  bool repeat_ok_ = false;
  RepeatSkip repeat_;
  std::size_t finite_left_ = 0;
  Time last_end_ = Time::zero(); // the last collective's completion: the run's duration for link utilization
  std::chrono::steady_clock::time_point last_progress_ = std::chrono::steady_clock::now();
  std::uint64_t total_iters_ = 0, done_iters_ = 0;
  nlohmann::json shortcut_report_ = {{"fallback", nlohmann::json::array()}}; // + counts at the end
  bool fluid_ = false;                                                       // flow.ring_fluid in use
  std::unique_ptr<CoflowNetwork> coflows_;                                   // its shared links
  nlohmann::json fluid_report_ = nlohmann::json::object();
};

flow::FlowEngine* ScenarioRunner::shortcut_engine() const {
  if (engine_kind_ != EngineKind::Flow || !s_.flow_symmetric_steps) return nullptr;
  if (s_.jobs.size() != 1 || !s_.background.empty() || w_.profile || s_.max_sim_time_ms > 0 ||
      opt_.trace_limit > 0 || s_.jobs[0].workload.loop)
    return nullptr;
  // What the shortcut's recurrence does not model: the variability model (launch delays, stragglers' later
  // posts), timed faults and bit errors, and segmented runs (their iteration counts belong to the exact
  // path). NCCL's software costs are in its RingPlan. A point's progress line does not move while it runs.
  if (!var_.empty() || !w_.timed_faults.empty() || !w_.packet.link_bit_error_rate.empty() ||
      !opt_.iterations.empty())
    return nullptr;
  auto* fe = dynamic_cast<flow::FlowEngine*>(engine_.get());
  if (fe == nullptr || fe->config().adaptive_routing || fe->config().factors) return nullptr;
  return fe;
}

void ScenarioRunner::make_engine() {
  // The engine from the registry (models/engines.hpp); what the scenario asks for and the engine ignores is
  // one warning, printed by the commands and kept in the manifest.
  const std::string name = to_string(engine_kind_);
  const auto engines = eng::builtin_engines();
  const auto& kind = engines.get(name);
  // Every HCA a job or background pattern was placed on; nothing else sends. With timed faults the SM's
  // reroute may take any cable: no list (the engine builds everything).
  std::vector<routing::HcaIndex> used;
  for (const auto& p : placed_)
    for (const auto& node : p.nodes) used.insert(used.end(), node.begin(), node.end());
  engine_ =
      kind.factory.make({w_.fabric, *w_.tables, w_.packet, seed_, w_.timed_faults.empty() ? &used : nullptr,
                         s_.flow_simgrid_solver, w_.cable_directions.get()});
  auto asked = w_.packet; // the world's own VLs (dragonfly MIN) are not the scenario's to warn of
  if (w_.auto_vls) asked.num_vls = 1;
  ignored_ = eng::ignored_features(name, kind.factory.capabilities, asked);
  for (const auto& n : s_.no_effect) ignored_.push_back("no effect: " + n);
  if (engine_kind_ == EngineKind::Packet && !s_.flow_key_given.empty())
    ignored_.push_back("no effect: " + s_.flow_key_given +
                       " is given but the engine is packet (flow.* keys set the flow engine only)");
  schedule_faults();
  out_.warnings.insert(out_.warnings.end(), ignored_.begin(), ignored_.end());
}

void ScenarioRunner::schedule_faults() {
  // Faults at t = 0 are in the world's fabric already (build_world); later ones go to the engine's fault API
  // (both engines: scenarios/timed_faults.hpp).
  std::string what;
  if (!schedule_timed_faults(*engine_, w_.timed_faults, s_.faults, w_.packet, s_.file))
    what = std::to_string(w_.timed_faults.size()) + " fault(s) at t > 0 (" + w_.timed_faults[0].what +
           (w_.timed_faults.size() > 1 ? ", ..." : "") + "; no fault API in this engine)";
  if (!w_.packet.link_bit_error_rate.empty() && !dynamic_cast<pkt::PacketEngine*>(engine_.get())) {
    refuse_dead_ber_links(w_.packet.link_bit_error_rate, w_.packet.write_wire_bytes(w_.packet.mtu_bytes),
                          w_.fabric, s_.file);
    what += std::string(what.empty() ? "" : "; ") +
            "faults.ber as lost packets and RC retransmissions (modelled as capacity after retransmissions)";
  }
  if (!what.empty())
    ignored_.push_back("engine '" + to_string(engine_kind_) + "' ignores what this scenario asks for: " +
                       what + " (run with --engine packet to model it)");
}

void ScenarioRunner::place() {
  Rng place_rng = Rng::for_stream(s_.seed, "placement");
  // Jobs may use different NICs per node; the pool groups HCAs by the largest NIC count asked for.
  const std::uint32_t nics = placement_nics(s_);
  std::optional<NodePool> own; // only when the world holds no pool for this NIC count
  if (!w_.pool || w_.pool->nics_per_node() != nics) own.emplace(NodePool::from_fabric(w_.fabric, nics));
  const NodePool& pool = own ? *own : *w_.pool;
  const auto reqs = placement_requests(s_, pool.size());
  placed_ = place_jobs(pool, reqs, place_rng);
  for (std::size_t i = 0; i < placed_.size(); ++i) {
    out_.placement.push_back({{"job", i < s_.jobs.size() ? s_.jobs[i].name : reqs[i].job},
                              {"nodes", placed_[i].slots},
                              {"hcas", placed_[i].all_hcas()},
                              {"leaves_spanned", leaves_spanned(pool, placed_[i])}});
  }
}

void ScenarioRunner::build_jobs() {
  exec_opts_.nvlink_gbps = s_.nvlink_gbps;
  exec_opts_.nvlink_latency = Time::from_us(s_.nvlink_latency_us);
  // Calibrated per-operation costs: the host latency the engine does not model plus a noise draw.
  if (w_.profile) {
    const calib::Profile* prof = &*w_.profile;
    Rng* noise = &noise_rng_;
    exec_opts_.noise = [prof, noise](std::uint64_t bytes) {
      return prof->host_latency(bytes) + prof->noise.draw(*noise, bytes);
    };
  }
  // Period skips (packet.fast_forward) only while one job is all the engine runs (no timer at a set time).
  exec_opts_.fast_forward = w_.packet.fast_forward && engine_kind_ == EngineKind::Packet &&
                            s_.jobs.size() == 1 && s_.background.empty() && w_.timed_faults.empty() &&
                            !(s_.max_sim_time_ms > 0);
  repeat_ok_ = exec_opts_.fast_forward && var_.empty() && !exec_opts_.noise && opt_.trace_limit == 0;
  jobs_.resize(s_.jobs.size()); // never resized again: executors' callbacks hold JobRun pointers
  decide_ring_fluid();
  for (std::size_t i = 0; i < s_.jobs.size(); ++i) build_job(i);
  std::uint64_t units = 0; // transfers the finite jobs deliver (progress)
  for (const auto& j : jobs_)
    if (!j.spec->workload.loop) {
      ++finite_left_;
      total_iters_ += j.entries.size() * j.reps * j.passes;
      for (std::uint32_t pass = 0; pass < j.passes; ++pass)
        for (const auto& e : j.entries)
          units += static_cast<std::uint64_t>(j.reps) * JobRun::transfers_of(j.colls[e.coll]);
    }
  if (opt_.progress_slot) {
    opt_.progress_slot->run_done.store(0);
    opt_.progress_slot->run_total.store(units);
  }
}

void ScenarioRunner::build_job(std::size_t i) {
  auto& jr = jobs_[i];
  const auto& js = s_.jobs[i];
  jr.spec = &js;
  jr.index = i;
  jr.layout.nodes = placed_[i].nodes;
  jr.layout.gpus_per_node = js.gpus_per_node;
  jr.layout.sl = static_cast<std::uint8_t>(js.sl);
  jr.rng = std::make_unique<Rng>(
      Rng::for_stream(seed_, "jitter/" + std::to_string(i) +
                                 (opt_.segment ? "/segment/" + std::to_string(opt_.segment) : "")));
  jr.jitter = std::make_unique<Jitter>(js.workload.jitter, *jr.rng);
  jr.slow.assign(jr.layout.nodes.size(), false);
  if (var_.stragglers > jr.layout.nodes.size())
    throw InputError(s_.file + ": key 'variability.stragglers.count': " + std::to_string(var_.stragglers) +
                     " stragglers in job '" + js.name + "' of " + std::to_string(jr.layout.nodes.size()) +
                     " nodes");
  if (!var_.empty()) {
    const auto tag = std::to_string(i);
    // Launch draws follow the segment's streams; the run state and stragglers are the point's (all segments).
    jr.var_rng = std::make_unique<Rng>(
        Rng::for_stream(seed_, "variability/launch/" + tag +
                                   (opt_.segment ? "/segment/" + std::to_string(opt_.segment) : "")));
    Rng state = Rng::for_stream(s_.seed, "variability/state/" + tag);
    jr.state_z = calib::standard_normal(state);
    if (var_.stragglers > 0) {
      Rng pick = Rng::for_stream(s_.seed, "variability/stragglers/" + tag);
      std::vector<std::uint32_t> idx(jr.layout.nodes.size());
      for (std::uint32_t k = 0; k < idx.size(); ++k) idx[k] = k;
      for (std::uint32_t k = 0; k < var_.stragglers; ++k) { // partial Fisher-Yates
        const auto j = k + static_cast<std::uint32_t>(pick.uniform_below(idx.size() - k));
        std::swap(idx[k], idx[j]);
        jr.slow[idx[k]] = true;
        jr.slow_nodes.push_back(idx[k]);
      }
      std::sort(jr.slow_nodes.begin(), jr.slow_nodes.end());
      out_.placement[i]["straggler_nodes"] = jr.slow_nodes; // indices into the job's "nodes"
    }
  }
  jr.nic_gbps = job_nic_gbps(i);
  const auto key = s_.file + ": key 'jobs[" + std::to_string(i) + "].workload";
  const Time gap = Time::from_us(js.workload.compute_gap_us);
  if (js.workload.trace.empty()) {
    for (const auto size : js.workload.sizes_bytes)
      jr.entries.push_back(
          {collective_for(jr, js.workload.op, size, js.workload.algorithm, key + ".op'"), gap, std::nullopt});
    jr.reps = js.workload.warmup + iterations_of(i);
  } else {
    add_replayed_calls(jr, gap);
  }
}

void ScenarioRunner::add_replayed_calls(JobRun& jr, Time gap) {
  const auto& js = *jr.spec;
  // Replay: the calls of the trace's job named like this job, or of its only job/communicator.
  const auto path = scenario_path(s_, js.workload.trace);
  const auto trace = read_replay_file(path);
  for (const auto& wmsg : trace.warnings) out_.warnings.push_back(wmsg);
  const auto names = trace.jobs();
  std::string pick;
  for (const auto& n : names)
    if (n == js.name) pick = n;
  if (pick.empty() && names.size() == 1) pick = names[0];
  if (pick.empty())
    throw InputError(path + ": no job named '" + js.name + "' among the trace's " +
                     std::to_string(names.size()) +
                     " jobs/communicators; name the scenario job like one of them");
  for (const auto& c : trace.calls) {
    if (c.job != pick) continue;
    if (c.op == "send" || c.op == "recv") {
      out_.warnings.push_back(c.where + ": point-to-point " + c.op + " not replayed (only collectives)");
      continue;
    }
    if (c.nranks && c.nranks != js.nodes * js.gpus_per_node)
      out_.warnings.push_back(c.where + ": the call had " + std::to_string(c.nranks) +
                              " ranks; replayed on the job's " + std::to_string(js.nodes * js.gpus_per_node));
    const auto algo = c.algorithm.empty() ? js.workload.algorithm : c.algorithm;
    jr.entries.push_back(
        {collective_for(jr, parse_coll_op(c.op, c.where), c.size_bytes, algo, c.where), c.gap + gap, c.at});
  }
  if (jr.entries.empty()) throw InputError(path + ": no collective call to replay for job '" + js.name + "'");
  jr.trace = true;
  jr.passes = js.workload.warmup + iterations_of(jr.index);
}

CollectiveSpec ScenarioRunner::spec_for(std::size_t i, CollOp op, std::uint64_t size,
                                        const std::string& algorithm) const {
  const auto& js = s_.jobs[i];
  CollectiveSpec cs;
  cs.op = op;
  cs.size_bytes = size;
  cs.ranks = js.nodes * js.gpus_per_node;
  cs.gpus_per_node = js.gpus_per_node;
  cs.nics_per_node = js.nics_per_node;
  cs.algorithm = algorithm;
  cs.protocol = js.workload.protocol;
  cs.channels = js.workload.channels;
  cs.min_channels = s_.nccl_min_channels;
  cs.max_channels = s_.nccl_max_channels;
  if (const double g = job_nic_gbps(i); g > 0) cs.nic_gbps = g;
  cs.nvlink_gbps = s_.nvlink_gbps;
  cs.hw_net_latency = job_hw_net_latency(i);
  if (!var_.launch.zero()) // (held where the draws are held: a heavy body's mean overflows the clock)
    cs.launch_credit = Time::from_us(std::min(var_.launch.typical(), calib::LognormalPareto::kMaxDrawUs));
  // NCCL's cost model (scenarios/nccl_cost.hpp): on with nccl.costs (the default), with a profile's fitted
  // costs in place of the table's; nccl.costs=false turns both off (the network alone, or an MPI library's
  // collective in `validate osu`).
  cs.nccl_version = s_.nccl_version;
  cs.nccl_costs = s_.nccl_costs;
  if (s_.nccl_costs && w_.profile && w_.profile->nccl) {
    const auto& f = *w_.profile->nccl;
    if (cs.nccl_version.empty()) cs.nccl_version = f.version;
    cs.nccl_fitted.protocol = f.protocol;
    cs.nccl_fitted.base_us = f.base.value;
    cs.nccl_fitted.net_us = f.net_step.value;
  }
  return cs;
}

double ScenarioRunner::job_nic_gbps(std::size_t i) const {
  const auto& nodes = placed_.at(i).nodes;
  return nodes.empty() || nodes[0].empty() ? 0.0 : hca_link_gbps(w_, nodes[0][0]);
}

Time ScenarioRunner::job_hw_net_latency(std::size_t i) const {
  const auto& nodes = placed_.at(i).nodes;
  return nodes.empty() || nodes[0].empty() ? Time::zero() : hca_leaf_latency(w_, nodes[0][0]);
}

void ScenarioRunner::decide_ring_fluid() {
  auto* fe = dynamic_cast<flow::FlowEngine*>(engine_.get());
  if (fe == nullptr) return;
  const auto blocker = ring_fluid_blocker(s_, w_, fe->config().adaptive_routing || fe->config().factors,
                                          !var_.empty(), opt_.trace_limit > 0);
  const auto c =
      choose_ring_fluid(s_, blocker, shortcut_engine() != nullptr, [this](std::size_t i, std::uint64_t n) {
        return spec_for(i, s_.jobs[i].workload.op, n, s_.jobs[i].workload.algorithm);
      });
  if (!c.use) return;
  fluid_ = true;
  coflows_ =
      std::make_unique<CoflowNetwork>(*engine_, [fe](std::uint32_t l) { return fe->link_bytes_per_s(l); });
  fluid_report_["reason"] = c.reason;
  out_.warnings.push_back(
      "flow engine: every collective runs on the ring-fluid model (lock-step ring stages as "
      "coflows, docs/flow-engine.md \"Ring fluid\"), an approximation of the exact path: " +
      c.reason);
}

std::size_t ScenarioRunner::collective_for(JobRun& jr, CollOp op, std::uint64_t size,
                                           const std::string& algorithm, const std::string& where) {
  // One DAG (and one result entry) per distinct (op, size, algorithm).
  for (std::size_t d = 0; d < jr.colls.size(); ++d)
    if (jr.colls[d].size_bytes == size && jr.colls[d].op == op &&
        jr.colls[d].requested_algorithm == algorithm)
      return d;
  const auto& js = *jr.spec;
  const CollectiveSpec cs = spec_for(jr.index, op, size, algorithm);
  JobRun::Collective c{op,     size, algorithm, nullptr, nullptr, nullptr, cs, where, out_.collectives.size(),
                       nullptr};
  auto input_error = [&](const InputError& e) { return collective_error(where, js.name, size, op, e); };
  // The result entry: what ran (the shortcut's ring plan or the tuning's DAG) and its transfer counts.
  auto add = [&](const std::string& what, const std::string& algo, const std::string& proto,
                 std::uint32_t channels, std::uint64_t net, std::uint64_t nvl, Time launch) {
    CollectiveSamples o;
    o.job = js.name;
    o.op = what;
    o.algorithm = algo;
    o.protocol = proto;
    o.size_bytes = size;
    o.ranks = cs.ranks;
    o.nodes = js.nodes;
    o.channels = channels;
    o.looping = js.workload.loop;
    o.network_transfers = net;
    o.nvlink_transfers = nvl;
    o.launch_us = launch.to_us();
    o.busbw_factor = busbw_factor(cs.op, cs.ranks);
    out_.collectives.push_back(std::move(o));
    jr.colls.push_back(std::move(c));
    return jr.colls.size() - 1;
  };
  if (fluid_ && cs.size_bytes > 0 && cs.ranks >= 2) { // (an empty collective keeps its empty DAG)
    std::optional<RingStages> st;
    try {
      st = ring_stages(cs);
    } catch (const InputError& e) {
      throw input_error(e);
    }
    if (!st) throw std::logic_error("ring fluid: a collective without ring stages");
    c.fluid = RingFluid::make(*st, jr.layout, *dynamic_cast<flow::FlowEngine*>(engine_.get()), exec_opts_);
    const auto net = c.fluid->network_transfers(), nvl = c.fluid->nvlink_transfers();
    const auto algo = st->algorithm;
    const auto proto = protocol_label(st->protocol, st->nvlink.protocol);
    const auto channels = st->channels;
    return add(to_string(op), algo, proto, channels, net, nvl, st->launch_latency);
  }
  if (auto* fe = shortcut_engine()) {
    std::optional<RingPlan> plan;
    try {
      plan = ring_plan(cs);
    } catch (const InputError& e) {
      throw input_error(e);
    }
    if (plan) {
      std::string why;
      c.shortcut = RingShortcut::make(*plan, jr.layout, *fe, exec_opts_, why);
      if (c.shortcut) {
        const auto net = c.shortcut->network_transfers(), nvl = c.shortcut->nvlink_transfers();
        return add(to_string(op), "ring", plan->protocol, plan->channels, net, nvl, plan->launch_latency);
      }
      shortcut_report_["fallback"].push_back(format_size(size) + " " + to_string(op) + ": " + why);
    }
  }
  make_exact(jr, c);
  const auto& dag = *c.dag;
  return add(dag.op, dag.algorithm, protocol_label(dag.protocol, dag.protocol_nvlink), dag.channels,
             c.exec->network_transfers(), c.exec->nvlink_transfers(), dag.launch_latency);
}

void ScenarioRunner::make_exact(JobRun& jr, JobRun::Collective& c) {
  try {
    c.dag = std::make_unique<TransferDag>(build_collective(c.spec));
  } catch (const InputError& e) {
    throw collective_error(c.where, jr.spec->name, c.size_bytes, c.op, e);
  }
  ExecOptions eo = exec_opts_;
  if (!jr.slow_nodes.empty() && var_.straggler_rate_factor < 1.0 && jr.nic_gbps > 0) {
    // A straggler's NICs send at factor f of their rate (paced by the executor: scenarios/executor.hpp).
    const JobRun* jrp = &jr;
    const double paced = jr.nic_gbps * var_.straggler_rate_factor;
    eo.node_paced_gbps = [jrp, paced](std::uint32_t node) { return jrp->slow[node] ? paced : 0.0; };
    eo.line_gbps = jr.nic_gbps;
  }
  if (opt_.trace_limit > 0) {
    const TransferDag* dag = c.dag.get();
    const JobRun* jrp = &jr;
    const std::size_t coll = c.result;
    eo.on_transfer = [this, jrp, coll, dag](TransferId t, Time posted, Time delivered) {
      record_transfer(*jrp, coll, *dag, t, posted, delivered);
    };
  }
  if (opt_.progress_slot && !jr.spec->workload.loop) eo.delivered = &opt_.progress_slot->run_done;
  c.exec = std::make_unique<DagExecutor>(*engine_, *c.dag, jr.layout, eo);
}

void ScenarioRunner::record_transfer(const JobRun& jr, std::size_t coll, const TransferDag& dag, TransferId t,
                                     Time posted, Time delivered) {
  // Only the first measured iteration of each collective, and at most trace_limit spans in all.
  if (!jr.recording() || !out_.collectives[coll].samples_us.empty() || out_.trace.size() >= opt_.trace_limit)
    return;
  const auto& tr = dag[t];
  out_.trace.push_back({static_cast<std::uint32_t>(jr.index), coll, tr.src, tr.dst, tr.step, tr.channel,
                        tr.bytes, tr.src / jr.layout.gpus_per_node != tr.dst / jr.layout.gpus_per_node,
                        posted, delivered});
}

void ScenarioRunner::build_background() {
  for (std::size_t b = 0; b < s_.background.size(); ++b) {
    const auto& bg = s_.background[b];
    const auto& pl = placed_[s_.jobs.size() + b];
    BackgroundTrafficSpec spec;
    spec.name = "background" + std::to_string(b);
    spec.pattern = bg.pattern;
    spec.hcas = pl.all_hcas();
    double rate = 0;
    for (const auto h : spec.hcas) {
      const auto node = w_.tables->hca_nodes()[h];
      spec.planes.push_back(w_.fabric.node(node).plane);
      for (const auto l : w_.fabric.links_of(node))
        rate = std::max(rate, w_.fabric.link(l).speed.rate_gbps());
    }
    spec.rate_gbps = rate;
    spec.load = bg.load;
    spec.message_bytes = bg.message_bytes;
    spec.start = Time::from_us(bg.start_us);
    // Without a stop time the traffic runs until the last finite job is done (finish_job()).
    spec.stop = bg.stop_us > 0 ? Time::from_us(bg.stop_us) : Time::max();
    spec.sl = static_cast<std::uint8_t>(bg.sl);
    spec.qp_slot = 0;
    spec.seed = seed_;
    drivers_.push_back(std::make_unique<BackgroundDriver>(*engine_, spec));
  }
}

void ScenarioRunner::finish_job(JobRun& jr) {
  jr.finished = true;
  if (!jr.spec->workload.loop && --finite_left_ == 0) {
    stopping_ = true;
    for (auto& d : drivers_) d->stop();
    if (!w_.timed_faults.empty()) cancel_pending_faults(*engine_);
  }
}

void ScenarioRunner::report_progress() {
  const auto now = std::chrono::steady_clock::now();
  if (now - last_progress_ <= std::chrono::seconds(1) && done_iters_ != total_iters_) return;
  last_progress_ = now;
  char line[200];
  std::snprintf(line, sizeof line, "%llu/%llu collectives, simulated %.1f us",
                static_cast<unsigned long long>(done_iters_), static_cast<unsigned long long>(total_iters_),
                engine_->now().to_us());
  opt_.progress(line);
}

void ScenarioRunner::on_done(JobRun& jr, Time end) {
  last_end_ = std::max(last_end_, end);
  const auto& wl = jr.spec->workload;
  // The run state stretches (or shrinks) the collective's time by its factor (a stretch delays the next too).
  Time stretch = Time::zero();
  double sample_us = (end - jr.first_ready).to_us();
  if (!var_.state.empty()) {
    const double f = var_.state_factor(jr.colls[jr.entries[jr.entry].coll].size_bytes, jr.state_z);
    if (f > 1.0) stretch = Time::from_us(sample_us * (f - 1.0));
    sample_us *= f;
  }
  const auto& coll = jr.colls[jr.entries[jr.entry].coll];
  if (jr.recording()) out_.collectives[coll.result].samples_us.push_back(sample_us);
  if (!wl.loop) ++done_iters_;
  // Repeat skips: the rest of this entry's executions, once they repeat this one exactly (the skipped ones'
  // samples are this one's; the engine moved its clock and counters on by as many periods).
  if (repeat_ok_ && !wl.loop && !jr.trace && jr.jitter->none() && coll.exec && !coll.exec->skips_periods())
    if (const auto n = repeat_.on_done(*engine_, jr.entry, end, end - jr.first_ready, jr.reps - jr.rep - 1)) {
      for (std::uint32_t i = 0; i < n; ++i) {
        ++jr.rep;
        if (jr.recording()) out_.collectives[coll.result].samples_us.push_back(sample_us);
        if (opt_.progress_slot) opt_.progress_slot->run_done += JobRun::transfers_of(coll);
      }
      done_iters_ += n;
      last_end_ = std::max(last_end_, engine_->now());
    }
  if (opt_.progress && !opt_.progress_slot && !wl.loop) report_progress(); // a slot: sim/progress.hpp prints
  if (!jr.advance()) {
    if (!wl.loop) return finish_job(jr);
    jr.entry = 0, jr.rep = 0, jr.pass = 0;
  }
  if (stretch > Time::zero()) {
    JobRun* p = &jr;
    engine_->call_at(end + stretch, [this, p] { start_iteration(*p); });
    return;
  }
  start_iteration(jr);
}

void ScenarioRunner::start_iteration(JobRun& jr) {
  if (time_up_ || (stopping_ && jr.spec->workload.loop)) return finish_job(jr);
  const Time now = engine_->now();
  if (jr.entry == 0 && jr.rep == 0) jr.pass_start = now;
  const auto& e = jr.entries[jr.entry];
  const Time start = e.at ? std::max(now, jr.pass_start + *e.at) : now + e.gap;
  const auto ranks = jr.layout.ranks();
  std::vector<Time> ready(ranks);
  Time first = Time::max();
  for (std::uint32_t r = 0; r < ranks; ++r) ready[r] = start + jr.jitter->draw();
  if (jr.var_rng) {
    if (var_.straggler_delay_us > 0)
      for (const auto n : jr.slow_nodes)
        for (std::uint32_t g = 0; g < jr.layout.gpus_per_node; ++g)
          ready[n * jr.layout.gpus_per_node + g] += Time::from_us(var_.straggler_delay_us);
    if (!var_.launch.zero()) {
      const auto r = static_cast<std::uint32_t>(jr.var_rng->uniform_below(ranks));
      ready[r] += Time::from_us(var_.launch.draw_capped(*jr.var_rng, capped_draws_));
    }
  }
  for (std::uint32_t r = 0; r < ranks; ++r) first = std::min(first, ready[r]);
  // The clock is 64-bit picoseconds (106 days): gaps and jitter of up to 1e12 us each cannot wrap it below
  // half of that, so stop there with the keys that got it there (it wrapped to negative times, exit 0).
  const Time last = *std::max_element(ready.begin(), ready.end());
  if (last > Time::ps(Time::max().count_ps() / 2))
    throw InputError(s_.file + ": job '" + jr.spec->name + "' would start an iteration at " +
                     std::to_string(last.to_us()) +
                     " us, beyond what the engine's clock holds (half of 2^63 ps, " +
                     "53 days): lower its workload.compute_gap_us, workload.jitter or iterations");
  jr.iter_start = now;
  jr.first_ready = first;
  JobRun* p = &jr;
  auto& coll = jr.colls[e.coll];
  if (coll.fluid) {
    if (opt_.progress_slot && !jr.spec->workload.loop)
      opt_.progress_slot->run_done += JobRun::transfers_of(coll);
    coll.fluid->run(now, ready, *coflows_, [this, p](Time end) { on_done(*p, end); });
    return;
  }
  if (coll.shortcut) {
    // The whole collective at once (the shortcut runs only for a job alone on the fabric).
    if (const auto end = coll.shortcut->run(now, ready)) {
      if (opt_.progress_slot && !jr.spec->workload.loop)
        opt_.progress_slot->run_done += JobRun::transfers_of(coll);
      engine_->call_at(*end, [this, p, end = *end] { on_done(*p, end); });
      return;
    }
    // Channels out of step: from this iteration on, the exact path.
    shortcut_report_["fallback"].push_back(format_size(coll.size_bytes) + " " + to_string(coll.op) +
                                           ": flows of one HCA pair overlapped across steps (channels out of "
                                           "step); exact path from iteration " +
                                           std::to_string(jr.rep + 1));
    coll.shortcut.reset();
    make_exact(jr, coll);
  }
  jr.colls[e.coll].exec->start(std::move(ready), [this, p](Time end) { on_done(*p, end); });
}

RunManifest ScenarioRunner::manifest() const {
  RunManifest m;
  m.version = kVersion;
  m.build = build_id();
  m.engine = to_string(engine_kind_);
  m.seed = s_.seed;
  m.scenario = s_.name;
  m.source = s_.file;
  m.config = s_.effective;
  m.config["engine"] = m.engine;
  m.fabric_source = w_.fabric_source;
  m.routing = w_.routing_name;
  m.packet = w_.packet.to_json();
  m.calibration = w_.calibration;
  if (engine_kind_ == EngineKind::Flow)
    m.flow = {{"solver", s_.flow_simgrid_solver ? "simgrid" : "native"},
              {"ring_fluid", s_.flow_ring_fluid},
              {"symmetric_steps", s_.flow_symmetric_steps}};
  if (!var_.empty()) m.variability = var_.to_json();
  m.warnings = ignored_;
  return m;
}

void ScenarioRunner::report_faults() {
  // The faults applied and any QP that exhausted its retries (the run stopped there instead of hanging).
  if (!w_.faults.empty()) out_.engine.extra["faults"] = w_.faults;
  for (const auto& f : w_.timed_faults) // listed above as asked for; say which never happened (one text
    if (f.at > out_.sim_time)           // for every segment, so segments' warnings merge)
      out_.warnings.push_back("no effect: fault '" + f.what +
                              "' is due after the last collective "
                              "ended: not applied");
  const auto failures = qp_failures_of(*engine_);
  if (failures.empty()) return;
  nlohmann::json list = nlohmann::json::array();
  const auto& nodes = w_.tables->hca_nodes();
  for (const auto& f : failures) {
    list.push_back({{"src", w_.fabric.node(nodes[f.src]).name},
                    {"dst", w_.fabric.node(nodes[f.dst]).name},
                    {"qp_slot", f.slot},
                    {"time_us", f.when.to_us()},
                    {"messages_failed", f.messages.size()}});
  }
  out_.engine.extra["qp_failures"] = list;
  const auto& f0 = list[0];
  out_.warnings.push_back(std::to_string(list.size()) +
                          " QP(s) exhausted their retries (transport retry counter "
                          "exceeded; first " +
                          f0["src"].get<std::string>() + " -> " + f0["dst"].get<std::string>() + " at " +
                          std::to_string(f0["time_us"].get<double>()) +
                          " us): the run stopped there; collectives in progress are not in the samples");
}

RunResult ScenarioRunner::run() {
  for (auto& jr : jobs_) {
    JobRun* p = &jr;
    if (jr.reps == 0 || jr.passes == 0) { // a segment with nothing left of this job to run
      finish_job(jr);
      continue;
    }
    engine_->call_at(Time::zero(), [this, p] { start_iteration(*p); });
  }
  if (s_.max_sim_time_ms > 0) {
    engine_->call_at(Time::from_us(s_.max_sim_time_ms * 1000.0), [this] {
      if (finite_left_ > 0)
        out_.warnings.push_back(
            "run.max_sim_time_ms reached: iterations in progress finished, no new ones started");
      time_up_ = true;
      for (auto& d : drivers_) d->stop();
    });
  }
  for (auto& d : drivers_) d->start();
  engine_->run();
  // The run ends with the last collective (or background message), not with the engine's clock (idle timers).
  out_.sim_time = last_end_ > Time::zero() ? last_end_ : engine_->now();
  for (std::size_t b = 0; b < drivers_.size(); ++b)
    out_.background.push_back(background_result(*drivers_[b],
                                                s_.file + ": key 'background[" + std::to_string(b) + "]'",
                                                out_.sim_time, out_.warnings));
  out_.engine = engine_->report();
  if (repeat_.skips() != 0) out_.engine.extra["fast_forward"]["executions_skipped"] = repeat_.skipped();
  if (capped_draws_) out_.warnings.push_back(calib::LognormalPareto::capped_note(capped_draws_));
  report_faults();
  if (engine_kind_ == EngineKind::Flow && s_.flow_symmetric_steps) {
    // The collectives still on the shortcut at the end (a run-time fallback dropped its shortcut).
    std::uint64_t n = 0, cells = 0, pairs = 0;
    for (const auto& jr : jobs_)
      for (const auto& c : jr.colls)
        if (c.shortcut) ++n, cells += c.shortcut->cells(), pairs += c.shortcut->pairs();
    shortcut_report_["collectives"] = n;
    if (n > 0) {
      shortcut_report_["evaluated_transfers"] = cells;
      shortcut_report_["hca_pairs"] = pairs;
    }
  }
  if (engine_kind_ == EngineKind::Flow && s_.flow_symmetric_steps)
    out_.engine.extra["symmetric_steps"] = shortcut_report_;
  if (fluid_) {
    std::uint64_t n = 0;
    for (const auto& jr : jobs_)
      for (const auto& c : jr.colls) n += c.fluid ? 1 : 0;
    fluid_report_["collectives"] = n;
    fluid_report_["stages_run"] = coflows_->coflows();
    fluid_report_["solves"] = coflows_->solves();
    out_.engine.extra["ring_fluid"] = fluid_report_;
  }
  out_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0_).count();
  out_.manifest = manifest();
  out_.fabric = w_.facts;
  return std::move(out_);
}

} // namespace

std::uint64_t segment_seed(std::uint64_t seed, std::uint32_t segment) {
  if (segment == 0) return seed;
  return Rng::for_stream(seed, "segment/" + std::to_string(segment)).next_u64();
}

RunResult run_scenario(const Scenario& s, const RunOptions& opt) {
  const World w = build_world(s);
  auto r = run_scenario(s, w, opt);
  r.warnings.insert(r.warnings.begin(), w.warnings.begin(), w.warnings.end());
  return r;
}

RunResult run_scenario(const Scenario& s, const World& w, const RunOptions& opt) try {
  check_run_resources(s, w,
                      opt); // refuses runs beyond the limit; reports the estimate (resource_estimate.hpp)
  ScenarioRunner runner(s, w, opt);
  return runner.run();
} catch (const InputError& e) {
  throw InputError(note_override(s.overrides, e.what())); // "FILE: key K" where K came from --set
} catch (const DeadlockError& e) {
  explain_deadlock(s, w, e); // the routing's credit loop, when it has one: exit 2 naming routing.algorithm
  throw;
}

} // namespace ibn::scen
