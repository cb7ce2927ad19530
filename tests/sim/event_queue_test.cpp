// Event queues: (time, seq) order, FIFO among equal times, and exact agreement of every variant with a
// std::multimap reference.
#include "sim/event_queue.hpp"
#include "sim/rng.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <vector>

using ibn::Event;
using ibn::Time;

namespace {
bool same(const Event& a, const Event& b) {
  return a.time == b.time && a.seq == b.seq && a.target == b.target && a.tag == b.tag;
}
} // namespace

TEST_CASE_TEMPLATE("event queue: pops by time, then in insertion order among equal times", Q, ibn::BinaryHeap,
                   ibn::QuaternaryHeap, ibn::DaryHeap<8>, ibn::CalendarQueue, ibn::WindowQueue) {
  // 20,000 events over only 7 distinct times: each time is shared by ~2,900 events.
  Q q;
  ibn::Rng rng(7);
  std::vector<Event> pushed;
  for (std::uint64_t seq = 1; seq <= 20'000; ++seq) {
    const Event e{Time::ns(static_cast<std::int64_t>(rng.uniform_below(7)) * 100), seq,
                  static_cast<ibn::ComponentId>(seq % 13), static_cast<ibn::EventTag>(seq % 5)};
    pushed.push_back(e);
    q.push(e);
  }
  // Expected order: stable sort by time alone (stability = insertion order within a time).
  std::stable_sort(pushed.begin(), pushed.end(),
                   [](const Event& a, const Event& b) { return a.time < b.time; });
  REQUIRE(q.size() == pushed.size());
  for (const Event& want : pushed) {
    const Event got = q.pop();
    REQUIRE(same(got, want));
  }
  CHECK(q.empty());
}

