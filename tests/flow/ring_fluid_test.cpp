// The flow engine's ring-fluid model (scenarios/ring_fluid.hpp, key flow.ring_fluid).
// 1. CoflowNetwork, the weighted max-min of coflows with caps, against hand-computed closed forms.
// 2. The model against the exact per-transfer path on the same engine, where both run: the same scenario
//    run both ways, each in its own child process (one flow engine per process). The model is an
//    approximation; the tolerances below are what it must keep (measured errors in docs/flow-engine.md).
// 3. When it runs: auto only beyond the exact path's transfer limit; "on" refused, naming the key, for what
//    it leaves out.
#include "scenarios/ring_fluid.hpp"
#include "scenarios/runner.hpp"
#include "scenarios/scenario.hpp"
#include "sim/child_processes.hpp"
#include "sim/error.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

using namespace ibn;
using namespace ibn::scen;
using J = nlohmann::json;

namespace {

/// The smallest clock an engine needs: timed callbacks in (time, order) order.
class Clock final : public eng::Engine {
 public:
  std::string name() const override { return "clock"; }
  Time now() const override { return now_; }
  std::size_t num_hcas() const override { return 0; }
  void send(const eng::TransferSpec&, eng::DeliveredFn) override { throw std::logic_error("no sends"); }
  void call_at(Time t, std::function<void()> fn) override {
    q_.emplace(std::make_pair(t.count_ps(), seq_++), std::move(fn));
  }
  void run() override {
    while (!q_.empty()) {
      auto it = q_.begin();
      now_ = Time::ps(it->first.first);
      auto fn = std::move(it->second);
      q_.erase(it);
      fn();
    }
  }
  eng::EngineReport report() const override { return {}; }

 private:
  Time now_ = Time::zero();
  std::uint64_t seq_ = 0;
  std::map<std::pair<std::int64_t, std::uint64_t>, std::function<void()>> q_;
};

} // namespace

TEST_CASE(
    "coflow sharing: fair share on a shared link, the private bottleneck, progress kept across re-solves") {
  // Link 0: 100 B/s, link 1: 30 B/s. A: 2 flows on link 0, 100 B each (bandwidth-bound: T = 100 / x).
  // B: 1 flow on links 0 and 1, 60 B (T = 60 / x). Duties are 1 (pure bandwidth), so every flow counts:
  // A's flows see 100 / 3 on link 0; B sees min(100 / 3, 30 / 1) = 30. B ends at 60 / 30 = 2 s; by then A has
  // done 2 x 33.3 = 66.7 of 100 B; alone at 50 B/s the last 33.3 B take 0.667 s: 2.667 s.
  Clock clock;
  CoflowNetwork net(clock, [](std::uint32_t l) { return l == 0 ? 100.0 : 30.0; });
  const std::vector<CoflowNetwork::Use> a{{0, 2}}, b{{0, 1}, {1, 1}};
  double end_a = -1, end_b = -1;
  net.start(
      a, 100, [](double x) { return 100 / x; }, [&](Time t) { end_a = t.to_s(); });
  net.start(
      b, 60, [](double x) { return 60 / x; }, [&](Time t) { end_b = t.to_s(); });
  clock.run();
  CHECK(end_b == doctest::Approx(2.0).epsilon(1e-9));
  CHECK(end_a == doctest::Approx(2.0 + (100.0 - 2.0 * 100.0 / 3.0) / 50.0).epsilon(1e-9));
  CHECK(net.coflows() == 2);
}

