#pragma once
// perftest scenario: ib_write_bw, ib_write_lat, ib_send_bw, ib_send_lat, ib_read_bw, ib_read_lat run
// on the packet engine between two HCAs. A pure driver: given a Fabric, its RoutingTables, a PacketConfig
// and a PerftestSpec it runs each message size on a fresh Simulation + PacketNetwork and returns one
// result row per size, in the units perftest prints (Gb/s, Mpps, microseconds). The CLI front-end that
// prints perftest's layout is apps/cmd_perftest.cpp; docs/perftest.md describes both.
//
// What each test does (perftest's semantics, from its README and report code):
// - bw tests: every QP posts `iterations` messages (perftest -n is per QP), keeping at most `tx_depth` of
//   its messages outstanding; a QP posts its next message when the requester sees a completion
//   (PacketNetwork::on_acked). QPs are filled one after the other at t = 0 (QP 0 up to tx_depth, then
//   QP 1, ...), as perftest's posting loop does. Time T = last completion - first post.
//     BW average = size x iterations x QPs / T;  MsgRate = iterations x QPs / T / 1e6;
//     BW peak = size / min over i <= j of (tcompleted[j] - tposted[i]) / (j - i + 1)
//   (tposted in post order, tcompleted in completion order: perftest's peak, computed exactly here by
//   Dinkelbach's method instead of perftest's O(n^2) scan). Peak >= average by construction.
//   Bidirectional (-b): both HCAs run the same test towards each other and the row is the sum of the two
//   sides (peak, average and message rate), as perftest's client adds the server's report to its own.
//   ib_read_bw: RDMA READs, at most PacketConfig::max_rd_atomic outstanding per QP (the engine's limit).
// - lat tests: one QP, one message at a time. write/send: ping-pong (A sends, B replies when A's data is
//   delivered, i.e. after nic_rx; A sends the next one when B's reply is delivered); a sample is RTT / 2.
//   ib_read_lat: A reads `size` bytes from B; a sample is the whole read (post to completion), as
//   perftest's rtt_factor is 1 for READ. Statistics over the samples: t_min, t_max, t_typical (median,
//   perftest's get_median), t_avg, t_stdev (population), 99 % and 99.9 % (sorted[ceil(p x n) - 1]).
//
// Iteration cap: with max_bytes_per_size > 0 the iterations per QP of a size are reduced so that one
// direction moves at most that many payload bytes (lat write/send count 2 x size per iteration), but
// never below kPerftestMinIterations (perftest's own lower bound). Each row reports the iterations it ran.
//
// Calibrated timing (spec.profile, from `ibnetsim calibrate fit`, docs/calibration.md): every message is
// posted to the engine at max(t + host_latency(S) + noise, previous post of the same sender + o + S/B),
// where t is when the test would post it, host_latency is the profile's deterministic per-message latency
// the engine does not model (host, PCIe, inline effects), noise is one draw from the profile's noise
// model (RNG stream "perftest noise" of the Simulation) per bw message, per read, and per ping-pong round
// trip (twice the draw on the request, none on the reply: the sample, RTT/2, gets one draw), and
// o + S/B is the fitted
// per-message cost of one sender (its posts never overlap). Latency samples and bw intervals start at t,
// so they include both. The caller applies the profile's engine settings (calib::apply) to the config.
//
// Limitations: RC only; no inline data, CQ moderation, post lists or CPU/PCIe costs (the engine's
// nic_tx/nic_rx latencies stand for them): small-message rates are far above real adapters until a
// calibration profile exists. Deterministic: without bit errors every latency sample is the same.
#include "calibration/perftest_parser.hpp"
#include "calibration/profile.hpp"
#include "models/packet/config.hpp"
#include "models/routing/routing.hpp"
#include "sim/time.hpp"
#include "topology/fabric.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ibn::scen {

using calib::PerftestTool;

inline constexpr std::uint64_t kPerftestMinIterations = 5;    ///< perftest's MIN_ITER
inline constexpr std::uint64_t kPerftestMaxAllSize = 1 << 23; ///< -a sweeps 2^1 .. 2^23 bytes

