#include "models/packet/packet_engine.hpp"

#include "sim/error.hpp"

#include <algorithm>
#include <vector>

namespace ibn::pkt {

namespace {

/// Closures waiting for their time; slots are recycled through a free list so long runs do not grow.
template <typename Fn> class SlotTable {
 public:
  std::uint32_t put(Fn fn) {
    if (free_.empty()) {
      slots_.push_back(std::move(fn));
      return static_cast<std::uint32_t>(slots_.size() - 1);
    }
    const auto i = free_.back();
    free_.pop_back();
    slots_[i] = std::move(fn);
    return i;
  }
  Fn take(std::uint32_t i) {
    Fn fn = std::move(slots_[i]);
    slots_[i] = nullptr;
    free_.push_back(i);
    return fn;
  }

 private:
  std::vector<Fn> slots_;
  std::vector<std::uint32_t> free_;
};

} // namespace

struct PacketEngine::Impl {
  /// The component that runs timer closures; the event tag is the closure's slot.
  struct Timers final : Component {
    Timers(Simulation& s, Impl& i) : Component(s, "engine-timers"), impl(i) {}
    void on_event(EventTag tag) override {
      const auto slot = static_cast<std::uint32_t>(tag);
      if (impl.allowed) impl.timer_at[slot] = Time::max();
      impl.timers.take(slot)();
    }
    Impl& impl;
  };

  Impl(const topo::Fabric& f, const routing::RoutingTables& t, const PacketConfig& c, std::uint64_t seed)
      : fabric(f), sim(seed), net(sim, f, t, c), timer_component(sim.make<Timers>(sim, *this)) {
    net.on_delivered([this](const MessageRecord& rec) {
      ++delivered;
      callbacks.take(static_cast<std::uint32_t>(rec.spec.user_tag))(rec.delivered + clock_offset());
    });
  }

