#pragma once
// One point of a study (or the one run of `run`) as a sequence of segments, checkpointed and resumable, and
// run until a tail precision is reached.
//
// - Plain (run.segment_iterations = 0, no tail precision): one run_scenario(), exactly as before.
// - Segments (run.segment_iterations = K > 0): the finite jobs' measured iterations are run K at a time, each
//   segment a run of its own (warm-ups included; looping jobs and background traffic too) whose random
//   streams are drawn from (seed, segment index) only (scen::RunOptions::segment; segment 0 uses the
//   scenario's own streams, so it reproduces the plain run's first K iterations of the first size). The placement is the
//   point's. A job with N iterations runs min(K, N - sK) of them in segment s.
// - Checkpoints: each finished segment's result is written (atomically) to
//   DIR/checkpoints/<hash>/segment-<s>.json, where <hash> is a hash of the version, the effective
//   configuration (without the jobs' iteration counts) and K; a re-run of the same command finds them and
//   resumes after the last finished segment. A checkpoint is reused only if it ran the same iterations.
//   The merged result is computed from the checkpointed (rounded) segment results whether they were just
//   run or read back, so a resumed point equals an uninterrupted one byte for byte (wall-time fields aside).
// - Tail precision (target P > 0): segments of K (default: the scenario's iterations) are run until the 95 %
//   order-statistic interval of every measured collective's p99 has a half-width <= P x p99
//   (analysis/tail_stats.hpp), or the cap of measured iterations per collective is reached.
// - Merging segments: samples are concatenated in segment order and every percentile recomputed from them;
//   engine events, transfers, simulated and wall time are summed; link statistics by tier: bytes, marks,
//   stall and pause times summed, util_mean weighted by each segment's simulated time, util_max and
//   queue_max_bytes the largest of any segment; background traffic: counts summed, delivered_gbps weighted by
//   simulated time, latency mean weighted by messages, p50/p99/max the largest of any segment (an upper
//   bound, not a pooled percentile).
// The manifest records `segments` {iterations_per_segment, count} and, with a target,
// `tail_precision` {target_pct, max_iterations, iterations, half_width_pct, reached}.
#include "analysis/results.hpp"
#include "scenarios/scenario.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ibn {
struct ProgressSlot;
}

namespace ibn::analysis {

struct SegmentOptions {
  std::string checkpoint_dir; ///< where checkpoints/ goes (the point's folder); empty: no checkpoints
  double tail_precision = 0;  ///< target half-width of p99's 95 % interval over p99 (0.05 = 5 %); 0: off
  std::uint64_t max_iterations = 10000;        ///< with a target: most measured iterations per collective
  ProgressSlot* progress = nullptr;            ///< updated as the point runs (sim/progress.hpp)
  std::function<void(const std::string&)> log; ///< one line per resumed point
  /// Runs each segment in a forked child process (the flow engine: one SimGrid per process).
  bool segments_in_child_processes = false;
  std::function<void()> on_wait; ///< called about every 200 ms while a child process runs a segment
};

/// Runs the point as SegmentOptions and the top of this file say.
PointResult run_point_segmented(const scen::Scenario& s, const SegmentOptions& opt);

/// A point whose segments a study may run at once, in any order (run.segment_iterations > 0, no tail
/// target, a checkpoint folder): their count; 0 for any other point. Each segment's streams depend only on
/// (seed, segment index), so running them apart and merging their checkpoints gives run_point_segmented()'s
/// result byte for byte.
std::uint32_t independent_segments(const scen::Scenario& s, const SegmentOptions& opt);

/// Whether segment `seg` of such a point already has a valid checkpoint (a resumed study skips it).
bool segment_checkpointed(const scen::Scenario& s, const SegmentOptions& opt, std::uint32_t seg);

/// Runs segment `seg` of such a point in this process and writes its checkpoint (the caller skips segments
/// segment_checkpointed() finds); run_point_segmented() then reads it back. Progress goes to opt.progress.
void run_segment_to_checkpoint(const scen::Scenario& s, const SegmentOptions& opt, std::uint32_t seg);

/// Merges segment results (same scenario; at least one) as the top of this file says.
PointResult merge_segments(const std::vector<PointResult>& segments);

/// The largest relative half-width (hi - lo) / 2 / p99 of p99's 95 % interval over the measured collectives
/// (infinity when an interval is open or there is none).
double worst_p99_half_width(const PointResult& r);

/// "5%" or "5" -> 0.05 (percent, > 0 and < 100); InputError naming `flag` otherwise.
double parse_tail_precision(const std::string& text, const std::string& flag);

/// The checkpoint folder name of a scenario run in segments of k: "<16 hex digits>".
std::string checkpoint_hash(const scen::Scenario& s, std::uint32_t k);

} // namespace ibn::analysis
