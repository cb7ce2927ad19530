#pragma once
// Dragonfly routing (Kim, Dally, Scott, Abts, ISCA'08; model-reference.md §2.4): minimal (MIN) tables,
// Valiant paths and the UGAL decision rule.
//
// MIN, from router r in group G to an HCA on router y in group T:
// - r == y: the HCA's port; G == T: the local cable(s) to y.
// - G != T: the global cables from G to T are listed in (router NodeId, port) order; cable
//   c = cables[d mod n] is the static choice for HCA index d (destinations spread over parallel global
//   cables). If r owns c it takes it; else if r owns other cables to T it takes its own[d mod n_own]
//   (a direct global hop is never preceded by a local one); else it takes the local cable to c's router.
//   Then local in T to y. At most local + global + local = 3 switch hops, 5 cables host to host.
// - AR group: r's own cables to T if it has any, else the local cables to every router owning a cable to
//   T; in group T the local cable(s) to y. Every port of the group starts a MIN path.
// VLs (VlRule::PerGlobalHop): a packet moves up one VL after each global hop — MIN uses VL0 (source group,
// global hop) and VL1 (destination group): 2 VLs; Valiant 3.
//
// Valiant: to a random intermediate group I (drawn per message by the caller's RNG, I != G, T), MIN toward
// group I until the packet enters I, then MIN to the destination: at most 5 switch hops.
// UGAL (-L with local queues, -G with global ones; the caller supplies the queue estimates): MIN when
// q_min * H_min <= q_val * H_val + T, else Valiant.
//
// Limitations: MIN needs at least one global cable between every pair of groups and all-to-all local
// cables in each group (the generator's dragonflies); other fabrics are refused with an InputError
// suggesting minhop or updn. PAR / progressive adaptive routing is not modelled.
#include "models/routing/routing.hpp"
#include "sim/rng.hpp"

#include <cstdint>
#include <vector>

namespace ibn::routing {

/// The group structure the df-* tables are built on (RoutingTables::dragonfly()).
struct DragonflyLayout {
  struct GlobalCable {
    std::uint32_t sw = 0; ///< switch index (RoutingTables::switch_index) of the owning router
    Port port = kNoPort;
  };
  int num_groups = 0;
  std::vector<int> group_of_switch;                ///< switch index -> group
  std::vector<int> index_in_group;                 ///< switch index -> position in its group
  std::vector<std::vector<std::uint32_t>> routers; ///< group -> switch indices, NodeId order
  std::vector<std::uint32_t> cable_offset;         ///< [G * num_groups + T] .. [+1]: cables G -> T
  std::vector<GlobalCable> cables;
  int max_routers = 0;          ///< largest group
  std::vector<Port> local_port; ///< [sw * max_routers + index_in_group(x)]: first port sw -> x

  std::span<const GlobalCable> cables_between(int from, int to) const {
    const std::size_t k =
        static_cast<std::size_t>(from) * static_cast<std::size_t>(num_groups) + static_cast<std::size_t>(to);
    return {cables.data() + cable_offset[k], cables.data() + cable_offset[k + 1]};
  }
  /// MIN toward any router of group `target` from switch index `sw` (outside `target`), spreading over
  /// parallel global cables by `spread` (the destination's HcaIndex for MIN).
  Port port_toward_group(std::uint32_t sw, int target, std::uint64_t spread) const;
};

/// df-min / df-valiant / df-ugal tables (the static LFT is MIN in all three; `mode` tells the engine which
/// path choice to make per message and sets num_vls(): 2 for Minimal, 3 otherwise).
RoutingTables route_dragonfly(const topo::Fabric& f, DragonflyMode mode);

/// A uniformly drawn intermediate group for Valiant: any group but the source's and the destination's.
/// Returns -1 when there is none (fewer than 3 groups).
int draw_intermediate_group(const RoutingTables& t, HcaIndex src, HcaIndex dst, Rng& rng);

/// The Valiant path src -> group `intermediate` -> dst as LinkIds (first cable the source HCA's, last the
/// destination's). With intermediate < 0, or equal to the source or destination group, the MIN path.
/// Throws InputError if the tables are not dragonfly tables or there is no route.
std::vector<topo::LinkId> valiant_route(const RoutingTables& t, HcaIndex src, HcaIndex dst, int intermediate);

/// Switch hops (cables between switches) of a path as route()/valiant_route() return it.
int switch_hops(const std::vector<topo::LinkId>& path);

enum class PathChoice : std::uint8_t { Minimal, Valiant };
/// UGAL: Minimal when min_queue_bytes * min_hops <= val_queue_bytes * val_hops + threshold_byte_hops.
PathChoice ugal_choose(std::int64_t min_queue_bytes, int min_hops, std::int64_t val_queue_bytes, int val_hops,
                       std::int64_t threshold_byte_hops);

} // namespace ibn::routing
