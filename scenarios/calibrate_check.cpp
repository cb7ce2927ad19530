#include "scenarios/calibrate_check.hpp"

#include "calibration/perftest_parser.hpp"
#include "scenarios/perftest.hpp"
#include "sim/error.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

namespace ibn::scen {
namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

double pct(double sim, double meas) {
  return meas != 0 ? (sim - meas) / meas * 100.0 : 0.0;
}

/// A bw row's measured average bandwidth, Gb/s. perftest prints BW average and MsgRate from one time
/// (BW average = size x MsgRate, in every fixture to the printed digits): the column printed with more
/// significant digits is taken. A 4-byte --report_gbits row prints 0.15 Gb/s (+-3 %) beside 4.588128 Mpps;
/// a large one 3636.20 MB/sec beside 0.058179 Mpps.
std::optional<double> measured_bw_gbps(const calib::PerftestRow& r, const std::string& unit) {
  if (!r.bw_avg_gbps || !(*r.bw_avg_gbps > 0)) return std::nullopt;
  const double bw = *r.bw_avg_gbps;
  if (!r.msg_rate_mpps || !(*r.msg_rate_mpps > 0)) return bw;
  const bool gbits = unit == "Gb/sec";
  const double printed = gbits ? bw : bw / calib::perftest_mbps_to_gbps(1.0);
  // Half the last printed digit: 2 decimals, 6 for --report_gbits values below 0.1 (perftest's format).
  const double bw_res = (gbits && printed < 0.1 ? 5e-7 : 5e-3) / printed;
  const double mr_res = 5e-7 / *r.msg_rate_mpps;
  return mr_res < bw_res ? *r.msg_rate_mpps * 8e-3 * static_cast<double>(r.size_bytes) : bw;
}

} // namespace

bool is_bw_target_row(const CheckRow& r) {
  return r.metric == "bw_avg_gbps" && r.size_bytes >= 65536;
}
bool is_lat_target_row(const CheckRow& r) {
  return r.metric == "t_typical_us" && r.size_bytes <= 4096;
}

ErrorStats error_stats(const std::vector<CheckRow>& rows, bool (*pick)(const CheckRow&)) {
  std::vector<double> e;
  for (const auto& r : rows)
    if (pick(r)) e.push_back(std::abs(r.error_pct));
  ErrorStats s;
  s.rows = e.size();
  if (e.empty()) return s;
  std::sort(e.begin(), e.end());
  const std::size_t n = e.size();
  s.median_abs_error_pct = n % 2 ? e[n / 2] : (e[n / 2 - 1] + e[n / 2]) / 2;
  s.max_abs_error_pct = e.back();
  return s;
}

