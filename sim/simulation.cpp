#include "sim/simulation.hpp"

#include <stdexcept>

namespace ibn {

const char* to_string(StopReason r) {
  switch (r) {
  case StopReason::QueueEmpty:
    return "queue empty";
  case StopReason::EndTime:
    return "end time reached";
  case StopReason::MaxEvents:
    return "event limit reached";
  case StopReason::Stopped:
    return "stop requested";
  }
  return "?";
}

Simulation::Simulation(std::uint64_t seed) : seed_(seed) {}

Simulation::~Simulation() {
  // Owned components deregister themselves, so they must go while the component table is still alive.
  while (!owned_.empty()) owned_.pop_back();
}

ComponentId Simulation::register_handler(EventHandler& h, std::string name, HandlerKind kind) {
  if (slots_.size() >= std::numeric_limits<ComponentId>::max())
    throw std::length_error("Simulation: too many components");
  slots_.push_back(Slot{&h, kind == HandlerKind::Background ? 0u : 1u, 0u});
  names_.push_back(std::move(name));
  return static_cast<ComponentId>(slots_.size() - 1);
}

void Simulation::deregister(ComponentId id) {
  slots_.at(id).handler = nullptr;
}

void Simulation::throw_bad_schedule(Time t, ComponentId target) const {
  if (target >= slots_.size())
    throw std::logic_error("Simulation::schedule_at: unknown component id " + std::to_string(target));
  if (slots_[target].handler == nullptr)
    throw std::logic_error("Simulation::schedule_at: component '" + names_[target] + "' was deregistered");
  throw std::logic_error("Simulation::schedule_at: time " + std::to_string(t.count_ps()) +
                         " ps is before now (" + std::to_string(now_.count_ps()) + " ps) for '" +
                         names_[target] + "'");
}

bool Simulation::popped(const EventHandle& h) const {
  return h.time < last_pop_time_ || (h.time == last_pop_time_ && h.seq <= last_pop_seq_);
}

bool Simulation::is_pending(const EventHandle& h) const {
  return h.valid() && h.seq < next_seq_ && !popped(h) && !cancelled_.contains(h.seq);
}

bool Simulation::cancel(const EventHandle& h) {
  if (!is_pending(h) || h.target >= slots_.size()) return false;
  cancelled_.insert(h.seq);
  Slot& slot = slots_[h.target]; // (is_pending: scheduled, so the target exists)
  foreground_pending_ -= slot.foreground;
  ++slot.cancelled;
  return true;
}

bool Simulation::restore(const EventHandle& h) {
  if (!h.valid() || h.target >= slots_.size() || popped(h) || cancelled_.erase(h.seq) == 0) return false;
  Slot& slot = slots_[h.target];
  foreground_pending_ += slot.foreground;
  --slot.cancelled;
  return true;
}

RunStats Simulation::run(const StopConditions& stop) {
  if (running_) throw std::logic_error("Simulation::run called from inside an event handler");
  running_ = true;
  struct Reset {
    bool& flag;
    ~Reset() { flag = false; }
  } reset{running_};
  stop_requested_ = false;

  RunStats r;
  auto finish = [&](StopReason why) {
    r.reason = why;
    r.now = now_;
    r.pending_events = queue_.size();
    return r;
  };
  const bool has_end = stop.end_time != Time::max(); // (no event is later than Time::max())
  for (;;) {
    if (foreground_pending_ == 0) {
      if (const std::uint64_t in_flight = packets_in_flight(); in_flight > 0) throw_deadlock(in_flight);
      return finish(StopReason::QueueEmpty);
    }
    if (r.events_executed >= stop.max_events) return finish(StopReason::MaxEvents);
    if (has_end && queue_.top().time > stop.end_time) return finish(StopReason::EndTime);

    const Event e = queue_.pop();
    last_pop_time_ = e.time;
    last_pop_seq_ = e.seq;
    Slot& slot = slots_[e.target];
    // Only a component with cancelled events pending pays for the lookup.
    if (slot.cancelled != 0 && cancelled_.erase(e.seq) != 0) [[unlikely]] {
      --slot.cancelled;
      ++r.events_cancelled;
      continue;
    }
    foreground_pending_ -= slot.foreground;
    if (slot.handler == nullptr) [[unlikely]]
      throw std::logic_error("Simulation::run: event for deregistered component '" + names_[e.target] + "'");
    now_ = e.time;
    // The next event's component is most likely the one at the head of the queue now: start loading it
    // while this handler runs (each event tends to touch a different component: a cache miss otherwise).
    if (!queue_.empty()) __builtin_prefetch(slots_[queue_.top().target].handler);
    ++r.events_executed;
    ++total_executed_;
    slot.handler->on_event(e.tag);
    if (stop_requested_) return finish(StopReason::Stopped);
  }
}

Rng& Simulation::rng(std::string_view name) {
  auto it = rngs_.find(name);
  if (it == rngs_.end())
    it = rngs_.emplace(std::string(name), std::make_unique<Rng>(Rng::for_stream(seed_, name))).first;
  return *it->second;
}

void Simulation::add_progress_probe(std::function<std::uint64_t()> packets_in_flight) {
  probes_.push_back(std::move(packets_in_flight));
}

void Simulation::add_wait_for_provider(std::function<std::vector<WaitEdge>()> provider) {
  wait_providers_.push_back(std::move(provider));
}

std::uint64_t Simulation::packets_in_flight() const {
  std::uint64_t n = 0;
  for (const auto& p : probes_) n += p();
  return n;
}

void Simulation::throw_deadlock(std::uint64_t in_flight) const {
  std::vector<WaitEdge> edges;
  for (const auto& p : wait_providers_) {
    auto more = p();
    edges.insert(edges.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  }
  std::vector<WaitEdge> cycle;
  for (const std::size_t i : find_wait_cycle(edges)) cycle.push_back(edges[i]);
  throw DeadlockError(now_, in_flight, std::move(cycle), edges);
}

} // namespace ibn
