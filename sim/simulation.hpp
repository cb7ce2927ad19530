#pragma once
// Simulation — the packet engine's event core: clock, event queue, component table, named RNG streams,
// stop conditions and deadlock detection. No global state: two Simulations can run in one process.
//
// Components implement EventHandler and register once, getting a ComponentId. They schedule themselves:
// an event is (time, seq, target, tag), nothing is allocated per event. Rule of the engine: a component
// keeps at most one pending event per activity (a link schedules only its head packet), so the queue
// grows with busy components, not with packets in flight.
//
// Order: events run by time, and events at the same picosecond run in the order they were scheduled
// (the key is (time, seq), seq increasing with every schedule call). The clock only moves forward.
//
// Cancellation is lazy and safe: cancel(handle) marks the event, which is skipped when it reaches the
// head of the queue. Cancelling an event that already ran or was already cancelled does nothing.
//
// Deadlock detection: the engine adds progress probes (each returns how many packets it holds in flight)
// and wait-for providers (each returns WaitEdges). When no foreground event is pending — the queue is
// empty, or holds only events of Background components (samplers, statistics), which never move
// packets — and the probes report packets in flight, run() throws DeadlockError with the wait-for cycle.
//
// Limitations: single-threaded; handlers must not call run(); a registered handler must stay alive
// while it has pending events (Component deregisters itself on destruction; a later event for it throws).
#include "sim/deadlock.hpp"
#include "sim/event_queue.hpp"
#include "sim/rng.hpp"
#include "sim/time.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

namespace ibn {

/// What a component implements to receive its events.
class EventHandler {
 public:
  virtual ~EventHandler() = default;
  virtual void on_event(EventTag tag) = 0;
};

/// Foreground components move packets; Background ones (periodic samplers, stats) do not, so their
/// pending events neither keep a run alive nor hide a deadlock.
enum class HandlerKind : std::uint8_t { Foreground, Background };

/// Identifies one scheduled event, for cancel() and is_pending(). Default-constructed: no event.
struct EventHandle {
  Time time;
  std::uint64_t seq = 0; ///< 0 means "no event"
  ComponentId target = 0;
  bool valid() const { return seq != 0; }
};

struct StopConditions {
  Time end_time = Time::max(); ///< run events with time <= end_time; later ones stay pending
  std::uint64_t max_events = std::numeric_limits<std::uint64_t>::max(); ///< per run() call
};

enum class StopReason : std::uint8_t {
  QueueEmpty, ///< no foreground event left (and nothing in flight)
  EndTime,    ///< the next event is after end_time
  MaxEvents,  ///< max_events events were executed
  Stopped,    ///< a handler called request_stop()
};
const char* to_string(StopReason r);

/// What Simulation::run() returns (a scenario's result is scen::RunResult).
struct RunStats {
  StopReason reason = StopReason::QueueEmpty;
  std::uint64_t events_executed = 0;  ///< in this run() call (skipped cancelled events not counted)
  std::uint64_t events_cancelled = 0; ///< cancelled events discarded from the queue in this call
  Time now;                           ///< clock at return: time of the last executed event
  std::size_t pending_events = 0;     ///< entries left in the queue (including cancelled ones)
};

class Simulation {
 public:
  explicit Simulation(std::uint64_t seed);
  ~Simulation();
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  // --- components ---------------------------------------------------------------------------------
  /// Registers `h` (not owned) under a human name (used in traces and error messages).
  ComponentId register_handler(EventHandler& h, std::string name, HandlerKind kind = HandlerKind::Foreground);
  /// Forgets `id`'s handler; a pending event for it later throws std::logic_error when it is due.
  void deregister(ComponentId id);
  const std::string& component_name(ComponentId id) const { return names_.at(id); }
  std::size_t component_count() const { return slots_.size(); }

  /// Constructs a T owned by the Simulation (destroyed, in reverse creation order, before the rest of it).
  template <typename T, typename... Args> T& make(Args&&... args) {
    auto p = std::make_unique<T>(std::forward<Args>(args)...);
    T& ref = *p;
    // Room first, so that emplace_back cannot throw after release(); grown geometrically (reserving
    // size() + 1 would reallocate on every call: quadratic in the number of components).
    if (owned_.size() == owned_.capacity()) owned_.reserve(std::max<std::size_t>(16, 2 * owned_.capacity()));
    owned_.emplace_back(p.release(), [](void* q) { delete static_cast<T*>(q); });
    return ref;
  }

