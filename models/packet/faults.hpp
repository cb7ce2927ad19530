#pragma once
// Faults in the packet engine (docs/packet-models.md, "Faults"): cables that go down and come up at given
// times, the subnet manager's reroute around them after a sweep delay, and what a QP does when its retries
// run out. Degraded links (lower width or speed) are PacketNetwork::set_link_speed.
//
// Cost: nothing is allocated and no event model shortcut changes until a fault is scheduled; the hot path
// pays one test of Tx::down per kick. Scheduling a fault turns the Fast event model's shortcuts off (their
// incoming lists route a packet at the next switch when it is sent, so a reroute or a dead cable could not
// reach it); results of a faulted run are those of EventModel::Plain.
#include "models/routing/routing.hpp"
#include "sim/simulation.hpp"
#include "topology/fabric.hpp"

#include <cstdint>
#include <vector>

namespace ibn::pkt {

/// IB's local ACK timeout for the QP attribute `timeout` (0..31): 4.096 us x 2^timeout (IBA 9.7.6.1.3;
/// NCCL_IB_TIMEOUT, default 20 -> 4.29 s). Pass it as PacketConfig::ack_timeout; retry_cnt (0..7) is
/// PacketConfig::retry_count: the number of retransmissions after the first timeout, so a QP whose packets
/// are all lost fails after (retry_cnt + 1) timeouts.
Time ib_ack_timeout(int timeout_exp);

struct FaultConfig {
  /// Time from a cable's state change to the new LFTs in every switch. OpenSM sweeps on the port-state-change
  /// trap at once (sweep_on_trap TRUE, a heavy sweep) besides its periodic light sweep (sweep_interval 10 s);
  /// the heavy sweep's duration (discovery, routing, LFT MADs) grows with the fabric, milliseconds to seconds
  /// on real clusters. 100 us is a short-run default: set it from a measured sweep time where one is known.
  Time sm_sweep_delay = Time::from_us(100);
  /// Recompute the routes after each state change (false: the LFTs stay as built, dead outputs drop).
  bool reroute = true;
  /// Passed to the routing algorithm on the reroute (updn roots).
  routing::RoutingOptions routing_options;
};

/// A QP that exhausted its retries (transport retry counter exceeded): it went to the error state at `when`,
/// and the messages still in its send queue failed.
struct QpFailure {
  routing::HcaIndex src = 0, dst = 0;
  std::uint32_t slot = 0;
  Time when;
  std::vector<std::uint32_t> messages; ///< MessageIds not completed
};

struct FaultStats {
  std::uint64_t dropped_packets = 0; ///< lost on a dead cable or at a dead output
  std::uint64_t link_downs = 0, link_ups = 0;
  std::uint64_t reroutes = 0; ///< LFT replacements
  std::uint64_t qp_errors = 0;
};

} // namespace ibn::pkt
