// Simulation: event order, cancellation, stop conditions, background components, determinism.
#include "sim/simulation.hpp"

#include <doctest/doctest.h>

#include <string>
#include <tuple>
#include <vector>

using ibn::ComponentId;
using ibn::EventHandle;
using ibn::EventTag;
using ibn::Simulation;
using ibn::StopReason;
using ibn::Time;

namespace {

struct Record {
  std::int64_t t_ps;
  ComponentId who;
  EventTag tag;
  bool operator==(const Record&) const = default;
};

// Records every event it receives into a shared log; an optional hook runs after recording.
class Recorder : public ibn::Component {
 public:
  Recorder(Simulation& sim, std::string name, std::vector<Record>& log,
           ibn::HandlerKind kind = ibn::HandlerKind::Foreground)
      : Component(sim, std::move(name), kind), log_(log) {}
  void on_event(EventTag tag) override {
    log_.push_back({now().count_ps(), id(), tag});
    if (hook) hook(tag);
  }
  using Component::schedule_at;
  using Component::schedule_in;
  std::function<void(EventTag)> hook;

 private:
  std::vector<Record>& log_;
};

} // namespace

TEST_CASE("Simulation: events run by time, and same-time events in the order they were scheduled") {
  Simulation sim(1);
  std::vector<Record> log;
  Recorder a(sim, "a", log), b(sim, "b", log), c(sim, "c", log);
  Recorder* rs[] = {&a, &b, &c};
  // 300 events all at t = 5 ns, interleaved over three components, plus one earlier and one later.
  for (EventTag i = 0; i < 300; ++i) rs[i % 3]->schedule_at(Time::ns(5), i);
  c.schedule_at(Time::ns(9), 1000);
  b.schedule_at(Time::ns(1), 2000);
  // While handling the first t=5 event, `a` schedules more work at t=5: it must run after all 300.
  a.hook = [&](EventTag tag) {
    if (tag == 0) a.schedule_in(Time::zero(), 3000);
  };
  const auto r = sim.run();
  CHECK(r.reason == StopReason::QueueEmpty);
  CHECK(r.events_executed == 303);
  REQUIRE(log.size() == 303);
  CHECK(log[0] == Record{1000, b.id(), 2000});
  for (EventTag i = 0; i < 300; ++i) REQUIRE(log[1 + i] == Record{5000, rs[i % 3]->id(), i});
  CHECK(log[301] == Record{5000, a.id(), 3000});
  CHECK(log[302] == Record{9000, c.id(), 1000});
  CHECK(sim.now() == Time::ns(9));
}

