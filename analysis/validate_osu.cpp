// `validate osu`: a real OSU / IMB output against the same measurement simulated (analysis/validate.hpp).
#include "analysis/tail_stats.hpp"
#include "analysis/validate.hpp"
#include "sim/child_processes.hpp"

#include "calibration/osu_parser.hpp"
#include "calibration/profile.hpp"
#include "scenarios/perftest.hpp"
#include "scenarios/runner.hpp"
#include "scenarios/scenario.hpp"
#include "sim/error.hpp"
#include "topology/fabric_loader.hpp"
#include "topology/link_speed.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>

namespace ibn::analysis {
namespace {

using calib::OsuKind;
using calib::OsuRun;
using nlohmann::json;

double quantile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  // The sample at rank ceil(p n) (as perftest and results.json do).
  const auto n = static_cast<double>(v.size());
  const auto k = static_cast<std::size_t>(std::max(1.0, std::ceil(p * n)));
  return v[std::min(v.size(), k) - 1];
}

/// x rounded to `decimals` decimal places.
double round_to(double x, int decimals) {
  const double f = std::pow(10.0, decimals);
  return std::round(x * f) / f;
}

bool is_pow2(std::uint32_t x) {
  return x > 0 && (x & (x - 1)) == 0;
}

/// Where a run sits: its benchmark name and line, for messages.
std::string where(const OsuRun& r) {
  return r.source + ":" + std::to_string(r.table_line) + ": " + r.benchmark;
}

struct Shape {
  std::uint32_t nodes = 0, ppn = 0;
  std::string from; ///< "flags", "launcher line N", "benchmark"
};

/// Nodes and ranks per node for `r`: the flags, else the launcher line; InputError naming what is missing.
Shape shape_of(const OsuRun& r, const OsuValidateOptions& opt) {
  Shape s;
  if (opt.nodes || opt.ppn) {
    if (!opt.nodes || !opt.ppn) throw InputError("--nodes and --ppn go together (both are needed)");
    s.nodes = opt.nodes;
    s.ppn = opt.ppn;
    s.from = "--nodes/--ppn";
    return s;
  }
  const auto& l = r.launcher;
  if (l && l->nodes && l->per_node) {
    s.nodes = static_cast<std::uint32_t>(*l->nodes);
    s.ppn = static_cast<std::uint32_t>(*l->per_node);
    s.from = "launcher line " + std::to_string(l->line);
    return s;
  }
  std::string missing = !l ? "the file has no launcher line (mpirun/mpiexec/srun) before the table"
                           : "its launcher line " + std::to_string(l->line) + " does not say " +
                                 (l->nodes ? "how many ranks run per node" : "how many nodes");
  throw InputError(where(r) + ": cannot tell how many nodes and ranks per node ran it: " + missing +
                   "; give --nodes N --ppn K");
}

/// The two-HCA path for point-to-point runs.
scen::PerftestPath pt2pt_path(const OsuValidateOptions& opt,
                              const std::shared_ptr<const calib::Profile>& prof) {
  pkt::PacketConfig base;
  if (prof) calib::apply(*prof, base);
  if (!opt.fabric.empty()) {
    topo::LoadedFabric loaded;
    try {
      loaded = topo::load_fabric_any(opt.fabric);
    } catch (const InputError& e) {
      throw InputError(std::string("--fabric: ") + e.what());
    }
    std::vector<std::string> hcas;
    for (const auto& n : loaded.fabric.nodes())
      if (n.kind == topo::NodeKind::Hca) hcas.push_back(n.name);
    if (hcas.size() < 2) throw InputError("--fabric: " + opt.fabric + " has fewer than two HCAs");
    // The first and the last HCA: on a generated tree, two nodes as far apart as the fabric allows.
    auto path = scen::fabric_path(std::move(loaded.fabric), hcas.front(), hcas.back(), base, "--fabric");
    if (prof) path.config.switch_latency = prof->switch_latency;
    return path;
  }
  if (prof && opt.rate.empty()) {
    auto path = scen::back_to_back_path(prof->engine_link_speed(),
                                        std::max(0.01, (prof->hops + 1) * prof->cable_m), base);
    path.config.switch_latency = Time::ps(prof->switch_latency.count_ps() * prof->hops);
    return path;
  }
  return scen::back_to_back_path(topo::parse_link_speed(opt.rate.empty() ? "NDR" : opt.rate, "--rate"), 3.0,
                                 base);
}

struct Predicted {
  double p50_us = 0, p99_us = 0;
  double mbps = 0;   ///< bandwidth rows: predicted MB/s (1e6 B/s) at the median
  std::size_t n = 0; ///< the samples the percentiles come from
};

std::vector<Predicted> simulate_pt2pt(const OsuRun& r, const std::vector<std::uint64_t>& sizes,
                                      std::uint32_t pairs, const OsuValidateOptions& opt,
                                      const std::shared_ptr<const calib::Profile>& prof) {
  const auto path = pt2pt_path(opt, prof);
  scen::PerftestSpec spec;
  spec.profile = prof;
  spec.src = path.src;
  spec.dst = path.dst;
  std::vector<Predicted> out(sizes.size());
  // perftest sizes are >= 1 byte: a 0-byte MPI message is simulated as 1 byte.
  std::vector<std::uint64_t> sim_sizes;
  for (auto s : sizes) sim_sizes.push_back(std::max<std::uint64_t>(1, s));
  if (r.kind == OsuKind::latency) {
    spec.tool = calib::PerftestTool::ib_send_lat;
    spec.iterations = std::max<std::uint32_t>(opt.samples, 1);
    spec.tx_depth = 1;
    spec.sizes = sim_sizes;
    spec.max_bytes_per_size = 256ull << 20;
    const auto rows = scen::run_perftest(path.fabric, path.tables, path.config, spec);
    for (std::size_t i = 0; i < rows.size(); ++i)
      out[i] = {rows[i].t_typical_us, rows[i].p99_us, 0, rows[i].iterations};
    return out;
  }
  spec.tool = calib::PerftestTool::ib_send_bw;
  spec.tx_depth = static_cast<std::uint32_t>(r.window_size.value_or(64));
  spec.qps = pairs;
  spec.bidirectional = r.bidirectional;
  spec.iterations = 20ull * spec.tx_depth; // OSU's large-message loop: 20 windows
  spec.max_bytes_per_size = 64ull << 20;
  spec.sizes = sim_sizes;
  std::vector<std::vector<double>> per_size(sizes.size()); // us per message, one per repeat
  for (std::uint32_t k = 0; k < std::max<std::uint32_t>(1, opt.repeats); ++k) {
    spec.seed = k + 1;
    const auto rows = scen::run_perftest(path.fabric, path.tables, path.config, spec);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const double mbps = rows[i].bw_avg_gbps * 125.0; // Gb/s -> MB/s (1e6 B/s)
      per_size[i].push_back(mbps > 0 ? static_cast<double>(sim_sizes[i]) / mbps : 0.0);
    }
  }
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const double p50 = quantile(per_size[i], 0.5);
    out[i] = {p50, quantile(per_size[i], 0.99), p50 > 0 ? static_cast<double>(sim_sizes[i]) / p50 : 0.0,
              per_size[i].size()};
  }
  return out;
}

