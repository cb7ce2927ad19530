#include "scenarios/scenario.hpp"

#include "models/routing/routing.hpp"
#include "scenarios/nccl_cost.hpp"
#include "scenarios/placement.hpp"
#include "sim/atomic_file.hpp"
#include "sim/error.hpp"
#include "sim/json_text.hpp"
#include "sim/units.hpp"
#include "topology/generators.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <ranges>
#include <sstream>
#include <tuple>

namespace ibn::scen {

std::string to_string(EngineKind e) {
  return choice_name(kEngines, e);
}

EngineKind parse_engine(const std::string& text, const std::string& what) {
  return parse_choice(kEngines, text, what, "engine");
}

namespace {

template <typename Reg> std::vector<std::string> registry_names(const Reg& reg, std::vector<std::string> first = {},
                                                                const std::string& skip = "") {
  for (const auto& e : reg.entries())
    if (e.name != skip) first.push_back(e.name);
  return first;
}

/// The packet engine's knobs as scenario keys `packet.<name>`, from their one declaration (PacketKnob).
void add_packet_keys(Schema& s) {
  const pkt::PacketConfig defaults;
  for (const auto& k : pkt::packet_knobs()) {
    KeyDecl d;
    d.path = std::string("packet.") + k.name;
    switch (k.kind) {
    case pkt::KnobKind::Integer:
      d.type = KeyType::Int;
      break;
    case pkt::KnobKind::Number:
      d.type = KeyType::Double;
      break;
    case pkt::KnobKind::Bool:
      d.type = KeyType::Bool;
      break;
    case pkt::KnobKind::Choice:
    case pkt::KnobKind::Text:
      d.type = KeyType::String;
      break;
    case pkt::KnobKind::Object:
      d.type = KeyType::Object;
      break;
    }
    d.unit = k.unit;
    // Objects (dcqcn, ibcc, pfc) document their keys and defaults in docs/congestion-control.md.
    if (k.kind != pkt::KnobKind::Object) d.default_value = k.get(defaults);
    d.description = k.doc;
    d.choices = k.choices;
    if (k.kind == pkt::KnobKind::Integer || k.kind == pkt::KnobKind::Number) d.min = k.min, d.max = k.max;
    d.fill_default = false; // a calibration profile sets some of them; the scenario's own keys win
    s.add(std::move(d));
  }
}

Schema build_schema() {
  using K = KeyType;
  using J = nlohmann::json;
  Schema s;
  std::vector<std::string> coll_ops;
  for (const auto op : {CollOp::AllReduce, CollOp::AllGather, CollOp::ReduceScatter, CollOp::AllToAll,
                        CollOp::SendRecv, CollOp::Broadcast, CollOp::Reduce})
    coll_ops.push_back(to_string(op));
  auto add = [&s](std::string path, K type, std::string unit, J def, std::string desc,
                  std::vector<std::string> choices = {}, double min = -1e300, double max = 1e300) {
    s.add(KeyDecl{std::move(path), type, std::move(unit), std::move(def), std::move(desc), std::move(choices),
                  min, max});
  };
  add("name", K::String, "", "scenario", "A name for the scenario, written into results.");
  add("seed", K::Int, "", 1, "Seed of every random stream (placement, jitter, background, noise).", {}, 0,
      9.2e18);
  add("engine", K::String, "", "packet", "Engine that runs the workload.", choice_names(kEngines));
  add("fabric.file", K::String, "path", "",
      "Fabric JSON or ibnetdiscover output, relative to the scenario file; when set, generator keys are "
      "ignored.");
  add("fabric.generator", K::String, "", "fat-tree", "Topology generator (see `ibnetsim list`).",
      registry_names(topo::builtin_generators()));
  add("fabric.params", K::Object, "",
      J{{"tiers", 2}, {"radix", 64}, {"hosts", 256}, {"oversubscription", "1:1"}, {"rate", "NDR"}},
      "Generator parameters, as `ibnetsim topo generate` takes them (fat-tree: tiers, radix, hosts, "
      "oversubscription, leaf-ports, rails, rate, cable-m; rail-optimized: nodes, nics-per-node, su-nodes, "
      "radix, tiers, oversubscription, pod-sus, planes, ufm-ports, rate, cable-m; dragonfly: a, p, h, g, "
      "arrangement, rate; every generator: max-hosts, the size bound, and switch-model, the catalog model "
      "whose port-to-port latency its "
      "switches pay, e.g. \"quantum-2\" or \"leaf=spectrum-3,spine=spectrum-4\" (docs/packet-models.md)).");
  add("routing.algorithm", K::String, "", "auto",
      "Static routing: auto (ftree on generated fat-trees, df-min on dragonflies, updn otherwise) or a "
      "registered algorithm; df-valiant and df-ugal are routing tables only (`topo routes`): a run refuses "
      "them (docs/routing.md).",
      registry_names(routing::builtin_routing(), {"auto"}));
  add("routing.adaptive", K::String, "", "off", "Adaptive routing at switches.", choice_names(pkt::kArModes));
  add("cc.algorithm", K::String, "", "none",
      "Congestion control in the packet engine: none, dcqcn (ECN marking, CNPs, rate cuts) or ibcc (FECN, BECN, "
      "CCT delays); see docs/congestion-control.md.",
      choice_names(pkt::kCcModes));
  add("cc.params", K::Object, "", J::object(),
      "Parameters of the chosen algorithm (the packet engine's \"dcqcn\" or \"ibcc\" keys, e.g. "
      "{\"profile\": \"nvidia-default\"}).");
  add("calibration", K::String, "path", "",
      "Calibration profile JSON from `ibnetsim calibrate fit`; \"\" = none.");
  add("packet", K::Object, "", J::object(),
      "Packet-engine device knobs, the keys below (docs/packet-models.md); a key given here overrides the "
      "calibration profile, a key left out keeps the profile's value or the default shown.");
  add_packet_keys(s);
  add("nvlink.bandwidth_gbps", K::Double, "Gb/s", 3600.0,
      "Intra-node GPU-to-GPU bandwidth per direction (H100 NVLink 4: 450 GB/s).", {}, 1e-3, 1e6);
  add("nvlink.latency_us", K::Double, "us", 0.7, "Latency of one intra-node copy.", {}, 0, 1e6);
  add("nccl.costs", K::Bool, "", true,
      "Charge NCCL's software costs per collective (base latency) and per step (intra- and inter-node) "
      "from its tuning constants of nccl.version (docs/collectives.md, \"NCCL cost model\"); false = "
      "the network alone (closed-form checks), also when a profile has an nccl section (its fitted costs "
      "replace the table's only while this is true).");
  add("nccl.version", K::String, "", "",
      "NCCL release whose tuning constants the cost model and, with it on, the tuning model use (e.g. "
      "2.26.2; the newest table entry not newer is taken); \"\" = 2.20.3. Without the cost model the "
      "tuning keeps 2.20.3.");
  add("nccl.min_channels", K::Int, "channels", 0,
      "NCCL_MIN_NCHANNELS: raise the channel count NCCL's search gives (2 x NICs per node, at most 32) to at "
      "least this many (0 = no bound); a job's workload.channels, when given, is used as it is.",
      {}, 0, 64);
  add("nccl.max_channels", K::Int, "channels", 0,
      "NCCL_MAX_NCHANNELS: cap that channel count at this many (0 = no bound); NCCL's run-time reduction for "
      "small sizes still applies below it.",
      {}, 0, 64);
  add("nccl.nvls", K::Bool, "", false,
      "The system offers NVLS (NVLink SHARP: NVSwitch multicast and reduction, Hopper or later, NCCL 2.17+): "
      "algorithm 'nvls' is allowed and 'auto' considers it for AllReduce on 2+ GPUs per node "
      "(docs/collectives.md, \"nvls\").");
  add("nccl.collnet", K::Bool, "", false,
      "The system offers CollNet with SHARP in-network reduction (the SHARP plugin and SHARP-capable "
      "InfiniBand switches: every Quantum model of the catalog; a fabric naming an Ethernet switch model is "
      "refused): algorithm 'collnet' is allowed and 'auto' considers it for AllReduce on 2+ nodes "
      "(docs/collectives.md, \"collnet\").");
  add("run.max_sim_time_ms", K::Double, "ms", 0.0,
      "Stop a run after this much simulated time (0 = no limit).", {}, 0, 1e9);
  add("run.segment_iterations", K::Int, "", 0,
      "Run each point's measured iterations in segments of this many (0 = one run, as before): each segment "
      "is a "
      "run of its own (warm-ups included) with random streams drawn from (seed, segment), checkpointed under "
      "the output folder so an interrupted command resumes from the last finished segment (docs/cli.md).",
      {}, 0, 1e9);
  // Variability (calibration/variability.hpp): left out of the effective document unless given, so that
  // results of scenarios without them are unchanged.
  auto add_var = [&s](std::string path, K type, std::string unit, J def, std::string desc, double min,
                      double max) {
    KeyDecl d{std::move(path), type, std::move(unit), std::move(def), std::move(desc), {}, min, max};
    d.fill_default = false;
    s.add(std::move(d));
  };
  add_var(
      "variability.use_profile", K::Bool, "", true,
      "Apply the calibration profile's `variability` section (from `calibrate fit --repeats`) when it has "
      "one; the keys below given in the scenario replace the profile's part they name.",
      0, 0);
  add_var(
      "variability.state_sigma", K::Double, "", 0.0,
      "Run state: log-sd of a factor exp(sigma Z), Z ~ N(0,1) drawn once per run (seed) and job, on every "
      "measured collective time of the run (the same sigma at every size; a profile may give it per size).",
      0, 5);
  add_var("variability.launch.median_us", K::Double, "us", 0.0,
          "Launch jitter: each iteration one rank, chosen uniformly, starts late by a draw whose body is "
          "lognormal with this median (0 = no body).",
          0, 1e9);
  add_var("variability.launch.sigma", K::Double, "", 0.5, "Launch jitter: log-sd of the lognormal body.", 0,
          10);
  add_var("variability.launch.tail_p", K::Double, "", 0.0,
          "Launch jitter: probability that a draw comes from the Pareto tail instead of the body.", 0, 1);
  add_var("variability.launch.tail_alpha", K::Double, "", 1.5, "Launch jitter: Pareto tail index.", 0.1, 100);
  add_var("variability.launch.tail_xm_us", K::Double, "us", 0.0,
          "Launch jitter: Pareto tail scale (its minimum).", 0, 1e9);
  add_var("variability.stragglers.count", K::Int, "nodes", 0,
          "Stragglers: this many nodes of each job, chosen per seed, are slow.", 0, 1e6);
  add_var(
      "variability.stragglers.rate_factor", K::Double, "", 1.0,
      "Stragglers: their NICs send at this fraction of their rate (each NIC paces the transfers it sends: "
      "one ends no earlier than bytes x 8 / (factor x rate) after the NIC's previous one).",
      1e-3, 1);
  add_var("variability.stragglers.delay_us", K::Double, "us", 0.0,
          "Stragglers: their ranks start every iteration this much late (slow compute or launch).", 0, 1e9);
  {
    KeyDecl d{
        "flow.symmetric_steps",
        K::Bool,
        "",
        true,
        "Flow engine: run a ring AllReduce/AllGather/ReduceScatter job alone on the fabric by solving each "
        "step's max-min sharing once per HCA pair and reusing it across ranks and steps, without building "
        "its transfer DAG, when no link is shared by two ring edges and the channels stay in step (else the "
        "exact per-transfer path); false = always the exact path (docs/flow-engine.md).",
        {}};
    d.fill_default = false; // written into the effective configuration only when given
    s.add(std::move(d));
  }
  {
    KeyDecl d{"flow.solver",
              K::String,
              "",
              "native",
              "Flow engine: who computes the max-min sharing. native = our fluid solver, re-solving only the "
              "component of flows an event touches (SimGrid is used anyway for timed faults and calibrated "
              "per-size factors); simgrid = SimGrid 3.32's CM02 model, the solver of record "
              "(docs/flow-engine.md, \"Solvers\").",
              {"native", "simgrid"}};
    d.fill_default = false; // written into the effective configuration only when given
    s.add(std::move(d));
  }
  {
    KeyDecl d{
        "flow.ring_fluid",
        K::String,
        "",
        "auto",
        "Flow engine: run ring, tree and hierarchical collectives on the ring-fluid model (each ring or tree "
        "stage one lock-step coflow sharing links with the other jobs' stages by their duty; an "
        "approximation of the exact per-transfer path, docs/flow-engine.md \"Ring fluid\"). auto = only "
        "when a collective's transfer DAG would exceed the exact path's limit (then every collective of "
        "the run uses it); on = always (every collective must be ring, tree or hierarchical, 'auto' "
        "resolving to one of them); off = never.",
        {"auto", "on", "off"}};
    d.fill_default = false; // written into the effective configuration only when given
    s.add(std::move(d));
  }
  add("jobs", K::ObjectArray, "", J::array({J::object()}), "Jobs sharing the fabric (at least one).");
  add("jobs[].name", K::String, "", "", "Job name (default job<i>); two jobs may not share one.");
  add("jobs[].nodes", K::Int, "nodes", 2, "Nodes (servers) in the job.", {}, 1, 1e7);
  add("jobs[].gpus_per_node", K::Int, "GPUs", 8, "GPUs (ranks) per node.", {}, 1, 64);
  add("jobs[].nics_per_node", K::Int, "HCAs", 8,
      "HCAs per node (rails). GPU i uses NIC i mod nics. On a single-plane fabric a node is nics_per_node "
      "consecutive HCAs.",
      {}, 1, 64);
  add("jobs[].placement", K::String, "", "linear", "How nodes are chosen among the free ones.",
      registry_names(scen::builtin_placement_policies()));
  add("jobs[].hosts", K::StringList, "", J::array(), "Explicit placement: node indices or HCA names.");
  add("jobs[].sl", K::Int, "", 0, "Service level of the job's traffic.", {}, 0, 15);
  add("jobs[].workload.op", K::String, "", "allreduce", "Collective operation.",
      coll_ops);
  add("jobs[].workload.sizes", K::SizeList, "bytes", J::array({"16M"}),
      "Collective sizes as nccl-tests counts them; each size is a separate point (each listed once).", {}, 0,
      1.1e13);
  add("jobs[].workload.algorithm", K::String, "", "auto",
      "Collective algorithm (auto = NCCL's tuning model, over ring, tree and what nccl.nvls / nccl.collnet "
      "offer; nvls and collnet need those keys).",
      registry_names(builtin_collectives()));
  add("jobs[].workload.protocol", K::String, "", "auto", "NCCL protocol.", {"auto", "simple", "ll128", "ll"});
  add("jobs[].workload.channels", K::Int, "", 0, "NCCL channels (0 = as NCCL chooses).", {}, 0, 64);
  add("jobs[].workload.iterations", K::Int, "", 100, "Measured iterations per size.", {}, 1, 1e9);
  add("jobs[].workload.warmup", K::Int, "", 2, "Unmeasured iterations before them.", {}, 0, 1e6);
  add("jobs[].workload.compute_gap_us", K::Double, "us", 0.0, "Compute time between iterations.", {}, 0,
      1e12);
  add("jobs[].workload.jitter.distribution", K::String, "", "none",
      "Per-rank extra compute time each iteration (stragglers).",
      choice_names(kJitterDists));
  add("jobs[].workload.jitter.scale_us", K::Double, "us", 0.0,
      "normal: sigma (negative draws clipped to 0); lognormal: median; exponential: mean; uniform: width.",
      {}, 0, 1e12);
  add("jobs[].workload.jitter.lognormal_sigma", K::Double, "", 0.5, "Shape of the lognormal jitter.", {}, 0,
      10);
  add("jobs[].workload.trace", K::String, "path", "",
      "Replay a JSON trace or an NCCL debug log instead of op/sizes (see docs/workloads.md).");
  add("jobs[].workload.loop", K::Bool, "", false,
      "Keep iterating until every non-looping job is done (a background job); its samples are reported too.");
  add("background", K::ObjectArray, "", J::array(),
      "Synthetic background traffic on nodes left free by the jobs.");
  add("background[].pattern", K::String, "", "permutation", "Traffic pattern.",
      {"permutation", "incast", "uniform"});
  add("background[].load", K::Double, "", 0.5, "Offered load as a fraction of each sender's link rate.", {},
      1e-6, 1);
  add("background[].message_bytes", K::Size, "bytes", "1M", "Message size.", {}, 1, 1.1e13);
  add("background[].nodes", K::Int, "nodes", 0, "Nodes used (0 = all nodes left free).", {}, 0, 1e7);
  add("background[].nics_per_node", K::Int, "HCAs", 0,
      "HCAs used per background node (0 = every HCA of the node).", {}, 0, 64);
  add("background[].placement", K::String, "", "linear", "How nodes are chosen.",
      registry_names(scen::builtin_placement_policies(), {}, "explicit"));
  add("background[].start_us", K::Double, "us", 0.0, "Start time.", {}, 0,
      1e12); // (Time holds up to 9.2e12 us)
  add("background[].stop_us", K::Double, "us", 0.0, "Stop time (0 = when the last non-looping job is done).",
      {}, 0, 1e12); // (Time holds up to 9.2e12 us)
  add("background[].sl", K::Int, "", 0, "Service level.", {}, 0, 15);
  add_fault_keys(s);
  return s;
}

} // namespace

const Schema& scenario_schema() {
  static const Schema schema = build_schema(); // immutable after construction
  return schema;
}

nlohmann::json default_scenario_json() {
  using J = nlohmann::json;
  J job = {{"name", "train"},
           {"nodes", 16},
           {"gpus_per_node", 8},
           {"nics_per_node", 8},
           {"placement", "spread"},
           {"workload",
            {{"op", "allreduce"},
             {"sizes", J::array({"1M", "4M", "16M"})},
             {"algorithm", "hierarchical"}, {"channels", 2},
             {"iterations", 100},
             {"warmup", 2},
             {"compute_gap_us", 20.0},
             {"jitter", {{"distribution", "lognormal"}, {"scale_us", 2.0}}}}}};
  J bg = {{"name", "neighbour"},
          {"nodes", 8},
          {"gpus_per_node", 8},
          {"nics_per_node", 8},
          {"placement", "random"},
          {"workload",
           {{"op", "allreduce"},
            {"sizes", J::array({"8M"})},
            {"algorithm", "hierarchical"}, {"channels", 2},
            {"loop", true},
            {"compute_gap_us", 20.0}}}};
  return {{"name", "default-study"},
          {"seed", 1},
          {"fabric",
           {{"generator", "fat-tree"},
            {"params",
             {{"tiers", 2}, {"radix", 64}, {"hosts", 256}, {"oversubscription", "1:1"}, {"rate", "NDR"}}}}},
          {"jobs", J::array({job, bg})},
          // Checkpointed segments of 25 iterations: an interrupted study resumes mid-point (docs/cli.md).
          {"run", {{"segment_iterations", 25}}}};
}

void apply_packet_settings(const Scenario& s, pkt::PacketConfig& cfg) {
  try {
    cfg.apply_json(s.packet, "packet");
    cfg.cc = s.cc;
    if (s.cc != pkt::CcMode::None && !s.cc_params.empty())
      cfg.apply_json(nlohmann::json{{pkt::to_string(s.cc), s.cc_params}}, "cc.params");
    cfg.ar_mode = s.adaptive_routing;
    cfg.validate();
  } catch (const InputError& e) {
    throw InputError(s.file + ": " + e.what());
  }
}

namespace {

/// A scenario key and the packet-engine key that set the same thing ("routing.adaptive" and
/// "packet.ar_mode"). Both given with different values: an InputError naming both. Only the packet key
/// given: the scenario key takes its value, so the effective configuration says what runs.
void reconcile(const nlohmann::json& given, nlohmann::json& eff, const std::string& section, const std::string& key,
               const std::string& packet_key, const std::string& where) {
  const auto& packet = eff.at("packet");
  if (!packet.contains(packet_key)) return;
  const auto& pv = packet.at(packet_key);
  auto& sv = eff.at(section).at(key);
  const bool scen_given = given.contains(section) && given.at(section).is_object() && given.at(section).contains(key);
  if (!scen_given) {
    sv = pv;
  } else if (sv != pv) {
    throw InputError(where + ": keys '" + section + "." + key + "' (" + sv.dump() + ") and 'packet." + packet_key +
                     "' (" + pv.dump() + ") disagree; give only '" + section + "." + key + "'");
  }
}

/// The keys of `doc` (as given, overrides applied) that change nothing in the effective configuration `e`.
std::vector<std::string> no_effect_keys(const nlohmann::json& doc, const nlohmann::json& e) {
  std::vector<std::string> out;
  using P = nlohmann::json::json_pointer;
  // Given with a value other than its default: a configuration written out whole (a result's manifest.config,
  // run again) gives every key, at its default where the user gave none, and those change nothing by design.
  auto given = [&doc](const P& p) {
    if (!doc.contains(p)) return false;
    std::string generic; // "/jobs/0/workload/jitter/scale_us" -> "jobs[].workload.jitter.scale_us"
    for (const auto& part : p.to_string().substr(1) | std::views::split('/')) {
      const std::string t(part.begin(), part.end());
      if (!t.empty() && std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; }))
        generic += "[]";
      else
        generic += (generic.empty() ? "" : ".") + t;
    }
    const KeyDecl* d = scenario_schema().find(generic);
    return !d || d->default_value.is_null() || d->default_value != doc.at(p);
  };
  // A calibration profile may carry its own variability model, whose parts the scenario's keys replace: a
  // straggler delay given beside a profile's straggler count is not inert, so only profile-free runs are
  // checked.
  const bool profile_variability =
      !e.at("calibration").get<std::string>().empty() && e.value(P("/variability/use_profile"), true);
  const auto& v =
      !profile_variability && e.contains("variability") ? e.at("variability") : nlohmann::json::object();
  const auto st = v.value("stragglers", nlohmann::json::object());
  if (!profile_variability && st.value("count", 0) == 0)
    for (const char* k : {"rate_factor", "delay_us"})
      if (given(P(std::string("/variability/stragglers/") + k)))
        out.push_back(std::string("variability.stragglers.") + k +
                      " is given but variability.stragglers.count is 0: no node is a straggler");
  if (!profile_variability && st.value("count", 0) > 0 && st.value("rate_factor", 1.0) == 1.0 &&
      st.value("delay_us", 0.0) == 0.0)
    out.push_back("variability.stragglers.count is " + std::to_string(st.value("count", 0)) +
                  " but rate_factor is 1 and delay_us 0: the stragglers are as fast as the others");
  // A calibration profile's host section may turn SR-IOV on: only profile-free runs are checked.
  for (const char* k : {"sriov_rate_factor", "sriov_latency_ns"})
    if (given(P(std::string("/packet/") + k)) && !e.value(P("/packet/sriov"), false) &&
        e.at("calibration").get<std::string>().empty())
      out.push_back(std::string("packet.") + k + " is given but packet.sriov is false: no virtual function");
  if (given(P("/nccl/max_channels"))) {
    bool all_fixed = !e.at("jobs").empty();
    for (const auto& j : e.at("jobs")) all_fixed &= j.at("workload").value("channels", 0) > 0;
    if (all_fixed)
      out.push_back("nccl.max_channels is given but every job's workload.channels fixes its channel count");
  }
  const auto la = v.value("launch", nlohmann::json::object());
  if (!profile_variability && la.value("median_us", 0.0) == 0.0 && la.value("tail_p", 0.0) == 0.0)
    for (const char* k : {"sigma", "tail_alpha", "tail_xm_us"})
      if (given(P(std::string("/variability/launch/") + k)))
        out.push_back(
            std::string("variability.launch.") + k +
            " is given but the launch jitter has neither a body (median_us 0) nor a tail (tail_p 0)");
  if (!e.at("fabric").at("file").get<std::string>().empty())
    for (const char* k : {"generator", "params"})
      if (given(P(std::string("/fabric/") + k)))
        out.push_back(std::string("fabric.") + k + " is given but fabric.file is set: the file's fabric runs");
  if (e.at("cc").at("algorithm") == "none" && !e.at("cc").at("params").empty())
    out.push_back("cc.params is given but cc.algorithm is none: no congestion control runs");
  const auto& jobs = e.at("jobs");
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const auto& j = jobs[i].at("workload").at("jitter");
    const std::string key = "jobs[" + std::to_string(i) + "].workload.jitter.";
    const P base("/jobs/" + std::to_string(i) + "/workload/jitter");
    if (j.at("distribution") == "none") {
      for (const char* k : {"scale_us", "lognormal_sigma"})
        if (given(base / k))
          out.push_back(key + k + " is given but " + key + "distribution is none: no jitter is drawn");
    } else if (j.at("scale_us").get<double>() == 0.0) {
      out.push_back(key + "distribution is " + j.at("distribution").get<std::string>() + " but " + key +
                    "scale_us is 0: every draw is 0");
    } else if (j.at("distribution") != "lognormal" && given(base / "lognormal_sigma")) {
      out.push_back(key + "lognormal_sigma is given but " + key + "distribution is " +
                    j.at("distribution").get<std::string>());
    }
  }
  return out;
}

} // namespace