TEST_CASE("Simulation: cancellation is lazy and safe") {
  Simulation sim(1);
  std::vector<Record> log;
  Recorder a(sim, "a", log);

  SUBCASE("a cancelled event never runs and the others are untouched") {
    const EventHandle h1 = a.schedule_at(Time::ns(1), 1);
    const EventHandle h2 = a.schedule_at(Time::ns(1), 2); // same time as h1
    a.schedule_at(Time::ns(1), 3);
    CHECK(sim.is_pending(h2));
    CHECK(sim.cancel(h2));
    CHECK_FALSE(sim.is_pending(h2));
    CHECK(sim.is_pending(h1));
    const auto r = sim.run();
    CHECK(log == std::vector<Record>{{1000, a.id(), 1}, {1000, a.id(), 3}});
    CHECK(r.events_executed == 2);
    CHECK(r.events_cancelled == 1);
    CHECK(r.pending_events == 0);
  }
  SUBCASE("restore takes a cancellation back while the event is queued, and only then") {
    const EventHandle h = a.schedule_at(Time::ns(2), 5);
    const EventHandle late = a.schedule_at(Time::ns(4), 6);
    a.schedule_at(Time::ns(5), 7); // (keeps the run going past `late`, which is then discarded)
    CHECK_FALSE(sim.restore(h));   // not cancelled
    CHECK(sim.cancel(h));
    CHECK(sim.restore(h));
    CHECK(sim.is_pending(h));
    CHECK_FALSE(sim.restore(h)); // restored once: no longer cancelled
    CHECK(sim.cancel(late));
    const auto r = sim.run();
    CHECK(log ==
          std::vector<Record>{{2000, a.id(), 5}, {5000, a.id(), 7}}); // the restored one ran at its time
    CHECK(r.events_cancelled == 1);
    CHECK_FALSE(sim.restore(late)); // discarded from the queue: gone
    CHECK_FALSE(sim.restore(EventHandle{}));
  }
  SUBCASE("double cancel: the second returns false and changes nothing") {
    const EventHandle h = a.schedule_at(Time::ns(2), 7);
    a.schedule_at(Time::ns(3), 8);
    CHECK(sim.cancel(h));
    CHECK_FALSE(sim.cancel(h));
    sim.run();
    CHECK(log == std::vector<Record>{{3000, a.id(), 8}});
    CHECK_FALSE(sim.cancel(h)); // and after it was discarded from the queue
  }
  SUBCASE("a stale handle (event already ran) is ignored") {
    const EventHandle ran = a.schedule_at(Time::ns(1), 1);
    const EventHandle later = a.schedule_at(Time::ns(4), 2);
    sim.run({.end_time = Time::ns(2)});
    CHECK_FALSE(sim.is_pending(ran));
    CHECK_FALSE(sim.cancel(ran));
    CHECK(sim.is_pending(later)); // the stale cancel did not hit the event still queued
    sim.run();
    CHECK(log.size() == 2);
  }
  SUBCASE("an invalid handle is ignored") {
    CHECK_FALSE(sim.cancel(EventHandle{}));
    CHECK_FALSE(sim.is_pending(EventHandle{}));
  }
  SUBCASE("a cancelled timer does not keep the run alive") {
    a.schedule_at(Time::ns(1), 1);
    const EventHandle timer = a.schedule_at(Time::ms(10), 99);
    sim.cancel(timer);
    const auto r = sim.run();
    CHECK(r.reason == StopReason::QueueEmpty);
    CHECK(sim.now() == Time::ns(1)); // the clock never went to the cancelled timer's time
  }
}