std::string mpi_algorithm(const OsuValidateOptions& opt, std::uint32_t ranks, std::uint32_t ppn) {
  if (opt.algorithm != "mpi") return opt.algorithm;
  if (is_pow2(ranks)) return "halving-doubling";
  return ppn > 1 ? "hierarchical" : "ring";
}

/// MPI AllReduce over host memory: p50/p99 of the iterations per size. The flow engine runs in a child
/// process (SimGrid allows one engine per process).
std::vector<Predicted> simulate_allreduce(const std::vector<std::uint64_t>& sizes, const Shape& sh,
                                          const OsuValidateOptions& opt, std::string& algorithm) {
  const std::uint32_t ranks = sh.nodes * sh.ppn;
  algorithm = mpi_algorithm(opt, ranks, sh.ppn);
  json sz = json::array();
  for (auto s : sizes) sz.push_back(std::max<std::uint64_t>(4, s));
  json doc = {{"name", "validate osu allreduce"},
              {"seed", 1},
              {"engine", opt.engine},
              {"nvlink", {{"bandwidth_gbps", opt.shm_gbps}, {"latency_us", opt.shm_latency_us}}},
              // An MPI library's AllReduce, not NCCL's: none of NCCL's per-step software costs (on by
              // default for scenarios since nccl.costs became true).
              {"nccl", {{"costs", false}}},
              {"jobs", json::array({{{"name", "osu"},
                                     {"nodes", sh.nodes},
                                     {"gpus_per_node", sh.ppn},
                                     {"nics_per_node", 1},
                                     {"placement", "linear"},
                                     {"workload",
                                      {{"op", "allreduce"},
                                       {"sizes", sz},
                                       {"algorithm", algorithm},
                                       {"protocol", "simple"},
                                       {"channels", 1},
                                       {"iterations", opt.iters},
                                       {"warmup", opt.warmup}}}}})}};
  if (!opt.fabric.empty()) {
    doc["fabric"] = {{"file", opt.fabric}};
  } else {
    doc["fabric"] = {{"generator", "fat-tree"},
                     {"params",
                      {{"tiers", 2},
                       {"radix", 64},
                       {"hosts", std::max<std::uint32_t>(2, sh.nodes)},
                       {"oversubscription", "1:1"},
                       {"rate", opt.rate.empty() ? "NDR" : opt.rate}}}};
  }
  if (!opt.profile.empty()) doc["calibration"] = opt.profile;
  const auto s = scen::make_scenario(doc, "validate osu", "", opt.sets);
  auto run = [&] {
    const auto r = scen::run_scenario(s);
    json out = json::array();
    for (const auto& c : r.collectives) out.push_back({c.size_bytes, c.samples_us});
    return out.dump();
  };
  const auto res = json::parse(s.engine == scen::EngineKind::Flow ? run_in_child_process(run) : run());
  std::vector<Predicted> out(sizes.size());
  for (std::size_t i = 0; i < sizes.size() && i < res.size(); ++i) {
    const auto samples = res.at(i).at(1).get<std::vector<double>>();
    out[i] = {quantile(samples, 0.5), quantile(samples, 0.99), 0, samples.size()};
  }
  return out;
}