struct PerftestSpec {
  PerftestTool tool = PerftestTool::ib_write_bw;
  std::vector<std::uint64_t> sizes{65536}; ///< message sizes in bytes, each >= 1
  std::uint64_t iterations = 5000;         ///< per QP (perftest -n)
  std::uint64_t max_bytes_per_size = 0;    ///< 0: no cap (see the header comment)
  std::uint32_t qps = 1;                   ///< bw tests only (perftest -q)
  std::uint32_t tx_depth = 128;            ///< outstanding messages per QP, bw tests (perftest -t)
  bool bidirectional = false;              ///< bw tests only (perftest -b)
  routing::HcaIndex src = 0;               ///< the client (requester of the measured traffic)
  routing::HcaIndex dst = 1;               ///< the server
  std::uint64_t seed = 1;                  ///< Simulation seed (bit errors, profile noise)
  /// Calibrated per-message timing (see the header comment); null = none (the engine alone).
  std::shared_ptr<const calib::Profile> profile;
};

struct PerftestResultRow {
  std::uint64_t bytes = 0;
  /// As perftest prints it: bw tests iterations per QP x QPs, lat tests the iterations (= samples).
  std::uint64_t iterations = 0;
  std::uint64_t iterations_per_qp = 0;

  // bw tests: Gb/s (1e9 bit/s) and Mpps; bidirectional rows hold the sum of both directions.
  double bw_peak_gbps = 0;
  double bw_avg_gbps = 0;
  double msg_rate_mpps = 0;

  // lat tests, microseconds.
  double t_min_us = 0, t_max_us = 0, t_typical_us = 0, t_avg_us = 0, t_stdev_us = 0, p99_us = 0, p999_us = 0;

  Time duration;            ///< simulated time of the test (bw: first post to last completion, longest side)
  std::uint64_t events = 0; ///< events the Simulation executed for this size
  std::uint64_t messages = 0; ///< messages posted (both sides, both directions of a ping-pong)
};

/// Runs `spec` once per size; throws InputError for an invalid spec (naming the field).
std::vector<PerftestResultRow> run_perftest(const topo::Fabric& fabric, const routing::RoutingTables& tables,
                                            const pkt::PacketConfig& config, const PerftestSpec& spec);

/// perftest's BW peak denominator: min over i <= j of (completed[j] - posted[i]) / (j - i + 1), in ps per
/// message (posted in post order, completed in completion order; equal lengths). Exact, O(n) per pass.
double perftest_min_time_per_message(const std::vector<Time>& posted, const std::vector<Time>& completed);
/// 2, 4, ..., 2^23 (perftest -a).
std::vector<std::uint64_t> perftest_all_sizes();
/// perftest's defaults: iterations 5000 (bw) / 1000 (lat), size 65536 / 2, tx depth 128 / 1.
std::uint64_t perftest_default_iterations(PerftestTool t);
std::uint64_t perftest_default_size(PerftestTool t);
std::uint32_t perftest_default_tx_depth(PerftestTool t);
/// The iterations per QP `spec` runs at `size` (after the cap).
std::uint64_t perftest_iterations_for(const PerftestSpec& spec, std::uint64_t size);
/// perftest's test title: "RDMA_Write BW Test", "Send Bidirectional BW Test", "RDMA_Read Latency Test".
std::string perftest_title(PerftestTool t, bool bidirectional);
/// "ib_write_bw" -> tool; throws InputError listing the six tools.
PerftestTool parse_perftest_tool(const std::string& name);

/// Two HCAs and everything the driver needs to run between them.
struct PerftestPath {
  topo::Fabric fabric;
  routing::RoutingTables tables;
  pkt::PacketConfig config;
  routing::HcaIndex src = 0;
  routing::HcaIndex dst = 1;
  std::string description; ///< one line for reports: "back-to-back 4xNDR, 3 m DAC"
};

/// Two HCAs ("host-a", "host-b") on one cable of `cable_m` >= 0.01 metres (DAC up to 5 m, else fibre).
/// The engine forwards only through switches (a message needs a routed path), so the cable is modelled as
/// two halves joined by a transparent relay: a cut-through switch with zero latency. With equal rates
/// on both halves the relay adds nothing: t = nic_tx + ser + prop(cable) + nic_rx exactly, and the same
/// bandwidth. `base` is copied with switch_latency = 0 (the relay is the only switch).
PerftestPath back_to_back_path(topo::LinkSpeed speed, double cable_m, const pkt::PacketConfig& base);

/// HCAs `a` and `b` (node names) of `fabric`. Routing: ftree, or updn when ftree refuses the fabric
/// (not a layered tree). `base` is copied with switch_latency = default_switch_latency of `a`'s cable
/// generation and num_vls raised to what the routing needs. Throws InputError naming `what` and the
/// name when a node is missing, is not an HCA, or the two are the same or cannot reach each other.
PerftestPath fabric_path(topo::Fabric fabric, const std::string& a, const std::string& b,
                         const pkt::PacketConfig& base, const std::string& what);

} // namespace ibn::scen
