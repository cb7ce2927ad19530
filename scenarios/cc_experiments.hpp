#pragma once
// The DCQCN paper's basic experiments (Zhu et al. SIGCOMM'15 §5-6) on the packet engine: N senders into one
// receiver behind one switch, with staggered starts, run once per variant (a patch of the packet settings:
// the effect of g, Kmin/Kmax, the timers). Each run records every sender's CC rate
// (PacketConfig::trace_rates), its delivered throughput in bins, and the bottleneck queue (sampled), and
// summarises fairness and queue.
//
// Definition file (strict keys; docs/congestion-control.md, examples in scenarios/examples/cc/):
//   {"name": "two-flows", "description": "...",
//    "senders": 2, "link": "NDR", "cable_m": 2,
//    "start_us": [0, 100],            // one for every sender, or one per sender; default all 0
//    "bytes_per_sender": "32M", "message_bytes": "64K",
//    "sample_us": 1, "bin_us": 10,   // queue sampling period, throughput bin
//    "packet": {...},                 // PacketConfig JSON (link_layer, flow_control, cc, dcqcn, ...)
//    "variants": [{"label": "g=1/256", "packet": {...}}, ...]}  // merge-patched over "packet"; default one
#include "models/packet/config.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ibn::scen {

struct CcVariant {
  std::string label;
  nlohmann::json packet; ///< the merged packet settings of this variant
};

/// What a definition will cost, estimated from its parameters before anything runs (CcExperiment::estimate).
struct CcSize {
  double last_start_us = 0;   ///< the latest start_us
  double sim_us = 0;          ///< lower bound on the simulated time: last start + all bytes at the line rate
  double queue_rows = 0;      ///< queue.csv rows (every variant)
  double throughput_rows = 0; ///< throughput.csv rows (every variant)
  double trace_points = 0;    ///< queue samples of every port held in memory during one variant
  double messages = 0;        ///< messages posted over all variants
};

/// Bounds (docs/cli.md, "experiment"): rows per CSV file and messages, and queue samples held in memory.
inline constexpr double kMaxRows = 5e6;
inline constexpr double kMaxTracePoints = 20e6;

struct CcExperiment {
  std::string name;
  std::string description;
  int senders = 2;
  std::string link = "NDR";
  double cable_m = 2;
  std::vector<double> start_us;
  std::uint64_t bytes_per_sender = 32ull << 20;
  std::uint64_t message_bytes = 64 << 10;
  double sample_us = 1;
  double bin_us = 10;
  std::vector<CcVariant> variants;
  std::vector<std::string> warnings; ///< settings that have no effect (DCQCN parameters with cc "none")

  /// Parses a definition; InputError names `where` and the key ($.key). Refuses a definition whose
  /// estimate() exceeds kMaxRows / kMaxTracePoints.
  static CcExperiment from_json(const nlohmann::json& j, const std::string& where);
  CcSize estimate() const;
  void check_size(const std::string& where) const;
  double start_of(int sender) const; ///< sender's start time in us
};

struct CcSeriesPoint {
  double t_us = 0;
  double value = 0;
};

struct CcRunResult {
  std::string label;
  std::vector<std::vector<CcSeriesPoint>> rate_gbps;       ///< per sender: CC rate at each change
  std::vector<std::vector<CcSeriesPoint>> throughput_gbps; ///< per sender: delivered, per bin
  std::vector<CcSeriesPoint> queue_bytes;                  ///< bottleneck output, sampled
  /// Over the window where all senders are active, its second half; none when there is no such window
  /// (or nothing was delivered in it).
  std::optional<double> jain_second_half;
  std::optional<double> bottleneck_gbps; ///< delivered goodput in that half
  std::string jain_note;                 ///< why jain_second_half is none (empty when it is a number)
  double mean_queue_bytes = 0;           ///< over the same half (the whole run when there is none)
  double max_queue_bytes = 0;
  std::uint64_t ecn_marks = 0, cnps = 0, rate_cuts = 0, pause_frames = 0, fecn_marks = 0;
  double end_us = 0; ///< the last message acknowledged
  nlohmann::json summary() const;
};

/// Runs every variant.
std::vector<CcRunResult> run_cc_experiment(const CcExperiment& e);

/// Writes DIR/rates.csv, DIR/throughput.csv, DIR/queue.csv, DIR/summary.json and
/// DIR/{rates,throughput,queue}.svg.
void write_cc_results(const CcExperiment& e, const std::vector<CcRunResult>& runs, const std::string& dir);

/// "%.6g".
std::string fmt_g(double v);

/// A minimal SVG line chart (no external tools): one polyline per series, axes with tick labels.
std::string svg_chart(const std::string& title, const std::string& xlabel, const std::string& ylabel,
                      const std::vector<std::pair<std::string, std::vector<CcSeriesPoint>>>& series);

} // namespace ibn::scen