TEST_CASE_TEMPLATE("event queue: agrees with a std::multimap on 100k random pushes and pops", Q,
                   ibn::BinaryHeap, ibn::QuaternaryHeap, ibn::DaryHeap<8>, ibn::CalendarQueue,
                   ibn::WindowQueue) {
  // The reference: a multimap keyed by time keeps equal keys in insertion order, which is the seq order.
  std::multimap<Time, Event> ref;
  Q q;
  ibn::Rng rng(2024);
  std::uint64_t seq = 0;
  Time now = Time::zero();
  std::size_t pops = 0, max_size = 0;
  for (int op = 0; op < 100'000; ++op) {
    // Phase 1 (first half) grows the queue, phase 2 shrinks it, so the calendar queue resizes both ways.
    const bool grow = op < 50'000;
    if (ref.empty() || rng.uniform01() < (grow ? 0.65 : 0.35)) {
      Time t;
      const double kind = rng.uniform01();
      if (kind < 0.15)
        t = now; // same time as the last pop: tie-breaking by seq
      else if (kind < 0.80)
        t = now + rng.uniform_time(Time::ns(10), Time::ns(80));
      else if (kind < 0.95)
        t = now + rng.uniform_time(Time::us(1), Time::us(50));
      else
        t = rng.uniform_time(Time::zero(), now + Time::ns(100)); // earlier than now: any-order pushes
      const Event e{t, ++seq, static_cast<ibn::ComponentId>(rng.uniform_below(1000)),
                    static_cast<ibn::EventTag>(rng.uniform_below(4))};
      ref.emplace(t, e);
      q.push(e);
    } else {
      const Event want = ref.begin()->second;
      ref.erase(ref.begin());
      REQUIRE(same(q.top(), want));
      const Event got = q.pop();
      REQUIRE(same(got, want));
      now = got.time;
      ++pops;
    }
    REQUIRE(q.size() == ref.size());
    max_size = std::max(max_size, ref.size());
  }
  while (!ref.empty()) {
    REQUIRE(same(q.pop(), ref.begin()->second));
    ref.erase(ref.begin());
  }
  CHECK(q.empty());
  CHECK(pops > 30'000);     // the run really exercised pops ...
  CHECK(max_size > 10'000); // ... on a large queue
}

TEST_CASE_TEMPLATE("event queue: a burst of 300k events at one time stays cheap and FIFO", Q, ibn::BinaryHeap,
                   ibn::QuaternaryHeap, ibn::CalendarQueue, ibn::WindowQueue) {
  // E.g. every QP of a collective starting at t = 0. A calendar queue that kept each bucket sorted by
  // inserting at the front would be quadratic here (~10^11 element moves) and time out.
  Q q;
  const std::uint64_t n = 300'000;
  for (std::uint64_t i = 1; i <= n; ++i) q.push(Event{Time::us(1), i, 0, 0});
  q.push(Event{Time::ns(1), n + 1, 0, 0}); // one earlier event, pushed last
  REQUIRE(q.pop().seq == n + 1);
  for (std::uint64_t i = 1; i <= n; ++i) REQUIRE(q.pop().seq == i);
  CHECK(q.empty());
}

TEST_CASE("calendar queue: grows and shrinks its bucket array with the number of events") {
  ibn::CalendarQueue q;
  const std::size_t initial = q.bucket_count();
  for (std::uint64_t i = 1; i <= 10'000; ++i) q.push(Event{Time::ns(static_cast<std::int64_t>(i)), i, 0, 0});
  CHECK(q.bucket_count() >= 10'000 / 2); // at most two events per bucket
  for (std::uint64_t i = 1; i <= 9'990; ++i) REQUIRE(q.pop().seq == i);
  CHECK(q.bucket_count() <= 2 * 10 + initial);
  CHECK(q.size() == 10);
}

TEST_CASE("calendar queue: far-future event after a gap longer than a whole calendar year") {
  ibn::CalendarQueue q;
  q.push(Event{Time::ns(1), 1, 0, 0});
  q.push(Event{Time::ms(500), 2, 0, 0}); // hundreds of millions of bucket widths later
  q.push(Event{Time::ns(2), 3, 0, 0});
  CHECK(q.pop().seq == 1);
  CHECK(q.pop().seq == 3);
  CHECK(q.pop().seq == 2);
  CHECK(q.empty());
}

TEST_CASE("window queue: far events, window moves forward and back, negative times") {
  // Checked against a std::multimap on pushes spread over microseconds to seconds around a moving "now",
  // with peeks (top() moves the window) followed by earlier pushes, which move it back.
  std::multimap<Time, Event> ref;
  ibn::WindowQueue q;
  ibn::Rng rng(99);
  std::uint64_t seq = 0;
  Time now = Time::ns(-50);
  for (int op = 0; op < 60'000; ++op) {
    if (ref.empty() || rng.uniform01() < 0.55) {
      const double kind = rng.uniform01();
      Time t;
      if (kind < 0.5)
        t = now + rng.uniform_time(Time::zero(), Time::ns(500)); // inside the 2.1 us window
      else if (kind < 0.8)
        t = now + rng.uniform_time(Time::us(1), Time::us(10)); // around and beyond its end
      else if (kind < 0.9)
        t = now + rng.uniform_time(Time::ms(1), Time::ms(900)); // RTO-like timers
      else
        t = now - rng.uniform_time(Time::zero(), Time::us(30)); // before the window start
      const Event e{t, ++seq, static_cast<ibn::ComponentId>(seq % 17), 0};
      ref.emplace(t, e);
      q.push(e);
    } else {
      const Event want = ref.begin()->second;
      if (rng.uniform01() < 0.3) { // peek only: the window moves to the minimum, the event stays
        REQUIRE(same(q.top(), want));
        continue;
      }
      ref.erase(ref.begin());
      const Event got = q.pop();
      REQUIRE(same(got, want));
      now = got.time;
    }
    REQUIRE(q.size() == ref.size());
  }
  while (!ref.empty()) {
    REQUIRE(same(q.pop(), ref.begin()->second));
    ref.erase(ref.begin());
  }
  CHECK(q.empty());
}
