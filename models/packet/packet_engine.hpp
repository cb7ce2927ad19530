#pragma once
// PacketEngine: the packet engine behind the engine-neutral eng::Engine interface (models/engine.hpp).
// It owns a Simulation and a PacketNetwork; send() posts an RDMA WRITE on QP (src, dst, qp_slot) and calls
// back when the data is complete at the receiver; call_at() runs a closure from the event queue.
//
// Callbacks run inside Simulation::run(), in (time, sequence) order, so runs are reproducible per seed.
//
// Period skips (PacketConfig::fast_forward): the time skipped is an offset between the engine's clock (now(),
// call_at, delivery times) and the simulation's, which never jumps; the network's state, relative to now,
// is the same either way (PacketNetwork::repeat_periods checked it).
#include "models/engine.hpp"
#include "models/packet/config.hpp"
#include "models/packet/network.hpp"
#include "sim/simulation.hpp"

#include <memory>

namespace ibn::pkt {

class PacketEngine final : public eng::Engine {
 public:
  /// `fabric` and `tables` must outlive the engine.
  PacketEngine(const topo::Fabric& fabric, const routing::RoutingTables& tables, const PacketConfig& config,
               std::uint64_t seed);
  ~PacketEngine() override;

  std::string name() const override { return "packet"; }
  Time now() const override;
  std::size_t num_hcas() const override;
  void send(const eng::TransferSpec& spec, eng::DeliveredFn on_delivered) override;
  void call_at(Time t, std::function<void()> fn) override;
  void run() override;
  eng::EngineReport report() const override;
  bool mark_period() override;
  bool skip_periods(std::uint64_t n) override;

  Simulation& simulation();
  PacketNetwork& network();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace ibn::pkt
