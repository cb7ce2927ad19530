#pragma once
// Device profile: what `ibnetsim calibrate fit` learns from real perftest runs, saved as JSON, and how
// it is applied to the packet engine (docs/calibration.md).
//
// A profile holds
//  - the fitted models, each parameter with its unit, R^2 and max residual:
//      latency(S)   one-way median latency (perftest t_typical; RTT/2 for write/send) as piecewise linear
//                   a + b*S over size segments whose breakpoints were chosen from the data;
//      bandwidth(S) = S / (o + S/B): o = per-message overhead, B = asymptotic payload rate (bounded by the
//                   link's data rate x MTU/(MTU + header bytes) when the link rate is known);
//      switch       per-hop latency, when inputs at different hop counts were given;
//      noise        per-operation extra latency as an empirical quantile table per size segment;
//      variability  run state, launch jitter and stragglers fitted from repeated runs (optional);
//  - what the inputs were (file name, FNV-1a 64 hash of the bytes, tests, device, link layer, MTU);
//  - the engine settings derived from the fits (nic_tx/nic_rx latency, switch latency, MTU, link layer,
//    HCA injection cap, message gap), which apply() copies into a PacketConfig.
// Loading validates every key: an unknown key or a wrong type is an InputError naming the JSON path.
#include "models/common/framing.hpp"
#include "calibration/variability.hpp"
#include "models/packet/config.hpp"
#include "sim/rng.hpp"
#include "sim/time.hpp"
#include "topology/link_speed.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ibn::calib {

/// The profile format this build writes. 2 added the optional `manifest` (version, command, inputs with their
/// hashes, effective options); version 1 profiles (no manifest) still load. A build that reads only 1 refuses
/// a version 2 profile by its schema_version rather than by an unknown key.
inline constexpr int kProfileSchemaVersion = 2;
/// The oldest profile format this build reads.
inline constexpr int kProfileOldestSchemaVersion = 1;

/// Bounds of the measured path a profile describes, checked by calibrate fit (--hops, --file-hops,
/// --cable-m) and when a profile loads ($.measurement.hops, $.measurement.cable_m): at most 16 switches, and
/// (hops + 1) cables of at most 100,000 m together (perftest --profile and calibrate check simulate the path
/// as one cable of that length; the generators' limit).
inline constexpr int kMaxProfileHops = 16;
inline constexpr double kMaxPathCableM = 100000;

/// One fitted parameter: value and unit, with the quality of the fit it comes from.
struct FitParam {
  double value = 0;
  std::string unit;        ///< "ns", "ns/B", "Gb/s"
  double r2 = 0;           ///< coefficient of determination of the fit the parameter belongs to
  double max_residual = 0; ///< largest |measured - fitted| of that fit, in `residual_unit`
  std::string residual_unit;
  std::uint64_t points = 0; ///< measurements the fit used
};

/// Time per message of the bandwidth model, ns: (o^p + (c S)^p)^(1/p) with c = 8/B ns per byte. p = 1 is
/// the additive S/(o + S/B) (per-message cost and transfer in series); p -> infinity is max(o, S/B)
/// (per-message cost fully hidden behind the previous transfer, as with many QPs in flight).
double bandwidth_message_ns(double o, double c, double p, double S);

/// latency(S) = a + b*S for lo_bytes <= S <= hi_bytes (the first and last measured sizes of the segment).
struct LatencySegment {
  std::uint64_t lo_bytes = 0, hi_bytes = 0;
  FitParam a;       ///< ns
  FitParam b;       ///< ns per byte
  std::string note; ///< why the segment starts here: "inline limit 220 B", "MTU 2048 B", "" (data only)
};

/// Per-operation extra latency: inverse CDF through (p, extra_ns) knots, linear between knots.
/// Knots start at (0, 0) and end at (1, max); p strictly increasing, extra_ns non-decreasing.
struct NoiseSegment {
  std::uint64_t lo_bytes = 0, hi_bytes = 0;
  std::vector<std::pair<double, double>> knots; ///< (p, extra ns)
  std::uint64_t points = 0;                     ///< table rows (sizes) the segment was built from
  /// Median extra latency of one measured perftest *sample* (t_typical - t_min, ns). The latency fit is
  /// on t_typical, so host_latency() subtracts this to get the deterministic part.
  double sample_median_ns = 0;
};

class NoiseModel {
 public:
  std::vector<NoiseSegment> segments;

  bool empty() const { return segments.empty(); }
  /// The segment for `size`: the last one whose lo_bytes <= size (the first one below its range).
  const NoiseSegment* segment_for(std::uint64_t size) const;
  /// Extra latency of one operation of `size` bytes (0 when the model is empty). One uniform draw.
  Time draw(Rng& rng, std::uint64_t size) const;
  /// The quantile p of the per-operation extra latency at `size`, ns.
  double quantile_ns(std::uint64_t size, double p) const;
};

struct ProfileInput {
  std::string file;    ///< as given on the command line
  std::string fnv1a64; ///< "fnv1a64:0123456789abcdef" of the file's bytes
  std::uint64_t bytes = 0;
  std::vector<std::string> tests; ///< "ib_write_bw (client, mlx4_0, 23 sizes)"
  int hops = 0;                   ///< switches between the two hosts when it was measured
};

/// NCCL software costs fitted from the small-size rows of real nccl-tests runs (`calibrate fit` with
/// nccl-tests logs; docs/calibration.md "NCCL costs"). They replace, for `protocol`, the base latency and
/// the per-step network cost of NCCL's tuning table (scenarios/nccl_cost.hpp) when the profile is used.
struct NcclCostFit {
  std::string version;              ///< NCCL version of the inputs ("2.22.3"; "" = unknown)
  std::string protocol;             ///< the protocol of the fitted rows ("ll")
  FitParam base;                    ///< us, per collective
  FitParam net_step;                ///< us, per inter-node step
  bool base_fixed = false;          ///< one step count among the inputs: base held at NCCL's table value
  std::uint64_t max_bytes = 0;      ///< rows up to this size were used
  std::vector<std::string> sources; ///< "file (test, nodes x gpus)"
};