CheckReport calibrate_check(const calib::Profile& profile, const std::vector<CheckSource>& sources,
                            const CheckOptions& opt) {
  if (sources.empty()) throw InputError("calibrate check: no perftest files given");
  if (opt.max_iterations < kPerftestMinIterations)
    throw InputError("calibrate check: --iters must be at least " + std::to_string(kPerftestMinIterations));
  CheckReport rep;
  auto shared = std::make_shared<const calib::Profile>(profile);
  const topo::LinkSpeed speed = profile.engine_link_speed();
  const double cable_m = std::max(0.01, (profile.hops + 1) * profile.cable_m);
  std::map<std::uint32_t, PerftestPath> paths; // by MTU
  auto path_for = [&](std::uint32_t mtu) -> const PerftestPath& {
    auto it = paths.find(mtu);
    if (it != paths.end()) return it->second;
    pkt::PacketConfig cfg;
    calib::apply(profile, cfg);
    cfg.mtu_bytes = mtu;
    PerftestPath p = back_to_back_path(speed, cable_m, cfg);
    p.config.switch_latency = Time::ps(profile.switch_latency.count_ps() * profile.hops);
    p.config.validate();
    return paths.emplace(mtu, std::move(p)).first->second;
  };
  rep.path = speed.to_string() + " link, " + fmt("%g", cable_m) + " m of cable, " +
             std::to_string(profile.hops) + " switch hop(s) of " + fmt("%g", profile.switch_latency.to_ns()) +
             " ns";

  for (const auto& src : sources) {
    std::istringstream in(src.content);
    const auto runs = calib::parse_perftest(in, src.file);
    for (const auto& run : runs) {
      for (const auto& w : run.warnings) rep.warnings.push_back(w);
      if (run.rows.empty()) continue;
      const std::uint32_t mtu =
          run.mtu_bytes ? static_cast<std::uint32_t>(*run.mtu_bytes) : profile.mtu_bytes;
      if (mtu != profile.mtu_bytes)
        rep.warnings.push_back(src.file + ":" + std::to_string(run.first_line) + ": MTU " +
                               std::to_string(mtu) + " differs from the profile's " +
                               std::to_string(profile.mtu_bytes) + "; simulated with the file's MTU");
      const PerftestPath& path = path_for(mtu);
      PerftestSpec spec;
      spec.tool = run.tool;
      spec.src = path.src;
      spec.dst = path.dst;
      spec.seed = opt.seed;
      spec.profile = shared;
      spec.max_bytes_per_size = opt.max_bytes_per_size;
      const bool lat = run.is_latency();
      spec.qps = lat ? 1 : static_cast<std::uint32_t>(std::max(1, run.num_qps.value_or(1)));
      spec.tx_depth = lat ? 1 : static_cast<std::uint32_t>(std::max(1, run.tx_depth.value_or(128)));
      spec.bidirectional = !lat && run.bidirectional;
      // Measured values per size (mean over repeated rows), in file order.
      std::vector<std::uint64_t> sizes;
      std::map<std::uint64_t, std::vector<const calib::PerftestRow*>> by_size;
      std::uint64_t iters = 0;
      for (const auto& row : run.rows) {
        if (row.size_bytes == 0) continue;
        if (!by_size.count(row.size_bytes)) sizes.push_back(row.size_bytes);
        by_size[row.size_bytes].push_back(&row);
        iters = std::max(iters, row.iterations / (lat ? 1 : spec.qps));
      }
      if (sizes.empty()) continue;
      spec.sizes = sizes;
      spec.iterations = std::clamp<std::uint64_t>(iters, kPerftestMinIterations, opt.max_iterations);
      const auto sim = run_perftest(path.fabric, path.tables, path.config, spec);
      for (std::size_t k = 0; k < sizes.size(); ++k) {
        const auto& meas = by_size[sizes[k]];
        const auto& s = sim[k];
        auto add = [&](const char* metric, double measured, double simulated) {
          CheckRow r;
          r.file = src.file;
          r.test = calib::to_string(run.tool);
          r.role = calib::to_string(run.role);
          r.metric = metric;
          r.size_bytes = sizes[k];
          r.measured = measured;
          r.simulated = simulated;
          r.error_pct = pct(simulated, measured);
          r.iterations = s.iterations_per_qp;
          rep.rows.push_back(r);
        };
        auto mean = [&](auto field) -> std::optional<double> {
          double sum = 0;
          int n = 0;
          for (const auto* row : meas)
            if (auto v = field(*row); v && *v > 0) sum += *v, ++n;
          return n ? std::optional<double>(sum / n) : std::nullopt;
        };
        if (lat) {
          if (auto v = mean([](const calib::PerftestRow& r) { return r.t_typical_us; }))
            add("t_typical_us", *v, s.t_typical_us);
          if (auto v = mean([](const calib::PerftestRow& r) { return r.p99_us; }))
            add("p99_us", *v, s.p99_us);
          if (auto v = mean([](const calib::PerftestRow& r) { return r.p999_us; }))
            add("p999_us", *v, s.p999_us);
        } else if (auto v =
                       mean([&](const calib::PerftestRow& r) { return measured_bw_gbps(r, run.bw_unit); })) {
          add("bw_avg_gbps", *v, s.bw_avg_gbps);
        }
      }
    }
  }
  rep.summary = error_stats(
      rep.rows, [](const CheckRow& r) { return r.metric == "bw_avg_gbps" || r.metric == "t_typical_us"; });
  rep.targets.push_back({"bw_ge_64KiB", 3.0, error_stats(rep.rows, is_bw_target_row)});
  rep.targets.push_back({"lat_le_4KiB", 5.0, error_stats(rep.rows, is_lat_target_row)});
  return rep;
}

