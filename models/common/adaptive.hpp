#pragma once
// The least-loaded choice of adaptive routing, one definition for both engines: among the ports of the AR
// group (the static LFT port first, then the others in port order), the first with the smallest load. What
// "load" is belongs to the engine: queued bytes at the output (packet engine, per packet) or flows in their
// bandwidth phase on the link (flow engine, per message).
#include "models/routing/routing.hpp"

#include <cstdint>

namespace ibn::common {

/// The first port of `group` with the smallest `load(port)` (a std::uint64_t); kNoPort for an empty group.
/// Ties keep the earlier port, so with equal loads the static port wins. A one-port group is returned
/// without asking its load, and the ports after the first idle one (load 0) are not asked either. `load`
/// must be free of side effects that matter (it may not be called for every port).
template <typename LoadFn> routing::Port least_loaded(const routing::ArGroupView& group, LoadFn&& load) {
  if (group.size() <= 1) return group.empty() ? routing::kNoPort : group.static_port();
  routing::Port best = group[0];
  std::uint64_t best_load = load(best);
  // Nothing is below zero and ties keep the earlier port: an idle port ends the search, same choice.
  for (std::size_t i = 1; i < group.size() && best_load > 0; ++i) {
    const routing::Port p = group[i];
    const std::uint64_t l = load(p);
    if (l < best_load) {
      best = p;
      best_load = l;
    }
  }
  return best;
}

} // namespace ibn::common
