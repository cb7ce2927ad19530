#pragma once
// Points: a study is a list of points, each the base scenario with some overrides; every point is one full
// run written to OUT_DIR/points/<id>/results.json. Used by `whatif` and `sweep`.
//
// - In memory: each point's result is a PointResult (analysis/results.hpp) kept by the caller; its
//   results.json is written once and read back only for a resumed point or one run in a child process.
// - Resume: a point whose results.json exists with the same effective configuration and version is read
//   back instead of run again, so an interrupted study continues where it stopped.
// - Parallel: points run on `threads` threads of this process (one Simulation each, nothing shared), or —
//   for the flow engine (SimGrid allows one engine per process) — in a forked child process each, `threads`
//   children at a time (sim/child_processes.hpp; the parent stays single-threaded), or through `external`.
//   Results do not depend on `threads`.
// - Progress: every point has a slot of a shared-memory ProgressBoard (sim/progress.hpp); its percentage,
//   elapsed time and ETA go through `progress` a few seconds after it starts and then every 10 s.
// - Segments, checkpoints and tail precision: each point runs through run_point_segmented()
//   (analysis/segments.hpp) with its folder OUT_DIR/points/<id> for checkpoints.
// - Distributed: with `ranks` > 1 (an MPI job), rank r runs the points i with i mod ranks == r; the caller
//   synchronises and then calls collect_points() on rank 0.
// - Atomic: each results.json is written to a temporary file and renamed.
#include "analysis/results.hpp"
#include "scenarios/scenario.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ibn::analysis {

struct StudyPoint {
  std::string id;                     ///< folder name under OUT_DIR/points/
  std::vector<std::string> overrides; ///< "key=value" applied to the base scenario's effective configuration
};

struct PointsOptions {
  unsigned threads = 1;
  std::string out_dir;
  int rank = 0, ranks = 1;
  std::function<void(const std::string&)> progress;
  double progress_first_s = 2, progress_every_s = 10; ///< when a running point's progress line is printed
  double tail_precision = 0;                          ///< SegmentOptions::tail_precision (0: off)
  std::uint64_t max_iterations = 10000;               ///< SegmentOptions::max_iterations
  /// Runs one point out of process: given the point's scenario document and its results.json path, it must
  /// write that file (atomically). Empty: run in this process.
  std::function<void(const nlohmann::json& scenario, const std::string& results_path)> external;
};

/// Path of a point's results.json.
std::string point_results_path(const std::string& out_dir, const StudyPoint& p);

/// Runs (or reuses) this rank's points; returns their results, in memory (other ranks' points: empty).
std::vector<std::optional<PointResult>>
run_points(const scen::Scenario& base, const std::vector<StudyPoint>& points, const PointsOptions& opt);

/// Checks every point of a study before any runs (a bad value fails fast, naming its point): its keys, that
/// its jobs fit its fabric as the run would place them (faults at t = 0 applied), and that no two points are
/// the same scenario (`same(first_id, id)` is that error's text). `blame(point, message)` words an error
/// raised for a point. Returns the study's "no effect" warnings (scen::study_no_effect), and what a point's
/// engine (`engine`, else the point's `engine` key) ignores of what the point asks for
/// (eng::ignored_features: cc.algorithm dcqcn on the flow engine runs without CC), each once with the points
/// it holds for. One fabric is held at a time, rebuilt when the fabric configuration changes.
std::vector<std::string>
check_points(const scen::Scenario& base, const std::vector<StudyPoint>& points,
             const std::function<std::string(const std::string&, const std::string&)>& same,
             const std::function<std::string(const StudyPoint&, const std::string&)>& blame,
             std::optional<scen::EngineKind> engine = std::nullopt);

/// One warning per collective of a point that completed no measured iteration (run.max_sim_time_ms reached,
/// a QP failure): the study's rows leave it out, so the study says so ("point P: job J, allreduce 1 MiB: no
/// measured iteration completed (...); left out of the rows"), with the point's own run warnings.
std::vector<std::string> unmeasured_notes(const std::vector<StudyPoint>& points,
                                          const std::vector<PointResult>& results);

/// Reads every point's results.json (after all ranks are done); InputError naming a missing file.
std::vector<PointResult> collect_points(const std::vector<StudyPoint>& points, const std::string& out_dir);

} // namespace ibn::analysis
