#include "calibration/fit.hpp"

#include "sim/error.hpp"
#include "sim/rng.hpp"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

namespace ibn::calib {
namespace {

constexpr double kRelNoiseFloor = 0.005; ///< relative residual treated as measurement noise (0.5 %)
constexpr double kInf = std::numeric_limits<double>::infinity();

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double cable_ns(double m) {
  return m * (m <= 5.0 ? 4.76 : 5.13);
}

std::string fmt_g(double x) {
  std::ostringstream o;
  o << x;
  return o.str();
}

} // namespace

LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& w) {
  LineFit f;
  f.n = x.size();
  if (x.empty()) return f;
  const auto n = static_cast<Eigen::Index>(x.size());
  Eigen::MatrixXd A(n, 2);
  Eigen::VectorXd b(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const double sw = std::sqrt(w[static_cast<std::size_t>(i)]);
    A(i, 0) = sw;
    A(i, 1) = sw * x[static_cast<std::size_t>(i)];
    b(i) = sw * y[static_cast<std::size_t>(i)];
  }
  const Eigen::Vector2d sol = A.colPivHouseholderQr().solve(b);
  f.a = sol(0);
  f.b = sol(1);
  if (!std::isfinite(f.a) || !std::isfinite(f.b)) { // all x equal: a constant
    double sw = 0, swy = 0;
    for (std::size_t i = 0; i < x.size(); ++i) sw += w[i], swy += w[i] * y[i];
    f.a = swy / sw;
    f.b = 0;
  }
  double mean = 0;
  for (double v : y) mean += v;
  mean /= static_cast<double>(y.size());
  double ss_tot = 0, ss_res = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double r = y[i] - (f.a + f.b * x[i]);
    f.sse += w[i] * r * r;
    ss_res += r * r;
    ss_tot += (y[i] - mean) * (y[i] - mean);
    f.max_abs_residual = std::max(f.max_abs_residual, std::abs(r));
  }
  f.r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : 1.0;
  return f;
}

std::vector<LatencySegment> fit_latency_segments(std::vector<SizePoint> points, int max_segments,
                                                 const SegmentHints& hints) {
  std::sort(points.begin(), points.end(), [](auto& a, auto& b) { return a.size < b.size; });
  std::vector<std::uint64_t> sizes; // distinct
  std::vector<std::size_t> first;   // index of the first point of each distinct size
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (!(points[i].value > 0)) throw InputError("latency fit: latency must be positive");
    if (sizes.empty() || sizes.back() != points[i].size) {
      sizes.push_back(points[i].size);
      first.push_back(i);
    }
  }
  first.push_back(points.size());
  const std::size_t m = sizes.size();
  if (m < 2) throw InputError("latency fit: needs latency measurements at two or more message sizes");
  max_segments = std::clamp(max_segments, 1, static_cast<int>(m / 2));

  auto fit_range = [&](std::size_t i, std::size_t j) { // distinct sizes [i, j)
    std::vector<double> x, y, w;
    for (std::size_t k = first[i]; k < first[j]; ++k) {
      x.push_back(static_cast<double>(points[k].size));
      y.push_back(points[k].value);
      w.push_back(1.0 / (points[k].value * points[k].value));
    }
    return fit_line(x, y, w);
  };
  std::vector<std::vector<double>> cost(m + 1, std::vector<double>(m + 1, kInf));
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = i + 2; j <= m; ++j) cost[i][j] = fit_range(i, j).sse;

  const auto K = static_cast<std::size_t>(max_segments);
  // best[k][j]: k segments over distinct sizes [0, j); from[k][j]: start of the last segment.
  std::vector<std::vector<double>> best(K + 1, std::vector<double>(m + 1, kInf));
  std::vector<std::vector<std::size_t>> from(K + 1, std::vector<std::size_t>(m + 1, 0));
  for (std::size_t j = 2; j <= m; ++j) best[1][j] = cost[0][j];
  for (std::size_t k = 2; k <= K; ++k)
    for (std::size_t j = 2 * k; j <= m; ++j)
      for (std::size_t i = 2 * (k - 1); i + 2 <= j; ++i)
        if (best[k - 1][i] + cost[i][j] < best[k][j]) {
          best[k][j] = best[k - 1][i] + cost[i][j];
          from[k][j] = i;
        }
  const double n = static_cast<double>(points.size());
  std::size_t chosen = 1;
  double best_bic = kInf;
  for (std::size_t k = 1; k <= K; ++k) {
    if (!std::isfinite(best[k][m])) continue;
    const double msr = std::max(best[k][m] / n, kRelNoiseFloor * kRelNoiseFloor);
    const double bic = n * std::log(msr) + static_cast<double>(3 * k - 1) * std::log(n);
    if (bic < best_bic - 1e-9) {
      best_bic = bic;
      chosen = k;
    }
  }
  std::vector<std::size_t> starts;
  for (std::size_t k = chosen, j = m; k >= 1; --k) {
    const std::size_t i = k == 1 ? 0 : from[k][j];
    starts.push_back(i);
    j = i;
  }
  std::reverse(starts.begin(), starts.end());
  starts.push_back(m);

  std::vector<LatencySegment> out;
  for (std::size_t s = 0; s + 1 < starts.size(); ++s) {
    const std::size_t i = starts[s], j = starts[s + 1];
    const LineFit f = fit_range(i, j);
    LatencySegment seg;
    seg.lo_bytes = sizes[i];
    seg.hi_bytes = sizes[j - 1];
    const auto pts = static_cast<std::uint64_t>(first[j] - first[i]);
    seg.a = FitParam{f.a, "ns", f.r2, f.max_abs_residual, "ns", pts};
    seg.b = FitParam{f.b, "ns/B", f.r2, f.max_abs_residual, "ns", pts};
    if (i > 0) {
      const std::uint64_t prev = sizes[i - 1];
      std::string note;
      if (hints.inline_bytes && prev <= *hints.inline_bytes && *hints.inline_bytes < sizes[i])
        note = "inline limit " + std::to_string(*hints.inline_bytes) + " B";
      if (hints.mtu_bytes && prev <= *hints.mtu_bytes && *hints.mtu_bytes < sizes[i])
        note += (note.empty() ? "" : ", ") + std::string("MTU ") + std::to_string(*hints.mtu_bytes) + " B";
      seg.note = note;
    }
    out.push_back(std::move(seg));
  }
  return out;
}

