#pragma once
// describe(): the numbers `ibnetsim topo info` prints, all computed from the graph itself so they are
// right for generated, imported and degraded fabrics alike.
//
// - per tier: switch count, down ports (cables to a lower tier), up ports (to a higher tier), and
//   oversubscription = sum of down-link bandwidth / sum of up-link bandwidth (null for the top tier).
// - bisection_gbps: max-flow/min-cut between the first and second half of the HCAs (NodeId order, which
//   for generated trees is leaf order), in Gb/s per direction; for generated fabrics the closed form of
//   model-reference.md §6 is reported beside it (`bisection_closed_form_gbps`).
// - diameter_hops: largest hop count (cables) of a shortest path between two HCAs.
// - path diversity: number of distinct minimal paths between HCA pairs on different leaves (min/mean/max
//   over ordered HCA pairs; parallel cables are distinct paths); 1 when every HCA sits on one leaf.
//   HCAs that are cabled to each other directly count as "different leaves" with one path per cable.
//   Unreachable pairs count as 0 paths and clear `connected`; the diameter is over reachable pairs.
//   Exception: HCAs on different planes (rails) with no path between them are not counted at all, since
//   separate rail planes are separate networks by design.
//
// Conventions: only switches and routers forward; HCAs and aggregation nodes are endpoints. Cables of
// aggregation nodes (SHARP) are left out of the per-tier port counts and oversubscription.
// Cost: one BFS over the deduplicated switch graph per leaf (CSR arrays), one push-relabel max-flow over
// switches + 2 contracted terminals.
#include "topology/fabric.hpp"

#include <optional>
#include <string>
#include <vector>

namespace ibn::topo {

struct TierSummary {
  int tier = 0;
  std::size_t switches = 0;
  std::size_t down_ports = 0;
  std::size_t up_ports = 0;
  std::size_t lateral_ports = 0;          ///< cables to the same tier (dragonfly local/global, leaf-leaf)
  std::optional<double> oversubscription; ///< down bandwidth / up bandwidth; empty when no up-links
  /// The largest down/up bandwidth ratio of a single switch of the tier (switches with up-links only).
  /// Equals `oversubscription` on a uniform tier; differs on a partly populated leaf or a degraded cable.
  std::optional<double> oversubscription_max;
};

struct FabricSummary {
  std::string name;
  std::size_t hosts = 0;
  std::size_t hcas = 0;
  std::size_t switches = 0;
  std::size_t links = 0;
  int tiers = 0; ///< switch tiers
  std::vector<TierSummary> per_tier;
  double bisection_gbps = 0;
  std::optional<double> bisection_closed_form_gbps;
  int diameter_hops = 0;
  double path_diversity_min = 0, path_diversity_mean = 0, path_diversity_max = 0;
  std::size_t degraded_links = 0; ///< cables slower or narrower than the fastest cable of their tier pair
  bool connected = true;          ///< every pair of HCAs is joined by a path through switches or a cable
};

FabricSummary describe(const Fabric& f);
/// Max-flow/min-cut in bits per second between two disjoint sets of nodes (sources -> sinks).
double max_flow_bps(const Fabric& f, const std::vector<NodeId>& sources, const std::vector<NodeId>& sinks);

/// JSON with the keys of docs/CLI.md ("hosts", "switches", "links", "tiers", "per_tier", "bisection_gbps",
/// "diameter_hops") plus the extra figures above.
nlohmann::json summary_to_json(const FabricSummary& s);
/// A human-readable table.
std::string summary_to_text(const FabricSummary& s);

} // namespace ibn::topo