/// Framing (mtu_bytes, header_bytes, header_efficiency()) is the engines' one definition
/// (models/common/framing.hpp): the profile records the measured link's MTU and per-packet overhead in it.
struct Profile : common::Framing {
  int schema_version = kProfileSchemaVersion;
  std::string generator; ///< "ibnetsim 0.1.0 calibrate fit"
  /// What wrote the profile (`calibrate fit`): {tool, command, version, build, inputs[{file, hash, bytes}],
  /// options}; null in profiles of schema_version 1 and in ones built in code.
  nlohmann::json manifest;
  std::vector<ProfileInput> inputs;

  // Device and link (from the perftest headers and flags).
  std::vector<std::string> devices;
  pkt::LinkLayer link_layer = pkt::LinkLayer::InfiniBand;
  std::optional<std::uint32_t> max_inline_bytes;
  double link_rate_gbps = 0;    ///< data rate of the measured link; 0 = unknown
  std::string link_rate_source; ///< "--link-rate 4xQDR", "unknown"
  double cable_m = 3;           ///< assumed length of each cable of the measured path, metres
  int hops = 0;                 ///< switches on the measured path (of the inputs with the fewest)

  // Fits.
  std::vector<LatencySegment> latency;        ///< empty without latency tests
  std::optional<FitParam> bw_overhead;        ///< o, ns
  std::optional<FitParam> bw_rate;            ///< B, Gb/s (payload)
  std::optional<FitParam> bw_overlap;         ///< p of (o^p + (S/B)^p)^(1/p); absent = 1 (additive)
  bool bw_rate_bounded = false;               ///< B was clamped to link rate x header efficiency
  std::optional<FitParam> switch_latency_fit; ///< per hop, ns
  NoiseModel noise;
  std::optional<NcclCostFit> nccl; ///< from nccl-tests logs
  /// Run-to-run variability (`calibrate fit --repeats`, calibration/variability.hpp); absent = none.
  std::optional<VariabilityModel> variability;

  // Engine settings derived from the fits (what apply() uses).
  Time nic_tx_latency = Time::ns(300);
  Time nic_rx_latency = Time::ns(300);
  Time switch_latency = Time::ns(200);
  std::string switch_latency_source = "assumed"; ///< "fitted" or "assumed (default for QDR)"
  double hca_rate_gbps = 0;                      ///< wire-rate injection cap (0 = link rate)
  Time message_gap; ///< o: a sender posts messages at least (o^p + (S/B)^p)^(1/p) apart
  /// Host path (`host` section): the packet knobs of pkt::host_knob_names() (PCIe generation and width,
  /// GPUDirect, cross-NUMA, SR-IOV) by name, each checked against its declaration; empty = all neutral.
  /// Set by the user (perftest tables do not say how the host is built); apply() copies them.
  nlohmann::json host = nlohmann::json::object();
  std::vector<std::string> warnings;

  /// The rate of the engine's cable for this profile: the measured link's rate when known, else the
  /// smallest 4x rate (QDR 32, FDR 54.5, EDR 100, HDR 200, NDR 400, XDR 800 Gb/s) whose payload rate
  /// (x header efficiency) reaches B, else NDR.
  topo::LinkSpeed engine_link_speed() const;
  /// The fitted one-way median latency at `size`, ns (nullopt without latency segments).
  std::optional<double> latency_ns(std::uint64_t size) const;
  /// The fitted bandwidth at `size`, Gb/s (nullopt without a bandwidth fit).
  std::optional<double> bandwidth_gbps(std::uint64_t size) const;
  /// The deterministic per-message latency the engine does not model by itself (host, PCIe, inline
  /// effects): fitted latency - noise median - (nic_tx + nic_rx + hops x switch + cables + wire(S)),
  /// never negative. Added to the post time of every message of `size` bytes.
  Time host_latency(std::uint64_t size) const;
  /// Minimum spacing of one sender's posts for messages of `size` bytes: (o^p + (S/B)^p)^(1/p), o + S/B
  /// when p is 1 or absent (zero without a fit).
  Time post_spacing(std::uint64_t size) const;
  /// The engine's own one-way time on the measured path at `size` (nic latencies, switches, cables,
  /// serialization at the capped rate), ns: the model host_latency() subtracts.
  double engine_one_way_ns(std::uint64_t size) const;

  nlohmann::json to_json() const;
  /// Validates keys and values; errors name `source` and the JSON path ("p.json: $.latency[0].a: ...").
  static Profile from_json(const nlohmann::json& j, const std::string& source);
  static Profile load(const std::string& path);
  void save(const std::string& path) const;
};

/// Sets nic_tx/nic_rx latency, switch latency, MTU, link layer (and header bytes), the HCA injection
/// cap and the host-path knobs of `cfg` from `p`.
void apply(const Profile& p, pkt::PacketConfig& cfg);

/// The link generation and width carrying `gbps` of data (within 0.5 %; 4x preferred), if any.
std::optional<topo::LinkSpeed> link_speed_for_rate(double gbps);

/// 64-bit FNV-1a of `bytes` as "fnv1a64:%016x".
std::string fnv1a64_hex(const std::string& bytes);

/// A manifest's `inputs`: [{file, hash (fnv1a64_hex of its bytes), bytes}] per file, in order (the manifests
/// of calibrate and validate); InputError for a file that cannot be read.
nlohmann::json input_hashes(const std::vector<std::string>& files);

} // namespace ibn::calib