namespace {
/// A median or maximum over `stats`' rows; null when there are none (0.0 read as a perfect match).
nlohmann::json stat_or_null(const ErrorStats& stats, double v) {
  return stats.rows ? nlohmann::json(v) : nlohmann::json(nullptr);
}
} // namespace

nlohmann::json to_json(const CheckReport& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& x : r.rows)
    rows.push_back({{"file", x.file},
                    {"test", x.test},
                    {"role", x.role},
                    {"metric", x.metric},
                    {"size_bytes", x.size_bytes},
                    {"measured", x.measured},
                    {"simulated", x.simulated},
                    {"error_pct", x.error_pct},
                    {"iterations", x.iterations}});
  nlohmann::json targets = nlohmann::json::object();
  for (const auto& t : r.targets)
    targets[t.name] = {{"rows", t.stats.rows},
                       {"median_abs_error_pct", stat_or_null(t.stats, t.stats.median_abs_error_pct)},
                       {"max_abs_error_pct", stat_or_null(t.stats, t.stats.max_abs_error_pct)},
                       {"target_median_abs_error_pct", t.target_pct},
                       {"met", t.met()}};
  return {{"rows", rows},
          {"summary",
           {{"rows", r.summary.rows},
            {"median_abs_error_pct", stat_or_null(r.summary, r.summary.median_abs_error_pct)},
            {"max_abs_error_pct", stat_or_null(r.summary, r.summary.max_abs_error_pct)},
            {"targets", targets}}},
          {"path", r.path},
          {"warnings", r.warnings}};
}

std::string to_text(const CheckReport& r) {
  std::ostringstream o;
  o << "Simulated path: " << r.path << "\n";
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-12s %-7s %-13s %10s %12s %12s %9s\n", "test", "role", "metric", "size_B",
                "measured", "simulated", "error_%");
  std::string last_file;
  for (const auto& x : r.rows) {
    if (x.file != last_file) {
      o << "\n" << x.file << "\n" << buf;
      last_file = x.file;
    }
    char line[256];
    std::snprintf(line, sizeof line, "%-12s %-7s %-13s %10llu %12.4g %12.4g %+9.2f\n", x.test.c_str(),
                  x.role.c_str(), x.metric.c_str(), static_cast<unsigned long long>(x.size_bytes), x.measured,
                  x.simulated, x.error_pct);
    o << line;
  }
  std::snprintf(
      buf, sizeof buf,
      "\nsummary (bw average and t_typical, all sizes): %zu rows, median |error| %.2f %%, max %.2f %%\n",
      r.summary.rows, r.summary.median_abs_error_pct, r.summary.max_abs_error_pct);
  o << buf;
  for (const auto& t : r.targets) {
    if (t.stats.rows == 0) {
      o << "target " << t.name << ": no rows\n";
      continue;
    }
    std::snprintf(buf, sizeof buf,
                  "target %s: %zu rows, median |error| %.2f %% (target <= %.0f %%: %s), max %.2f %%\n",
                  t.name.c_str(), t.stats.rows, t.stats.median_abs_error_pct, t.target_pct,
                  t.met() ? "met" : "NOT met", t.stats.max_abs_error_pct);
    o << buf;
  }
  for (const auto& w : r.warnings) o << "warning: " << w << "\n";
  return o.str();
}

} // namespace ibn::scen
