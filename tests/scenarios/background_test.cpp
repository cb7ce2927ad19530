// Background traffic drivers on a trivial fake engine: a message is delivered at
// post + base_latency + bytes x 8 / rate, with no contention. The offered load is measured from the
// engine's own record of sends (not from the driver's counters), per sender and in total.
#include "scenarios/background.hpp"
#include "sim/error.hpp"
#include "tests/scenarios/fake_engine.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <set>
#include <tuple>

using namespace ibn;
using namespace ibn::scen;
using ibn::test::error_of;
using ibn::test::FakeEngine;

namespace {

BackgroundTrafficSpec spec(BackgroundPattern p, std::vector<eng::HcaIndex> hcas, double load,
                           GapDistribution g) {
  BackgroundTrafficSpec s;
  s.pattern = p;
  s.hcas = std::move(hcas);
  s.load = load;
  s.rate_gbps = 100;
  s.message_bytes = 65536;
  s.gaps = g;
  s.start = Time::us(100);
  s.stop = Time::ms(40);
  s.seed = 11;
  return s;
}

/// Bytes x 8 / window per source HCA, in Gb/s, from the engine's record.
std::map<eng::HcaIndex, double> offered_gbps(const FakeEngine& e, Time start, Time stop) {
  std::map<eng::HcaIndex, double> bytes;
  for (const auto& s : e.sent) {
    CHECK(s.at >= start);
    CHECK(s.at < stop);
    bytes[s.src] += static_cast<double>(s.bytes);
  }
  for (auto& [h, b] : bytes) b = b * 8 / (stop - start).to_s() * 1e-9;
  return bytes;
}

std::vector<eng::HcaIndex> iota(eng::HcaIndex n) {
  std::vector<eng::HcaIndex> v(n);
  for (eng::HcaIndex i = 0; i < n; ++i) v[i] = i;
  return v;
}

} // namespace

