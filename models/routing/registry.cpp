#include "models/routing/dragonfly.hpp"
#include "models/routing/routing.hpp"

namespace ibn::routing {

Registry<RoutingFactory> builtin_routing() {
  Registry<RoutingFactory> reg("routing algorithm");
  reg.add(
      "ftree",
      "fat-tree D-mod-k as OpenSM's ftree fills LFTs: destinations spread over up-ports by ca-order index; "
      "layered trees only; deadlock-free with 1 VL",
      [](const topo::Fabric& f, const RoutingOptions& o) { return route_ftree(f, o); });
  reg.add("minhop",
          "OpenSM default: min-hop ports, port equalisation (fewest destinations first); any fabric, "
          "not deadlock-free on cyclic ones",
          [](const topo::Fabric& f, const RoutingOptions& o) { return route_minhop(f, o); });
  reg.add("updn",
          "up*/down* from the top-tier roots (or --roots), shortest legal paths with port equalisation; any "
          "connected fabric, deadlock-free with 1 VL",
          [](const topo::Fabric& f, const RoutingOptions& o) { return route_updn(f, o); });
  reg.add("df-min", "dragonfly minimal: local, global, local (<= 3 switch hops); 2 VLs (VL+1 per global hop)",
          [](const topo::Fabric& f, const RoutingOptions&) {
            return route_dragonfly(f, DragonflyMode::Minimal);
          });
  reg.add(
      "df-valiant",
      "dragonfly Valiant, tables only (the minimal LFT; `run` refuses it: the engines do not yet take its "
      "random intermediate group per message)",
      [](const topo::Fabric& f, const RoutingOptions&) {
        return route_dragonfly(f, DragonflyMode::Valiant);
      });
  reg.add(
      "df-ugal",
      "dragonfly UGAL, tables only (the minimal LFT; `run` refuses it: the engines do not yet choose MIN or "
      "Valiant per message)",
      [](const topo::Fabric& f, const RoutingOptions&) { return route_dragonfly(f, DragonflyMode::Ugal); });
  return reg;
}

} // namespace ibn::routing
