// FluidNetwork (models/flow/fluid_network.hpp), the flow engine's native max-min solver: closed forms
// (one flow, two flows sharing a link, the classic two-link max-min example, a late start), component-local
// re-solving, simultaneous completions, and random instances against a reference that re-solves EVERY flow
// globally at every event (the definition of max-min fair fluid sharing, written independently here).
#include "models/flow/fluid_network.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

using ibn::flow::FluidNetwork;

namespace {

/// Runs every flow to completion; returns flow id -> completion time (ps). Flows are (start ps, links,
/// bytes), started in the order given (start times non-decreasing).
struct Spec {
  std::int64_t start;
  std::vector<std::uint32_t> links;
  double bytes;
};
std::vector<std::int64_t> run_all(FluidNetwork& net, const std::vector<Spec>& flows) {
  std::vector<std::int64_t> done_at(flows.size(), -1);
  std::map<std::uint32_t, std::size_t> owner;
  std::size_t next = 0;
  std::vector<std::uint32_t> done;
  for (;;) {
    const std::int64_t tf = net.next_completion();
    const std::int64_t ts = next < flows.size() ? flows[next].start : FluidNetwork::kNever;
    if (tf == FluidNetwork::kNever && ts == FluidNetwork::kNever) break;
    if (tf <= ts) {
      done.clear();
      net.complete(tf, done);
      for (const auto id : done) {
        done_at[owner.at(id)] = tf;
        owner.erase(id);
      }
    } else {
      owner[net.start(flows[next].links, flows[next].bytes, ts)] = next;
      ++next;
    }
  }
  return done_at;
}

/// Reference: max-min by progressive filling over ALL flows in progress, re-solved at every event, time in
/// double seconds (completion rounded to ps only at the end).
std::vector<double> reference(const std::vector<double>& cap, const std::vector<Spec>& flows) {
  std::vector<double> rem(flows.size()), done_at(flows.size(), -1);
  std::vector<bool> on(flows.size(), false);
  for (std::size_t i = 0; i < flows.size(); ++i) rem[i] = flows[i].bytes;
  double t = 0;
  std::size_t next = 0;
  for (;;) {
    // rates of the flows in progress
    std::vector<double> rate(flows.size(), 0);
    std::vector<double> left = cap;
    std::vector<int> n(cap.size(), 0);
    std::vector<bool> fixed(flows.size(), true);
    std::size_t unfixed = 0;
    for (std::size_t i = 0; i < flows.size(); ++i)
      if (on[i]) {
        fixed[i] = false, ++unfixed;
        for (auto l : flows[i].links) ++n[l];
      }
    while (unfixed > 0) {
      int best = -1;
      double share = 0;
      for (std::size_t l = 0; l < cap.size(); ++l)
        if (n[l] > 0 && (best < 0 || left[l] / n[l] < share))
          best = static_cast<int>(l), share = left[l] / n[l];
      for (std::size_t i = 0; i < flows.size(); ++i) {
        if (fixed[i] || std::find(flows[i].links.begin(), flows[i].links.end(), best) == flows[i].links.end())
          continue;
        fixed[i] = true, rate[i] = share, --unfixed;
        for (auto l : flows[i].links) left[l] -= share, --n[l];
      }
    }
    double dt = INFINITY;
    for (std::size_t i = 0; i < flows.size(); ++i)
      if (on[i]) dt = std::min(dt, rem[i] / rate[i]);
    const double ts = next < flows.size() ? static_cast<double>(flows[next].start) * 1e-12 : INFINITY;
    if (dt == INFINITY && ts == INFINITY) break;
    if (t + dt <= ts) {
      t += dt;
      for (std::size_t i = 0; i < flows.size(); ++i)
        if (on[i]) {
          rem[i] -= rate[i] * dt;
          if (rem[i] <= flows[i].bytes * 1e-9) on[i] = false, done_at[i] = t;
        }
    } else {
      for (std::size_t i = 0; i < flows.size(); ++i)
        if (on[i]) rem[i] -= rate[i] * (ts - t);
      t = ts;
      on[next++] = true;
    }
  }
  return done_at;
}

} // namespace

TEST_CASE("fluid network: one flow alone moves at its link's capacity") {
  FluidNetwork net({1e9, 2e9});
  // 5,000 bytes at min(1e9, 2e9) bytes/s = 5 us.
  const auto t = run_all(net, {{0, {0, 1}, 5000}});
  CHECK(t[0] == 5'000'000);
}

TEST_CASE("fluid network: two flows share a link equally, the survivor speeds up") {
  FluidNetwork net({1e9});
  // Both at 5e8 B/s; the 1,000-byte flow ends at 1000 / 5e8 = 2 us, the other then has 2,000 bytes left at
  // 1e9 B/s: 2 us more, 4 us.
  const auto t = run_all(net, {{0, {0}, 1000}, {0, {0}, 3000}});
  CHECK(t[0] == 2'000'000);
  CHECK(t[1] == 4'000'000);
}