BandwidthFit fit_bandwidth(const std::vector<SizePoint>& points, double b_max_gbps) {
  std::vector<double> S, t; // bytes, ns per message
  for (const auto& p : points)
    if (p.value > 0 && p.size > 0) {
      S.push_back(static_cast<double>(p.size));
      t.push_back(static_cast<double>(p.size) * 8.0 / p.value); // Gb/s = bits per ns
    }
  if (S.empty()) throw InputError("bandwidth fit: no bandwidth measurement above zero");
  BandwidthFit out;
  const std::size_t n = S.size();
  std::set<double> distinct(S.begin(), S.end());
  const double c_min = b_max_gbps > 0 ? 8.0 / b_max_gbps : 0.0; // ns per byte at the bound
  auto fit_c_only = [&]() {                                     // o = 0: minimise sum ((c S - t)/t)^2
    double num = 0, den = 0;
    for (std::size_t i = 0; i < n; ++i) {
      num += S[i] / t[i];
      den += S[i] * S[i] / (t[i] * t[i]);
    }
    return num / den;
  };
  // Squared error of the bandwidth values themselves (Gb/s) under (o, c, p).
  auto sse = [&](double oo, double cc, double pp) {
    double e = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double d = bandwidth_message_ns(oo, cc, pp, S[i]);
      const double r = S[i] * 8.0 / t[i] - (d > 0 ? S[i] * 8.0 / d : 0.0);
      e += r * r;
    }
    return e;
  };
  // Gauss-Newton with step halving on the bandwidth values, p fixed; c fixed too when `fix_c`.
  auto refine = [&](double& o, double& c, double p, bool fix_c) {
    double cur = sse(o, c, p);
    for (int iter = 0; iter < 100; ++iter) {
      const Eigen::Index cols = fix_c ? 1 : 2;
      Eigen::MatrixXd J(static_cast<Eigen::Index>(n), cols);
      Eigen::VectorXd r(static_cast<Eigen::Index>(n));
      for (std::size_t i = 0; i < n; ++i) {
        const double d = bandwidth_message_ns(o, c, p, S[i]);
        const auto k = static_cast<Eigen::Index>(i);
        r(k) = S[i] * 8.0 / t[i] - S[i] * 8.0 / d;
        const double g = -8.0 * S[i] / (d * d); // d(bw)/d(d)
        J(k, 0) = g * (o > 0 ? std::pow(o / d, p - 1) : (p == 1.0 ? 1.0 : 0.0));
        if (!fix_c) J(k, 1) = g * S[i] * std::pow(c * S[i] / d, p - 1);
      }
      const Eigen::VectorXd step = J.colPivHouseholderQr().solve(r); // r ~ J step
      double lambda = 1.0, no = o, nc = c, next = cur;
      for (int h = 0; h < 30; ++h, lambda /= 2) {
        no = std::max(0.0, o + lambda * step(0));
        nc = fix_c ? c : std::max(1e-12, c + lambda * step(1));
        next = sse(no, nc, p);
        if (next < cur) break;
      }
      if (!(next < cur)) break;
      const bool done = cur - next <= 1e-12 * cur;
      o = no, c = nc, cur = next;
      if (done) break;
    }
  };
  double o = 0, c = 0, p = 1.0;
  if (distinct.size() < 2) {
    out.o_identified = false;
    c = fit_c_only();
    if (c < c_min) {
      c = c_min;
      out.bounded = true;
    }
  } else {
    // Start: relative least squares of t = o + c S (rows [1/t, S/t] . [o, c] = 1).
    Eigen::MatrixXd A(static_cast<Eigen::Index>(n), 2);
    Eigen::VectorXd y = Eigen::VectorXd::Ones(static_cast<Eigen::Index>(n));
    for (std::size_t i = 0; i < n; ++i) {
      A(static_cast<Eigen::Index>(i), 0) = 1.0 / t[i];
      A(static_cast<Eigen::Index>(i), 1) = S[i] / t[i];
    }
    const Eigen::Vector2d sol = A.colPivHouseholderQr().solve(y);
    double o0 = sol(0), c0 = sol(1);
    if (o0 < 0 || !(c0 > 0)) {
      o0 = 0;
      c0 = fit_c_only();
    }
    // For each overlap exponent p on a geometric grid 1 .. 16 (p = 1: the additive model, the per-message
    // cost and the transfer in series; large p: min(S/o, B), fully pipelined), fit (o, c) on the
    // bandwidth values; keep the p of the smallest error, the smaller p on a tie (within 0.1 %).
    double best = -1;
    for (int k = 0; k <= 32; ++k) {
      const double pk = std::pow(2.0, k / 8.0);
      double ok = o0, ck = c0;
      bool bounded = false;
      if (ck > 0) refine(ok, ck, pk, false);
      if (ck < c_min) {
        ck = c_min;
        bounded = true;
        refine(ok, ck, pk, true);
      }
      const double e = sse(ok, ck, pk);
      if (best < 0 || e < best * 0.999) {
        best = e;
        o = ok, c = ck, p = pk;
        out.bounded = bounded;
      }
    }
  }
  if (!(c > 1e-12)) {
    out.B_identified = false;
    c = 0;
    p = 1.0;
    double num = 0, den = 0; // o alone: minimise sum ((o - t)/t)^2
    for (std::size_t i = 0; i < n; ++i) {
      num += 1.0 / t[i];
      den += 1.0 / (t[i] * t[i]);
    }
    o = num / den;
  }
  double mean = 0;
  std::vector<double> meas(n), pred(n);
  for (std::size_t i = 0; i < n; ++i) {
    meas[i] = S[i] * 8.0 / t[i];
    pred[i] = S[i] * 8.0 / bandwidth_message_ns(o, c, p, S[i]);
    mean += meas[i];
  }
  mean /= static_cast<double>(n);
  double ss_res = 0, ss_tot = 0, max_rel = 0;
  for (std::size_t i = 0; i < n; ++i) {
    ss_res += (meas[i] - pred[i]) * (meas[i] - pred[i]);
    ss_tot += (meas[i] - mean) * (meas[i] - mean);
    max_rel = std::max(max_rel, std::abs(pred[i] - meas[i]) / meas[i] * 100.0);
  }
  const double r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : 1.0;
  out.o = FitParam{o, "ns", r2, max_rel, "%", n};
  out.B = FitParam{c > 0 ? 8.0 / c : 0.0, "Gb/s", r2, max_rel, "%", n};
  out.p = FitParam{p, "", r2, max_rel, "%", n};
  return out;
}