TEST_CASE("coflow sharing: a latency-bound coflow weighs by its duty, and takes its own time") {
  // Link 0: 100 B/s. L: 1 flow of 10 B with 9 s of latency (T = 9 + 10 / x); alone x = 100, T = 9.1 s, duty
  // (10 / 100) / 9.1 = 1/91. H: 1 flow of 100 B, bandwidth-bound. Fixed point: H sees 100 / (1 + dL),
  // L sees 100 / (1 + dH) with dH = 1, i.e. 50: TL = 9.2 s; dL = (10 / 50) / 9.2 = 1/46;
  // H: x = 100 / (1 + 1/46) = 97.87 B/s -> 1.0217 s. After H ends, L alone: it had done 1.0217 / 9.2 of its
  // work; the rest at T = 9.1 s.
  Clock clock;
  CoflowNetwork net(clock, [](std::uint32_t) { return 100.0; });
  const std::vector<CoflowNetwork::Use> one{{0, 1}};
  double end_l = -1, end_h = -1;
  net.start(
      one, 10, [](double x) { return 9 + 10 / x; }, [&](Time t) { end_l = t.to_s(); });
  net.start(
      one, 100, [](double x) { return 100 / x; }, [&](Time t) { end_h = t.to_s(); });
  clock.run();
  const double th = 100.0 / (100.0 / (1.0 + 1.0 / 46.0));
  CHECK(end_h == doctest::Approx(th).epsilon(1e-6));
  CHECK(end_l == doctest::Approx(th + (1.0 - th / 9.2) * 9.1).epsilon(1e-6));
}

namespace {

J tree(int radix, int hosts, const std::string& ratio) {
  return {{"generator", "fat-tree"},
          {"params",
           {{"tiers", 2}, {"radix", radix}, {"hosts", hosts}, {"oversubscription", ratio}, {"rate", "NDR"}}}};
}

J job(const std::string& name, int nodes, int gpus, int nics, const std::string& op, const std::string& algo,
      const std::string& sizes, const std::string& placement = "linear") {
  return {{"name", name},
          {"nodes", nodes},
          {"gpus_per_node", gpus},
          {"nics_per_node", nics},
          {"placement", placement},
          {"workload",
           {{"op", op},
            {"sizes", sizes},
            {"algorithm", algo},
            {"channels", 2},
            {"iterations", 3},
            {"warmup", 0}}}};
}

/// p50 per collective (job/op/size in order), the run's ring-fluid report (null when off).
struct Outcome {
  std::vector<double> p50;
  J fluid;
};

Outcome run(const J& doc, const std::string& mode) {
  const J out = J::parse(run_in_child_process([&] {
    // The exact reference is the per-transfer DAG (not the symmetric-steps shortcut of a lone ring job).
    const auto s = make_scenario(doc, "t", "", {"flow.ring_fluid=" + mode, "flow.symmetric_steps=false"});
    const auto r = run_scenario(s);
    J o;
    o["p50"] = J::array();
    for (const auto& c : r.collectives) {
      auto v = c.samples_us;
      std::sort(v.begin(), v.end());
      o["p50"].push_back(v.at(v.size() / 2));
    }
    o["fluid"] = r.engine.extra.contains("ring_fluid") ? r.engine.extra.at("ring_fluid") : J();
    return o.dump();
  }));
  return {out.at("p50").get<std::vector<double>>(), out.at("fluid")};
}

void compare(const J& doc, double tolerance) {
  const auto exact = run(doc, "off"), fluid = run(doc, "on");
  CHECK(exact.fluid.is_null());
  REQUIRE(!fluid.fluid.is_null());
  REQUIRE(exact.p50.size() == fluid.p50.size());
  for (std::size_t i = 0; i < exact.p50.size(); ++i) {
    INFO("collective " << i << ": exact " << exact.p50[i] << " us, ring fluid " << fluid.p50[i] << " us");
    CHECK(std::abs(fluid.p50[i] / exact.p50[i] - 1.0) <= tolerance);
  }
}

} // namespace

TEST_CASE("ring fluid vs the exact path: one ring AllReduce, one GPU per node, bandwidth-bound") {
  // 8 nodes on a non-blocking tree, 64 MiB: the time is 2 (n-1)/n x S / link rate plus the steps' latency;
  // both paths must agree within 2 %.
  const J doc = {{"engine", "flow"},
                 {"seed", 5},
                 {"fabric", tree(8, 16, "1:1")},
                 {"jobs", J::array({job("j", 8, 1, 1, "allreduce", "ring", "64M")})}};
  compare(doc, 0.02);
}

