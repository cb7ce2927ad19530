#pragma once
// Scenario faults (docs/scenarios.md "Faults"): the `faults` keys — timed events (link/switch down and up,
// degraded width or speed), the subnet manager's sweep delay and reroute, bit-error rates per link or tier
// with the FEC in use, and random faults drawn per seed ("k links per tier", "a fraction p of links
// degraded") — and how a run applies them.
//
// Faults at t = 0 are applied to the fabric before routing: cables down at t = 0 (and every cable of a switch
// down at t = 0) are removed and degraded cables take their new speed, so both engines run on that fabric and
// the routes are computed around the failures before the first iteration. Faults at t > 0 go to the engine's
// fault API (scenarios/timed_faults.hpp): the packet engine's (models/packet/faults.hpp: SM reroute after the
// sweep delay, RC timeouts and retries) or the flow engine's, the same in fluid form (flow_engine.hpp).
//
// Bit errors: a cable's pre-FEC bit-error rate b and its FEC give a post-FEC codeword failure probability
// (fec_codeword_failure) and an equivalent residual per-bit rate, so a packet of W wire bytes is lost with
// probability 1 - (1 - b_res)^(8 W). The packet engine drops such packets (go-back-N recovers them); the flow
// engine scales the cable's capacity by the delivered fraction of full-MTU packets (1 - P_loss).
#include "scenarios/schema.hpp"
#include "sim/time.hpp"
#include "topology/fabric.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ibn::scen {

enum class FaultKind : std::uint8_t { LinkDown, LinkUp, SwitchDown, SwitchUp, Degrade };
std::string to_string(FaultKind k);

/// Forward error correction of a cable: none, RS(528,514) "KR4" (EDR, t = 7), RS(544,514) "KP4" (HDR/NDR,
/// t = 15); 10-bit symbols.
enum class FecKind : std::uint8_t { None, Rs528, Rs544 };

/// Probability that a codeword of the FEC is not corrected at pre-FEC bit-error rate `ber` (independent bit
/// errors): P = sum_{i > t} C(n, i) p^i (1 - p)^(n - i), p = 1 - (1 - ber)^10 the symbol error rate.
/// FecKind::None: the probability that a 5140-bit block has an error, 1 - (1 - ber)^5140.
double fec_codeword_failure(double ber, FecKind fec);
/// The residual per-bit rate equivalent to fec_codeword_failure: 1 - (1 - P_cw)^(1 / 5140) (a codeword
/// carries 514 x 10 = 5140 data bits), so a packet of W bytes is lost with probability 1 - (1 - b_res)^(8 W).
double post_fec_bit_error_rate(double ber, FecKind fec);
/// 1 - (1 - b)^(8 * wire_bytes).
double packet_loss_probability(double bit_error_rate, std::uint64_t wire_bytes);
/// The flow engine runs a cable at capacity x P(a packet of `wire_bytes` gets through). Where that is below
/// 1e-6 every QP crossing the cable would exhaust its RC retries, which a fluid model cannot express: an
/// InputError naming `file`'s faults.ber and the cable (the capacity underflowed to "unconstrained" before:
/// 5e-3 pre-FEC ran 27x faster than the link). `ber`: per LinkId residual (post-FEC) bit-error rate.
void refuse_dead_ber_links(const std::vector<double>& ber, std::uint64_t wire_bytes,
                           const topo::Fabric& fabric, const std::string& file);

struct FaultEventSpec {
  double time_us = 0;
  FaultKind kind = FaultKind::LinkDown;
  std::string link; ///< "NODE:PORT" or "NODE/NODE" ("" with tier: one drawn per seed)
  std::string node; ///< switch name ("" with tier: one drawn per seed)
  int tier = -1; ///< links: the lower tier of the cable (0 host-leaf, 1 leaf-spine, ...); switches: its tier
  int width = 0; ///< degrade: lanes (0 = keep)
  std::string speed; ///< degrade: generation "HDR" or "2xHDR" ("" = keep)
};

struct BerSpec {
  std::string link; ///< "" = every cable of `tier` (every cable when tier < 0 too)
  int tier = -1;
  double pre_fec_ber = 0;
  FecKind fec = FecKind::Rs544;
};

struct RandomFaultSpec {
  std::uint32_t links_down = 0;    ///< cables of link_tier down, drawn per seed
  int link_tier = 1;               ///< default: leaf-spine cables
  std::uint32_t switches_down = 0; ///< switches of switch_tier down, drawn per seed
  int switch_tier = 2;             ///< default: spines
  double degraded_fraction = 0;    ///< fraction of the cables of degraded_tier (all when < 0) degraded
  int degraded_tier = -1;
  int degraded_width = 2;     ///< lanes of a degraded cable (0 = keep)
  std::string degraded_speed; ///< generation of a degraded cable ("" = keep)
  double time_us = 0;         ///< when the drawn faults happen
};

struct FaultSpec {
  bool given = false; ///< the scenario has a `faults` section
  std::vector<FaultEventSpec> events;
  double sm_sweep_delay_us = 100;
  bool reroute = true;
  std::vector<BerSpec> ber;
  RandomFaultSpec random;
  bool any() const {
    return !events.empty() || !ber.empty() || random.links_down || random.switches_down ||
           random.degraded_fraction > 0;
  }
};

/// Declares the `faults` keys (scenario.cpp's schema).
void add_fault_keys(Schema& s);
/// Reads the effective `faults` section (absent: FaultSpec{}). InputError naming `where` and the key.
FaultSpec parse_faults(const nlohmann::json& effective, const std::string& where);

/// One resolved fault on a fabric.
struct FaultAction {
  Time at;
  FaultKind kind = FaultKind::LinkDown;
  topo::LinkId link = topo::kNoLink; ///< link faults and degrade
  topo::NodeId node = topo::kNoNode; ///< switch faults
  topo::LinkSpeed speed;             ///< degrade
  std::string what;                  ///< "link_down leaf-0:33 (leaf-0/spine-1) at 0 us"
};

/// Faults resolved on a fabric: names looked up, random draws made (stream "faults" of the seed).
struct FaultPlan {
  std::vector<FaultAction> actions;   ///< in time order (stable)
  std::vector<double> link_ber;       ///< per LinkId residual per-bit rate; empty: no bit errors
  std::vector<std::string> described; ///< one line per fault, for results and messages
};
FaultPlan plan_faults(const FaultSpec& spec, const topo::Fabric& f, std::uint64_t seed,
                      const std::string& where);

/// The fabric after the faults at t = 0 (removed cables, new speeds) and what remains for the engine.
struct FaultedFabric {
  topo::Fabric fabric;
  std::vector<FaultAction> timed; ///< faults at t > 0, LinkIds of `fabric`
  std::vector<double> link_ber;   ///< per LinkId of `fabric`; empty: none
  std::size_t removed_links = 0;
};
/// InputError (naming `where`) when a t = 0 fault cuts an HCA off, or a later fault names a cable removed at
/// t = 0.
FaultedFabric apply_initial_faults(const topo::Fabric& f, const FaultPlan& plan, const std::string& where);

} // namespace ibn::scen
