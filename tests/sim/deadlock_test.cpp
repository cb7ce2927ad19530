// Deadlock detection: a synthetic ring of ports stuck on credits is reported with its cycle; a fabric
// that drains is not (no false positive); cycle search on hand-made wait-for graphs.
#include "sim/simulation.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

using ibn::DeadlockError;
using ibn::Simulation;
using ibn::Time;
using ibn::WaitEdge;

namespace {

// A mock output port on VL0. It holds `queued_` packets and has `credits_` = free buffer slots at `next_`.
// While it has both, it sends one packet per 80 ns: the packet moves into next's buffer at once, and the
// slot it freed here is returned as a credit to `prev_` (the port feeding this one). With packets but no
// credits it waits for `next_` -- and schedules nothing, as the engine's components will.
class MockPort : public ibn::Component {
 public:
  MockPort(Simulation& sim, std::string name) : Component(sim, std::move(name)) {}
  void on_event(ibn::EventTag) override {
    busy_ = false;
    try_send();
  }
  void kick() {
    if (!busy_) {
      busy_ = true;
      schedule_in(Time::zero());
    }
  }
  int queued_ = 0;
  int credits_ = 0;
  MockPort* next_ = nullptr;
  MockPort* prev_ = nullptr;

 private:
  void try_send() {
    if (queued_ == 0 || credits_ == 0) return;
    --queued_;
    --credits_;
    ++next_->queued_;
    next_->kick();
    if (prev_ != nullptr) {
      ++prev_->credits_;
      prev_->kick();
    }
    busy_ = true;
    schedule_in(Time::ns(80)); // serialization of the packet just sent
  }
  bool busy_ = false;
};

// `ports` are counted by the progress probe (their queued packets are in flight) and described by the
// wait-for provider; ports made with sink() hold delivered packets and are neither.
struct Fabric {
  Simulation sim{7};
  std::vector<MockPort*> ports;

  Fabric() {
    sim.add_progress_probe([this] {
      std::uint64_t n = 0;
      for (const auto* p : ports) n += static_cast<std::uint64_t>(p->queued_);
      return n;
    });
    sim.add_wait_for_provider([this] {
      std::vector<WaitEdge> edges;
      for (const auto* p : ports)
        if (p->queued_ > 0 && p->credits_ == 0) edges.push_back({p->name(), p->next_->name(), "credits"});
      return edges;
    });
  }
  MockPort& port(const std::string& name) {
    ports.push_back(&sim.make<MockPort>(sim, name));
    return *ports.back();
  }
  MockPort& sink(const std::string& name) { return sim.make<MockPort>(sim, name); }
  // n ports "switch s<3+i> port 2 VL0", each feeding the next, the last feeding the first.
  std::vector<MockPort*> ring(int n) {
    std::vector<MockPort*> r;
    for (int i = 0; i < n; ++i) r.push_back(&port("switch s" + std::to_string(i + 3) + " port 2 VL0"));
    for (int i = 0; i < n; ++i) {
      r[i]->next_ = r[(i + 1) % n];
      r[(i + 1) % n]->prev_ = r[i];
    }
    return r;
  }
};

bool is_rotation_of(std::vector<std::string> got, const std::vector<std::string>& want) {
  if (got.size() != want.size() || got.empty()) return false;
  const auto it = std::find(got.begin(), got.end(), want.front());
  if (it == got.end()) return false;
  std::rotate(got.begin(), it, got.end());
  return got == want;
}

} // namespace

TEST_CASE("deadlock: a ring of three ports each waiting for credits from the next is reported") {
  Fabric f;
  // Each port holds one packet and every buffer (one slot) is full, so nobody has a credit.
  for (MockPort* p : f.ring(3)) {
    p->queued_ = 1;
    p->kick();
  }
  // A background sampler ticking forever must not hide the deadlock.
  struct Sampler : ibn::Component {
    using Component::Component;
    void on_event(ibn::EventTag) override { schedule_in(Time::us(1)); }
  } sampler(f.sim, "queue sampler", ibn::HandlerKind::Background);
  f.sim.schedule_at(Time::zero(), sampler.id());

  try {
    f.sim.run();
    FAIL("run() returned although the ring is deadlocked");
  } catch (const DeadlockError& e) {
    CHECK(e.packets_in_flight() == 3);
    CHECK(e.when() == Time::zero()); // the last event that ran: the kicks at t = 0
    CHECK(
        is_rotation_of(e.cycle(), {"switch s3 port 2 VL0", "switch s4 port 2 VL0", "switch s5 port 2 VL0"}));
    const std::string msg = e.what();
    CHECK(msg.find("3 packet(s) in flight") != std::string::npos);
    CHECK(msg.find("switch s3 port 2 VL0 waits for credits from switch s4 port 2 VL0") != std::string::npos);
    CHECK(msg.find("switch s4 port 2 VL0 waits for credits from switch s5 port 2 VL0") != std::string::npos);
    CHECK(msg.find("switch s5 port 2 VL0 waits for credits from switch s3 port 2 VL0") != std::string::npos);
  }
}