bool selected(const OsuRun& r, const OsuValidateOptions& opt) {
  if (opt.tests.empty()) return true;
  return std::any_of(opt.tests.begin(), opt.tests.end(), [&](const std::string& t) {
    return t == r.benchmark || "IMB-MPI1 " + t == r.benchmark;
  });
}

} // namespace

json validate_osu(const std::string& log, const OsuValidateOptions& opt) {
  const auto runs = calib::parse_osu_file(log);
  std::shared_ptr<const calib::Profile> prof;
  if (!opt.profile.empty()) {
    try {
      prof = std::make_shared<const calib::Profile>(calib::Profile::load(opt.profile));
    } catch (const InputError& e) {
      throw InputError(std::string("--profile: ") + e.what());
    }
  }
  json rows = json::array(), info = json::array(), notes = json::array();
  std::vector<double> errors;
  for (const auto& r : runs) {
    if (!selected(r, opt) || r.rows.empty()) continue;
    for (const auto& w : r.warnings) notes.push_back(w);
    const bool pt2pt = r.kind != OsuKind::collective;
    if (!pt2pt && r.collective != "allreduce") {
      notes.push_back(where(r) + ": not simulated (validate osu covers point-to-point latency and bandwidth "
                                 "and AllReduce)");
      continue;
    }
    if (r.benchmark == "unknown") {
      notes.push_back(where(r) + ": the benchmark is unknown; table skipped");
      continue;
    }
    std::uint32_t pairs = 1;
    if (r.benchmark == "osu_mbw_mr" || r.benchmark == "osu_multi_lat")
      pairs = static_cast<std::uint32_t>(r.pairs.value_or(1));
    Shape sh;
    if (pt2pt) {
      // A point-to-point benchmark has 2 x pairs ranks; only the node split needs saying.
      try {
        sh = shape_of(r, opt);
      } catch (const InputError&) {
        if (opt.nodes || opt.ppn) throw;
        if (!(r.launcher && r.launcher->nodes)) throw;
        sh.nodes = static_cast<std::uint32_t>(*r.launcher->nodes);
        sh.ppn = 2 * pairs / std::max<std::uint32_t>(1, sh.nodes);
        sh.from = "launcher line " + std::to_string(r.launcher->line);
      }
      if (sh.nodes != 2 || sh.ppn != pairs)
        throw InputError(where(r) + ": a point-to-point run of " + std::to_string(pairs) +
                         " pair(s) is simulated between two nodes with " + std::to_string(pairs) +
                         " rank(s) each; " + sh.from + " gives " + std::to_string(sh.nodes) + " node(s) x " +
                         std::to_string(sh.ppn));
      if (r.kind == OsuKind::latency && pairs != 1)
        throw InputError(where(r) + ": osu_multi_lat with " + std::to_string(pairs) +
                         " pairs is not simulated (one pair only)");
    } else {
      sh = shape_of(r, opt);
    }
    std::vector<const calib::OsuRow*> measured;
    for (const auto& row : r.rows) {
      if (opt.max_bytes && row.size_bytes > opt.max_bytes) continue;
      const bool has = r.kind == OsuKind::bandwidth ? row.bandwidth_mbps && *row.bandwidth_mbps > 0
                                                    : row.latency_us && *row.latency_us > 0;
      if (has)
        measured.push_back(&row);
      else // a 0.00 the benchmark printed (too small to show), or a column the parser left empty
        notes.push_back(r.source + ":" + std::to_string(row.line) + ": " + std::to_string(row.size_bytes) +
                        " B: no " + (r.kind == OsuKind::bandwidth ? "bandwidth" : "latency") +
                        " above 0 measured; row skipped");
    }
    if (measured.empty()) continue;
    std::vector<std::uint64_t> sizes;
    for (const auto* m : measured) sizes.push_back(m->size_bytes);
    std::string algorithm;
    const auto pred =
        pt2pt ? simulate_pt2pt(r, sizes, pairs, opt, prof) : simulate_allreduce(sizes, sh, opt, algorithm);
    json run_info = {{"benchmark", r.benchmark},
                     {"line", r.table_line},
                     {"kind", calib::to_string(r.kind)},
                     {"nodes", sh.nodes},
                     {"ppn", sh.ppn},
                     {"shape_from", sh.from},
                     {"device_buffers", r.device_buffers},
                     {"engine", pt2pt ? "packet" : opt.engine}};
    if (!pt2pt) run_info["algorithm"] = algorithm;
    if (r.kind == OsuKind::bandwidth) {
      run_info["pairs"] = pairs;
      run_info["window"] = r.window_size.value_or(64);
    }
    info.push_back(run_info);
    if (r.device_buffers)
      notes.push_back(where(r) + ": GPU buffers (" + r.buffers +
                      "): simulated as host memory (no GPU copy or GPUDirect cost)");
    for (std::size_t i = 0; i < measured.size(); ++i) {
      const auto& m = *measured[i];
      const auto& p = pred[i];
      json row = {{"file", log}, {"benchmark", r.benchmark}, {"line", m.line}, {"size_bytes", m.size_bytes}};
      double meas_us = 0;
      if (r.kind == OsuKind::bandwidth) {
        const double mbps = *m.bandwidth_mbps;
        meas_us = static_cast<double>(std::max<std::uint64_t>(1, m.size_bytes)) / mbps;
        row["measured_mbps"] = mbps;
        row["predicted_mbps"] = round_to(p.mbps, 2);
      } else {
        meas_us = *m.latency_us;
      }
      const double err = (p.p50_us - meas_us) / meas_us * 100.0;
      errors.push_back(std::abs(err));
      row["measured_us"] = round_to(meas_us, 4);
      row["predicted_p50_us"] = round_to(p.p50_us, 4);
      row["predicted_p99_us"] = round_to(p.p99_us, 4);
      row["predicted_n"] = p.n;
      if (const auto u = unsupported_percentiles(p.n); !u.empty()) row["predicted_unsupported"] = u;
      row["error_pct"] = round_to(err, 2);
      rows.push_back(row);
    }
  }
  if (errors.empty()) {
    std::string why = log + ": no table to compare";
    for (const auto& n : notes) why += "; " + n.get<std::string>();
    throw InputError(why);
  }
  // Latency and AllReduce runs use seed 1; the bandwidth runs of a size use seeds 1..repeats.
  auto manifest = validate_manifest("validate osu", {log}, opt.engine, opt.fabric, opt.profile, opt.sets, 1);
  manifest["bandwidth_seeds"] = "1.." + std::to_string(opt.repeats);
  manifest["samples_per_size"] = opt.samples;
  manifest["bandwidth_runs_per_size"] = opt.repeats;
  manifest["iterations"] = opt.iters;
  manifest["rate"] = opt.rate.empty() ? nlohmann::json(nullptr) : nlohmann::json(opt.rate);
  manifest["max_bytes"] = opt.max_bytes;
  manifest["tests"] = opt.tests;
  // Nodes and ranks per node in effect (runs[].shape_from says where each run's came from).
  manifest["nodes"] = value_in_effect(info, "nodes");
  manifest["ppn"] = value_in_effect(info, "ppn");
  manifest["shape_from"] = opt.nodes ? "--nodes/--ppn" : "the launcher lines";
  manifest["algorithm"] = opt.algorithm;
  return {{"manifest", manifest},
          {"rows", rows},
          {"runs", info},
          {"notes", notes},
          {"summary", error_summary(errors)}};
}