TEST_CASE("Simulation: stop at end time leaves later events pending") {
  Simulation sim(1);
  std::vector<Record> log;
  Recorder a(sim, "a", log);
  for (int k = 1; k <= 4; ++k) a.schedule_at(Time::ns(10 * k), static_cast<EventTag>(k));

  auto r = sim.run({.end_time = Time::ns(25)});
  CHECK(r.reason == StopReason::EndTime);
  CHECK(r.events_executed == 2);
  CHECK(r.now == Time::ns(20)); // the clock is the last executed event's time, not the end time
  CHECK(sim.now() == Time::ns(20));
  CHECK(r.pending_events == 2);

  r = sim.run({.end_time = Time::ns(30)}); // an event exactly at the end time runs
  CHECK(r.reason == StopReason::EndTime);
  CHECK(r.events_executed == 1);
  CHECK(sim.now() == Time::ns(30));

  r = sim.run();
  CHECK(r.reason == StopReason::QueueEmpty);
  CHECK(r.events_executed == 1);
  CHECK(sim.total_events_executed() == 4);
  CHECK(log.back() == Record{40'000, a.id(), 4});
}

TEST_CASE("Simulation: max events executes exactly that many") {
  Simulation sim(1);
  std::vector<Record> log;
  Recorder a(sim, "a", log);
  a.hook = [&](EventTag tag) { a.schedule_in(Time::ns(3), tag + 1); }; // runs forever
  a.schedule_at(Time::zero(), 0);

  auto r = sim.run({.max_events = 137});
  CHECK(r.reason == StopReason::MaxEvents);
  CHECK(r.events_executed == 137);
  CHECK(log.size() == 137);
  CHECK(sim.now() == Time::ns(3 * 136));
  r = sim.run({.max_events = 63});
  CHECK(r.events_executed == 63);
  CHECK(sim.total_events_executed() == 200);
  CHECK(log.back().tag == 199);
  CHECK(r.pending_events == 1); // the one pending event of a busy component
}

TEST_CASE("Simulation: request_stop stops after the current event") {
  Simulation sim(1);
  std::vector<Record> log;
  Recorder a(sim, "a", log);
  a.hook = [&](EventTag tag) {
    if (tag == 2) sim.request_stop();
  };
  for (EventTag k = 1; k <= 4; ++k) a.schedule_at(Time::ns(k), k);
  auto r = sim.run();
  CHECK(r.reason == StopReason::Stopped);
  CHECK(r.events_executed == 2);
  r = sim.run(); // the stop request does not stick
  CHECK(r.reason == StopReason::QueueEmpty);
  CHECK(r.events_executed == 2);
}

TEST_CASE("Simulation: invalid scheduling is a logic error, not silent") {
  Simulation sim(1);
  std::vector<Record> log;
  Recorder a(sim, "a", log);
  a.schedule_at(Time::ns(10), 0);
  sim.run();
  CHECK_THROWS_AS(a.schedule_at(Time::ns(9), 0), std::logic_error);        // the past
  CHECK_THROWS_AS(sim.schedule_at(Time::ns(20), 42, 0), std::logic_error); // unknown id
  CHECK(sim.pending_events() == 0);
  {
    Recorder gone(sim, "gone", log);
    gone.schedule_at(Time::ns(11), 0);
  } // destroyed with a pending event
  CHECK_THROWS_WITH_AS(sim.run(), doctest::Contains("gone"), std::logic_error);
}

TEST_CASE("Simulation: background components do not keep a run alive") {
  Simulation sim(1);
  std::vector<Record> log;
  Recorder work(sim, "work", log);
  Recorder sampler(sim, "sampler", log, ibn::HandlerKind::Background);
  sampler.hook = [&](EventTag) { sampler.schedule_in(Time::ns(100), 0); }; // periodic, forever
  sampler.schedule_at(Time::zero(), 0);
  work.schedule_at(Time::ns(250), 1);
  const auto r = sim.run();
  CHECK(r.reason == StopReason::QueueEmpty);
  CHECK(sim.now() == Time::ns(250));
  CHECK(r.pending_events == 1); // the sampler's next tick, left in the queue
  // The sampler ran at 0, 100 and 200 ns while there was work.
  CHECK(log == std::vector<Record>{{0, sampler.id(), 0},
                                   {100'000, sampler.id(), 0},
                                   {200'000, sampler.id(), 0},
                                   {250'000, work.id(), 1}});
}

TEST_CASE("Simulation: owns components made with make(), destroying them first") {
  std::vector<Record> log;
  {
    Simulation sim(1);
    auto& r = sim.make<Recorder>(sim, "owned", log);
    r.schedule_at(Time::ns(1), 5);
    sim.run();
    CHECK(sim.component_name(r.id()) == "owned");
  } // ~Recorder deregisters from a still-alive Simulation (ASan would catch the opposite order)
  CHECK(log == std::vector<Record>{{1000, 0, 5}});
}

// ---------------------------------------------------------------------------------------------------
// Determinism: a small random network of components, each drawing delays and destinations from its own
// named stream, gives an identical trace when run twice with the same seed.
namespace {

class Hopper : public ibn::Component {
 public:
  Hopper(Simulation& sim, std::string name, std::vector<Hopper*>& all, std::vector<Record>& log)
      : Component(sim, name, ibn::HandlerKind::Foreground), all_(all), log_(log),
        rng_(sim.rng("hopper/" + name)) {}
  void on_event(EventTag tag) override {
    log_.push_back({now().count_ps(), id(), tag});
    if (tag == 0) return; // token dies
    // Forward the token to a random peer after a serialization-like delay; sometimes split it in two.
    Hopper& next = *all_[rng_.uniform_below(all_.size())];
    next.schedule_at(now() + rng_.uniform_time(Time::ns(10), Time::ns(80)), tag - 1);
    if (rng_.bernoulli(0.1)) next.schedule_at(now() + Time::ns(40), tag / 2); // ties are likely
  }
  void start(EventTag tag) { schedule_at(Time::zero(), tag); }

 private:
  std::vector<Hopper*>& all_;
  std::vector<Record>& log_;
  ibn::Rng& rng_;
};

std::vector<Record> random_run(std::uint64_t seed) {
  Simulation sim(seed);
  std::vector<Record> log;
  std::vector<Hopper*> all;
  for (int i = 0; i < 8; ++i) all.push_back(&sim.make<Hopper>(sim, "h" + std::to_string(i), all, log));
  for (auto* h : all) h->start(20);
  sim.run();
  return log;
}

} // namespace

TEST_CASE("Simulation: the same seed gives an identical trace, another seed does not") {
  const auto first = random_run(42);
  const auto second = random_run(42);
  CHECK(first.size() > 160); // 8 tokens x 21 hops plus the splits
  CHECK(first == second);
  CHECK(random_run(43) != first);
}