  const topo::Fabric& fabric;
  Simulation sim;
  PacketNetwork net;
  SlotTable<eng::DeliveredFn> callbacks;
  SlotTable<std::function<void()>> timers;
  Timers& timer_component;
  /// With fluid skips: each timer slot's simulation time and event, Time::max() when not pending. A skip
  /// stops before the earliest and moves them all earlier by the time it skipped (they stay due at their
  /// engine times). A walk over the slots (as many as timers ever pending at once) when a skip is planned,
  /// nothing per timer but two stores.
  std::vector<Time> timer_at;
  std::vector<EventHandle> timer_event;
  void schedule_timer(Time at, std::uint32_t slot) {
    const EventHandle h = sim.schedule_at(at, timer_component.id(), slot);
    if (!allowed) return; // no fluid skips: nothing to track
    if (timer_at.size() <= slot) {
      timer_at.resize(slot + 1, Time::max());
      timer_event.resize(slot + 1);
    }
    timer_at[slot] = at;
    timer_event[slot] = h;
  }
  Time first_timer() const {
    Time t = Time::max();
    for (const Time at : timer_at) t = std::min(t, at);
    return t;
  }
  void timers_earlier(Time dt) {
    for (std::uint32_t slot = 0; slot < timer_at.size(); ++slot)
      if (timer_at[slot] != Time::max()) {
        sim.cancel(timer_event[slot]);
        schedule_timer(timer_at[slot] - dt, slot);
      }
  }
  std::uint64_t delivered = 0;
  // Skips: the engine's clock is the simulation's + the periods skipped (offset) + the network's fluid skips.
  Time offset;
  Time clock_offset() const { return offset + net.fluid_skip_stats().skipped; }
  Time mark_fluid;      // the network's fluid skips at the mark (a fluid skip since voids the mark)
  bool allowed = false; // packet.fast_forward and a network whose features allow skips
  Time mark_at = Time::max(); // the simulation's time at the mark (Time::max(): none)
  std::uint64_t mark_delivered = 0, mark_events = 0;
  std::uint64_t skips = 0, periods_skipped = 0, events_skipped = 0;
};

PacketEngine::PacketEngine(const topo::Fabric& fabric, const routing::RoutingTables& tables,
                           const PacketConfig& config, std::uint64_t seed)
    : impl_(std::make_unique<Impl>(fabric, tables, config, seed)) {
  impl_->allowed = config.fast_forward && impl_->net.period_skips_allowed();
  impl_->net.recycle_messages(true); // records are read only in the delivery callback
  if (impl_->allowed) {
    Impl* m = impl_.get();
    m->net.enable_fluid_skips([m] { return m->first_timer(); }, [m](Time dt) { m->timers_earlier(dt); });
  }
}

PacketEngine::~PacketEngine() = default;

Time PacketEngine::now() const {
  return impl_->sim.now() + impl_->clock_offset();
}
std::size_t PacketEngine::num_hcas() const { return impl_->net.num_hcas(); }
Simulation& PacketEngine::simulation() { return impl_->sim; }
PacketNetwork& PacketEngine::network() { return impl_->net; }

void PacketEngine::send(const eng::TransferSpec& spec, eng::DeliveredFn on_delivered) {
  MessageSpec m;
  m.src = spec.src;
  m.dst = spec.dst;
  m.bytes = spec.bytes;
  m.qp_slot = spec.qp_slot;
  m.sl = spec.sl;
  m.verb = Verb::Write;
  const auto slot = impl_->callbacks.put(std::move(on_delivered));
  m.user_tag = slot;
  try {
    impl_->net.post(m);
  } catch (...) {
    impl_->callbacks.take(slot);
    throw;
  }
}

void PacketEngine::call_at(Time t, std::function<void()> fn) {
  const auto slot = impl_->timers.put(std::move(fn));
  impl_->schedule_timer(t - impl_->clock_offset(), slot);
}

bool PacketEngine::mark_period() {
  Impl& m = *impl_;
  if (!m.allowed) return false;
  m.net.mark_period();
  m.mark_at = m.sim.now();
  m.mark_delivered = m.delivered;
  m.mark_events = m.sim.total_events_executed();
  m.mark_fluid = m.net.fluid_skip_stats().skipped;
  return true;
}

bool PacketEngine::skip_periods(std::uint64_t n) {
  Impl& m = *impl_;
  if (m.mark_at == Time::max() || m.sim.now() <= m.mark_at) return false;
  const Time period = m.sim.now() - m.mark_at;
  m.mark_at = Time::max();
  if (m.net.fluid_skip_stats().skipped != m.mark_fluid) return false; // the period measured includes one
  if (n > static_cast<std::uint64_t>((Time::max() - m.sim.now() - m.clock_offset()).count_ps() /
                                     period.count_ps()))
    return false; // the clock would wrap
  if (!m.net.repeat_periods(n)) return false;
  m.offset += Time::ps(static_cast<std::int64_t>(n) * period.count_ps());
  m.delivered += n * (m.delivered - m.mark_delivered);
  m.events_skipped += n * (m.sim.total_events_executed() - m.mark_events);
  m.periods_skipped += n;
  ++m.skips;
  return true;
}

void PacketEngine::run() { impl_->sim.run(); }

eng::EngineReport PacketEngine::report() const {
  eng::EngineReport r;
  r.engine = "packet";
  r.events = impl_->sim.total_events_executed();
  r.transfers = impl_->delivered;
  const auto& f = impl_->fabric;
  // The ports made on first use, the others folded per tier (PacketNetwork::used_port_stats).
  for (const auto& ps : impl_->net.used_port_stats()) {
    if (ps.link == topo::kNoLink) continue;
    const auto& link = f.link(ps.link);
    eng::LinkRecord l;
    l.from_tier = f.node(ps.node).tier;
    l.to_tier = f.node(link.other(ps.node)).tier;
    l.capacity_gbps = static_cast<double>(ps.rate_bps) * 1e-9; // (a set_link_speed override)
    l.bytes = ps.bytes; // (legacy: wire bytes)
    l.wire_bytes = ps.bytes;
    l.payload_bytes = ps.payload_bytes;
    l.busy = ps.busy;
    l.credit_stall = ps.credit_stall;
    l.peak_queue_bytes = ps.peak_queue_bytes;
    l.ecn_marks = ps.ecn_marks;
    l.fecn_marks = ps.fecn_marks;
    l.pause_time = ps.pause_time;
    r.links.push_back(l);
  }
  for (const auto& [tiers, n] : impl_->net.unused_ports_by_tier())
    r.idle_links.push_back({tiers.first, tiers.second, n});
  const auto& s = impl_->net.stats();
  r.extra = {{"packets_injected", s.packets_injected},     {"packet_hops", s.packet_hops},
             {"retransmitted_packets", s.retransmitted_packets}, {"naks", s.naks},
             {"timeouts", s.timeouts},                     {"acks", s.acks},
             {"peak_packets_in_flight", impl_->net.peak_packets_in_flight()}};
  const FluidSkipStats fl = impl_->net.fluid_skip_stats();
  if (impl_->skips + fl.skips != 0) // only in runs that skipped: other results unchanged
    r.extra["fast_forward"] = {{"skips", impl_->skips},
                               {"periods_skipped", impl_->periods_skipped},
                               {"fluid_skips", fl.skips},
                               {"packets_skipped", fl.packets_skipped},
                               {"skipped_us", impl_->clock_offset().to_us()},
                               {"events_skipped", impl_->events_skipped + fl.events_skipped}};
  const FaultStats fs = impl_->net.fault_stats();
  if (fs.link_downs + fs.link_ups + fs.qp_errors != 0) { // only in faulted runs: other results unchanged
    r.extra["dropped_packets"] = fs.dropped_packets;
    r.extra["link_downs"] = fs.link_downs;
    r.extra["reroutes"] = fs.reroutes;
    r.extra["qp_errors"] = fs.qp_errors;
  }
  return r;
}

} // namespace ibn::pkt