TEST_CASE("ring fluid vs the exact path: hierarchical AllReduce and a flat ring AllGather, 4 GPUs per node") {
  const J doc = {{"engine", "flow"},
                 {"seed", 5},
                 {"fabric", tree(8, 32, "1:1")},
                 {"jobs", J::array({job("ar", 4, 4, 4, "allreduce", "hierarchical", "1M,16M")})}};
  compare(doc, 0.05);
  const J doc2 = {{"engine", "flow"},
                  {"seed", 5},
                  {"fabric", tree(8, 32, "1:1")},
                  {"jobs", J::array({job("ag", 4, 4, 4, "allgather", "ring", "1M,16M")})}};
  compare(doc2, 0.05);
}

TEST_CASE("ring fluid vs the exact path: ring LL and LL128 AllGather with NCCL's per-channel stage") {
  // With NCCL's costs on, a ring LL/LL128 channel passes every send through its stage (llMaxBw / channels,
  // perChMaxRingLL128Bw): both paths charge it, within 5 %.
  for (const std::string proto : {"ll", "ll128"}) {
    J j = job("ag", 4, 4, 4, "allgather", "ring", "256K,4M");
    j["workload"]["protocol"] = proto;
    const J doc = {{"engine", "flow"}, {"seed", 5}, {"fabric", tree(8, 32, "1:1")}, {"jobs", J::array({j})}};
    INFO("protocol " << proto);
    compare(doc, 0.05);
  }
  // With NCCL's default channel count (8 here) and 16 MiB the model is further off (measured LL +6.2 %,
  // LL128 +12 %; docs/collectives.md): within 15 %.
  for (const std::string proto : {"ll", "ll128"}) {
    J j = job("ag", 2, 4, 4, "allgather", "ring", "16M");
    j["workload"]["protocol"] = proto;
    j["workload"]["channels"] = 0;
    const J doc = {{"engine", "flow"}, {"seed", 5}, {"fabric", tree(8, 32, "1:1")}, {"jobs", J::array({j})}};
    INFO("default channels, protocol " << proto);
    compare(doc, 0.15);
  }
}

TEST_CASE("ring fluid vs the exact path: a two-GPU ring, LL128, where the stage paces every loop") {
  // A ReduceScatter over one node's 2 GPUs: one step per loop, one slice per connection, each loop after the
  // last delivery of the one before. A connection is the stage and the NVLink copy in tandem, so a loop
  // costs the pass plus the copy's latency, not two passes (the model paid the pass twice until
  // 2026-12-06: +54 % at 4 MiB; measured now +6 %). Within 8 %.
  J j = job("rs", 1, 2, 2, "reducescatter", "ring", "4M,16M");
  j["workload"]["protocol"] = "ll128";
  const J doc = {{"engine", "flow"}, {"seed", 5}, {"fabric", tree(8, 32, "1:1")}, {"jobs", J::array({j})}};
  compare(doc, 0.08);
}

TEST_CASE("ring fluid vs the exact path: a tree AllReduce (the tuning's choice), alone") {
  // 8 nodes x 4 GPUs, the tree named; its model (the first chunk's chain up and down, then one chunk per
  // period of the busiest connection or of the tree's lane rate) within 20 % of the exact path (measured
  // -11.1 and -15.3 %: docs/flow-engine.md).
  J doc = {{"engine", "flow"},
           {"seed", 5},
           {"fabric", tree(8, 32, "1:1")},
           {"jobs", J::array({job("t", 8, 4, 4, "allreduce", "tree", "1M,16M")})}};
  compare(doc, 0.20);
}

TEST_CASE("ring fluid vs the exact path: two jobs sharing an oversubscribed tree") {
  // A 3:1 leaf tier, random placement: the jobs' rings cross the same uplinks; their sharing is the coflow
  // max-min. Within 15 % of the exact path.
  const J doc = {{"engine", "flow"},
                 {"seed", 5},
                 {"fabric", tree(8, 24, "3:1")},
                 {"jobs", J::array({job("a", 4, 2, 2, "allreduce", "hierarchical", "4M,16M", "random"),
                                    job("b", 4, 2, 2, "allgather", "ring", "4M,16M", "random")})}};
  compare(doc, 0.15);
}