NoiseModel fit_noise(const std::vector<LatencyStats>& rows, const std::vector<LatencySegment>& segments,
                     bool /*pingpong*/) {
  NoiseModel model;
  if (segments.empty()) return model;
  const std::vector<double> ps{0.0, 0.5, 0.99, 0.999, 1.0};
  for (std::size_t s = 0; s < segments.size(); ++s) {
    std::vector<double> m, q99, q999, qmax;
    for (const auto& r : rows) {
      std::size_t seg = 0;
      for (std::size_t k = 0; k < segments.size(); ++k)
        if (segments[k].lo_bytes <= r.size) seg = k;
      if (seg != s) continue;
      m.push_back(std::max(0.0, (r.t_typical - r.t_min) * 1e3));
      q99.push_back(std::max(0.0, (r.p99 - r.t_min) * 1e3));
      q999.push_back(std::max(0.0, (r.p999 - r.t_min) * 1e3));
      qmax.push_back(std::max(0.0, (r.t_max - r.t_min) * 1e3));
    }
    if (m.empty()) continue;
    std::vector<double> target{0.0, median(m), median(q99), median(q999), median(qmax)};
    for (std::size_t k = 1; k < target.size(); ++k) target[k] = std::max(target[k], target[k - 1]);
    const std::vector<double>& v = target;
    NoiseSegment seg;
    seg.lo_bytes = segments[s].lo_bytes;
    seg.hi_bytes = segments[s].hi_bytes;
    seg.points = m.size();
    seg.sample_median_ns = target[1];
    for (std::size_t k = 0; k < ps.size(); ++k) seg.knots.emplace_back(ps[k], v[k]);
    model.segments.push_back(std::move(seg));
  }
  return model;
}

