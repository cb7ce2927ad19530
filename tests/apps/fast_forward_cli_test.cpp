// packet.fast_forward (issue 19 item 1; docs/engine.md "Fast-forward") through the binary: a ring Simple
// AllReduce skips periods and ends where the exact run ends, with fewer events; a ring of long messages on
// 1-GPU nodes skips inside its messages (fluid skips); where the DAG's steps do not repeat (LL128's
// grain-rounded chunks, trees on 8-GPU nodes) or anything else shares the engine, nothing is skipped.
#include "tests/apps/run_cli.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <string>

using ibn::test::run_cli;

namespace {

struct Run {
  double p50_us = 0, p99_us = 0, simulated_us = 0;
  std::uint64_t events = 0, hops = 0, skips = 0, fluid_skips = 0, executions_skipped = 0, samples = 0;
  std::string manifest_ff;
  nlohmann::json links; ///< the per-tier link tables
};

Run nccl(const std::string& args, bool fast_forward, const std::string& name,
         const std::string& shape = "-b 64M -e 64M -g 8 --nodes 16", int iters = 1) {
  const auto dir = ibn::test::scratch_dir(name);
  const auto r = run_cli(
      "nccl-tests all_reduce_perf " + shape + " -n " + std::to_string(iters) + " -w 0 -q " + args +
      " --set packet.fast_forward=" + (fast_forward ? "true" : "false") + " -o " + dir.string() + " 2>&1");
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto j = ibn::test::read_json_file(dir / "results.json");
  Run out;
  const auto& cu = j.at("collectives").at(0).at("completion_us");
  out.p50_us = cu.at("p50").get<double>();
  out.p99_us = cu.at("p99").get<double>();
  out.samples = cu.at("n").get<std::uint64_t>();
  out.simulated_us = j.at("engine").at("simulated_us").get<double>();
  out.links = j.at("links");
  out.events = j.at("engine").at("events").get<std::uint64_t>();
  out.hops = j.at("engine").at("counters").at("packet_hops").get<std::uint64_t>();
  const auto& c = j.at("engine").at("counters");
  if (c.contains("fast_forward")) {
    out.skips = c.at("fast_forward").at("skips").get<std::uint64_t>();
    out.fluid_skips = c.at("fast_forward").at("fluid_skips").get<std::uint64_t>();
    out.executions_skipped = c.at("fast_forward").value("executions_skipped", std::uint64_t{0});
  }
  out.manifest_ff = j.at("manifest").at("config").at("packet").at("fast_forward").dump();
  return out;
}

} // namespace

TEST_CASE("packet.fast_forward: a 128-rank ring Simple AllReduce skips periods, ends where the exact run "
          "ends, with fewer events") {
  // 16 nodes x 8 GPUs, 8 channels: 254 ring steps of which the frontier is steady after a few windows; each
  // of the two executions (out-of-place, in-place) skips once.
  const std::string args = "--algo ring --proto simple --channels 8";
  const Run exact = nccl(args, false, "ff-exact");
  const Run fast = nccl(args, true, "ff-fast");
  CHECK(exact.skips == 0);
  CHECK(fast.skips == 2);
  CHECK(fast.events < exact.events * 8 / 10);
  // Measured 2026-12-07: 1962.4214 us against 1962.4382 (-0.0009 %); packet hops +0.55 % (the skipped
  // periods' hops are the measured period's, scaled).
  CHECK(std::abs(fast.p50_us / exact.p50_us - 1) < 1e-3);
  CHECK(std::abs(static_cast<double>(fast.hops) / static_cast<double>(exact.hops) - 1) < 0.02);
  CHECK(fast.manifest_ff == "true"); // the manifest records the mode
  CHECK(exact.manifest_ff == "false");
}

TEST_CASE("packet.fast_forward: a ring of 1 MiB messages on 1-GPU nodes skips inside its messages (fluid "
          "skips) and ends within 0.05 % of the exact run") {
  // 8 nodes x 1 GPU, 1 channel, 32 MiB: 14 ring steps of 4 x 1 MiB messages per rank, each message 256
  // packets at line rate with nothing else on its path; no DAG period (too few steps), so only fluid skips.
  const std::string args = "--algo ring --proto simple --channels 1";
  const std::string shape = "-b 32M -e 32M -g 1 --nodes 8";
  const Run exact = nccl(args, false, "ff-fluid-exact", shape);
  const Run fast = nccl(args, true, "ff-fluid-fast", shape);
  CHECK(exact.fluid_skips == 0);
  CHECK(fast.skips == 0);
  CHECK(fast.fluid_skips > 50);
  // Measured 2026-12-08 (-n 5): 1210.5481 us against 1210.4142 (+0.011 %), events 3.67 M -> 1.66 M.
  CHECK(std::abs(fast.p50_us / exact.p50_us - 1) < 5e-4);
  CHECK(fast.events < exact.events * 6 / 10);
  CHECK(std::abs(static_cast<double>(fast.hops) / static_cast<double>(exact.hops) - 1) < 0.02);
}

