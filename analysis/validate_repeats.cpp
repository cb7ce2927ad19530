#include "analysis/validate_repeats.hpp"

#include "analysis/nccl_cost_fit.hpp"
#include "analysis/nccl_tests.hpp"
#include "calibration/nccl_tests_parser.hpp"
#include "calibration/osu_parser.hpp"
#include "sim/atomic_file.hpp"
#include "sim/child_processes.hpp"
#include "sim/error.hpp"
#include "sim/rng.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

namespace ibn::analysis {

namespace {

struct ParsedRepeat {
  calib::RepeatRun run;
  std::optional<calib::NcclTestsRun> nccl; ///< the nccl-tests table (empty for OSU)
  std::vector<std::string> warnings;       ///< what the parser noticed (a cut table, a split row)
};

ParsedRepeat read_one(const std::string& f) {
  ParsedRepeat out;
  out.run.file = f;
  std::string nccl_error;
  try {
    auto runs = calib::parse_nccl_tests_file(f);
    if (runs.size() != 1)
      throw InputError(f + ": " + std::to_string(runs.size()) +
                       " nccl-tests result tables; a repeat is one test per file");
    const auto& r = runs[0];
    const int nodes = r.nnodes.value_or(1);
    const int ranks = r.nranks.value_or(r.config.ngpus.value_or(1) * nodes);
    out.run.config = std::string("nccl-tests ") + calib::to_string(r.collective) + ", " +
                     std::to_string(nodes) + " node(s) x " + std::to_string(ranks / std::max(1, nodes)) +
                     " ranks, " + (r.rows.empty() ? std::string("?") : r.rows.front().type);
    out.run.iters = static_cast<std::uint32_t>(r.config.iters.value_or(20)); // nccl-tests' default -n 20
    // The "0 0" rows (sizes that round to nothing: NCCL returns at once) are no measurement of the
    // collective; validate nccl-tests skips them too.
    for (const auto& row : r.rows)
      if (row.size_bytes > 0 && row.oop.time_us > 0)
        out.run.rows.push_back({row.size_bytes, row.oop.time_us, row.ip ? row.ip->time_us : 0.0});
    out.nccl = r;
    out.warnings = r.warnings;
  } catch (const InputError& e) {
    if (std::string(e.what()).find("result tables; a repeat") != std::string::npos) throw;
    nccl_error = e.what();
  }
  if (!out.nccl) {
    std::vector<calib::OsuRun> runs;
    try {
      runs = calib::parse_osu_file(f);
    } catch (const InputError& e) {
      throw InputError(f + ": neither an nccl-tests output (" + nccl_error + ") nor an OSU/IMB output (" +
                       e.what() + ")");
    }
    if (runs.size() != 1)
      throw InputError(f + ": " + std::to_string(runs.size()) +
                       " OSU/IMB tables; a repeat is one test per file");
    const auto& r = runs[0];
    const int procs = r.processes.value_or(r.launcher && r.launcher->processes ? *r.launcher->processes : 2);
    out.run.config = r.benchmark + ", " + std::to_string(procs) + " processes, " +
                     (r.buffers.empty() ? std::string("host") : r.buffers);
    out.run.iters = 1000; // OSU's default for small messages when the table does not say
    for (const auto& row : r.rows) {
      if (!row.latency_us || !(*row.latency_us > 0)) continue;
      if (row.iterations) out.run.iters = static_cast<std::uint32_t>(*row.iterations);
      out.run.rows.push_back({row.size_bytes, *row.latency_us, 0.0});
    }
  }
  if (out.run.rows.empty())
    throw InputError(f + ": no row with a measured time" +
                     (out.nccl
                          ? std::string()
                          : std::string(" (an OSU bandwidth or message-rate table has none: repeats read "
                                        "latency tables, osu_latency, osu_multi_lat, osu_allreduce, IMB)")));
  return out;
}

double nearest_rank(const std::vector<double>& sorted, double q) {
  const auto n = sorted.size();
  auto k = static_cast<std::size_t>(std::ceil(q * static_cast<double>(n)));
  k = std::clamp<std::size_t>(k, 1, n);
  return sorted[k - 1];
}

double round4(double x) {
  return std::round(x * 1e4) / 1e4;
}

/// A private folder under the system's temporary directory, made on first use and removed with its files.
class TempDir {
 public:
  TempDir() = default;
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    if (dir_.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  const std::string& path() {
    if (dir_.empty()) {
      std::string tmpl = (std::filesystem::temp_directory_path() / "ibnetsim-repeats-XXXXXX").string();
      if (mkdtemp(tmpl.data()) == nullptr)
        throw InputError("validate repeats: cannot make a temporary folder under " +
                         std::filesystem::temp_directory_path().string());
      dir_ = tmpl;
    }
    return dir_;
  }

 private:
  std::string dir_;
};

/// Each run once: the same file twice (by path), or a run whose parsed table equals another's (a copy, with
/// CRLF line ends or an edit outside the table), would be a run compared with itself.
void refuse_duplicate_runs(const std::vector<calib::RepeatRun>& runs) {
  for (std::size_t i = 0; i < runs.size(); ++i)
    for (std::size_t k = 0; k < i; ++k) {
      const auto& a = runs[i].rows;
      const auto& b = runs[k].rows;
      const bool same =
          a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](auto& x, auto& y) {
            return x.size_bytes == y.size_bytes && x.oop_us == y.oop_us && x.ip_us == y.ip_us;
          });
      if (same)
        throw InputError(runs[i].file + ": its table reads the same as " + runs[k].file + "'s (" +
                         std::to_string(a.size()) +
                         " rows, every time equal): a copy of one run is not a repeat; each run once");
    }
}

} // namespace