  // --- events -------------------------------------------------------------------------------------
  Time now() const { return now_; }
  /// Schedules `tag` for `target` at absolute time t >= now(). Throws std::logic_error if t < now()
  /// or `target` is not registered.
  EventHandle schedule_at(Time t, ComponentId target, EventTag tag = 0) {
    if (t < now_ || target >= slots_.size() || slots_[target].handler == nullptr) [[unlikely]]
      throw_bad_schedule(t, target);
    const EventHandle h{t, next_seq_++, target};
    queue_.push(Event{t, h.seq, target, tag});
    foreground_pending_ += slots_[target].foreground;
    return h;
  }
  /// Like schedule_at, without a handle, for a target known to be a registered Foreground component: a live
  /// Component scheduling itself (Component deregisters only in its destructor). Checks only the time and
  /// reads nothing of the component table (a cache miss per event on large models). The packet models' hot
  /// path; a Background component uses schedule_at.
  [[gnu::always_inline]] void post(Time t, ComponentId live_target, EventTag tag) {
    if (t < now_) [[unlikely]]
      throw_bad_schedule(t, live_target);
    queue_.push(Event{t, next_seq_++, live_target, tag});
    ++foreground_pending_;
  }
  /// Schedules at now() + delay (delay >= 0).
  EventHandle schedule_in(Time delay, ComponentId target, EventTag tag = 0) {
    return schedule_at(now_ + delay, target, tag);
  }
  /// Cancels a pending event. Returns true if it was pending; false for an event that already ran,
  /// was already cancelled, or an invalid handle. Never affects any other event.
  bool cancel(const EventHandle& h);
  /// Takes back the cancellation of an event still in the queue (it runs at its time after all); false
  /// when it was not cancelled or has left the queue. Lets a timer that is cancelled and soon wanted again
  /// reuse its entry instead of leaving one cancelled entry per cancellation until its time comes.
  bool restore(const EventHandle& h);
  /// True if the event is still in the queue and not cancelled.
  bool is_pending(const EventHandle& h) const;
  /// Queue entries, including cancelled events not yet discarded.
  std::size_t pending_events() const { return queue_.size(); }
  /// Events executed since construction, over all run() calls.
  std::uint64_t total_events_executed() const { return total_executed_; }

  // --- running ------------------------------------------------------------------------------------
  /// Runs events in (time, seq) order until a stop condition holds. May be called again to continue.
  /// Throws DeadlockError when it runs out of foreground events with packets in flight; exceptions from
  /// handlers propagate (the failing event counts as executed).
  RunStats run(const StopConditions& stop = {});
  /// From inside a handler: stop after the current event (reason Stopped).
  void request_stop() { stop_requested_ = true; }

  // --- randomness ---------------------------------------------------------------------------------
  std::uint64_t seed() const { return seed_; }
  /// The stream called `name`, created on first use as Rng::for_stream(seed(), name). The reference
  /// stays valid for the Simulation's lifetime; components should look their streams up once.
  Rng& rng(std::string_view name);

  // --- deadlock detection -------------------------------------------------------------------------
  /// A probe returns the number of packets its subsystem holds in flight; probes are summed.
  void add_progress_probe(std::function<std::uint64_t()> packets_in_flight);
  /// A provider returns who waits for whom; consulted only when a stall is detected.
  void add_wait_for_provider(std::function<std::vector<WaitEdge>()> provider);
  /// Sum of all progress probes.
  std::uint64_t packets_in_flight() const;

 private:
  struct Slot { // 16 bytes, touched on every schedule and every event
    EventHandler* handler = nullptr;
    std::uint32_t foreground = 1; ///< 1 for a Foreground component, 0 for a Background one (added, no branch)
    std::uint32_t cancelled = 0;  ///< its cancelled events still in the queue (0: no lookup in cancelled_)
  };

  bool popped(const EventHandle& h) const; // already taken off the queue (ran or discarded)
  [[noreturn]] void throw_deadlock(std::uint64_t in_flight) const;
  [[noreturn]] void throw_bad_schedule(Time t, ComponentId target) const;

  std::uint64_t seed_;
  Time now_;
  Time last_pop_time_;             // key of the last event taken off the queue (ran or discarded):
  std::uint64_t last_pop_seq_ = 0; // every pending event has a larger key, every popped one a smaller
  std::uint64_t next_seq_ = 1;
  std::uint64_t total_executed_ = 0;
  std::size_t foreground_pending_ = 0; // non-cancelled queued events whose target is foreground
  bool running_ = false;
  bool stop_requested_ = false;
  EventQueue queue_;
  std::unordered_set<std::uint64_t> cancelled_; // seqs of cancelled events still in the queue
  std::vector<Slot> slots_;
  std::vector<std::string> names_; // by ComponentId
  std::map<std::string, std::unique_ptr<Rng>, std::less<>> rngs_;
  std::vector<std::function<std::uint64_t()>> probes_;
  std::vector<std::function<std::vector<WaitEdge>()>> wait_providers_;
  std::vector<std::unique_ptr<void, void (*)(void*)>> owned_; // last member: destroyed first
};

/// Convenience base: registers itself on construction, deregisters on destruction, schedules itself.
/// Not copyable or movable (its address is in the component table).
class Component : public EventHandler {
 public:
  Component(Simulation& sim, std::string name, HandlerKind kind = HandlerKind::Foreground)
      : sim_(sim), id_(sim.register_handler(*this, std::move(name), kind)) {}
  ~Component() override { sim_.deregister(id_); }
  Component(const Component&) = delete;
  Component& operator=(const Component&) = delete;

  ComponentId id() const { return id_; }
  const std::string& name() const { return sim_.component_name(id_); }
  Simulation& sim() const { return sim_; }
  Time now() const { return sim_.now(); }

 protected:
  EventHandle schedule_in(Time delay, EventTag tag = 0) { return sim_.schedule_in(delay, id_, tag); }
  EventHandle schedule_at(Time t, EventTag tag = 0) { return sim_.schedule_at(t, id_, tag); }
  bool cancel(const EventHandle& h) { return sim_.cancel(h); }

 private:
  Simulation& sim_;
  ComponentId id_;
};

} // namespace ibn
