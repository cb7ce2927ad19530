// Period skips of the DagExecutor (ExecOptions::fast_forward, scenarios/executor_skip.cpp) on an engine with
// no contention, where a ring's progress is exactly periodic: a skip must then end the collective exactly
// when the exact run does, deliver every transfer once, and post fewer transfers.
#include "scenarios/collectives.hpp"
#include "scenarios/executor.hpp"

#include "tests/scenarios/fake_engine.hpp"

#include <doctest/doctest.h>

using namespace ibn;
using namespace ibn::scen;

namespace {

/// A ring Simple AllReduce of `bytes` over `ranks` nodes of one GPU, one channel, NCCL's costs off.
TransferDag ring(std::uint32_t ranks, std::uint64_t bytes) {
  CollectiveSpec s;
  s.op = CollOp::AllReduce;
  s.ranks = ranks;
  s.gpus_per_node = 1;
  s.nics_per_node = 1;
  s.channels = 1;
  s.algorithm = "ring";
  s.protocol = "simple";
  s.size_bytes = bytes;
  return build_collective(s);
}

struct Outcome {
  Time end;
  std::uint64_t sends = 0, periods = 0, delivered = 0;
};

Outcome run(const TransferDag& d, bool fast_forward, bool can_skip) {
  test::FakeEngine engine(d.ranks(), 400'000'000'000ULL, Time::ns(1500));
  if (can_skip) engine.allow_skips();
  JobLayout layout;
  for (eng::HcaIndex h = 0; h < d.ranks(); ++h) layout.nodes.push_back({h});
  std::atomic<std::uint64_t> delivered{0};
  ExecOptions opt;
  opt.fast_forward = fast_forward;
  opt.delivered = &delivered;
  DagExecutor ex(engine, d, layout, opt);
  Outcome o;
  // Two executions in a row: the second starts from the first's end (relabelling is per execution).
  ex.start({}, [&](Time) { ex.start({}, [&](Time t) { o.end = t; }); });
  engine.run();
  o.sends = engine.sent.size();
  o.periods = engine.periods;
  o.delivered = delivered.load();
  return o;
}

} // namespace

TEST_CASE("fast-forward: a ring on an engine without contention skips periods and ends exactly when the "
          "exact run ends") {
  // 256 ranks: 510 steps, each rank sending its 64 KiB chunk (16 MiB / 256) as two 32 KiB slices (Simple's
  // two slices per step), every step alike, so the frontier moves one step per (1.5 us + 32 KiB x 8 / 400
  // Gb/s) and the run is periodic from its first window.
  const TransferDag d = ring(256, 16u << 20);
  REQUIRE(d.size() == 2u * 510 * 256);
  const Outcome exact = run(d, false, true);
  const Outcome fast = run(d, true, true);
  CHECK(exact.periods == 0);
  CHECK(exact.sends == 2 * d.size());
  CHECK(fast.periods >= 2);                 // at least one skip per execution
  CHECK(fast.sends < exact.sends / 2);      // most steps were skipped, not simulated
  CHECK(fast.delivered == exact.delivered); // every transfer counted once, skipped or not
  CHECK(fast.delivered == 2 * d.size());
  CHECK(fast.end == exact.end); // to the picosecond
  // Closed form: 510 steps x (1.5 us + 32,768 B x 20 ps/B) per execution, two executions back to back.
  CHECK(exact.end == Time::ps(std::int64_t{2} * 510 * (1'500'000 + 32'768 * 20)));
}

TEST_CASE("fast-forward: an engine that cannot skip, or a DAG too short to watch, runs exactly") {
  const TransferDag d = ring(256, 16u << 20);
  const Outcome no_engine = run(d, true, false);
  CHECK(no_engine.periods == 0);
  CHECK(no_engine.sends == 2 * d.size());
  CHECK(no_engine.end == run(d, false, false).end);
  const TransferDag short_ring = ring(16, 1u << 20); // 30 steps: below the 192 a region needs
  const Outcome s = run(short_ring, true, true);
  CHECK(s.periods == 0);
  CHECK(s.sends == 2 * short_ring.size());
}
