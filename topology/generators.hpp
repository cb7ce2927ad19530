#pragma once
// Topology generators: fat-tree (2 or 3 tiers, any oversubscription per tier, partial population, rails),
// k-ary n-tree, and dragonfly. Each takes a parameter struct with units in the names and returns a
// validated Fabric; an impossible request throws InputError with the reason and the nearest valid choices.
#include "sim/registry.hpp"
#include "topology/fabric.hpp"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ibn::topo {

/// The largest switch radix a generator accepts (and the largest side of an oversubscription ratio).
inline constexpr int kMaxSwitchRadix = 4096;
/// The longest cable a fabric may hold (100 km, beyond long-haul InfiniBand extenders); longer lengths are
/// refused by the generators and the fabric JSON reader, so propagation delays stay far inside Time's range.
inline constexpr double kMaxCableLengthM = 100'000.0;

/// Resource bound: the most HCAs (and, separately, switches) a generator builds unless raised with
/// --max-hosts (scenario: fabric.params "max-hosts"). Four times the 65,536-host target; such a fabric
/// takes well under a second and a few hundred MB. docs/robustness.md gives the figures.
inline constexpr std::int64_t kDefaultMaxHosts = 262'144;

/// A fabric's size computed from the parameters alone, before anything is allocated (doubles, so no
/// parameter combination overflows).
struct FabricEstimate {
  double hosts = 0;    ///< servers
  double hcas = 0;     ///< endpoints: hosts x rails
  double switches = 0; ///< switches or routers
  double links = 0;    ///< cables
};
/// Throws InputError when `e` exceeds `max_hosts` HCAs or switches, naming the estimate, the limit and the
/// flag that raises it. `what` names the generator ("fat-tree").
void check_fabric_estimate(const FabricEstimate& e, std::int64_t max_hosts, const std::string& what);

/// Downlink:uplink bandwidth ratio of one tier, e.g. 3:1.
struct Ratio {
  int down = 1;
  int up = 1;
  double value() const { return static_cast<double>(down) / up; }
  std::string to_string() const { return std::to_string(down) + ":" + std::to_string(up); }
};
/// "2:1" -> {2,1}; "2:1,1:1" -> two tiers. Throws InputError naming `what`.
std::vector<Ratio> parse_ratios(const std::string& text, const std::string& what);

/// Cable length (metres) per tier boundary: host (HCA-leaf), leaf (leaf-spine), spine (spine-core).
struct CableLengths {
  double host_m = 3.0;
  double leaf_m = 30.0;
  double spine_m = 100.0;
  /// spine= was given: a 2-tier design, which has no spine-to-core cables, refuses it (it was inert).
  bool spine_given = false;
};
/// "host=3,leaf=30,spine=100" (any subset). Throws InputError naming `what`.
CableLengths parse_cable_lengths(const std::string& text, const std::string& what);

struct FatTreeParams {
  int tiers = 2;                       ///< 2 or 3 switch tiers
  int radix = 64;                      ///< switch ports
  std::optional<std::int64_t> hosts;   ///< servers; default: the maximum the ratios allow
  std::vector<Ratio> oversubscription; ///< per tier below the top, leaf first; missing tiers are 1:1
  std::optional<int> leaf_ports;       ///< ports used on each leaf (<= radix); default: all of them
  int rails = 1;                       ///< parallel planes; each host has one HCA per plane
  LinkSpeed speed;                     ///< every cable
  CableLengths cables;
  std::int64_t max_hosts = kDefaultMaxHosts; ///< resource bound (check_fabric_estimate)
};
Fabric build_fat_tree(const FatTreeParams& p);

/// Closed-form bisection of a generated fat-tree in Gb/s (model-reference.md §6.2):
/// N·b/(2·r1) for 2 tiers, N·b/(2·r1·r2) for 3 tiers, times rails, for full leaves and pods.
double fat_tree_bisection_closed_form_gbps(const FatTreeParams& p, std::int64_t hosts);

/// k-ary n-tree (Petrini & Vanneschi): N = k^n hosts, n levels of k^(n-1) switches with 2k ports,
/// top level using only its k down ports.
struct KaryNTreeParams {
  int k = 4;
  int n = 2;
  LinkSpeed speed;
  CableLengths cables;
  std::int64_t max_hosts = kDefaultMaxHosts; ///< resource bound (check_fabric_estimate)
};
Fabric build_kary_ntree(const KaryNTreeParams& p);

enum class GlobalArrangement { Absolute, Relative, Circulant };
GlobalArrangement parse_arrangement(const std::string& text, const std::string& what);
std::string to_string(GlobalArrangement a);

/// Dragonfly (Kim et al.): a routers per group, p hosts per router, h global links per router, g groups.
/// Zero values are filled to a balanced dragonfly (a = 2p = 2h, g = a·h + 1) from whatever is given.
struct DragonflyParams {
  int a = 0, p = 0, h = 0, g = 0;
  GlobalArrangement arrangement = GlobalArrangement::Absolute;
  LinkSpeed speed;
  double host_cable_m = 3.0, local_cable_m = 5.0, global_cable_m = 50.0;
  std::int64_t max_hosts = kDefaultMaxHosts; ///< resource bound (check_fabric_estimate)
};
/// Fills balanced defaults and checks g <= a·h+1 and that the global links pair up.
DragonflyParams complete_dragonfly(DragonflyParams p);
Fabric build_dragonfly(const DragonflyParams& p);

/// Generic generator entry: key=value parameters -> Fabric (used by `ibnetsim list` and scenarios).
using GeneratorFactory = std::function<Fabric(const std::map<std::string, std::string>& params)>;
/// A fresh registry with the built-in generators (fat-tree, kary-ntree, dragonfly).
Registry<GeneratorFactory> builtin_generators();

} // namespace ibn::topo
