#pragma once
// A Simulation, routing tables and a PacketNetwork over a hand-built fabric, for packet-engine tests.
#include "models/packet/network.hpp"
#include "models/routing/routing.hpp"
#include "sim/simulation.hpp"

#include <memory>
#include <string>

namespace ibn::test {

struct Run {
  Simulation sim{1};
  routing::RoutingTables tables;
  std::unique_ptr<pkt::PacketNetwork> net;
  Run(const topo::Fabric& f, const pkt::PacketConfig& cfg, const std::string& routing = "minhop",
      pkt::EventModel events = pkt::EventModel::Fast) {
    tables = routing::builtin_routing().get(routing).factory(f, {});
    net = std::make_unique<pkt::PacketNetwork>(sim, f, tables, cfg, events);
  }
};

} // namespace ibn::test