namespace {
Scenario make_scenario_checked(const nlohmann::json& doc_in, const std::string& where,
                               const std::string& base_dir, const std::vector<std::string>& overrides) {
  const auto& schema = scenario_schema();
  nlohmann::json doc = doc_in;
  for (const auto& o : overrides) schema.set(doc, o);
  Scenario s;
  s.file = where;
  s.base_dir = base_dir;
  s.overrides = overrides;
  s.effective = schema.complete(doc, where);
  reconcile(doc, s.effective, "routing", "adaptive", "ar_mode", where);
  reconcile(doc, s.effective, "cc", "algorithm", "cc", where);
  // cc.params are the chosen algorithm's packet.<algorithm> keys: both given, one would win silently.
  if (const auto& cc = s.effective.at("cc"); !cc.at("params").empty() && cc.at("algorithm") != "none") {
    const std::string algo = cc.at("algorithm");
    if (doc.contains("packet") && doc.at("packet").is_object() && doc.at("packet").contains(algo))
      throw InputError(where + ": keys 'cc.params' and 'packet." + algo + "' both set " + algo +
                       "'s parameters (cc.params are the packet." + algo + " keys); give one of them");
  }
  s.no_effect = no_effect_keys(doc, s.effective);
  s.given = doc;
  if (doc.contains("flow") && doc.at("flow").is_object() && !doc.at("flow").empty())
    s.flow_key_given = "flow." + doc.at("flow").begin().key();
  const auto& e = s.effective;
  s.name = e.at("name");
  s.seed = e.at("seed").get<std::uint64_t>();
  s.engine = parse_engine(e.at("engine"), where + ": key 'engine'");
  s.fabric_file = e.at("fabric").at("file");
  s.fabric_generator = e.at("fabric").at("generator");
  s.fabric_params = e.at("fabric").at("params");
  s.routing = e.at("routing").at("algorithm");
  s.adaptive_routing = pkt::parse_ar_mode(e.at("routing").at("adaptive"), where + ": key 'routing.adaptive'");
  s.cc = pkt::parse_cc_mode(e.at("cc").at("algorithm"), where + ": key 'cc.algorithm'");
  s.cc_params = e.at("cc").at("params");
  s.calibration = e.at("calibration");
  s.packet = e.at("packet");
  {
    // The packet keys' rules between each other (buffers hold a packet, VL tables, ...) fail here, when the
    // scenario is read, not when a point of a study runs.
    pkt::PacketConfig probe;
    apply_packet_settings(s, probe);
  }
  s.nvlink_gbps = e.at("nvlink").at("bandwidth_gbps");
  s.nvlink_latency_us = e.at("nvlink").at("latency_us");
  s.max_sim_time_ms = e.at("run").at("max_sim_time_ms");
  s.nccl_costs = e.at("nccl").at("costs");
  s.nccl_version = e.at("nccl").at("version");
  s.nccl_min_channels = e.at("nccl").at("min_channels").get<std::uint32_t>();
  s.nccl_max_channels = e.at("nccl").at("max_channels").get<std::uint32_t>();
  if (s.nccl_min_channels && s.nccl_max_channels && s.nccl_min_channels > s.nccl_max_channels)
    throw InputError(where + ": key 'nccl.min_channels' (" + std::to_string(s.nccl_min_channels) +
                     ") is above 'nccl.max_channels' (" + std::to_string(s.nccl_max_channels) + ")");
  (void)nccl_cost_table(s.nccl_version, where + ": key 'nccl.version'");
  s.nccl_nvls = e.at("nccl").at("nvls");
  s.nccl_collnet = e.at("nccl").at("collnet");
  s.segment_iterations = e.at("run").at("segment_iterations");
  if (e.contains("variability")) {
    const auto& v = e.at("variability");
    auto& o = s.variability;
    o.use_profile = v.value("use_profile", true);
    if (v.contains("state_sigma")) o.state_sigma = v.at("state_sigma").get<double>();
    if (v.contains("launch")) {
      const auto& l = v.at("launch");
      calib::LognormalPareto lp;
      lp.median = l.value("median_us", 0.0);
      lp.sigma = l.value("sigma", 0.5);
      lp.tail_p = l.value("tail_p", 0.0);
      lp.tail_alpha = l.value("tail_alpha", 1.5);
      lp.tail_xm = l.value("tail_xm_us", 0.0);
      o.launch = lp;
    }
    if (v.contains("stragglers")) {
      const auto& g = v.at("stragglers");
      o.stragglers = g.value("count", 0u);
      o.straggler_rate_factor = g.value("rate_factor", 1.0);
      o.straggler_delay_us = g.value("delay_us", 0.0);
    }
  }
  if (const auto f = e.find("flow"); f != e.end() && f->contains("symmetric_steps"))
    s.flow_symmetric_steps = f->at("symmetric_steps").get<bool>();
  if (const auto f = e.find("flow"); f != e.end() && f->contains("ring_fluid"))
    s.flow_ring_fluid = f->at("ring_fluid").get<std::string>();
  if (const auto f = e.find("flow"); f != e.end() && f->contains("solver"))
    s.flow_simgrid_solver = f->at("solver").get<std::string>() == "simgrid";
  if (e.at("jobs").empty()) throw InputError(where + ": key 'jobs': at least one job is needed");
  std::size_t i = 0;
  for (const auto& j : e.at("jobs")) {
    JobSpec job;
    job.name = j.at("name");
    if (job.name.empty()) job.name = "job" + std::to_string(i);
    job.nodes = j.at("nodes");
    job.gpus_per_node = j.at("gpus_per_node");
    job.nics_per_node = j.at("nics_per_node");
    job.placement = j.at("placement");
    job.hosts = j.at("hosts").get<std::vector<std::string>>();
    job.sl = j.at("sl");
    const auto& w = j.at("workload");
    job.workload.op = parse_coll_op(w.at("op"), where + ": key 'jobs[" + std::to_string(i) + "].workload.op'");
    job.workload.sizes_bytes = w.at("sizes").get<std::vector<std::uint64_t>>();
    job.workload.algorithm = w.at("algorithm");
    job.workload.protocol = w.at("protocol");
    job.workload.channels = w.at("channels");
    job.workload.iterations = w.at("iterations");
    job.workload.warmup = w.at("warmup");
    job.workload.compute_gap_us = w.at("compute_gap_us");
    job.workload.jitter.distribution = parse_choice(kJitterDists, w.at("jitter").at("distribution"), where,
                                                    "jitter distribution");
    job.workload.jitter.scale_us = w.at("jitter").at("scale_us");
    job.workload.jitter.lognormal_sigma = w.at("jitter").at("lognormal_sigma");
    job.workload.trace = w.at("trace");
    job.workload.loop = w.at("loop");
    const auto key = "jobs[" + std::to_string(i) + "]";
    if (job.placement == "explicit" && job.hosts.size() != job.nodes)
      throw InputError(where + ": key '" + key + ".hosts': explicit placement needs " +
                       std::to_string(job.nodes) + " entries (one per node), got " +
                       std::to_string(job.hosts.size()));
    if (job.placement != "explicit" && !job.hosts.empty())
      throw InputError(where + ": key '" + key + ".hosts': only used with \"placement\": \"explicit\"");
    // The same entry twice (checked against the fabric later; here the file and key can still be named).
    for (std::size_t a = 0; a < job.hosts.size(); ++a)
      for (std::size_t b = 0; b < a; ++b)
        if (job.hosts[b] == job.hosts[a])
          throw InputError(where + ": key '" + key + ".hosts[" + std::to_string(a) + "]': '" + job.hosts[a] +
                           "' is listed twice (also at index " + std::to_string(b) + ")");
    // Two jobs of one name have rows nobody can tell apart (and whatif.json refused them after the run).
    for (const auto& other : s.jobs)
      if (other.name == job.name)
        throw InputError(where + ": key '" + key + ".name': '" + job.name + "' names an earlier job too");
    if (job.workload.trace.empty()) {
      // A size twice merged its samples (iterations doubled against the config); one rank gave nan/inf
      // bandwidths in the table and the CSV.
      const auto& sizes = job.workload.sizes_bytes;
      for (std::size_t a = 0; a < sizes.size(); ++a) {
        for (std::size_t b = 0; b < a; ++b)
          if (sizes[b] == sizes[a])
            throw InputError(where + ": key '" + key + ".workload.sizes': " + std::to_string(sizes[a]) +
                             " bytes is listed twice");
      }
      if (static_cast<std::uint64_t>(job.nodes) * job.gpus_per_node < 2)
        throw InputError(
            where + ": key '" + key + ".nodes': " + std::to_string(job.nodes) + " node(s) x " +
            std::to_string(job.gpus_per_node) +
            " GPU(s) is one rank; a collective needs at least two (nccl-tests prints no bandwidth "
            "for one rank)");
    }
    // NVLS and CollNet only where the system offers them; "auto" there is NCCL's choice among all offered.
    auto& algo = job.workload.algorithm;
    for (const auto& [name, offered, flag] : {std::tuple{"nvls", s.nccl_nvls, "nccl.nvls"},
                                              std::tuple{"collnet", s.nccl_collnet, "nccl.collnet"}})
      if (algo == name && !offered)
        throw InputError(where + ": key '" + key + ".workload.algorithm': '" + name +
                         "' needs a system that offers it: set " + flag + "=true");
    if (algo == "auto" && (s.nccl_nvls || s.nccl_collnet))
      algo = std::string("ring,tree") + (s.nccl_nvls ? ",nvls" : "") + (s.nccl_collnet ? ",collnet" : "");
    s.jobs.push_back(std::move(job));
    ++i;
  }
  bool any_finite = false;
  for (const auto& j : s.jobs) any_finite |= !j.workload.loop;
  if (!any_finite)
    throw InputError(where +
                     ": key 'jobs': every job has \"loop\": true, so the run would never end; make one "
                     "job finite");
  for (const auto& b : e.at("background")) {
    if (const double start = b.at("start_us"), stop = b.at("stop_us"); stop > 0 && stop <= start)
      throw InputError(where + ": key 'background[" + std::to_string(s.background.size()) +
                       "].stop_us': " + format_g(stop) + " us is not after start_us (" + format_g(start) +
                       " us); give a later stop, or 0 for the end of the last job");
    BackgroundSpec bg;
    bg.pattern = parse_background_pattern(b.at("pattern"), where + ": key 'background[].pattern'");
    bg.load = b.at("load");
    bg.message_bytes = b.at("message_bytes");
    bg.nodes = b.at("nodes");
    bg.nics_per_node = b.at("nics_per_node");
    bg.placement = b.at("placement");
    bg.start_us = b.at("start_us");
    bg.stop_us = b.at("stop_us");
    bg.sl = b.at("sl");
    s.background.push_back(bg);
  }
  s.faults = parse_faults(e, where);
  return s;
}

} // namespace

