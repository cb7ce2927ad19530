#include "analysis/validate.hpp"

#include "analysis/nccl_tests.hpp"
#include "calibration/nccl_tests_parser.hpp"
#include "calibration/profile.hpp"
#include "scenarios/nccl_cost.hpp"
#include "sim/build_id.hpp"
#include "sim/child_processes.hpp"
#include "sim/error.hpp"
#include "sim/units.hpp"
#include "sim/version.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

namespace ibn::analysis {

using scen::nccl_version_code;

namespace {

/// Whether every NIC the log's NCCL INFO lines name runs RoCE ("NET/IB : Using [0]mlx5_5:1/RoCE"); false
/// when none is named or any is InfiniBand (Snellius lists its Ethernet mlx5_0 beside four IB ports).
bool roce_only(const calib::NcclTestsRun& run) {
  if (run.nics.empty()) return false;
  for (const auto& n : run.nics)
    if (n.link_layer != "RoCE") return false;
  return true;
}

struct SimRow {
  std::uint64_t size = 0;
  double busbw = 0, time_us = 0;
  double factor = 1; ///< busbw / algbw: nccl-tests' bus bandwidth factor of the test on its ranks
  std::string algorithm, protocol;
};

/// The simulated out-of-place busbw, time, algorithm and protocol per size. The flow engine runs in a child
/// process: SimGrid's engine is a process singleton, so a second test of the same log (or a second log)
/// could not run in this one.
std::vector<SimRow> simulate_busbw(const NcclTestsOptions& o) {
  auto run = [&] {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& r : run_nccl_tests(o).rows)
      a.push_back({r.size_bytes, r.oop_busbw, r.oop_time_us,
                   r.oop_algbw > 0 ? r.oop_busbw / r.oop_algbw : 1.0, r.algorithm, r.protocol});
    return a.dump();
  };
  const auto j = nlohmann::json::parse(o.engine == "flow" ? run_in_child_process(run) : run());
  std::vector<SimRow> out;
  for (const auto& e : j)
    out.push_back({e.at(0).get<std::uint64_t>(), e.at(1).get<double>(), e.at(2).get<double>(),
                   e.at(3).get<double>(), e.at(4).get<std::string>(), e.at(5).get<std::string>()});
  return out;
}

} // namespace