TEST_CASE(
    "packet.fast_forward: an LL128 ring and a tree, whose steps do not repeat, run exactly as without it") {
  for (const std::string args : {"--algo ring --proto ll128", "--algo tree"}) {
    CAPTURE(args);
    const Run exact = nccl(args, false, "ff-no-exact");
    const Run fast = nccl(args, true, "ff-no-fast");
    CHECK(fast.skips == 0);
    CHECK(fast.events == exact.events);
    CHECK(fast.p50_us == exact.p50_us);
  }
}

TEST_CASE(
    "packet.fast_forward: executions that repeat exactly are skipped (repeat skips), results identical") {
  // A tree on 8 nodes x 8 GPUs, 20 executions (-n 10: out-of-place and in-place): nothing random, so once
  // three executions in a row took the same time with the same spacing, the other 17 are the same; the run
  // skips them. Every figure of the results is the exact run's: percentiles, sample count, simulated time,
  // the per-tier link tables (the engine's counters grow by whole periods).
  const std::string shape = "-b 64M -e 64M -g 8 --nodes 8";
  const std::string args = "--algo tree";
  const Run exact = nccl(args, false, "ff-repeat-exact", shape, 10);
  const Run fast = nccl(args, true, "ff-repeat-fast", shape, 10);
  CHECK(exact.executions_skipped == 0);
  CHECK(fast.executions_skipped == 17);
  CHECK(fast.p50_us == exact.p50_us);
  CHECK(fast.p99_us == exact.p99_us);
  CHECK(fast.samples == 20);
  CHECK(exact.samples == 20);
  CHECK(fast.simulated_us == exact.simulated_us);
  CHECK(fast.hops == exact.hops);
  CHECK(fast.links == exact.links);
  CHECK(fast.events * 4 < exact.events);
  // The same tree as a `run` scenario: without jitter it skips as above; with per-rank jitter the executions
  // differ and nothing is skipped.
  const auto dir = ibn::test::scratch_dir("ff-repeat-jitter");
  for (const bool jitter : {false, true}) {
    CAPTURE(jitter);
    const std::string j = jitter ? R"(, "jitter": {"distribution": "lognormal", "scale_us": 5})" : "";
    const auto file = dir / (jitter ? "jitter.json" : "plain.json");
    std::ofstream(file)
        << R"({"name": "ff", "seed": 1, "fabric": {"generator": "fat-tree", "params": {"tiers": 2,
        "radix": 16, "hosts": 64, "rate": "NDR"}}, "jobs": [{"name": "t", "nodes": 8, "gpus_per_node": 8,
        "nics_per_node": 8, "workload": {"op": "allreduce", "sizes": ["64M"], "algorithm": "tree",
        "iterations": 10, "warmup": 2)" +
               j + "}}]}";
    const auto out = dir / (jitter ? "jitter" : "plain");
    const auto r = run_cli("run " + file.string() + " -q -o " + out.string() + " 2>&1");
    INFO(r.out);
    REQUIRE(r.code == 0);
    const auto res = ibn::test::read_json_file(out / "results.json");
    const auto& c = res.at("engine").at("counters");
    CHECK(res.at("collectives").at(0).at("completion_us").at("n").get<int>() == 10);
    if (jitter)
      CHECK(!c.contains("fast_forward"));
    else
      CHECK(c.at("fast_forward").at("executions_skipped").get<int>() == 9); // 12 executions, 3 simulated
  }
}

TEST_CASE("packet.fast_forward: only a run whose one job is all the engine carries skips") {
  // The same ring Simple job alone, then beside a second job: the second job's traffic would be skipped along
  // with the first's periods, so the runner does not let the executor skip at all.
  const auto dir = ibn::test::scratch_dir("ff-jobs");
  const std::string ring_job = R"({"name": "ring", "nodes": 16, "gpus_per_node": 8, "nics_per_node": 8,
      "workload": {"op": "allreduce", "sizes": ["64M"], "algorithm": "ring", "protocol": "simple",
                   "channels": 8, "iterations": 1, "warmup": 0}})";
  const std::string other_job = R"({"name": "other", "nodes": 2, "gpus_per_node": 1, "nics_per_node": 1,
      "workload": {"op": "allreduce", "sizes": ["1M"], "algorithm": "ring", "iterations": 1, "warmup": 0}})";
  auto scenario = [&](const std::string& jobs) {
    return R"({"name": "ff", "seed": 1, "fabric": {"generator": "fat-tree", "params": {"tiers": 2, "radix": 32,
        "hosts": 160, "rate": "NDR"}}, "packet": {"fast_forward": true}, "jobs": [)" +
           jobs + "]}";
  };
  for (const bool alone : {true, false}) {
    CAPTURE(alone);
    const auto file = dir / (alone ? "alone.json" : "shared.json");
    std::ofstream(file) << scenario(alone ? ring_job : ring_job + ", " + other_job);
    const auto out = dir / (alone ? "alone" : "shared");
    const auto r = run_cli("run " + file.string() + " -q -o " + out.string() + " 2>&1");
    INFO(r.out);
    REQUIRE(r.code == 0);
    const auto j = ibn::test::read_json_file(out / "results.json");
    CHECK(j.at("engine").at("counters").contains("fast_forward") == alone);
  }
}
