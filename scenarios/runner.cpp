#include "scenarios/runner.hpp"

#include "models/packet/packet_engine.hpp"
#include "sim/flow/flow_engine.hpp"
#include "scenarios/background.hpp"
#include "scenarios/collectives.hpp"
#include "scenarios/executor.hpp"
#include "scenarios/placement.hpp"
#include "scenarios/replay.hpp"
#include "scenarios/resource_estimate.hpp"
#include "sim/error.hpp"
#include "sim/rng.hpp"
#include "sim/units.hpp"
#include "sim/version.hpp"
#include "topology/fabric_loader.hpp"
#include "topology/generators.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <numbers>
#include <optional>

namespace ibn::scen {

namespace {

std::string resolve(const Scenario& s, const std::string& p) {
  if (p.empty() || std::filesystem::path(p).is_absolute() || s.base_dir.empty()) return p;
  return (std::filesystem::path(s.base_dir) / p).string();
}

std::string param_string(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
  if (v.is_number()) {
    std::ostringstream o;
    o << v.get<double>();
    return o.str();
  }
  return v.dump();
}

/// Per-rank extra compute time (stragglers).
class Jitter {
 public:
  Jitter(const JitterSpec& j, Rng& rng) : j_(j), rng_(rng) {}
  Time draw() {
    const double s = j_.scale_us;
    double x = 0;
    if (j_.distribution == "none" || s == 0) return Time::zero();
    if (j_.distribution == "normal")
      x = std::max(0.0, s * gauss());
    else if (j_.distribution == "lognormal")
      x = s * std::exp(j_.lognormal_sigma * gauss());
    else if (j_.distribution == "exponential")
      x = rng_.exponential(s);
    else if (j_.distribution == "uniform")
      x = s * rng_.uniform01();
    return Time::from_us(x);
  }