std::string note_override(const std::vector<std::string>& overrides, std::string msg) {
  const auto at = msg.find("key '");
  if (at == std::string::npos || overrides.empty()) return msg;
  if (msg.find(" is from the command line, not the file)") != std::string::npos) return msg; // noted already
  const auto end = msg.find('\'', at + 5);
  if (end == std::string::npos) return msg;
  const std::string key = msg.substr(at + 5, end - at - 5);
  auto under = [](const std::string& a, const std::string& b) { // a is b or lies under it
    return a == b || (a.size() > b.size() && a.compare(0, b.size(), b) == 0 &&
                      (a[b.size()] == '.' || a[b.size()] == '['));
  };
  for (auto it = overrides.rbegin(); it != overrides.rend(); ++it) { // the last override of a key wins
    const auto eq = it->find('=');
    if (eq == std::string::npos) continue;
    const std::string path = it->substr(0, eq);
    // The override sets the key or a key above it; or one below it (--set fabric.params.oversubscription=7:3
    // for an error about 'fabric.params') whose value the message quotes: another parameter of the same
    // object set on the command line is not what the error is about.
    const std::string value = it->substr(eq + 1);
    if (!under(key, path) &&
        !(under(path, key) && !value.empty() && msg.find(value, end) != std::string::npos))
      continue;
    std::string shown = *it;
    if (shown.size() > 80) shown = shown.substr(0, 77) + "...";
    return msg + " (" + shown + " is from the command line, not the file)";
  }
  return msg;
}