Profile fit_profile(const std::vector<FitSource>& sources, const FitOptions& opt) {
  if (sources.empty()) throw InputError("calibrate fit: no perftest files given");
  Profile p;
  p.generator = opt.generator;
  p.cable_m = opt.cable_m;

  struct Tagged {
    PerftestRun run;
    int hops;
  };
  std::vector<Tagged> runs;
  std::set<std::string> devices;
  std::optional<std::pair<std::string, std::string>> layer_seen; // link type, file
  std::optional<std::pair<int, std::string>> mtu_seen;
  for (const auto& src : sources) {
    std::istringstream in(src.content);
    auto parsed = parse_perftest(in, src.file);
    ProfileInput info;
    info.file = src.file;
    info.fnv1a64 = fnv1a64_hex(src.content);
    info.bytes = src.content.size();
    info.hops = src.hops;
    for (auto& r : parsed) {
      for (const auto& w : r.warnings) p.warnings.push_back(w);
      info.tests.push_back(std::string(to_string(r.tool)) + " (" + to_string(r.role) + ", " +
                           (r.device.empty() ? "device ?" : r.device) + ", " + std::to_string(r.rows.size()) +
                           " rows)");
      if (!r.device.empty()) devices.insert(r.device);
      if (!r.link_type.empty()) {
        if (layer_seen && layer_seen->first != r.link_type)
          throw InputError(src.file + ": link type " + r.link_type + " differs from " + layer_seen->first +
                           " in " + layer_seen->second + " (one profile describes one kind of link)");
        layer_seen = std::make_pair(r.link_type, src.file);
      }
      if (r.mtu_bytes) {
        if (mtu_seen && mtu_seen->first != *r.mtu_bytes)
          throw InputError(src.file + ": MTU " + std::to_string(*r.mtu_bytes) + " differs from " +
                           std::to_string(mtu_seen->first) + " in " + mtu_seen->second +
                           " (fit one MTU per profile)");
        mtu_seen = std::make_pair(*r.mtu_bytes, src.file);
      }
      if (r.is_latency() && r.max_inline_bytes)
        p.max_inline_bytes =
            std::max(p.max_inline_bytes.value_or(0), static_cast<std::uint32_t>(*r.max_inline_bytes));
      runs.push_back({std::move(r), src.hops});
    }
    p.inputs.push_back(std::move(info));
  }
  p.devices.assign(devices.begin(), devices.end());
  if (layer_seen && layer_seen->first == "Ethernet") {
    p.link_layer = pkt::LinkLayer::RoCEv2;
    p.header_bytes = common::kRoceV2HeaderBytes;
  } else {
    if (!layer_seen) p.warnings.push_back("no 'Link type' in any header: assuming InfiniBand");
    p.link_layer = pkt::LinkLayer::InfiniBand;
    p.header_bytes = common::kIbHeaderBytes;
  }
  if (mtu_seen) {
    // perftest prints the path MTU, 256..4096 B (RoCE up to 9000); anything else is a damaged log.
    if (mtu_seen->first < 256 || mtu_seen->first > 9000)
      throw InputError(mtu_seen->second + ": 'Mtu' " + std::to_string(mtu_seen->first) +
                       " B is not a path MTU (expected 256..4096, or up to 9000 for RoCE)");
    p.mtu_bytes = static_cast<std::uint32_t>(mtu_seen->first);
  } else {
    p.warnings.push_back("no 'Mtu' in any header: assuming 4096");
  }
  p.link_rate_gbps = opt.link_rate_gbps;
  p.link_rate_source =
      opt.link_rate_gbps > 0 ? opt.link_rate_source : "unknown (no --link-rate): B unbounded";
  if (opt.link_rate_gbps > 0 && !link_speed_for_rate(opt.link_rate_gbps))
    throw InputError("--link-rate: no InfiniBand/Ethernet link carries " + fmt_g(opt.link_rate_gbps) +
                     " Gb/s of data (e.g. 32 = 4xQDR, 100 = 4xEDR/100GbE, 200 = HDR, 400 = NDR)");

  // ---- latency points (fewest hops) and the switch fit -------------------------------------------
  int min_hops = std::numeric_limits<int>::max();
  for (const auto& t : runs)
    if (t.run.is_latency()) min_hops = std::min(min_hops, t.hops);
  if (min_hops == std::numeric_limits<int>::max()) {
    min_hops = std::numeric_limits<int>::max();
    for (const auto& t : runs) min_hops = std::min(min_hops, t.hops);
  }
  p.hops = runs.empty() ? 0 : min_hops;
  std::vector<SizePoint> lat;
  std::vector<LatencyStats> stats;
  bool any_pingpong = false;
  std::map<int, std::vector<double>> small_by_hops; // hops -> one-way ns at sizes <= 64 B
  for (const auto& t : runs) {
    if (!t.run.is_latency()) continue;
    const bool read = t.run.tool == PerftestTool::ib_read_lat;
    if (!read) any_pingpong = true;
    for (const auto& row : t.run.rows) {
      if (!row.t_typical_us) continue;
      const double one_way_ns = *row.t_typical_us * 1e3 / (read ? 2.0 : 1.0);
      if (row.size_bytes <= 64) small_by_hops[t.hops].push_back(one_way_ns);
      if (t.hops != min_hops) continue;
      lat.push_back({row.size_bytes, one_way_ns});
    }
  }
  for (const auto& t : runs) {
    if (!t.run.is_latency() || t.hops != min_hops) continue;
    const bool read = t.run.tool == PerftestTool::ib_read_lat;
    if (any_pingpong && read) continue; // one kind of sample per noise table
    for (const auto& row : t.run.rows)
      if (row.t_min_us && row.t_typical_us && row.p99_us && row.p999_us && row.t_max_us)
        stats.push_back(
            {row.size_bytes, *row.t_min_us, *row.t_typical_us, *row.p99_us, *row.p999_us, *row.t_max_us});
  }
  if (small_by_hops.size() >= 2) {
    std::vector<double> x, y, w;
    for (const auto& [h, v] : small_by_hops) {
      x.push_back(h);
      y.push_back(median(v));
      w.push_back(1.0);
    }
    const LineFit f = fit_line(x, y, w);
    const double per_hop = f.b - cable_ns(opt.cable_m);
    if (per_hop < 0)
      p.warnings.push_back("switch latency fit: latency does not grow with hops (" + fmt_g(f.b) +
                           " ns per hop); not used");
    else
      p.switch_latency_fit = FitParam{per_hop, "ns", f.r2, f.max_abs_residual, "ns", x.size()};
  }

  if (!lat.empty()) {
    std::set<std::uint64_t> distinct;
    for (const auto& pt : lat) distinct.insert(pt.size);
    if (distinct.size() >= 2) {
      p.latency = fit_latency_segments(lat, opt.max_segments, SegmentHints{p.max_inline_bytes, p.mtu_bytes});
      p.noise = fit_noise(stats, p.latency, any_pingpong);
    } else {
      p.warnings.push_back("latency tests at one size only: no latency model");
    }
  }

  // ---- bandwidth -----------------------------------------------------------------------------------
  std::vector<SizePoint> bw;
  for (const auto& t : runs) {
    if (t.run.is_latency()) continue;
    for (const auto& row : t.run.rows)
      if (row.bw_avg_gbps && *row.bw_avg_gbps > 0)
        bw.push_back({row.size_bytes, *row.bw_avg_gbps / (t.run.bidirectional ? 2.0 : 1.0)});
  }
  if (!bw.empty()) {
    const double bmax = p.link_rate_gbps > 0 ? p.link_rate_gbps * p.header_efficiency() : 0.0;
    const BandwidthFit f = fit_bandwidth(bw, bmax);
    p.bw_overhead = f.o;
    if (f.B_identified) p.bw_rate = f.B;
    if (f.B_identified && f.o_identified) p.bw_overlap = f.p;
    p.bw_rate_bounded = f.bounded;
    if (!f.o_identified)
      p.warnings.push_back("bandwidth at one message size only: o cannot be fitted, set to 0");
    if (!f.B_identified)
      p.warnings.push_back(
          "bandwidth grows linearly with size in every measurement: no rate limit B in the data");
    p.message_gap = Time::ps(std::llround(f.o.value * 1e3));
  } else {
    p.warnings.push_back("no bandwidth test: no HCA cap, no message gap");
  }

  // ---- engine settings -----------------------------------------------------------------------------
  const topo::LinkSpeed speed = p.engine_link_speed();
  if (p.bw_rate) {
    const double wire = p.bw_rate->value / p.header_efficiency();
    p.hca_rate_gbps = wire < speed.rate_gbps() * (1 - 1e-6) ? wire : 0.0;
  }
  if (p.switch_latency_fit) {
    p.switch_latency = Time::ps(std::llround(p.switch_latency_fit->value * 1e3));
    p.switch_latency_source = "fitted";
  } else if (opt.switch_latency_ns) {
    p.switch_latency = Time::ps(std::llround(*opt.switch_latency_ns * 1e3));
    p.switch_latency_source = "assumed (--switch-latency-ns)";
  } else {
    p.switch_latency = pkt::default_switch_latency(topo::to_string(speed.gen));
    p.switch_latency_source = "assumed (default for " + topo::to_string(speed.gen) + ")";
  }
  if (!p.latency.empty()) {
    std::uint64_t smin = p.latency.front().lo_bytes;
    p.nic_tx_latency = p.nic_rx_latency = Time::zero();
    const NoiseSegment* ns = p.noise.segment_for(smin);
    double total = *p.latency_ns(smin) - (ns ? ns->sample_median_ns : 0.0) - p.engine_one_way_ns(smin);
    if (total < 0) {
      p.warnings.push_back(
          "the fitted latency at " + std::to_string(smin) +
          " B is below what the path's switches and cables alone take; nic latency set to 0");
      total = 0;
    }
    const auto ps_total = std::llround(total * 1e3);
    p.nic_tx_latency = Time::ps(ps_total / 2);
    p.nic_rx_latency = Time::ps(ps_total - ps_total / 2);
  } else {
    p.warnings.push_back("no latency test: nic_tx/nic_rx latency left at the engine defaults (300 ns each)");
  }
  return p;
}