 private:
  double
  gauss() { // Box-Muller, one value per call (deterministic and portable, unlike std::normal_distribution)
    const double u1 = 1.0 - rng_.uniform01(), u2 = rng_.uniform01();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }
  JitterSpec j_;
  Rng& rng_;
};

struct JobRun {
  const JobSpec* spec = nullptr;
  std::size_t index = 0;
  JobLayout layout;
  std::vector<std::unique_ptr<TransferDag>> dags;  // per size
  std::vector<std::unique_ptr<DagExecutor>> execs; // per size
  std::vector<std::size_t> result_index;           // per size -> RunResult::collectives
  std::unique_ptr<Rng> rng;
  std::unique_ptr<Jitter> jitter;
  // What the job runs, in order: entries (one per size; or one per call of a replayed trace), each repeated
  // `reps` times, the whole list `passes` times. Sizes: reps = warmup + iterations, passes = 1; trace:
  // reps = 1, passes = warmup + iterations.
  struct Entry {
    std::size_t dag = 0;
    Time gap;                // compute time before the call (dependent calls)
    std::optional<Time> at;  // timed call: offset from the start of the pass
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

} // namespace

World build_world(const Scenario& s) {
  World w;
  if (!s.fabric_file.empty()) {
    const auto path = resolve(s, s.fabric_file);
    auto loaded = topo::load_fabric_any(path);
    w.fabric = std::move(loaded.fabric);
    w.warnings = std::move(loaded.warnings);
    w.fabric_source = path;
  } else {
    std::map<std::string, std::string> kv;
    for (const auto& [k, v] : s.fabric_params.items()) kv[k] = param_string(v);
    const auto gens = topo::builtin_generators();
    try {
      w.fabric = gens.get(s.fabric_generator).factory(kv);
    } catch (const InputError& e) {
      throw InputError(s.file + ": key 'fabric.params': " + e.what());
    }
    w.fabric_source = "generated: " + s.fabric_generator;
  }
  std::string algo = s.routing;
  if (algo == "auto") {
    const auto gen = w.fabric.origin.value("generator", std::string());
    algo = (gen == "fat-tree" || gen == "kary-ntree") ? "ftree" : gen == "dragonfly" ? "df-min" : "updn";
  }
  w.routing_name = algo;
  const auto reg = routing::builtin_routing();
  try {
    w.tables = std::make_unique<routing::RoutingTables>(reg.get(algo).factory(w.fabric, {}));
  } catch (const InputError& e) {
    throw InputError(s.file + ": key 'routing.algorithm': " + e.what());
  }
  if (!s.calibration.empty()) {
    // The profile sets the device model; explicit "packet" keys in the scenario still win.
    const auto path = resolve(s, s.calibration);
    w.profile = calib::Profile::load(path);
    calib::apply(*w.profile, w.packet);
    w.calibration = {{"file", path},
                     {"devices", w.profile->devices},
                     {"link_rate_gbps", w.profile->link_rate_gbps},
                     {"noise_segments", w.profile->noise.segments.size()},
                     {"inputs", w.profile->inputs.size()}};
  }
  w.packet.apply_json(s.packet, s.file + ": packet");
  if (s.cc != "none") {
    nlohmann::json cc = {{"cc", s.cc}};
    if (!s.cc_params.empty()) cc[s.cc] = s.cc_params;
    w.packet.apply_json(cc, s.file + ": cc");
  }
  w.packet.ar_mode = pkt::parse_ar_mode(s.adaptive_routing, s.file + ": key 'routing.adaptive'");
  w.packet.validate();
  return w;
}

RunResult run_scenario(const Scenario& s, const RunOptions& opt) {
  const World w = build_world(s);
  auto r = run_scenario(s, w, opt);
  r.warnings.insert(r.warnings.begin(), w.warnings.begin(), w.warnings.end());
  return r;
}

RunResult run_scenario(const Scenario& s, const World& w, const RunOptions& opt) {
  const auto wall0 = std::chrono::steady_clock::now();
  const std::string engine_name = opt.engine.empty() ? s.engine : opt.engine;
  check_run_resources(s, w, opt); // refuses runs beyond the limit; reports the estimate (resource_estimate.hpp)
  RunResult out;
  std::unique_ptr<eng::Engine> engine;
  if (engine_name == "packet") {
    engine = std::make_unique<pkt::PacketEngine>(w.fabric, *w.tables, w.packet, s.seed);
  } else if (engine_name == "flow") {
    auto fc = flow::flow_config_from(w.packet);
    fc.adaptive_routing = w.packet.ar_mode != pkt::ArMode::Off;
    engine = std::make_unique<flow::FlowEngine>(w.fabric, *w.tables, fc);
  } else {
    throw InputError("unknown engine '" + engine_name + "' (expected packet or flow)");
  }

  // --- placement -------------------------------------------------------------------------------------
  Rng place_rng = Rng::for_stream(s.seed, "placement");
  std::vector<JobRun> jobs(s.jobs.size());
  std::vector<JobPlacement> placed;
  {
    // Jobs may use different NICs per node; the pool groups HCAs by the largest NIC count asked for.
    std::uint32_t nics = 1;
    for (const auto& j : s.jobs) nics = std::max(nics, j.nics_per_node);
    for (const auto& b : s.background) nics = std::max(nics, b.nics_per_node);
    auto pool = NodePool::from_fabric(w.fabric, nics);
    std::vector<JobPlacementRequest> reqs;
    for (const auto& j : s.jobs) {
      JobPlacementRequest q;
      q.job = j.name;
      q.nodes = j.nodes;
      q.policy = j.placement;
      q.explicit_nodes = j.hosts;
      q.nics_per_node = j.nics_per_node;
      reqs.push_back(q);
    }
    // Background traffic takes nodes left free by the jobs (nodes = 0: all of them).
    std::size_t used = 0;
    for (const auto& j : s.jobs) used += j.nodes;
    for (std::size_t b = 0; b < s.background.size(); ++b) {
      const auto& bg = s.background[b];
      JobPlacementRequest q;
      q.job = "background" + std::to_string(b);
      q.nodes = bg.nodes ? bg.nodes : static_cast<std::uint32_t>(pool.size() > used ? pool.size() - used : 0);
      if (q.nodes < 2 && bg.pattern != "incast")
        throw InputError(s.file + ": key 'background[" + std::to_string(b) + "].nodes': " + std::to_string(q.nodes) +
                         " node(s) left free by the jobs; background traffic needs at least 2");
      q.policy = bg.placement;
      q.nics_per_node = bg.nics_per_node;
      used += q.nodes;
      reqs.push_back(q);
    }
    placed = place_jobs(pool, reqs, place_rng);
    for (std::size_t i = 0; i < placed.size(); ++i) {
      out.placement.push_back({{"job", i < s.jobs.size() ? s.jobs[i].name : reqs[i].job},
                               {"nodes", placed[i].slots},
                               {"hcas", placed[i].all_hcas()},
                               {"leaves_spanned", leaves_spanned(pool, placed[i])}});
    }
  }

  // --- collectives -----------------------------------------------------------------------------------
  ExecOptions eo;
  eo.nvlink_gbps = s.nvlink_gbps;
  eo.nvlink_latency = Time::from_us(s.nvlink_latency_us);
  // Calibrated per-operation costs: the host latency the engine does not model plus a noise draw.
  Rng noise_rng = Rng::for_stream(s.seed, "noise");
  if (w.profile) {
    const calib::Profile* prof = &*w.profile;
    eo.noise = [prof, &noise_rng](std::uint64_t bytes) {
      return prof->host_latency(bytes) + prof->noise.draw(noise_rng, bytes);
    };
  }
  std::size_t finite_jobs = 0;
  for (std::size_t i = 0; i < s.jobs.size(); ++i) {
    auto& jr = jobs[i];
    const auto& js = s.jobs[i];
    jr.spec = &js;
    jr.index = i;
    jr.layout.nodes = placed[i].nodes;
    jr.layout.gpus_per_node = js.gpus_per_node;
    jr.layout.sl = static_cast<std::uint8_t>(js.sl);
    jr.rng = std::make_unique<Rng>(Rng::for_stream(s.seed, "jitter/" + std::to_string(i)));
    jr.jitter = std::make_unique<Jitter>(js.workload.jitter, *jr.rng);
    if (!js.workload.loop) ++finite_jobs;
    double nic_gbps = 0;
    if (!jr.layout.nodes.empty() && !jr.layout.nodes[0].empty()) {
      const auto node = w.tables->hca_nodes()[jr.layout.nodes[0][0]];
      for (const auto l : w.fabric.links_of(node))
        nic_gbps = std::max(nic_gbps, w.fabric.link(l).speed.rate_gbps());
    }
    // One DAG (and one result entry) per distinct (op, size, algorithm).
    auto dag_for = [&](const std::string& op_text, std::uint64_t size, const std::string& algorithm,
                       const std::string& where) -> std::size_t {
      for (std::size_t d = 0; d < jr.dags.size(); ++d) {
        const auto& c = out.collectives[jr.result_index[d]];
        if (c.size_bytes == size && c.requested_op == op_text && c.requested_algorithm == algorithm) return d;
      }
      CollectiveSpec cs;
      cs.op = parse_coll_op(op_text, where);
      cs.size_bytes = size;
      cs.ranks = js.nodes * js.gpus_per_node;
      cs.gpus_per_node = js.gpus_per_node;
      cs.nics_per_node = js.nics_per_node;
      cs.algorithm = algorithm;
      cs.protocol = js.workload.protocol;
      cs.channels = js.workload.channels;
      if (nic_gbps > 0) cs.nic_gbps = nic_gbps;
      cs.nvlink_gbps = s.nvlink_gbps;
      try {
        jr.dags.push_back(std::make_unique<TransferDag>(build_collective(cs)));
      } catch (const InputError& e) {
        throw InputError(where + ": job '" + js.name + "', " + format_size(size) + " " + op_text + ": " + e.what());
      }
      ExecOptions jeo = eo;
      if (opt.trace_limit > 0) {
        const std::size_t coll = out.collectives.size();
        const TransferDag* dagp = jr.dags.back().get();
        JobRun* jrp = &jr;
        jeo.on_transfer = [&out, &opt, coll, dagp, jrp, i](TransferId t, Time posted, Time delivered) {
          // Only the first measured iteration of each collective, and at most trace_limit spans in all.
          if (!jrp->recording() || !out.collectives[coll].samples_us.empty() || out.trace.size() >= opt.trace_limit)
            return;
          const auto& tr = (*dagp)[t];
          out.trace.push_back({static_cast<std::uint32_t>(i), coll, tr.src, tr.dst, tr.step, tr.channel, tr.bytes,
                               tr.src / jrp->layout.gpus_per_node != tr.dst / jrp->layout.gpus_per_node, posted,
                               delivered});
        };
      }
      jr.execs.push_back(std::make_unique<DagExecutor>(*engine, *jr.dags.back(), jr.layout, jeo));
      const auto& dag = *jr.dags.back();
      CollectiveSamples cs_out;
      cs_out.job = js.name;
      cs_out.op = dag.op;
      cs_out.requested_op = op_text;
      cs_out.requested_algorithm = algorithm;
      cs_out.algorithm = dag.algorithm;
      cs_out.protocol = dag.protocol;
      cs_out.size_bytes = size;
      cs_out.ranks = cs.ranks;
      cs_out.nodes = js.nodes;
      cs_out.channels = dag.channels;
      cs_out.looping = js.workload.loop;
      cs_out.network_transfers = jr.execs.back()->network_transfers();
      cs_out.nvlink_transfers = jr.execs.back()->nvlink_transfers();
      cs_out.busbw_factor = busbw_factor(cs.op, cs.ranks);
      jr.result_index.push_back(out.collectives.size());
      out.collectives.push_back(std::move(cs_out));
      return jr.dags.size() - 1;
    };
    const auto key = s.file + ": key 'jobs[" + std::to_string(i) + "].workload";
    const Time gap = Time::from_us(js.workload.compute_gap_us);
    if (js.workload.trace.empty()) {
      for (const auto size : js.workload.sizes_bytes)
        jr.entries.push_back({dag_for(js.workload.op, size, js.workload.algorithm, key + ".op'"), gap, std::nullopt});
      jr.reps = js.workload.warmup + js.workload.iterations;
    } else {
      // Replay: the calls of the trace's job named like this job, or of its only job/communicator.
      const auto path = resolve(s, js.workload.trace);
      const auto trace = read_replay_file(path);
      for (const auto& wmsg : trace.warnings) out.warnings.push_back(wmsg);
      const auto names = trace.jobs();
      std::string pick;
      for (const auto& n : names)
        if (n == js.name) pick = n;
      if (pick.empty() && names.size() == 1) pick = names[0];
      if (pick.empty())
        throw InputError(path + ": no job named '" + js.name + "' among the trace's " + std::to_string(names.size()) +
                         " jobs/communicators; name the scenario job like one of them");
      for (const auto& c : trace.calls) {
        if (c.job != pick) continue;
        if (c.op == "send" || c.op == "recv") {
          out.warnings.push_back(c.where + ": point-to-point " + c.op + " not replayed (only collectives)");
          continue;
        }
        if (c.nranks && c.nranks != js.nodes * js.gpus_per_node)
          out.warnings.push_back(c.where + ": the call had " + std::to_string(c.nranks) + " ranks; replayed on the job's " +
                                 std::to_string(js.nodes * js.gpus_per_node));
        const auto algo = c.algorithm.empty() ? js.workload.algorithm : c.algorithm;
        jr.entries.push_back({dag_for(c.op, c.size_bytes, algo, c.where), c.gap + gap, c.at});
      }
      if (jr.entries.empty()) throw InputError(path + ": no collective call to replay for job '" + js.name + "'");
      jr.trace = true;
      jr.passes = js.workload.warmup + js.workload.iterations;
    }
  }

  // --- background traffic --------------------------------------------------------------------------
  std::vector<std::unique_ptr<BackgroundDriver>> drivers;
  for (std::size_t b = 0; b < s.background.size(); ++b) {
    const auto& bg = s.background[b];
    const auto& pl = placed[s.jobs.size() + b];
    BackgroundTrafficSpec spec;
    spec.name = "background" + std::to_string(b);
    spec.pattern = parse_background_pattern(bg.pattern, s.file + ": key 'background[" + std::to_string(b) + "].pattern'");
    spec.hcas = pl.all_hcas();
    double rate = 0;
    for (const auto h : spec.hcas) {
      const auto node = w.tables->hca_nodes()[h];
      spec.planes.push_back(w.fabric.node(node).plane);
      for (const auto l : w.fabric.links_of(node)) rate = std::max(rate, w.fabric.link(l).speed.rate_gbps());
    }
    spec.rate_gbps = rate;
    spec.load = bg.load;
    spec.message_bytes = bg.message_bytes;
    spec.start = Time::from_us(bg.start_us);
    // Without a stop time the traffic runs until the last finite job is done (stop() below).
    spec.stop = bg.stop_us > 0 ? Time::from_us(bg.stop_us) : Time::max();
    spec.sl = static_cast<std::uint8_t>(bg.sl);
    spec.qp_slot = 0;
    spec.seed = s.seed;
    drivers.push_back(std::make_unique<BackgroundDriver>(*engine, spec));
  }

  // --- the iteration loop ----------------------------------------------------------------------------
  bool stopping = false; // every finite job is done: looping work stops
  bool time_up = false;  // run.max_sim_time_ms reached: no job starts another iteration
  std::size_t finite_left = finite_jobs;
  auto last_progress = std::chrono::steady_clock::now();
  std::uint64_t total_iters = 0, done_iters = 0;
  for (const auto& j : jobs)
    if (!j.spec->workload.loop)
      total_iters += j.entries.size() * j.reps * j.passes;

  std::function<void(JobRun&)> start_iteration;
  auto finish_job = [&](JobRun& jr) {
    jr.finished = true;
    if (!jr.spec->workload.loop && --finite_left == 0) {
      stopping = true;
      for (auto& d : drivers) d->stop();
    }
  };
  Time last_end = Time::zero(); // the last collective's completion: the run's duration for link utilization
  auto on_done = [&](JobRun& jr, Time end) {
    last_end = std::max(last_end, end);
    const auto& wl = jr.spec->workload;
    if (jr.recording())
      out.collectives[jr.result_index[jr.entries[jr.entry].dag]].samples_us.push_back((end - jr.first_ready).to_us());
    if (!wl.loop) ++done_iters;
    if (opt.progress && !wl.loop) {
      const auto now = std::chrono::steady_clock::now();
      if (now - last_progress > std::chrono::seconds(1) || done_iters == total_iters) {
        last_progress = now;
        char line[200];
        std::snprintf(line, sizeof line, "%llu/%llu collectives, simulated %.1f us",
                      static_cast<unsigned long long>(done_iters), static_cast<unsigned long long>(total_iters),
                      engine->now().to_us());
        opt.progress(line);
      }
    }
    if (!jr.advance()) {
      if (!wl.loop) return finish_job(jr);
      jr.entry = 0, jr.rep = 0, jr.pass = 0;
    }
    start_iteration(jr);
  };
  start_iteration = [&](JobRun& jr) {
    if (time_up || (stopping && jr.spec->workload.loop)) return finish_job(jr);
    const Time now = engine->now();
    if (jr.entry == 0 && jr.rep == 0) jr.pass_start = now;
    const auto& e = jr.entries[jr.entry];
    const Time start = e.at ? std::max(now, jr.pass_start + *e.at) : now + e.gap;
    const auto ranks = jr.layout.ranks();
    std::vector<Time> ready(ranks);
    Time first = Time::max();
    for (std::uint32_t r = 0; r < ranks; ++r) {
      ready[r] = start + jr.jitter->draw();
      first = std::min(first, ready[r]);
    }
    jr.iter_start = now;
    jr.first_ready = first;
    JobRun* p = &jr;
    jr.execs[e.dag]->start(std::move(ready), [p, &on_done](Time end) { on_done(*p, end); });
  };
  for (auto& jr : jobs) engine->call_at(Time::zero(), [&jr, &start_iteration] { start_iteration(jr); });
  if (s.max_sim_time_ms > 0) {
    engine->call_at(Time::from_us(s.max_sim_time_ms * 1000.0), [&] {
      if (finite_left > 0)
        out.warnings.push_back(
            "run.max_sim_time_ms reached: iterations in progress finished, no new ones started");
      time_up = true;
      for (auto& d : drivers) d->stop();
    });
  }
  for (auto& d : drivers) d->start();
  engine->run();
  for (std::size_t b = 0; b < drivers.size(); ++b) {
    const auto& bg = s.background[b];
    out.background.push_back({{"name", drivers[b]->spec().name},
                              {"pattern", bg.pattern},
                              {"load", bg.load},
                              {"message_bytes", bg.message_bytes},
                              {"hcas", drivers[b]->spec().hcas.size()},
                              {"stats", drivers[b]->stats().to_json()}});
  }

  out.engine = engine->report();
  // Idle timers (an RC retransmission timer armed for a message already acknowledged) can keep the engine's
  // clock running past the traffic; the run ends with the last collective (or background message).
  out.sim_time = last_end > Time::zero() ? last_end : engine->now();
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  out.manifest = {{"version", kVersion},
                  {"engine", engine_name},
                  {"seed", s.seed},
                  {"scenario", s.name},
                  {"source", s.file},
                  {"config", s.effective},
                  {"fabric_source", w.fabric_source},
                  {"routing", w.routing_name},
                  {"packet", w.packet.to_json()},
                  {"calibration", w.calibration}};
  out.manifest["config"]["engine"] = engine_name;
  return out;
}

} // namespace ibn::scen
