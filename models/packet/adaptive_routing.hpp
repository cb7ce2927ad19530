#pragma once
// Adaptive routing at a switch (the AR policy, a swappable part of the switch): which port of a destination's
// AR group a packet takes. Off: the LFT's port. Per packet: the least loaded port of the group (ties keep the
// earlier port, the static one first). Bounded: as per packet, but a (switch, destination) keeps its choice
// for `bound_window` (Mellanox's LIDBindTime). Pure: the load of a port comes from the caller;
// tests/models/components_test.cpp. The least-loaded choice is common::least_loaded
// (models/common/adaptive.hpp), shared with the flow engine; what this class adds is the packet engine's own:
// the per-packet load (queued bytes) and the bounded mode's memory, which the flow engine (one choice per
// message) has no use for.
#include "models/common/adaptive.hpp"
#include "models/packet/config.hpp"
#include "models/routing/routing.hpp"
#include "sim/time.hpp"

#include <cstdint>
#include <unordered_map>
#include <utility>

namespace ibn::pkt {

class ArPolicy {
 public:
  ArPolicy() = default;
  ArPolicy(ArMode mode, Time bound_window) : mode_(mode), window_(bound_window) {}
  ArMode mode() const { return mode_; }

  /// The port for destination `dst` at `sw` at time `now`; `load(port)` is a port's load (queued bytes, the
  /// maximum for an unusable port). kNoPort when the group is empty.
  template <class Load>
  routing::Port choose(const routing::RoutingTables& tables, topo::NodeId sw, routing::HcaIndex dst, Time now,
                       Load&& load) {
    if (mode_ == ArMode::Off) return tables.next_hop(sw, dst);
    const routing::ArGroupView g = tables.ar_group(sw, dst);
    if (g.size() <= 1) return g.empty() ? routing::kNoPort : g.static_port();
    const std::uint64_t key = (static_cast<std::uint64_t>(sw) << 32) | dst;
    if (mode_ == ArMode::Bounded) {
      auto it = bind_.find(key);
      if (it != bind_.end() && now - it->second.second < window_) return it->second.first;
    }
    // The choice itself is the one both engines share (the flow engine makes it per message, on flow counts).
    const routing::Port best = common::least_loaded(g, load);
    if (mode_ == ArMode::Bounded) bind_[key] = {best, now};
    return best;
  }

 private:
  ArMode mode_ = ArMode::Off;
  Time window_;
  std::unordered_map<std::uint64_t, std::pair<routing::Port, Time>> bind_; // bounded: (switch, dst)
};

} // namespace ibn::pkt