namespace {

/// fit_nccl_costs on every point given (no outlier test).
NcclCostEstimate fit_nccl_costs_once(const std::vector<NcclCostPoint>& points, double base_prior_us) {
  double lo = points.front().net_steps, hi = lo;
  for (const auto& p : points) lo = std::min(lo, p.net_steps), hi = std::max(hi, p.net_steps);
  NcclCostEstimate e;
  e.points = points.size();
  e.base_fixed = hi - lo < 0.5;
  const auto n = static_cast<Eigen::Index>(points.size());
  // Sizes scaled to MiB so the columns are of comparable magnitude.
  auto solve = [&](bool with_base, bool with_net, double base, double net) {
    const Eigen::Index cols = (with_base ? 1 : 0) + (with_net ? 1 : 0) + 1;
    Eigen::MatrixXd A(n, cols);
    Eigen::VectorXd b(n);
    for (Eigen::Index i = 0; i < n; ++i) {
      const auto& p = points[static_cast<std::size_t>(i)];
      Eigen::Index c = 0;
      if (with_base) A(i, c++) = 1.0;
      if (with_net) A(i, c++) = p.net_steps;
      A(i, c) = p.size_bytes / 1048576.0;
      b(i) = p.residual_us - (with_base ? 0.0 : base) - (with_net ? 0.0 : net * p.net_steps);
    }
    const Eigen::VectorXd x = A.colPivHouseholderQr().solve(b);
    Eigen::Index c = 0;
    if (with_base) base = x(c++);
    if (with_net) net = x(c++);
    return std::tuple<double, double, double>{base, net, x(c) / 1048576.0};
  };
  double base = base_prior_us, net = 0, slope = 0;
  if (e.base_fixed) {
    std::tie(base, net, slope) = solve(false, true, base_prior_us, 0);
    if (net < 0) std::tie(base, net, slope) = solve(false, false, base_prior_us, 0);
  } else {
    std::tie(base, net, slope) = solve(true, true, 0, 0);
    if (base < 0) {
      e.base_fixed = true;
      std::tie(base, net, slope) = solve(false, true, 0, 0);
    }
    if (net < 0) std::tie(base, net, slope) = solve(true, false, 0, 0);
  }
  e.base_us = std::max(0.0, base);
  e.net_step_us = std::max(0.0, net);
  e.slope_us_per_byte = slope;
  double mean = 0;
  for (const auto& p : points) mean += p.residual_us;
  mean /= static_cast<double>(points.size());
  double ss_res = 0, ss_tot = 0;
  for (const auto& p : points) {
    const double fit = e.base_us + e.net_step_us * p.net_steps + e.slope_us_per_byte * p.size_bytes;
    ss_res += (p.residual_us - fit) * (p.residual_us - fit);
    ss_tot += (p.residual_us - mean) * (p.residual_us - mean);
    e.max_residual_us = std::max(e.max_residual_us, std::abs(p.residual_us - fit));
  }
  e.r2 = ss_tot > 0 ? 1.0 - ss_res / ss_tot : 1.0;
  return e;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const auto m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

} // namespace

NcclCostEstimate fit_nccl_costs(const std::vector<NcclCostPoint>& points, double base_prior_us) {
  if (points.size() < 3)
    throw InputError("NCCL cost fit: " + std::to_string(points.size()) +
                     " small-size row(s); at least 3 are needed");
  bool any_net = false;
  for (const auto& p : points) any_net = any_net || p.net_steps > 0;
  if (!any_net)
    throw InputError("NCCL cost fit: no row crosses nodes (single-node runs have no network step to fit)");
  NcclCostEstimate e = fit_nccl_costs_once(points, base_prior_us);
  // A row far slower than the fit says is a slow iteration in nccl-tests' average (the variability model's
  // tail, docs/calibration.md "Variability"), not a cost: rows more than kSlowRowSds robust standard
  // deviations (1.4826 x the median absolute deviation of the fit's residuals) above the fit are left out and
  // the rest refitted once.
  constexpr double kSlowRowSds = 6.0;
  std::vector<double> dev;
  for (const auto& p : points)
    dev.push_back(p.residual_us -
                  (e.base_us + e.net_step_us * p.net_steps + e.slope_us_per_byte * p.size_bytes));
  const double med = median_of(dev);
  std::vector<double> abs_dev;
  for (const double d : dev) abs_dev.push_back(std::abs(d - med));
  const double sd = 1.4826 * median_of(abs_dev);
  if (!(sd > 0)) return e;
  std::vector<NcclCostPoint> kept;
  for (std::size_t i = 0; i < points.size(); ++i)
    if (dev[i] - med <= kSlowRowSds * sd) kept.push_back(points[i]);
  if (kept.size() == points.size() || kept.size() < 3) return e;
  bool kept_net = false;
  for (const auto& p : kept) kept_net = kept_net || p.net_steps > 0;
  if (!kept_net) return e;
  NcclCostEstimate r = fit_nccl_costs_once(kept, base_prior_us);
  r.slow_rows = points.size() - kept.size();
  return r;
}

} // namespace ibn::calib
