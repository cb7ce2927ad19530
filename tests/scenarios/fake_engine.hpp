#pragma once
// A trivial engine for tests of drivers and executors: a message is delivered at
// post + base latency + bytes x 8 / rate, with no contention; every send is recorded. With allow_skips() it
// also skips periods (eng::Engine::skip_periods): its clock is then the event loop's plus an offset that a
// skip advances by n x (now - mark).
#include "models/engine.hpp"
#include "sim/error.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <map>
#include <utility>
#include <vector>

namespace ibn::test {

class FakeEngine : public eng::Engine {
 public:
  struct Sent {
    Time at;
    eng::HcaIndex src, dst;
    std::uint64_t bytes;
    bool operator==(const Sent&) const = default;
  };

  FakeEngine(std::size_t hcas, std::uint64_t rate_bps, Time base)
      : hcas_(hcas), rate_bps_(rate_bps), base_(base) {}
  std::string name() const override { return "fake"; }
  Time now() const override { return now_ + offset_; }
  std::size_t num_hcas() const override { return hcas_; }
  void send(const eng::TransferSpec& t, eng::DeliveredFn done) override {
    if (t.src >= hcas_ || t.dst >= hcas_ || t.src == t.dst) throw InputError("fake engine: bad transfer");
    sent.push_back({now(), t.src, t.dst, t.bytes});
    const Time at = now_ + base_ + serialization_time(t.bytes, rate_bps_);
    events_.emplace(std::make_pair(at, seq_++), [this, done] { done(now()); });
  }
  void call_at(Time t, std::function<void()> fn) override {
    REQUIRE(t >= now());
    events_.emplace(std::make_pair(t - offset_, seq_++), std::move(fn));
  }
  void run() override {
    while (!events_.empty()) {
      auto it = events_.begin();
      now_ = it->first.first;
      auto fn = std::move(it->second);
      events_.erase(it);
      fn();
    }
  }
  eng::EngineReport report() const override { return {}; }
  bool mark_period() override {
    mark_ = now_;
    return skips_;
  }
  bool skip_periods(std::uint64_t n) override {
    if (!skips_) return false;
    offset_ += Time::ps(static_cast<std::int64_t>(n) * (now_ - mark_).count_ps());
    periods += n;
    return true;
  }
  void allow_skips() { skips_ = true; }

  std::vector<Sent> sent;
  std::uint64_t periods = 0; ///< periods skipped

 private:
  std::size_t hcas_;
  std::uint64_t rate_bps_;
  Time base_;
  Time now_, offset_, mark_;
  bool skips_ = false;
  std::uint64_t seq_ = 0;
  std::map<std::pair<Time, std::uint64_t>, std::function<void()>> events_;
};

} // namespace ibn::test