TEST_CASE("ring fluid: auto only beyond the transfer limit, on refused for what it leaves out") {
  // A small ring job: auto keeps the exact path.
  const J small = {{"engine", "flow"},
                   {"seed", 1},
                   {"fabric", tree(8, 32, "1:1")},
                   {"jobs", J::array({job("a", 4, 2, 2, "allreduce", "hierarchical", "1M"),
                                      job("b", 4, 2, 2, "allgather", "ring", "1M")})}};
  CHECK(run(small, "auto").fluid.is_null());
  // Hierarchical AllReduce of 16 MiB over 1,000 nodes x 8 GPUs on 4 channels: 2 x 8 x 999 x 4,000 chunks
  // between nodes alone, beyond kMaxTransfers (3.2e7): auto takes the model, for both jobs, and says why.
  J big = {{"engine", "flow"},
           {"seed", 1},
           {"fabric", tree(64, 1024, "1:1")},
           {"jobs", J::array({job("a", 1000, 8, 1, "allreduce", "hierarchical", "16M"),
                              job("b", 2, 8, 1, "allgather", "ring", "1M")})}};
  big["jobs"][0]["workload"]["channels"] = 4;
  const auto o = run(big, "auto");
  REQUIRE(!o.fluid.is_null());
  CHECK(o.fluid.at("reason").get<std::string>().find("exceed") != std::string::npos);
  CHECK(o.fluid.at("collectives") == 2);
  // The same big job alone: still beyond the exact path, so the model takes it (the symmetric-steps shortcut
  // of a lone job only takes a named ring).
  J alone = big;
  alone["jobs"].erase(1);
  const J alone_out = J::parse(run_in_child_process([&] {
    const auto r = run_scenario(make_scenario(alone, "t", "", {}));
    return J{{"fluid", r.engine.extra.contains("ring_fluid")}}.dump();
  }));
  CHECK(alone_out.at("fluid") == true);
  // A size of 0 beside real sizes: nothing to move, no refusal, a sample of the launch-free empty DAG.
  J zero = small;
  zero["jobs"][0]["workload"]["sizes"] = "0,1M";
  const auto z = run(zero, "on");
  REQUIRE(!z.fluid.is_null());
  REQUIRE(z.p50.size() == 3);
  CHECK(z.p50[0] < z.p50[1]);
  // "on" with an AllToAll job or with background traffic: refused, naming the key.
  J a2a = small;
  a2a["jobs"][1]["workload"]["op"] = "alltoall";
  a2a["jobs"][1]["workload"]["algorithm"] = "auto";
  const auto e1 = run_in_child_process([&] {
    return test::error_of([&] { run_scenario(make_scenario(a2a, "t", "", {"flow.ring_fluid=on"})); });
  });
  CHECK(e1.find("flow.ring_fluid") != std::string::npos);
  CHECK(e1.find("alltoall") != std::string::npos);
  // Background traffic is left out of the model: refused as well.
  J bg = small;
  bg["background"] = J::array({{{"pattern", "permutation"}, {"load", 0.5}, {"nodes", 2}}});
  const auto e2 = run_in_child_process([&] {
    return test::error_of([&] { run_scenario(make_scenario(bg, "t", "", {"flow.ring_fluid=on"})); });
  });
  INFO(e2);
  CHECK(e2.find("flow.ring_fluid") != std::string::npos);
  CHECK(e2.find("background") != std::string::npos);
}

TEST_CASE("ring stages: 'auto' resolves to the algorithm and protocol the DAG builder picks") {
  for (const std::uint64_t size : {std::uint64_t{4096}, std::uint64_t{1} << 20, std::uint64_t{256} << 20}) {
    CollectiveSpec cs;
    cs.op = CollOp::AllReduce;
    cs.size_bytes = size;
    cs.ranks = 64;
    cs.gpus_per_node = 8;
    cs.nics_per_node = 8;
    cs.algorithm = "auto";
    cs.nccl_costs = true;
    const auto st = ring_stages(cs);
    const auto dag = build_collective(cs);
    INFO("size " << size << ": DAG " << dag.algorithm << "/" << dag.protocol);
    REQUIRE(st.has_value());
    CHECK(st->algorithm == dag.algorithm);
    CHECK(st->protocol == dag.protocol);
    CHECK(st->channels == dag.channels);
    CHECK(ring_stages_transfers(*st) == dag.size());
  }
}