NcclTestsOptions nccl_tests_options_for(const calib::NcclTestsRun& run, const std::string& log,
                                        const ValidateOptions& opt, std::vector<std::string>* notes) {
  const std::string test = std::string(calib::to_string(run.collective)) + "_perf";
  NcclTestsOptions o;
  o.test = test;
  // The node count: the log's (its '# Rank ... on HOST' lines, NCCL INFO nNodes), else --nodes, else one node
  // with a note (the log's rank lines were cut: a multi-node run would be simulated as one node).
  const std::string at = log + ":" + std::to_string(run.first_line) + ": " + test;
  if (run.nnodes && opt.nodes && static_cast<std::uint32_t>(*run.nnodes) != opt.nodes)
    throw InputError("--nodes " + std::to_string(opt.nodes) + ": " + at + " ran on " +
                     std::to_string(*run.nnodes) + " node(s), as its rank lines say");
  o.nodes = run.nnodes ? static_cast<std::uint32_t>(*run.nnodes) : std::max(1u, opt.nodes);
  if (!run.nnodes && !opt.nodes && notes)
    notes->push_back(at + " does not say how many nodes ran (no '# Rank' lines, no NCCL INFO nNodes): " +
                     "simulated on one node; pass --nodes N if it ran on more");
  const int ranks = run.nranks.value_or(run.config.ngpus.value_or(1) * static_cast<int>(o.nodes));
  o.gpus_per_node =
      static_cast<std::uint32_t>(run.gpus_per_node.value_or(std::max(1, ranks / static_cast<int>(o.nodes))));
  if (opt.nics_per_node) {
    o.nics_per_node = opt.nics_per_node;
  } else if (!run.nics.empty()) {
    std::set<std::string> names;
    for (const auto& n : run.nics) names.insert(n.name);
    o.nics_per_node = static_cast<std::uint32_t>(std::min<std::size_t>(names.size(), o.gpus_per_node));
  }
  o.fabric = opt.fabric;
  o.profile = opt.profile;
  o.engine = opt.engine;
  o.iters = opt.iters;
  o.warmup = opt.warmup;
  // NCCL_ALGO chooses among the algorithms of collectives; point-to-point tests (sendrecv, alltoall)
  // have none, and NCCL ignores the variable for them.
  const bool has_algorithms =
      run.collective != calib::NcclCollective::sendrecv && run.collective != calib::NcclCollective::alltoall;
  // One algorithm (RING, Tree, NVLS, NVLSTree, COLLNET_DIRECT, CollNetChain, ...): that one; a list or a
  // name not modelled: auto (NVLS and CollNet in a list are offered to it, below).
  if (!run.algo.empty() && has_algorithms) {
    o.algorithm = "auto";
    try {
      const auto names = scen::algorithm_names(run.algo);
      if (names.size() == 1 && run.algo.find(',') == std::string::npos &&
          (names[0] == "ring" || names[0] == "tree" || names[0] == "nvls" || names[0] == "collnet"))
        o.algorithm = names[0];
    } catch (const InputError&) {
    }
  }
  if (!run.proto.empty()) {
    std::string p = run.proto;
    std::transform(p.begin(), p.end(), p.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (p == "simple" || p == "ll" || p == "ll128") o.protocol = p;
  }
  if (roce_only(run) && o.nodes > 1 && notes)
    notes->push_back(
        log + ":" + std::to_string(run.first_line) +
        ": the log's NICs run RoCE (NET/IB .../RoCE): simulated with packet.link_layer=rocev2 "
        "(RoCEv2 headers) on the fabric given, whose switches, flow control and congestion control "
        "stay as it and the scenario keys say (--set packet.link_layer=ib overrides)");
  if (run.gdr && !*run.gdr && o.nodes > 1 && notes)
    notes->push_back(
        log + ":" + std::to_string(run.first_line) +
        ": the measured run had GPUDirect RDMA off (GDR 0): simulated with packet.gpudirect=false (data "
        "staged through host memory, docs/packet-models.md \"Host path\"; --set packet.gpudirect=true "
        "overrides)");
  return o;
}

nlohmann::json validate_manifest(const std::string& command, const std::vector<std::string>& logs,
                                 const std::string& engine, const std::string& fabric,
                                 const std::string& profile, const std::vector<std::string>& sets,
                                 std::uint64_t seed) {
  std::vector<std::string> inputs = logs;
  if (!fabric.empty()) inputs.push_back(fabric);
  if (!profile.empty()) inputs.push_back(profile);
  return {{"tool", "ibnetsim"},
          {"command", command},
          {"version", kVersion},
          {"build", build_id()},
          {"inputs", calib::input_hashes(inputs)},
          {"seed", seed},
          {"engine", engine},
          {"fabric", fabric.empty() ? "default (a non-blocking fat-tree that fits)" : fabric},
          {"profile", profile.empty() ? nlohmann::json(nullptr) : nlohmann::json(profile)},
          {"set", sets}};
}

nlohmann::json value_in_effect(const nlohmann::json& runs, const std::string& key) {
  nlohmann::json values = nlohmann::json::array();
  for (const auto& r : runs)
    if (r.contains(key)) values.push_back(r.at(key));
  if (values.empty()) return nullptr;
  for (const auto& v : values)
    if (v != values.front()) return values;
  return values.front();
}

std::vector<std::string> nccl_log_sets(const calib::NcclTestsRun& run, std::uint32_t nodes) {
  std::vector<std::string> sets;
  // The log's NCCL release selects the cost model's constants (used with nccl.costs or a profile's nccl
  // section); a --set nccl.version given by the user comes later and wins.
  if (!run.nccl_version.empty() && nccl_version_code(run.nccl_version) > 0)
    sets.push_back("nccl.version=" + run.nccl_version);
  // GPUDirect RDMA off in the log (GDR 0): the host-staging model; a --set by the user comes later and
  // wins.
  if (run.gdr && !*run.gdr && nodes > 1) sets.push_back("packet.gpudirect=false");
  // Every NIC NCCL listed runs RoCE: RoCEv2 framing (82-byte headers instead of InfiniBand's 26).
  if (roce_only(run) && nodes > 1) sets.push_back("packet.link_layer=rocev2");
  // NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS from the log's environment lines bound the channel count.
  for (const auto& [env, key] :
       {std::pair<const char*, const char*>{"NCCL_MIN_NCHANNELS", "nccl.min_channels"},
        std::pair<const char*, const char*>{"NCCL_MAX_NCHANNELS", "nccl.max_channels"}})
    if (auto it = run.env.find(env); it != run.env.end()) sets.push_back(std::string(key) + "=" + it->second);
  // NCCL_ALGO naming NVLS or CollNet: the measured system offered them (NCCL would otherwise not run them).
  if (!run.algo.empty()) try {
      for (const auto& a : scen::algorithm_names(run.algo))
        if (a == "nvls" || a == "collnet") sets.push_back("nccl." + a + "=true");
    } catch (const InputError&) {
    }
  return sets;
}

nlohmann::json validate_nccl_tests(const std::string& log, const ValidateOptions& opt) {
  const auto runs = calib::parse_nccl_tests_file(log);
  if (runs.empty()) throw InputError(log + ": no nccl-tests results table found");
  nlohmann::json rows = nlohmann::json::array(), run_info = nlohmann::json::array();
  std::vector<std::string> notes;
  std::vector<double> errors;
  std::size_t skipped = 0;   // "0 0" rows: sizes that round to nothing (NCCL returns at once)
  std::size_t above_max = 0; // rows --max-bytes left out
  std::uint64_t smallest_above = UINT64_MAX;
  bool any_test = false;
  std::set<std::string> present;
  for (const auto& run : runs) {
    if (run.rows.empty()) {
      // A test whose output was cut before its table (the parser warned): nothing measured to compare.
      notes.push_back(log + ":" + std::to_string(run.first_line) +
                      ": this test has no results table (output cut before it): skipped");
      continue;
    }
    if (run.collective == calib::NcclCollective::unknown)
      throw InputError(log + ":" + std::to_string(run.first_line) +
                       ": cannot tell which collective was measured");
    // What the parser noticed (a table cut mid-row, a row split by interleaved output, a missing summary).
    notes.insert(notes.end(), run.warnings.begin(), run.warnings.end());
    const std::string test = std::string(calib::to_string(run.collective)) + "_perf";
    present.insert(test);
    if (!opt.tests.empty() && std::find(opt.tests.begin(), opt.tests.end(), test) == opt.tests.end())
      continue;
    any_test = true;
    try {
      (void)nccl_test_op(test);
    } catch (const InputError&) {
      notes.push_back(log + ":" + std::to_string(run.first_line) + ": " + test +
                      " is not one of the simulator's nccl-tests (docs/cli.md): skipped");
      continue;
    }
    NcclTestsOptions o = nccl_tests_options_for(run, log, opt, &notes);
    if (o.nodes * o.gpus_per_node < 2)
      throw InputError(log + ":" + std::to_string(run.first_line) + ": " + test + " ran on " +
                       std::to_string(o.nodes * o.gpus_per_node) +
                       " rank(s) as far as the log says (no '# Rank' lines, nGpus " +
                       std::to_string(o.gpus_per_node) + "): a collective needs two; is the header cut?");
    std::vector<const calib::NcclTestsRow*> measured;
    for (const auto& r : run.rows) {
      if (opt.max_bytes && r.size_bytes > opt.max_bytes) {
        ++above_max, smallest_above = std::min(smallest_above, r.size_bytes);
        continue;
      }
      if (r.size_bytes == 0) {
        ++skipped;
        continue;
      }
      // The measured time is the measurement (busbw is derived from it and printed with two decimals):
      // a row is compared when its time is a finite positive number, whatever its busbw prints.
      if (!std::isfinite(r.oop.time_us) || !(r.oop.time_us > 0)) {
        notes.push_back(log + ":" + std::to_string(r.line) + ": size " + std::to_string(r.size_bytes) +
                        ": the measured time is not a finite positive number: row skipped");
        continue;
      }
      measured.push_back(&r);
    }
    if (measured.empty()) continue;
    // Simulate exactly the measured sizes.
    std::string sizes;
    for (const auto* r : measured) sizes += (sizes.empty() ? "" : ",") + std::to_string(r->size_bytes);
    o.sets = nccl_log_sets(run, o.nodes);
    o.sets.insert(o.sets.end(), opt.sets.begin(), opt.sets.end());
    const std::vector<std::string> keys_set = o.sets; // from the log, then the user's --set (reported)
    o.sets.push_back("jobs[0].workload.sizes=" + sizes);
    // The smallest and largest measured size (a table need not ascend): the front-end's -b/-e.
    o.min_bytes = UINT64_MAX, o.max_bytes = 0;
    for (const auto* r : measured)
      o.min_bytes = std::min(o.min_bytes, r->size_bytes), o.max_bytes = std::max(o.max_bytes, r->size_bytes);
    const auto sim = simulate_busbw(o);
    run_info.push_back({{"test", test},
                        {"nodes", o.nodes},
                        {"nodes_from_log", run.nnodes.has_value() || opt.nodes > 0}, // else 1 was assumed
                        {"gpus_per_node", o.gpus_per_node},
                        {"nics_per_node", o.nics_per_node ? o.nics_per_node : o.gpus_per_node},
                        {"line", run.first_line},
                        {"algorithm", o.algorithm},
                        {"protocol", o.protocol},
                        {"gdr", run.gdr ? nlohmann::json(*run.gdr) : nlohmann::json(nullptr)},
                        {"nccl_version", run.nccl_version},
                        {"set", keys_set}});
    for (const auto* r : measured) {
      const auto it =
          std::find_if(sim.begin(), sim.end(), [&](const auto& x) { return x.size == r->size_bytes; });
      if (it == sim.end()) continue;
      // busbw of the measured time, with the simulation's busbw factor (nccl-tests' for the test and ranks):
      // the error is the time ratio, not that of a busbw printed with two decimals.
      const double measured = static_cast<double>(r->size_bytes) / (r->oop.time_us * 1e3) * it->factor;
      const double err = (r->oop.time_us / it->time_us - 1.0) * 100.0;
      errors.push_back(std::abs(err));
      rows.push_back({{"file", log},
                      {"test", test},
                      {"size_bytes", r->size_bytes},
                      {"measured", std::round(measured * 1e4) / 1e4},
                      {"measured_printed", r->oop.busbw_gbs},
                      {"simulated", std::round(it->busbw * 1e4) / 1e4},
                      {"error_pct", std::round(err * 100) / 100},
                      {"measured_time_us", r->oop.time_us},
                      {"simulated_time_us", std::round(it->time_us * 1e3) / 1e3},
                      {"algorithm", it->algorithm},
                      {"protocol", it->protocol},
                      {"nodes", o.nodes},
                      {"gpus_per_node", o.gpus_per_node}});
    }
  }
  if (!opt.tests.empty() && !any_test) {
    std::string names;
    for (const auto& t : present) names += (names.empty() ? "" : ", ") + t;
    throw InputError(log + ": no test named by --test in it (it holds " + (names.empty() ? "none" : names) +
                     ")");
  }
  if (errors.empty() && above_max > 0)
    throw InputError(log + ": --max-bytes " + format_size(opt.max_bytes) + " leaves no row to compare (" +
                     std::to_string(above_max) + " row(s) above it; the smallest measured size is " +
                     format_size(smallest_above) + ")");
  if (errors.empty())
    throw InputError(log + ": no row with a measured time to compare (" + std::to_string(skipped) +
                     " row(s) of size 0)");
  auto summary = error_summary(errors);
  summary["skipped_zero_size_rows"] = skipped;
  // What shapes the rows besides the log: -n, --max-bytes, --test, and the nodes and NICs per node in effect
  // (from --nodes/--nics or the log; one value, or one per run when the log's runs differ).
  auto nccl_manifest =
      validate_manifest("validate nccl-tests", {log}, opt.engine, opt.fabric, opt.profile, opt.sets);
  nccl_manifest["iterations"] = opt.iters;
  nccl_manifest["max_bytes"] = opt.max_bytes;
  nccl_manifest["tests"] = opt.tests;
  nccl_manifest["nodes"] = value_in_effect(run_info, "nodes");
  nccl_manifest["nodes_from"] = opt.nodes ? "--nodes" : "the log";
  nccl_manifest["nics_per_node"] = value_in_effect(run_info, "nics_per_node");
  nccl_manifest["nics_from"] =
      opt.nics_per_node ? "--nics" : "the log (its NCCL INFO NICs, else one per GPU)";
  return {
      {"manifest", nccl_manifest},
      {"rows", rows},
      {"runs", run_info},
      {"notes", notes},
      {"summary", summary}};
}

nlohmann::json error_summary(std::vector<double> abs_errors) {
  std::sort(abs_errors.begin(), abs_errors.end());
  const std::size_t n = abs_errors.size();
  const double median = n % 2 ? abs_errors[n / 2] : 0.5 * (abs_errors[n / 2 - 1] + abs_errors[n / 2]);
  return {{"median_abs_error_pct", std::round(median * 100) / 100},
          {"max_abs_error_pct", std::round(abs_errors.back() * 100) / 100},
          {"rows", n}};
}

std::string validate_table(const nlohmann::json& v) {
  std::ostringstream s;
  char line[256];
  // The job (nodes x GPUs per node) and what the simulation ran (algorithm/protocol) on every row: a log may
  // hold several jobs of one test (issue 309's 2-, 4- and 8-node runs), and the choice explains many errors.
  std::snprintf(line, sizeof line, "%-18s %7s %12s %14s %14s %9s  %s\n", "test", "job", "size (B)",
                "measured GB/s", "simulated GB/s", "error %", "simulated as");
  s << line;
  for (const auto& r : v.at("rows")) {
    const std::string job =
        std::to_string(r.value("nodes", 0u)) + "x" + std::to_string(r.value("gpus_per_node", 0u));
    const std::string algo = r.value("algorithm", std::string{}), proto = r.value("protocol", std::string{});
    const std::string ran = algo.empty() ? "-" : proto.empty() ? algo : algo + "/" + proto;
    std::snprintf(line, sizeof line, "%-18s %7s %12llu %14.4f %14.4f %9.2f  %s\n",
                  r.at("test").get<std::string>().c_str(), job.c_str(),
                  static_cast<unsigned long long>(r.at("size_bytes").get<std::uint64_t>()),
                  r.at("measured").get<double>(), r.at("simulated").get<double>(),
                  r.at("error_pct").get<double>(), ran.c_str());
    s << line;
  }
  const auto& sm = v.at("summary");
  std::snprintf(line, sizeof line, "median |error| %.2f %%, max |error| %.2f %% over %zu sizes\n",
                sm.at("median_abs_error_pct").get<double>(), sm.at("max_abs_error_pct").get<double>(),
                static_cast<std::size_t>(sm.at("rows").get<std::size_t>()));
  s << line;
  if (v.contains("notes"))
    for (const auto& n : v.at("notes")) s << "note: " << n.get<std::string>() << "\n";
  return s.str();
}

namespace {

/// Golden-section search for the minimum of f on [lo, hi], `iters` narrowing steps.
template <class F> double golden_min(F&& f, double lo, double hi, int iters) {
  const double g = (std::sqrt(5.0) - 1) / 2;
  double a = lo, b = hi, c = b - g * (b - a), d = a + g * (b - a);
  double fc = f(c), fd = f(d);
  for (int i = 0; i < iters; ++i) {
    if (fc <= fd) {
      b = d, d = c, fd = fc;
      c = b - g * (b - a);
      fc = f(c);
    } else {
      a = c, c = d, fc = fd;
      d = a + g * (b - a);
      fd = f(d);
    }
  }
  return fc <= fd ? c : d;
}

} // namespace

NvlinkFit fit_nvlink(const std::string& log, const NvlinkFitOptions& opt) {
  const auto runs = calib::parse_nccl_tests_file(log);
  if (runs.empty()) throw InputError(log + ": no nccl-tests results table found");
  std::size_t used = 0;
  for (const auto& run : runs) {
    const std::string test = std::string(calib::to_string(run.collective)) + "_perf";
    if (!opt.tests.empty() && std::find(opt.tests.begin(), opt.tests.end(), test) == opt.tests.end())
      continue;
    if (run.nnodes.value_or(1) != 1)
      throw InputError(log + ":" + std::to_string(run.first_line) + ": " + test + " ran on " +
                       std::to_string(*run.nnodes) +
                       " nodes; the NVLink fit needs single-node runs (select others with --test)");
    ++used;
  }
  if (used == 0) throw InputError(log + ": none of the requested tests is in the file");
  ValidateOptions v;
  v.iters = opt.iters;
  v.warmup = 1;
  v.max_bytes = opt.max_bytes;
  v.tests = opt.tests;
  NvlinkFit out;
  auto run_at = [&](double bw, double lat) {
    ValidateOptions w = v;
    char b[64], l[64];
    std::snprintf(b, sizeof b, "nvlink.bandwidth_gbps=%.6g", bw);
    std::snprintf(l, sizeof l, "nvlink.latency_us=%.6g", lat);
    w.sets = {b, l};
    ++out.evaluations;
    return validate_nccl_tests(log, w);
  };
  auto cost = [&](double bw, double lat) {
    const auto r = run_at(bw, lat);
    double e = 0;
    std::size_t n = 0;
    for (const auto& row : r.at("rows")) {
      const double m = row.at("measured"), s = row.at("simulated");
      if (!(m > 0) || !(s > 0)) continue;
      e += std::log(s / m) * std::log(s / m);
      ++n;
    }
    return n ? e / static_cast<double>(n) : 0.0;
  };
  double bw = 3600, lat = 0.7; // the scenario defaults
  for (int round = 0; round < 3; ++round) {
    bw = std::exp(
        golden_min([&](double x) { return cost(std::exp(x), lat); }, std::log(100.0), std::log(20000.0), 18));
    lat = golden_min([&](double x) { return cost(bw, x); }, 0.0, 20.0, 18);
  }
  out.bandwidth_gbps = std::round(bw * 10) / 10;
  out.latency_us = std::round(lat * 1000) / 1000;
  out.validation = run_at(out.bandwidth_gbps, out.latency_us);
  out.rms_log_error = std::sqrt(cost(out.bandwidth_gbps, out.latency_us));
  return out;
}

nlohmann::json NvlinkFit::to_json(const std::string& log) const {
  return {{"nvlink", {{"bandwidth_gbps", bandwidth_gbps}, {"latency_us", latency_us}}},
          {"fit",
           {{"source", log},
            {"model", "scenario keys nvlink.bandwidth_gbps and nvlink.latency_us fitted by simulation to the "
                      "measured out-of-place busbw (least squares of ln(simulated/measured))"},
            {"rms_log_error", rms_log_error},
            {"evaluations", evaluations},
            {"rows", validation.at("rows")},
            {"summary", validation.at("summary")}}}};
}

} // namespace ibn::analysis