Scenario make_scenario(const nlohmann::json& doc_in, const std::string& where, const std::string& base_dir,
                       const std::vector<std::string>& overrides) {
  try {
    return make_scenario_checked(doc_in, where, base_dir, overrides);
  } catch (const InputError& e) {
    const std::string m = e.what();
    // The schema's own errors name "--set" already; later checks name the file and the key.
    throw InputError(m.rfind("--set", 0) == 0 ? m : note_override(overrides, m));
  }
}

Scenario point_scenario(const Scenario& base, const std::vector<std::string>& point_overrides) {
  std::vector<std::string> all =
      base.overrides; // already in base.effective: applying them again changes nothing
  all.insert(all.end(), point_overrides.begin(), point_overrides.end());
  Scenario s = make_scenario(base.effective, base.file, base.base_dir, all);
  // base.effective has every default filled in, so every key would look given: the keys given are the base's
  // (a point's own setting, such as --stragglers none, is the study's doing, not the user's), judged against
  // the point (cc.params beside cc none in the file is inert on the study's cc-none points only).
  s.given = base.given;
  s.no_effect = no_effect_keys(base.given, s.effective);
  s.flow_key_given = base.flow_key_given;
  return s;
}

std::vector<std::string> study_no_effect(const std::map<std::string, std::size_t>& inert,
                                         std::size_t points) {
  std::vector<std::string> out;
  for (const auto& [line, n] : inert)
    out.push_back(
        "no effect" +
        (n < points ? " on " + std::to_string(n) + " of " + std::to_string(points) + " points" : "") + ": " +
        line);
  return out;
}

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  refuse_folder(path, "a scenario file"); // it said "malformed JSON ... unexpected end of input"
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open scenario file");
  std::stringstream ss;
  ss << in.rdbuf();
  const auto text = ss.str();
  const nlohmann::json doc = parse_json_text(text, path, "malformed JSON"); // line:col (and key)
  const auto dir = std::filesystem::path(path).parent_path().string();
  return make_scenario(doc, path, dir, overrides);
}

calib::VariabilityModel effective_variability(const Scenario& s, const calib::VariabilityModel* profile) {
  calib::VariabilityModel m;
  const auto& v = s.variability;
  if (profile && v.use_profile) m = *profile;
  if (v.state_sigma) {
    m.state.clear();
    if (*v.state_sigma > 0) m.state.push_back({1, *v.state_sigma, 0, 0, 0});
  }
  if (v.launch) m.launch = *v.launch;
  if (v.stragglers) {
    m.stragglers = *v.stragglers;
    m.straggler_rate_factor = v.straggler_rate_factor;
    m.straggler_delay_us = v.straggler_delay_us;
  }
  return m;
}

} // namespace ibn::scen
