#pragma once
// The what-if study (CLI.md `whatif`): one scenario run at every point of oversubscription ratio x routing
// mode (adaptive routing off / on) — and, when the packet engine has them, congestion-control settings —
// each point a full run written to OUT_DIR/points/<id>/results.json; OUT_DIR/whatif.json holds one row per
// point and per measured (non-background) collective with the percentiles, bandwidths, samples and link
// statistics by tier.
//
// Points run in parallel threads (one Simulation each; no shared mutable state). A point whose results.json
// already exists with the same effective configuration and version is reused, so an interrupted study
// resumes where it stopped. The oversubscription dimension sets fabric.params.oversubscription (and, on a
// fat-tree whose radix does not split exactly at the ratio, fabric.params.leaf-ports to the split that needs
// the fewest switches with every leaf full for the scenario's hosts, topology/port_split.hpp — else the largest
// multiple of down+up not above the radix — and reports the choice through `progress`); it needs a generated
// fabric.
#include "analysis/results.hpp"
#include "scenarios/scenario.hpp"
#include "topology/generators.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ibn::analysis {

struct WhatifOptions {
  std::vector<topo::Ratio> ratios;                 ///< empty: the scenario's own fabric only
  std::vector<pkt::ArMode> routings{pkt::ArMode::Off, pkt::ArMode::PerPacket};
  std::vector<pkt::CcMode> ccs;                    ///< congestion control per point; empty: the scenario's
  /// Fault tokens (fault_token_json); empty: no fault dimension (rows and table as without it).
  std::vector<std::string> faults;
  /// Straggler tokens per point (parse_stragglers_token); empty: the dimension is absent (rows unchanged).
  std::vector<std::string> stragglers;
  std::optional<scen::EngineKind> engine;          ///< empty: the scenario's
  unsigned threads = 1;
  double tail_precision = 0;            ///< see analysis/segments.hpp (0: off)
  std::uint64_t max_iterations = 10000; ///< cap with a tail precision
  std::string out_dir = "whatif-out";
  std::function<void(const std::string&)> progress;
  /// Runs a point in a child process (see PointsOptions::external); empty: in this process.
  std::function<void(const nlohmann::json& scenario, const std::string& results_path)> external;
};

struct WhatifPoint {
  std::string id;              ///< e.g. "2to1-adaptive"
  std::string oversubscription;///< "2:1" (or "file" for a fabric file)
  std::string routing;         ///< "static" or "adaptive" (and the AR mode)
  pkt::CcMode cc = pkt::CcMode::None; ///< congestion control of the point
  std::string faults;                 ///< the point's --faults token ("" without the dimension)
  std::string stragglers;             ///< the --stragglers token ("" when the dimension is absent)
  std::vector<std::string> overrides;
};

/// One row of whatif.json: a point's measured (non-background) collective.
struct WhatifRow {
  const WhatifPoint* point = nullptr;
  double ratio = 0;          ///< the requested leaf ratio (a fabric file: the measured one)
  double ratio_measured = 0; ///< from the fabric's graph, rounded to 1e-4
  const CollectiveResult* collective = nullptr;
  const PointResult* result = nullptr;
};

/// The scenario's `faults` section for a `whatif --faults` token: none | K-link[@TIER] | K-switch[@TIER] |
/// degraded-Ppct[:WIDTHxRATE] (links drawn per seed; TIER a number or host-leaf, leaf-spine, spine-core for
/// cables, leaf, spine, core for switches; defaults leaf-spine cables, spines, 2x width). "none" gives an
/// empty object. InputError naming the token.
nlohmann::json fault_token_json(const std::string& token);

/// `whatif --stragglers` tokens: "none" | "KxF[+Dus]" — K slow nodes per job (chosen per seed), their NICs at
/// F x the rate (0 < F <= 1), their ranks D us late every iteration; e.g. 1x0.5, 2x1+50us. Returns the scenario
/// overrides (variability.stragglers.*); InputError naming --stragglers and the token otherwise.
std::vector<std::string> parse_stragglers_token(const std::string& token);

/// The points of a study, in table order (ratio major, then faults, routing minor).
std::vector<WhatifPoint> whatif_points(const scen::Scenario& base, const WhatifOptions& opt);

/// The rows of a study from its points' results (in memory; the fabric's ratio comes with each result).
std::vector<WhatifRow> whatif_rows(const std::vector<WhatifPoint>& points, const std::vector<PointResult>& results);

/// Runs (or resumes) every point and returns the whatif.json document; also writes it and each point's
/// results.json under opt.out_dir.
nlohmann::json run_whatif(const scen::Scenario& base, const WhatifOptions& opt);

/// The summary table printed by `ibnetsim whatif` (rows: size x ratio x routing; columns: p50, p99, p99.9,
/// busbw p50).
std::string whatif_table(const nlohmann::json& whatif);

} // namespace ibn::analysis