TEST_CASE("fluid network: the classic two-link max-min allocation") {
  // L0 = 1 GB/s carries A and B, L1 = 2 GB/s carries A and C: A = B = 0.5 GB/s (L0 is the bottleneck), C
  // takes what A leaves on L1: 1.5 GB/s.
  FluidNetwork net({1e9, 2e9});
  const auto a = net.start(std::vector<std::uint32_t>{0, 1}, 1e6, 0);
  const auto b = net.start(std::vector<std::uint32_t>{0}, 1e6, 0);
  const auto c = net.start(std::vector<std::uint32_t>{1}, 1e6, 0);
  CHECK(net.rate(a) == doctest::Approx(0.5e9));
  CHECK(net.rate(b) == doctest::Approx(0.5e9));
  CHECK(net.rate(c) == doctest::Approx(1.5e9));
}

TEST_CASE("fluid network: a late start re-shares from the bytes already moved") {
  FluidNetwork net({1e9});
  // A (4,000 B) alone for 1 us moves 1,000 B; then A and B (1,000 B) at 5e8 each: B ends 2 us later (t = 3
  // us) with A at 2,000 B left, alone again: 2 us more, t = 5 us.
  const auto t = run_all(net, {{0, {0}, 4000}, {1'000'000, {0}, 1000}});
  CHECK(t[1] == 3'000'000);
  CHECK(t[0] == 5'000'000);
}

TEST_CASE("fluid network: an event re-solves only the component it touches") {
  FluidNetwork net({1e9, 1e9, 1e9});
  net.start(std::vector<std::uint32_t>{0}, 1e6, 0);
  net.start(std::vector<std::uint32_t>{1}, 1e6, 0);
  net.next_completion(); // solves what changed at t = 0 (two components of one flow), once
  CHECK(net.solves() == 1);
  CHECK(net.flows_solved() == 2);
  const auto before = net.flows_solved();
  net.start(std::vector<std::uint32_t>{2}, 1e6, 10); // a link nobody else uses: one flow re-rated
  net.next_completion();
  CHECK(net.flows_solved() - before == 1);
  const auto before2 = net.flows_solved();
  net.start(std::vector<std::uint32_t>{1, 2}, 1e6, 20); // joins links 1 and 2: three flows re-rated
  net.next_completion();
  CHECK(net.flows_solved() - before2 == 3);
  CHECK(net.in_progress() == 4);
}

TEST_CASE("fluid network: the starts of one instant are solved once, together") {
  FluidNetwork net({1e9});
  for (int i = 0; i < 100; ++i) net.start(std::vector<std::uint32_t>{0}, 1000, 0);
  CHECK(net.solves() == 0);
  CHECK(net.next_completion() == 100'000'000); // 100 x 1,000 B at 1e9 B/s: all end at 100 us
  CHECK(net.solves() == 1);
  CHECK(net.flows_solved() == 100);
}

TEST_CASE("fluid network: flows due at the same picosecond complete together, in id order") {
  FluidNetwork net({1e9, 1e9});
  net.start(std::vector<std::uint32_t>{1}, 2000, 0);
  net.start(std::vector<std::uint32_t>{0}, 2000, 0);
  std::vector<std::uint32_t> done;
  const auto t = net.next_completion();
  CHECK(t == 2'000'000);
  net.complete(t, done);
  CHECK(done == std::vector<std::uint32_t>{0, 1});
  CHECK(net.in_progress() == 0);
  CHECK(net.next_completion() == FluidNetwork::kNever);
}

TEST_CASE("fluid network: random instances equal a global re-solve at every event") {
  std::mt19937_64 rng(7);
  // The first 40 instances have components of at most 7 links (FluidNetwork fills them by a scan), the
  // others up to 40 links (by the heap, above kScanLinks = 16).
  for (int inst = 0; inst < 60; ++inst) {
    const std::size_t nl = inst < 40 ? 2 + rng() % 6 : 17 + rng() % 24, nf = 1 + rng() % 25;
    std::vector<double> cap(nl);
    for (auto& c : cap) c = 1e9 * static_cast<double>(1 + rng() % 8);
    std::vector<Spec> flows;
    std::int64_t t = 0;
    for (std::size_t i = 0; i < nf; ++i) {
      t += static_cast<std::int64_t>(rng() % 3) * 400'000; // several flows start together
      std::vector<std::uint32_t> links;
      for (std::uint32_t l = 0; l < nl; ++l)
        if (rng() % (inst < 40 ? 3 : 2) == 0) links.push_back(l);
      if (links.empty()) links.push_back(static_cast<std::uint32_t>(rng() % nl));
      flows.push_back({t, links, static_cast<double>(100 + rng() % 20000)});
    }
    FluidNetwork net(cap);
    const auto got = run_all(net, flows);
    const auto want = reference(cap, flows);
    for (std::size_t i = 0; i < nf; ++i) {
      INFO("instance " << inst << " flow " << i);
      // Each completion is rounded to the ps, and a re-solve starts from the rounded time: a few ps at most.
      CHECK(std::abs(static_cast<double>(got[i]) - want[i] * 1e12) <= 5.0);
    }
    FluidNetwork again(cap);
    CHECK(run_all(again, flows) == got); // deterministic
  }
}