TEST_CASE("background: offered load matches the request within 5 % for every pattern and gap law") {
  // mean gap = 65536 B x 8 / (load x 100 Gb/s); over 39.9 ms at load 0.3 each sender posts ~2280 messages,
  // so the total over 8 senders has a relative sd of ~0.7 % with exponential gaps.
  for (const auto g : {GapDistribution::Exponential, GapDistribution::Fixed})
    for (const auto p :
         {BackgroundPattern::Permutation, BackgroundPattern::Uniform, BackgroundPattern::Incast}) {
      CAPTURE(to_string(g));
      CAPTURE(to_string(p));
      FakeEngine e(8, 100'000'000'000ull, Time::us(1));
      auto s = spec(p, iota(8), 0.3, g);
      BackgroundDriver d(e, s);
      d.start();
      e.run();
      const auto per = offered_gbps(e, s.start, s.stop);
      const std::size_t senders = p == BackgroundPattern::Incast ? 7 : 8;
      REQUIRE(per.size() == senders);
      double total = 0;
      for (const auto& [h, gbps] : per) {
        total += gbps;
        // One sender alone: ~2280 messages, sd ~2.1 % (exponential); fixed gaps are exact to one message.
        CHECK(std::abs(gbps - 30.0) < (g == GapDistribution::Fixed ? 0.05 : 0.1) * 30.0);
      }
      CHECK(std::abs(total / static_cast<double>(senders) - 30.0) < 0.05 * 30.0);
      CHECK(d.stats().offered_gbps_per_sender(s.start, s.stop) == doctest::Approx(total / senders));
      // Everything posted was delivered (also what was in flight at stop).
      CHECK(d.stats().messages_delivered == d.stats().messages_posted);
      CHECK(d.stats().messages_posted == e.sent.size());
      CHECK(d.stats().bytes_delivered == 65536 * e.sent.size());
    }
}

TEST_CASE("background: fixed gaps post exactly load x rate, each sender at its own phase") {
  FakeEngine e(4, 100'000'000'000ull, Time::zero());
  auto s = spec(BackgroundPattern::Permutation, iota(4), 0.5, GapDistribution::Fixed);
  BackgroundDriver d(e, s);
  // 65536 x 8 / 50 Gb/s = 10.48576 us
  CHECK(d.mean_gap() == Time::ps(10'485'760));
  d.start();
  e.run();
  std::map<eng::HcaIndex, std::vector<Time>> posts;
  for (const auto& m : e.sent) posts[m.src].push_back(m.at);
  std::set<Time> phases;
  for (const auto& [h, v] : posts) {
    // window 39.9 ms / 10.48576 us = 3805.2 gaps: 3805 or 3806 posts
    CHECK(v.size() >= 3805);
    CHECK(v.size() <= 3806);
    for (std::size_t i = 1; i < v.size(); ++i)
      CHECK(std::llabs((v[i] - v[i - 1]).count_ps() - 10'485'760) <= 1);
    CHECK(v.front() < s.start + d.mean_gap());
    phases.insert(v.front());
  }
  CHECK(phases.size() == 4); // not in lock-step
}

TEST_CASE("background: incast receiver sees N x load x rate") {
  FakeEngine e(6, 100'000'000'000ull, Time::us(1));
  auto s = spec(BackgroundPattern::Incast, {4, 1, 2, 3, 5}, 0.2, GapDistribution::Exponential);
  s.incast_receiver = 0;
  s.incast_senders = 3;
  BackgroundDriver d(e, s);
  d.start();
  e.run();
  std::set<eng::HcaIndex> srcs;
  double bytes = 0;
  for (const auto& m : e.sent) {
    CHECK(m.dst == 4);
    srcs.insert(m.src);
    bytes += static_cast<double>(m.bytes);
  }
  CHECK(srcs == std::set<eng::HcaIndex>{1, 2, 3}); // the 3 participants after the receiver
  const double rx_gbps = bytes * 8 / (s.stop - s.start).to_s() * 1e-9;
  CHECK(std::abs(rx_gbps - 3 * 0.2 * 100) < 0.05 * 60);
}

TEST_CASE("background: permutation is a fixed derangement, uniform spreads over the others") {
  FakeEngine e(8, 100'000'000'000ull, Time::us(1));
  auto s = spec(BackgroundPattern::Permutation, iota(8), 0.1, GapDistribution::Exponential);
  s.stop = Time::ms(2);
  BackgroundDriver d(e, s);
  d.start();
  e.run();
  std::map<eng::HcaIndex, std::set<eng::HcaIndex>> dsts;
  std::map<eng::HcaIndex, int> receivers;
  for (const auto& m : e.sent) dsts[m.src].insert(m.dst);
  for (const auto& [src, set] : dsts) {
    REQUIRE(set.size() == 1);
    CHECK(*set.begin() != src);
    CHECK(*set.begin() == d.partners()[src]);
    ++receivers[*set.begin()];
  }
  CHECK(receivers.size() == 8); // each HCA receives from exactly one sender
  for (const auto& [h, n] : receivers) CHECK(n == 1);

  FakeEngine u(4, 100'000'000'000ull, Time::us(1));
  auto su = spec(BackgroundPattern::Uniform, iota(4), 0.3, GapDistribution::Exponential);
  BackgroundDriver du(u, su);
  du.start();
  u.run();
  std::map<std::pair<eng::HcaIndex, eng::HcaIndex>, int> pairs;
  std::map<eng::HcaIndex, int> from;
  for (const auto& m : u.sent) {
    CHECK(m.src != m.dst);
    ++pairs[{m.src, m.dst}];
    ++from[m.src];
  }
  REQUIRE(pairs.size() == 12);
  for (const auto& [p, n] : pairs) { // each of the 3 destinations gets a third, within 10 % (n ~ 1500)
    const double share = static_cast<double>(n) / from[p.first];
    CHECK(std::abs(share - 1.0 / 3) < 0.1 / 3);
  }
}

TEST_CASE("background: destinations stay within a plane") {
  FakeEngine e(6, 100'000'000'000ull, Time::us(1));
  for (const auto p : {BackgroundPattern::Permutation, BackgroundPattern::Uniform}) {
    auto s = spec(p, iota(6), 0.1, GapDistribution::Exponential);
    s.planes = {0, 1, 0, 1, 0, 1};
    s.stop = Time::ms(2);
    BackgroundDriver d(e, s);
    d.start();
    e.run();
  }
  REQUIRE(!e.sent.empty());
  for (const auto& m : e.sent) CHECK(m.src % 2 == m.dst % 2);
  auto bad = spec(BackgroundPattern::Incast, iota(4), 0.1, GapDistribution::Exponential);
  bad.planes = {0, 1, 0, 0};
  CHECK(error_of([&] { BackgroundDriver d(e, bad); }) ==
        "background: incast sender HCA 1 is on plane 1, the receiver HCA 0 on plane 0");
  bad.pattern = BackgroundPattern::Permutation;
  CHECK(error_of([&] { BackgroundDriver d(e, bad); }).find("plane 1 has 1") != std::string::npos);
}

TEST_CASE("background: latency is post to delivery") {
  // Uncontended fake engine: every 64 KiB message takes 1 us + 65536 x 8 / 100 Gb/s = 6.24288 us.
  FakeEngine e(4, 100'000'000'000ull, Time::us(1));
  auto s = spec(BackgroundPattern::Permutation, iota(4), 0.2, GapDistribution::Exponential);
  s.stop = Time::ms(1);
  BackgroundDriver d(e, s);
  d.start();
  e.run();
  REQUIRE(d.stats().latencies.size() > 50);
  CHECK(d.stats().latency_us(0.5) == doctest::Approx(6.24288));
  CHECK(d.stats().latency_us(1.0) == doctest::Approx(6.24288));
  CHECK(d.stats().mean_latency_us() == doctest::Approx(6.24288));
  const auto j = d.stats().to_json();
  CHECK(j["messages_posted"] == d.stats().messages_posted);
  CHECK(j["latency_us"]["p99"].get<double>() == doctest::Approx(6.24288));
}

TEST_CASE("background: the same seed gives the same traffic, another seed other traffic") {
  auto run = [](std::uint64_t seed, BackgroundPattern p) {
    FakeEngine e(8, 100'000'000'000ull, Time::us(1));
    auto s = spec(p, iota(8), 0.4, GapDistribution::Exponential);
    s.stop = Time::ms(1);
    s.seed = seed;
    BackgroundDriver d(e, s);
    d.start();
    e.run();
    return e.sent;
  };
  for (const auto p : {BackgroundPattern::Permutation, BackgroundPattern::Uniform}) {
    const auto a = run(5, p), b = run(5, p), c = run(6, p);
    REQUIRE(a.size() > 100);
    CHECK(a == b);
    CHECK(!(a == c));
  }
}

TEST_CASE("background: bad specs are InputErrors naming the field") {
  FakeEngine e(4, 100'000'000'000ull, Time::us(1));
  auto s = spec(BackgroundPattern::Permutation, iota(4), 0.5, GapDistribution::Exponential);
  auto err = [&](auto change) {
    auto t = s;
    change(t);
    return error_of([&] { BackgroundDriver d(e, t); });
  };
  CHECK(err([](BackgroundTrafficSpec& t) { t.load = 0; }).find("background.load: must be in (0, 1]") == 0);
  CHECK(err([](BackgroundTrafficSpec& t) { t.load = 1.5; }).find("background.load") == 0);
  CHECK(err([](BackgroundTrafficSpec& t) {
          t.stop = t.start;
        }).find("background.stop_us: must be after start_us") == 0);
  CHECK(err([](BackgroundTrafficSpec& t) { t.hcas = {1}; }) ==
        "background.hcas: background traffic needs at least 2 HCAs, got 1");
  CHECK(err([](BackgroundTrafficSpec& t) {
          t.hcas = {1, 2, 1};
        }) == "background.hcas: an HCA is listed twice");
  CHECK(err([](BackgroundTrafficSpec& t) {
          t.hcas = {1, 7};
        }).find("HCA 7 does not exist") != std::string::npos);
  CHECK(err([](BackgroundTrafficSpec& t) { t.message_bytes = 0; }).find("background.message_bytes") == 0);
  CHECK(err([](BackgroundTrafficSpec& t) {
          t.pattern = BackgroundPattern::Incast;
          t.incast_senders = 4;
        }).find("background.incast_senders") == 0);
}

TEST_CASE("background: JSON spec with units, and unknown keys named by path") {
  const auto j = nlohmann::json::parse(
      R"({"pattern": "incast", "load": 0.25, "message_bytes": "64K", "gaps": "fixed", "start_us": 5,
          "stop_us": 500, "incast_senders": 3, "sl": 1})");
  const auto s = background_from_json(j, "scenario.json: background[0]");
  CHECK(s.pattern == BackgroundPattern::Incast);
  CHECK(s.load == 0.25);
  CHECK(s.message_bytes == 65536);
  CHECK(s.gaps == GapDistribution::Fixed);
  CHECK(s.start == Time::us(5));
  CHECK(s.stop == Time::us(500));
  CHECK(s.incast_senders == 3);
  CHECK(s.sl == 1);
  CHECK(error_of([] {
          background_from_json(nlohmann::json::parse(R"({"pattern": "incast", "lod": 0.2})"), "bg");
        }).find("bg.lod: unknown key") == 0);
  CHECK(error_of([] { background_from_json(nlohmann::json::parse(R"({"pattern": "alltoall"})"), "bg"); }) ==
        "bg.pattern: unknown background pattern 'alltoall' (expected permutation, incast or uniform)");
  CHECK(error_of([] {
          background_from_json(nlohmann::json::parse(R"({"load": 0.2})"), "bg");
        }).find("bg: missing key 'pattern'") == 0);
  CHECK(error_of([] {
          background_from_json(nlohmann::json::parse(R"({"pattern": "uniform", "load": 2})"), "bg");
        }).find("bg.load: must be in (0, 1]") == 0);
}