std::vector<calib::RepeatRun> read_repeat_runs(const std::vector<std::string>& files) {
  refuse_same_file_twice(files, "each run once");
  std::vector<calib::RepeatRun> out;
  for (const auto& f : files) out.push_back(read_one(f).run);
  refuse_duplicate_runs(out);
  return out;
}

calib::VariabilityModel fit_repeats(const std::vector<std::string>& files,
                                    const calib::VariabilityFitOptions& opt) {
  if (files.size() < 2) throw InputError("--repeats: give at least two runs of the same test");
  const auto runs = read_repeat_runs(files);
  std::set<std::uint64_t> first;
  for (const auto& r : runs[0].rows) first.insert(r.size_bytes);
  for (std::size_t i = 1; i < runs.size(); ++i) {
    if (runs[i].config != runs[0].config)
      throw InputError(runs[i].file + ": not a repeat of " + runs[0].file + ": it measured " +
                       runs[i].config + ", the first " + runs[0].config);
    bool common = false;
    for (const auto& r : runs[i].rows) common = common || first.count(r.size_bytes);
    if (!common) throw InputError(runs[i].file + ": no message size in common with " + runs[0].file);
  }
  return calib::fit_variability(runs, opt);
}

nlohmann::json validate_repeats(const std::vector<std::string>& files, const RepeatsOptions& opt) {
  if (files.size() < 3)
    throw InputError(
        "validate repeats --leave-one-out: give at least three runs (each held back in turn, the "
        "model is fitted on the others, and fitting needs two runs of one configuration)");
  refuse_same_file_twice(files, "each run once");
  std::vector<ParsedRepeat> all;
  std::vector<calib::RepeatRun> parsed;
  for (const auto& f : files) {
    all.push_back(read_one(f));
    if (!all.back().nccl)
      throw InputError(f + ": an OSU/IMB output; validate repeats simulates nccl-tests logs only "
                           "(calibrate fit --repeats reads OSU outputs)");
    parsed.push_back(all.back().run);
  }
  refuse_duplicate_runs(parsed);
  // Each configuration's settings (--fabric-for, --nics-for, --set-for), from the runs they name.
  std::map<std::string, ConfigSettings> settings;   // config -> settings
  std::map<std::string, std::string> settings_from; // config -> the LOG that gave them
  for (const auto& [name, cs] : opt.per_log) {
    std::vector<std::size_t> hits;
    for (std::size_t k = 0; k < all.size(); ++k) {
      const auto& f = all[k].run.file;
      if (f == name || std::filesystem::path(f).filename().string() == name) hits.push_back(k);
    }
    if (hits.empty())
      throw InputError("--fabric-for/--nics-for/--set-for " + name + ": not one of the input logs");
    if (hits.size() > 1)
      throw InputError("--fabric-for/--nics-for/--set-for " + name + ": names " +
                       std::to_string(hits.size()) + " input logs; give the path");
    const auto& config = all[hits[0]].run.config;
    if (auto it = settings_from.find(config); it != settings_from.end())
      throw InputError("--fabric-for/--nics-for/--set-for: " + name + " and " + it->second +
                       " are runs of one configuration (" + config + "); give its settings once");
    settings[config] = cs;
    settings_from[config] = name;
  }
  // Base simulation per configuration (or, with fit_costs, per held-back run), per size (no variability): the
  // out-of-place time and the launch latency (NCCL's base) it charged, us.
  struct Base {
    double time_us = 0, launch_us = 0;
  };
  std::map<std::string, std::map<std::uint64_t, Base>> base; // config or file -> size -> base
  std::map<std::string, nlohmann::json> fits;                // file -> fitted costs (fit_costs)
  std::map<std::string, std::string> unfitted;               // file -> why its costs could not be fitted
  TempDir tmp;
  for (std::size_t h = 0; h < all.size(); ++h) {
    const auto& p = all[h];
    const std::string key = opt.fit_costs ? p.run.file : p.run.config;
    if (base.count(key)) continue;
    std::set<std::uint64_t> sizes;
    for (const auto& q : all)
      if (q.run.config == p.run.config)
        for (const auto& r : q.run.rows)
          if (r.size_bytes <= opt.max_bytes && r.size_bytes > 0) sizes.insert(r.size_bytes);
    if (sizes.empty()) throw InputError(p.run.file + ": no size at or below --max-bytes to compare");
    const ConfigSettings& cs = settings[p.run.config];
    ValidateOptions sim = opt.sim;
    if (!cs.fabric.empty()) sim.fabric = cs.fabric;
    if (cs.nics_per_node) sim.nics_per_node = cs.nics_per_node;
    std::vector<std::string> sets = cs.sets;
    sets.insert(sets.end(), opt.sim.sets.begin(), opt.sim.sets.end());
    if (opt.fit_costs) {
      std::vector<std::string> twins;
      for (std::size_t k = 0; k < all.size(); ++k)
        if (k != h && all[k].run.config == p.run.config) twins.push_back(all[k].run.file);
      if (twins.empty()) {
        unfitted[p.run.file] = "--fit-costs: no other run of its configuration to fit NCCL's costs on";
        continue;
      }
      NcclFitOptions nf;
      nf.max_bytes = opt.fit_max_bytes;
      nf.engine = sim.engine;
      nf.fabric = sim.fabric;
      nf.nics_per_node = sim.nics_per_node;
      nf.sets = sets;
      std::vector<std::string> warnings;
      calib::NcclCostFit fit;
      try {
        fit = fit_nccl_cost_section(twins, nf, warnings);
      } catch (const InputError& e) {
        unfitted[p.run.file] = std::string("--fit-costs: ") + e.what();
        continue;
      }
      calib::Profile prof;
      if (!opt.sim.profile.empty()) {
        prof = calib::Profile::load(opt.sim.profile);
      } else {
        prof.generator = "ibnetsim validate repeats --fit-costs";
        prof.link_rate_source = "unknown";
        prof.warnings.push_back("no perftest input: the device settings are the engine defaults");
      }
      prof.nccl = fit;
      sim.profile = tmp.path() + "/profile-" + std::to_string(h) + ".json";
      write_file_atomic(sim.profile,
                        prof.to_json().dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
      fits[p.run.file] = {{"fitted_on", twins},
                          {"protocol", fit.protocol},
                          {"base_us", round4(fit.base.value)},
                          {"base_fixed", fit.base_fixed},
                          {"net_step_us", round4(fit.net_step.value)},
                          {"rows", fit.base.points},
                          {"warnings", warnings}};
    }
    NcclTestsOptions o = nccl_tests_options_for(*p.nccl, p.run.file, sim);
    std::string list;
    for (const auto s : sizes) list += (list.empty() ? "" : ",") + std::to_string(s);
    o.sets = nccl_log_sets(*p.nccl, o.nodes);
    o.sets.insert(o.sets.end(), sets.begin(), sets.end());
    o.sets.push_back("jobs[0].workload.sizes=" + list);
    o.min_bytes = *sizes.begin();
    o.max_bytes = *sizes.rbegin();
    auto run = [&] {
      nlohmann::json a = nlohmann::json::array();
      for (const auto& r : run_nccl_tests(o).rows) a.push_back({r.size_bytes, r.oop_time_us, r.launch_us});
      return a.dump();
    };
    const auto j = nlohmann::json::parse(o.engine == "flow" ? run_in_child_process(run) : run());
    auto& m = base[key];
    for (const auto& e : j) m[e.at(0).get<std::uint64_t>()] = {e.at(1).get<double>(), e.at(2).get<double>()};
  }

  nlohmann::json rows = nlohmann::json::array(), runs_out = nlohmann::json::array();
  std::size_t points = 0, inside = 0, rpoints = 0, rinside = 0;
  std::vector<double> ratio_errors, matched_errors;
  for (std::size_t h = 0; h < all.size(); ++h) {
    const auto& held = all[h].run;
    std::vector<calib::RepeatRun> others;
    for (std::size_t k = 0; k < all.size(); ++k)
      if (k != h) others.push_back(all[k].run);
    nlohmann::json info = {{"file", held.file}, {"config", held.config}, {"iters", held.iters}};
    if (auto it = settings_from.find(held.config); it != settings_from.end()) {
      const auto& cs = settings.at(held.config);
      info["settings"] = {
          {"from", it->second}, {"fabric", cs.fabric}, {"nics_per_node", cs.nics_per_node}, {"set", cs.sets}};
    }
    if (auto it = unfitted.find(held.file); it != unfitted.end()) {
      info["error"] = it->second;
      runs_out.push_back(info);
      continue;
    }
    if (auto it = fits.find(held.file); it != fits.end()) info["nccl_fit"] = it->second;
    calib::VariabilityModel model;
    try {
      model = calib::fit_variability(others, opt.fit);
    } catch (const InputError& e) {
      info["error"] = std::string("not fitted: ") + e.what();
      runs_out.push_back(info);
      continue;
    }
    std::size_t hp = 0, hi = 0, hrp = 0, hri = 0;
    std::vector<double> herr, hmerr;
    for (const auto& r : held.rows) {
      const auto& bm = base[opt.fit_costs ? held.file : held.config];
      const auto it = bm.find(r.size_bytes);
      if (it == bm.end() || !(it->second.time_us > 0)) continue;
      // Measured spread of the configuration at this size: every run, both columns.
      std::vector<double> meas;
      std::vector<double> other_same;
      for (std::size_t k = 0; k < all.size(); ++k) {
        if (all[k].run.config != held.config) continue;
        for (const auto& q : all[k].run.rows)
          if (q.size_bytes == r.size_bytes) {
            meas.push_back(q.oop_us);
            if (q.ip_us > 0) meas.push_back(q.ip_us);
            if (k != h) other_same.push_back(q.ip_us > 0 ? std::min(q.oop_us, q.ip_us) : q.oop_us);
          }
      }
      std::sort(meas.begin(), meas.end());
      // Monte Carlo of one run's printed time.
      Rng rng = Rng::for_stream(1, "repeats/" + std::to_string(h) + "/" + std::to_string(r.size_bytes));
      const double sigma = model.state_sigma(r.size_bytes);
      const std::uint32_t n = std::max<std::uint32_t>(1, held.iters);
      std::vector<double> unit(opt.draws); // per-run time divided by the centre, minus the launch part
      std::vector<double> launch(opt.draws);
      std::vector<double> t(opt.draws);
      for (std::uint32_t d = 0; d < opt.draws; ++d) {
        const double z = calib::standard_normal(rng);
        double l = 0;
        if (!model.launch.zero())
          for (std::uint32_t i = 0; i < n; ++i) l += model.launch.draw(rng);
        unit[d] = std::exp(sigma * z);
        launch[d] = l / n;
      }
      // NCCL's base latency (in the simulated centre) already holds the typical launch jitter: as the engine
      // does with a variability model (CollectiveSpec::launch_credit), the base is credited with it, never
      // below zero.
      const double credit = std::min(model.launch.typical(), it->second.launch_us);
      auto quantiles = [&](double centre) {
        for (std::uint32_t d = 0; d < opt.draws; ++d) t[d] = (centre - credit + launch[d]) * unit[d];
        std::sort(t.begin(), t.end());
        const double qm = static_cast<double>(meas.size()) / static_cast<double>(meas.size() + 1);
        return std::array<double, 4>{nearest_rank(t, 0.01), nearest_rank(t, 0.5), nearest_rank(t, 0.99),
                                     nearest_rank(t, qm)};
      };
      const auto q = quantiles(it->second.time_us);
      auto in = [](double x, const std::array<double, 4>& qq) { return x >= qq[0] && x <= qq[2]; };
      const bool in_oop = in(r.oop_us, q), in_ip = r.ip_us > 0 && in(r.ip_us, q);
      const std::size_t np = r.ip_us > 0 ? 2 : 1;
      hp += np, hi += in_oop + in_ip;
      const double pred_ratio = q[1] > 0 ? q[2] / q[1] : 0.0;
      const double meas_ratio = nearest_rank(meas, 0.99) / nearest_rank(meas, 0.5);
      const double err = (pred_ratio / meas_ratio - 1) * 100;
      herr.push_back(std::abs(err));
      // The measured "p99" of n values is their maximum, which sits near the n/(n+1) quantile: the predicted
      // ratio at that quantile is the like-for-like comparison.
      const double matched = q[1] > 0 ? q[3] / q[1] : 0.0;
      const double merr = (matched / (nearest_rank(meas, 1.0) / nearest_rank(meas, 0.5)) - 1) * 100;
      hmerr.push_back(std::abs(merr));
      nlohmann::json row = {
          {"held_back", held.file},
          {"size_bytes", r.size_bytes},
          {"measured_oop_us", r.oop_us},
          {"measured_ip_us", r.ip_us > 0 ? nlohmann::json(r.ip_us) : nlohmann::json(nullptr)},
          {"simulated_us", round4(it->second.time_us)},
          {"launch_credit_us", round4(credit)},
          {"sigma", round4(sigma)},
          {"p1_us", round4(q[0])},
          {"p50_us", round4(q[1])},
          {"p99_us", round4(q[2])},
          {"inside", in_oop && (r.ip_us <= 0 || in_ip)},
          {"inside_points", in_oop + in_ip},
          {"points", np},
          {"predicted_p99_over_p50", round4(pred_ratio)},
          {"measured_p99_over_p50", round4(meas_ratio)},
          {"measured_n", meas.size()},
          {"ratio_error_pct", std::round(err * 100) / 100},
          {"predicted_matched_ratio", round4(matched)},
          {"matched_quantile", round4(static_cast<double>(meas.size()) / (meas.size() + 1.0))},
          {"matched_ratio_error_pct", std::round(merr * 100) / 100}};
      if (!other_same.empty()) {
        std::sort(other_same.begin(), other_same.end());
        const double med =
            other_same.size() % 2
                ? other_same[other_same.size() / 2]
                : 0.5 * (other_same[other_same.size() / 2 - 1] + other_same[other_same.size() / 2]);
        // The predicted distribution's shape, scaled so that its median sits at the other runs' median.
        auto rq = q;
        for (auto& x : rq) x *= med / q[1];
        const bool ro = in(r.oop_us, rq), ri = r.ip_us > 0 && in(r.ip_us, rq);
        hrp += np, hri += ro + ri;
        row["recentred"] = {{"centre_us", round4(med)},
                            {"p1_us", round4(rq[0])},
                            {"p99_us", round4(rq[2])},
                            {"inside_points", ro + ri}};
      }
      rows.push_back(row);
    }
    points += hp, inside += hi, rpoints += hrp, rinside += hri;
    ratio_errors.insert(ratio_errors.end(), herr.begin(), herr.end());
    matched_errors.insert(matched_errors.end(), hmerr.begin(), hmerr.end());
    if (!hmerr.empty()) info["matched_ratio_error"] = error_summary(hmerr);
    info["points"] = hp;
    info["coverage_pct"] =
        hp ? std::round(1000.0 * static_cast<double>(hi) / static_cast<double>(hp)) / 10 : 0.0;
    if (hrp)
      info["recentred_coverage_pct"] =
          std::round(1000.0 * static_cast<double>(hri) / static_cast<double>(hrp)) / 10;
    if (!herr.empty()) {
      info["ratio_error"] = error_summary(herr);
      std::size_t within = 0;
      for (const double e : herr) within += e <= 30.0;
      info["ratio_within_30pct_pct"] =
          std::round(1000.0 * static_cast<double>(within) / static_cast<double>(herr.size())) / 10;
    }
    info["model"] = model.to_json();
    runs_out.push_back(info);
  }
  if (points == 0) {
    std::string why;
    for (const auto& r : runs_out)
      if (r.contains("error"))
        why += "\n  " + r.at("file").get<std::string>() + ": " + r.at("error").get<std::string>();
    throw InputError("validate repeats: no held-back run could be compared:" + why);
  }
  nlohmann::json summary = {
      {"points", points},
      {"fit_costs", opt.fit_costs},
      {"coverage_pct", std::round(1000.0 * static_cast<double>(inside) / static_cast<double>(points)) / 10},
      {"target_coverage_pct", 80},
      {"target_ratio_error_pct", 30}};
  if (rpoints)
    summary["recentred_coverage_pct"] =
        std::round(1000.0 * static_cast<double>(rinside) / static_cast<double>(rpoints)) / 10;
  if (!ratio_errors.empty()) {
    summary["ratio_error"] = error_summary(ratio_errors);
    std::size_t within = 0;
    for (const double e : ratio_errors) within += e <= 30.0;
    summary["ratio_within_30pct_pct"] =
        std::round(1000.0 * static_cast<double>(within) / static_cast<double>(ratio_errors.size())) / 10;
  }
  if (!matched_errors.empty()) {
    summary["matched_ratio_error"] = error_summary(matched_errors);
    std::size_t within = 0;
    for (const double e : matched_errors) within += e <= 30.0;
    summary["matched_ratio_within_30pct_pct"] =
        std::round(1000.0 * static_cast<double>(within) / static_cast<double>(matched_errors.size())) / 10;
  }
  nlohmann::json notes = nlohmann::json::array();
  for (const auto& p : all)
    for (const auto& w : p.warnings) notes.push_back(w);
  auto manifest = validate_manifest("validate repeats", files, opt.sim.engine, opt.sim.fabric,
                                    opt.sim.profile, opt.sim.sets);
  manifest["draws_per_size"] = opt.draws;
  manifest["monte_carlo_seed"] = 1;
  manifest["fit_costs"] = opt.fit_costs;
  manifest["iterations"] = opt.sim.iters;
  manifest["max_bytes"] = opt.max_bytes;
  return {{"manifest", manifest}, {"rows", rows}, {"runs", runs_out}, {"notes", notes}, {"summary", summary}};
}

std::string validate_repeats_table(const nlohmann::json& v) {
  std::ostringstream s;
  char line[400];
  std::snprintf(line, sizeof line, "%-12s %10s %10s %10s %10s %10s %10s %6s %8s %8s %8s\n", "size (B)",
                "oop us", "ip us", "sim us", "p1 us", "p50 us", "p99 us", "in", "pred r", "meas r",
                "r err %");
  std::string current;
  for (const auto& r : v.at("rows")) {
    const auto file = r.at("held_back").get<std::string>();
    if (file != current) {
      s << "held back: " << file << "\n" << line;
      current = file;
    }
    char buf[400], ip[32] = "-";
    if (!r.at("measured_ip_us").is_null())
      std::snprintf(ip, sizeof ip, "%.2f", r.at("measured_ip_us").get<double>());
    std::snprintf(buf, sizeof buf,
                  "%-12llu %10.2f %10s %10.2f %10.2f %10.2f %10.2f %4d/%d %8.3f %8.3f %8.1f\n",
                  static_cast<unsigned long long>(r.at("size_bytes").get<std::uint64_t>()),
                  r.at("measured_oop_us").get<double>(), ip, r.at("simulated_us").get<double>(),
                  r.at("p1_us").get<double>(), r.at("p50_us").get<double>(), r.at("p99_us").get<double>(),
                  r.at("inside_points").get<int>(), r.at("points").get<int>(),
                  r.at("predicted_p99_over_p50").get<double>(), r.at("measured_p99_over_p50").get<double>(),
                  r.at("ratio_error_pct").get<double>());
    s << buf;
  }
  for (const auto& r : v.at("runs")) {
    if (r.contains("error")) {
      s << r.at("file").get<std::string>() << ": " << r.at("error").get<std::string>() << "\n";
      continue;
    }
    char buf[400];
    std::snprintf(buf, sizeof buf, "%s: coverage %.1f %% of %zu points",
                  r.at("file").get<std::string>().c_str(), r.at("coverage_pct").get<double>(),
                  r.at("points").get<std::size_t>());
    s << buf;
    if (r.contains("recentred_coverage_pct"))
      s << " (" << r.at("recentred_coverage_pct").get<double>() << " % centred on the other runs)";
    if (r.contains("ratio_error"))
      s << ", |p99/p50 error| median " << r.at("ratio_error").at("median_abs_error_pct").get<double>()
        << " %, max " << r.at("ratio_error").at("max_abs_error_pct").get<double>() << " %";
    s << "\n";
  }
  for (const auto& n : v.value("notes", nlohmann::json::array()))
    s << "note: " << n.get<std::string>() << "\n";
  const auto& sm = v.at("summary");
  s << "overall: coverage " << sm.at("coverage_pct").get<double>() << " % of "
    << sm.at("points").get<std::size_t>() << " points (target >= 80 %)";
  if (sm.contains("recentred_coverage_pct"))
    s << ", " << sm.at("recentred_coverage_pct").get<double>() << " % centred on the other runs";
  if (sm.contains("ratio_within_30pct_pct"))
    s << "; p99/p50 within 30 %: " << sm.at("ratio_within_30pct_pct").get<double>() << " % of sizes";
  if (sm.contains("matched_ratio_within_30pct_pct"))
    s << " (at the quantile n/(n+1) the measured maximum estimates: "
      << sm.at("matched_ratio_within_30pct_pct").get<double>() << " %)";
  s << "\n";
  return s.str();
}

} // namespace ibn::analysis
