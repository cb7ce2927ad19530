#pragma once
// Fits of perftest measurements (Eigen least squares) and the profile built from them
// (docs/calibration.md has the formulas and the reasons for each choice).
//
//  - Latency: one-way median latency L(S) (t_typical; write/send RTT/2 as perftest prints it; read_lat
//    samples are a full read and are halved) is fitted as a + b*S on K size segments. For each K the best
//    breakpoints (between consecutive measured sizes) are found exactly by dynamic programming over
//    relative least squares; K = 1..max_segments is chosen by BIC with a 0.5 % noise floor on the
//    relative residuals (a segment must pay for itself). Each breakpoint is labelled when the inline
//    limit or the MTU lies between the two sizes it separates.
//  - Bandwidth: BW(S) = S / (o + S/B), i.e. time per message t = o + S/B, fitted by relative least
//    squares (rows [1/t, S/t] . [o, 1/B] = 1), refined by Gauss-Newton least squares on the bandwidth
//    values themselves (the relative fit lets the knee pull B far above the plateau). B is bounded above by
//    link rate x MTU/(MTU + header); when the bound binds, B is set to it and o refitted. o >= 0.
//  - Switch latency per hop: small-message latency vs hop count (inputs at >= 2 hop counts), slope minus
//    one cable's propagation.
//  - Noise: per latency segment, the medians over its sizes of t_typical - t_min, p99 - t_min,
//    p99.9 - t_min and t_max - t_min give a quantile table of one perftest sample's extra latency
//    (knots at p = 0, 0.5, 0.99, 0.999, 1). A ping-pong sample is RTT/2, so the perftest driver draws
//    once per round trip (2 x the draw on the request), which reproduces the sample's distribution;
//    other users take the table as the extra latency of one operation. (A per-operation table
//    deconvolved from the pair mean was tried: with knots this coarse no table matches median and p99
//    together, see docs/calibration.md.)
#include "calibration/perftest_parser.hpp"
#include "calibration/profile.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ibn::calib {

/// y ~ a + b x by weighted least squares (weights multiply the squared residuals).
struct LineFit {
  double a = 0, b = 0;
  double sse = 0; ///< weighted
  double r2 = 0;  ///< unweighted, on y
  double max_abs_residual = 0;
  std::size_t n = 0;
};
LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& w);

/// A latency measurement: size in bytes, one-way latency in ns.
struct SizePoint {
  std::uint64_t size = 0;
  double value = 0;
};

struct SegmentHints {
  std::optional<std::uint32_t> inline_bytes;
  std::optional<std::uint32_t> mtu_bytes;
};
/// Piecewise linear fit (see the header comment). Needs at least 2 distinct sizes; throws InputError.
std::vector<LatencySegment> fit_latency_segments(std::vector<SizePoint> points, int max_segments,
                                                 const SegmentHints& hints);

struct BandwidthFit {
  FitParam o; ///< ns
  FitParam B; ///< Gb/s payload
  FitParam p; ///< overlap exponent (1 = additive), from a grid 2^(k/8), k = 0..32
  bool bounded = false;
  bool o_identified = true; ///< false when all points have one size (o set to 0)
  bool B_identified = true; ///< false when the data show no rate limit (B omitted)
};
/// Fits BW(S) = 8 S / bandwidth_message_ns(o, 8/B, p, S) by least squares on the bandwidth values.
/// points: size, Gb/s. b_max_gbps 0 = no bound. Throws InputError on no points.
BandwidthFit fit_bandwidth(const std::vector<SizePoint>& points, double b_max_gbps);

/// One latency table row's statistics, microseconds, for the noise fit.
struct LatencyStats {
  std::uint64_t size = 0;
  double t_min = 0, t_typical = 0, p99 = 0, p999 = 0, t_max = 0;
};
/// Noise segments over the same size ranges as `segments` (`pingpong` is recorded for documentation only:
/// the table is the sample's either way).
NoiseModel fit_noise(const std::vector<LatencyStats>& rows, const std::vector<LatencySegment>& segments,
                     bool pingpong);

struct FitSource {
  std::string file;    ///< name for messages and the profile
  std::string content; ///< the file's bytes
  int hops = 0;        ///< switches between the two hosts
};

struct FitOptions {
  double link_rate_gbps = 0;               ///< data rate of the measured link; 0 = unknown (B unbounded)
  std::string link_rate_source;            ///< how it was given, for the profile
  double cable_m = 3;                      ///< assumed length of each cable on the measured path
  std::optional<double> switch_latency_ns; ///< assumed per-hop latency when it cannot be fitted
  int max_segments = 4;
  std::string generator = "ibnetsim calibrate fit";
};

/// One small-size row of a real nccl-tests run for the NCCL cost fit: the measured time minus what the
/// simulation without NCCL's software costs gives (and minus NCCL's intra-node step costs), against the
/// run's inter-node step count on the critical path.
struct NcclCostPoint {
  double net_steps = 0;  ///< inter-node steps of the algorithm NCCL ran (scenarios/nccl_cost.hpp)
  double size_bytes = 0; ///< the row's size
  double residual_us = 0;
};

/// residual = base + net_steps x net_step + size x c, least squares (Eigen, column-pivoting QR); c absorbs
/// a size trend and is not kept. With fewer than two distinct step counts base and net_step cannot be told
/// apart: base is held at `base_prior_us` (NCCL's table value) and only net_step and c are fitted
/// (base_fixed). Negative estimates are clamped to 0 (and the other parameter refitted). Rows more than 6
/// robust standard deviations slower than the fit (a slow iteration in the average) are left out and the rest
/// refitted once (`slow_rows`). InputError when there are fewer than 3 points or no point has a network step.
struct NcclCostEstimate {
  double base_us = 0, net_step_us = 0, slope_us_per_byte = 0;
  bool base_fixed = false;
  double r2 = 0, max_residual_us = 0;
  std::size_t points = 0;    ///< rows the estimate rests on
  std::size_t slow_rows = 0; ///< rows left out as slow iterations
};
NcclCostEstimate fit_nccl_costs(const std::vector<NcclCostPoint>& points, double base_prior_us);

/// Parses every source and fits a profile. Warnings go to Profile::warnings. Throws InputError when
/// nothing usable is found or the inputs disagree (MTU, link layer).
Profile fit_profile(const std::vector<FitSource>& sources, const FitOptions& opt);

} // namespace ibn::calib