std::string validate_osu_table(const json& v) {
  std::ostringstream s;
  char line[320];
  std::snprintf(line, sizeof line, "%-20s %12s %14s %14s %14s %9s\n", "benchmark", "size (B)", "measured us",
                "predicted p50", "predicted p99", "error %");
  s << line;
  bool starred = false; // a p99 from fewer samples than it needs (100), as `run` marks it
  for (const auto& r : v.at("rows")) {
    char p99[32];
    const bool star = r.value("predicted_n", std::size_t{0}) < samples_needed(0.99);
    starred = starred || star;
    std::snprintf(p99, sizeof p99, star ? "%13.3f*" : "%14.3f", r.at("predicted_p99_us").get<double>());
    std::snprintf(line, sizeof line, "%-20s %12llu %14.3f %14.3f %s %9.2f\n",
                  r.at("benchmark").get<std::string>().c_str(),
                  static_cast<unsigned long long>(r.at("size_bytes").get<std::uint64_t>()),
                  r.at("measured_us").get<double>(), r.at("predicted_p50_us").get<double>(), p99,
                  r.at("error_pct").get<double>());
    s << line;
  }
  const auto& sm = v.at("summary");
  std::snprintf(line, sizeof line, "median |error| %.2f %%, max |error| %.2f %% over %zu sizes\n",
                sm.at("median_abs_error_pct").get<double>(), sm.at("max_abs_error_pct").get<double>(),
                static_cast<std::size_t>(sm.at("rows").get<std::size_t>()));
  s << line;
  if (starred)
    s << "* from fewer samples than the percentile needs (p99: 100): the largest sample or near it "
         "(predicted_n and predicted_unsupported in the JSON; more with --samples / --repeats / -n)\n";
  for (const auto& n : v.at("notes")) s << "note: " << n.get<std::string>() << "\n";
  return s.str();
}

} // namespace ibn::analysis