TEST_CASE("deadlock: found once the rest of the fabric went idle, without the waiters outside the cycle") {
  Fabric f;
  // A waiter outside the cycle, listed first so that the cycle search walks through it:
  // "switch s9 port 1 VL0" holds 2 packets for the ring's first port, which has no room.
  MockPort& tail = f.port("switch s9 port 1 VL0");
  const auto ring = f.ring(3);
  for (MockPort* p : ring) p->queued_ = 1;
  tail.queued_ = 2;
  tail.next_ = ring[0];
  // Meanwhile an HCA sends 5 packets to a host: events keep running until its last transmission ends.
  MockPort& hca = f.port("hca h1 port 1");
  MockPort& host = f.sink("hca h2 port 1");
  hca.queued_ = 5;
  hca.credits_ = 5;
  hca.next_ = &host;
  for (MockPort* p : f.ports) p->kick();

  try {
    f.sim.run();
    FAIL("run() returned although the ring is deadlocked");
  } catch (const DeadlockError& e) {
    CHECK(host.queued_ == 5);
    CHECK(e.when() == Time::ns(400));  // 5 sends at 0, 80, ..., 320 ns; the last ends at 400 ns
    CHECK(e.packets_in_flight() == 5); // 3 in the ring + 2 at the tail
    CHECK(
        is_rotation_of(e.cycle(), {"switch s3 port 2 VL0", "switch s4 port 2 VL0", "switch s5 port 2 VL0"}));
    CHECK(std::string(e.what()).find("switch s9") == std::string::npos);
  }
}

TEST_CASE("deadlock: no false positive when the queue empties with nothing in flight") {
  Fabric f;
  // A line of three switch ports ending at a host: every packet gets out.
  MockPort& a = f.port("switch s1 port 1 VL0");
  MockPort& b = f.port("switch s2 port 1 VL0");
  MockPort& host = f.sink("hca h0 port 1");
  a.next_ = &b;
  b.prev_ = &a;
  b.next_ = &host;
  a.queued_ = 3;
  a.credits_ = 1; // one slot at b: a must wait for b to forward each packet
  b.credits_ = 10;
  a.kick();
  const auto r = f.sim.run();
  CHECK(r.reason == ibn::StopReason::QueueEmpty);
  CHECK(host.queued_ == 3);
  CHECK(f.sim.packets_in_flight() == 0);
  // b forwards at 0, 80, 160 ns (a refills it at once each time); b's last transmission ends at 240 ns.
  CHECK(f.sim.now() == Time::ns(240));
}

TEST_CASE("deadlock: a stall without a wait-for cycle is still an error, listing the waits") {
  Simulation sim(1);
  sim.add_progress_probe([] { return std::uint64_t{2}; });
  sim.add_wait_for_provider([] {
    return std::vector<WaitEdge>{{"hca h1 qp 4", "switch s1 port 1 VL0", "credits"}};
  });
  try {
    sim.run();
    FAIL("expected DeadlockError");
  } catch (const DeadlockError& e) {
    CHECK(e.cycle().empty());
    CHECK(std::string(e.what()).find("no wait-for cycle among 1 wait edge(s)") != std::string::npos);
    CHECK(std::string(e.what()).find("hca h1 qp 4 waits for credits from switch s1 port 1 VL0") !=
          std::string::npos);
  }
}

TEST_CASE("find_wait_cycle: cycles, self-loops and acyclic graphs") {
  using ibn::find_wait_cycle;
  CHECK(find_wait_cycle({}).empty());
  CHECK(find_wait_cycle({{"a", "b", ""}, {"b", "c", ""}, {"a", "c", ""}}).empty()); // a DAG
  CHECK(find_wait_cycle({{"a", "a", "x"}}) == std::vector<std::size_t>{0});
  // A tail (t -> a) leading into the cycle a -> b -> c -> a; edges listed out of order.
  const std::vector<WaitEdge> g{
      {"t", "a", ""}, {"c", "a", ""}, {"a", "b", ""}, {"b", "c", ""}, {"b", "z", ""}};
  const auto cyc = find_wait_cycle(g);
  REQUIRE(cyc.size() == 3);
  for (std::size_t i = 0; i < cyc.size(); ++i) CHECK(g[cyc[i]].holder == g[cyc[(i + 1) % cyc.size()]].waiter);
  CHECK(std::find(cyc.begin(), cyc.end(), 0u) == cyc.end()); // the tail edge is not part of it
  CHECK(ibn::describe(g[0]) == "t waits for a");
  CHECK(ibn::describe({"p", "q", "credits"}) == "p waits for credits from q");
}
