// The runner end to end on the packet engine: closed-form ring AllReduce, determinism, placement and
// workload errors.
#include "analysis/results.hpp"
#include "scenarios/runner.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

using namespace ibn;
using namespace ibn::scen;
using J = nlohmann::json;

namespace {

J small_tree(int hosts, const std::string& ratio = "1:1") {
  return {{"generator", "fat-tree"},
          {"params", {{"tiers", 2}, {"radix", 8}, {"hosts", hosts}, {"oversubscription", ratio}, {"rate", "NDR"}}}};
}

J one_job(int nodes, const std::string& size, int iterations, const std::string& algorithm = "ring") {
  return {{"name", "j"},
          {"nodes", nodes},
          {"gpus_per_node", 1},
          {"nics_per_node", 1},
          {"workload",
           {{"sizes", size}, {"algorithm", algorithm}, {"protocol", "simple"}, {"channels", 1},
            {"iterations", iterations}, {"warmup", 0}}}};
}

} // namespace

TEST_CASE("runner: ring AllReduce on a non-blocking tree matches the closed form within 2 %") {
  // Closed form (model-reference.md §5.1): T = 2(n-1)/n * S / B + 2(n-1) * alpha, with B the link's payload
  // rate, rate x MTU / (MTU + 26 B of IB headers), and alpha the one-step latency
  // nic_tx + nic_rx + switch latency + cable propagation + one packet's serialization (cut-through).
  const int n = 8;
  const std::uint64_t S = 32u << 20;
  const auto s = make_scenario(J{{"fabric", small_tree(16)}, {"jobs", J::array({one_job(n, "32M", 2)})}}, "t", "");
  const auto w = build_world(s);
  const auto r = run_scenario(s, w);
  REQUIRE(r.collectives.size() == 1);
  REQUIRE(r.collectives[0].samples_us.size() == 2);
  const double rate = 400e9; // NDR 4x data rate
  const double B = rate * 4096.0 / (4096.0 + 26.0);
  const auto& cfg = w.packet;
  const double alpha_us = cfg.nic_tx_latency.to_us() + cfg.nic_rx_latency.to_us() + cfg.switch_latency.to_us() +
                          2 * 3 * 4.76e-3 /* two 3 m host cables, DAC 4.76 ns/m */ + 4122 * 8 / rate * 1e6;
  const double T = 2.0 * (n - 1) / n * static_cast<double>(S) * 8 / B * 1e6 + 2 * (n - 1) * alpha_us;
  for (const double t : r.collectives[0].samples_us) {
    INFO("simulated " << t << " us, closed form " << T << " us");
    CHECK(std::abs(t - T) / T < 0.02);
    CHECK(t >= 2.0 * (n - 1) / n * static_cast<double>(S) * 8 / B * 1e6); // never faster than the wire allows
  }
  // busbw plateau: close to the payload rate B.
  const auto j = analysis::results_json(r);
  const double busbw = j.at("collectives").at(0).at("busbw_gbps").at("p50");
  CHECK(busbw <= B / 1e9 * 1.0001);
  CHECK(busbw > B / 1e9 * 0.97);
}

TEST_CASE("runner: the same scenario and seed give identical results") {
  J doc = {{"seed", 5},
           {"fabric", small_tree(16, "3:1")},
           {"jobs", J::array({one_job(6, "1M", 5), one_job(6, "1M", 3)})}};
  doc["jobs"][0]["placement"] = "random";
  doc["jobs"][1]["placement"] = "random";
  doc["jobs"][1]["name"] = "bg";
  doc["jobs"][1]["workload"]["loop"] = true;
  doc["jobs"][0]["workload"]["jitter"] = {{"distribution", "lognormal"}, {"scale_us", 3.0}};
  const auto s = make_scenario(doc, "t", "");
  auto a = analysis::results_json(run_scenario(s));
  auto b = analysis::results_json(run_scenario(s));
  for (auto* x : {&a, &b}) (*x)["engine"].erase("wall_s"), (*x)["engine"].erase("events_per_s");
  CHECK(a.dump() == b.dump());
  CHECK(a.at("collectives").at(0).at("samples_us").size() == 5);
  CHECK(a.at("collectives").at(1).at("background") == true);
  CHECK(a.at("collectives").at(1).at("samples_us").size() >= 1); // the looping job ran beside it
  // A different seed moves the random placement and the jitter.
  const auto s2 = make_scenario(doc, "t", "", {"seed=6"});
  auto c = analysis::results_json(run_scenario(s2));
  CHECK(c.at("collectives").at(0).at("samples_us") != a.at("collectives").at(0).at("samples_us"));
}

TEST_CASE("runner: jobs that do not fit and impossible collectives are input errors") {
  using ibn::test::error_of;
  const auto s = make_scenario(J{{"fabric", small_tree(16)}, {"jobs", J::array({one_job(20, "1M", 1)})}}, "t", "");
  CHECK(error_of([&] { run_scenario(s); }).find("20") != std::string::npos);
  const auto hd = make_scenario(J{{"fabric", small_tree(16)}, {"jobs", J::array({one_job(6, "1M", 1, "halving-doubling")})}},
                                "t", "");
  CHECK(error_of([&] { run_scenario(hd); }).find("power-of-two") != std::string::npos);
}

TEST_CASE("runner: background traffic runs on the free nodes and stops with the last job") {
  J doc = {{"fabric", small_tree(16)},
           {"jobs", J::array({one_job(4, "1M", 4)})},
           {"background", J::array({{{"pattern", "permutation"}, {"load", 0.3}, {"message_bytes", "64K"}}})}};
  const auto r = run_scenario(make_scenario(doc, "t", ""));
  REQUIRE(r.background.size() == 1);
  const auto& st = r.background[0].at("stats");
  CHECK(r.background[0].at("hcas") == 12); // the 16 - 4 HCAs the job left free
  CHECK(st.at("messages_posted").get<int>() > 0);
  CHECK(st.at("messages_delivered") == st.at("messages_posted")); // lossless, all delivered after stop
  // Interference is measurable: the same job alone is never slower.
  J alone = doc;
  alone.erase("background");
  const auto a = run_scenario(make_scenario(alone, "t", ""));
  CHECK(a.collectives[0].samples_us.back() <= r.collectives[0].samples_us.back() + 1e-9);
}

TEST_CASE("runner: background traffic that starts after the jobs ended is a no-effect warning") {
  J doc = {
      {"fabric", small_tree(16)},
      {"jobs", J::array({one_job(4, "1M", 2)})},
      {"background",
       J::array({{{"pattern", "uniform"}, {"load", 0.3}, {"message_bytes", "64K"}, {"start_us", 1e9}}})}};
  const auto late = run_scenario(make_scenario(doc, "late.json", ""));
  REQUIRE(late.background.size() == 1);
  CHECK(late.background[0].at("stats").at("messages_posted") == 0);
  std::string warning;
  for (const auto& w : late.warnings)
    if (w.find("background[0]") != std::string::npos) warning = w;
  CHECK(warning.find(
            "late.json: key 'background[0]': no effect: it posted no message (start_us 1000000000.0") == 0);
  // Started during the job: it posts, and no such warning.
  doc["background"][0]["start_us"] = 10;
  const auto early = run_scenario(make_scenario(doc, "early.json", ""));
  CHECK(early.background[0].at("stats").at("messages_posted").get<int>() > 0);
  for (const auto& w : early.warnings) CHECK(w.find("posted no message") == std::string::npos);
}

TEST_CASE("runner: a JSON trace is replayed call by call") {
  const auto dir = std::filesystem::temp_directory_path() / "ibnetsim-runner-trace";
  std::filesystem::create_directories(dir);
  std::ofstream((dir / "trace.json").string()) << R"({"format": "ibnetsim-trace", "version": 1, "jobs": [
    {"name": "j", "calls": [
      {"op": "allreduce", "size_bytes": "256K", "at_us": 0},
      {"op": "allgather", "size_bytes": "64K", "after": "previous", "gap_us": 5},
      {"op": "allreduce", "size_bytes": "256K", "at_us": 100}]}]})";
  J job = one_job(4, "1M", 3);
  job["workload"]["trace"] = "trace.json";
  job["workload"]["warmup"] = 1;
  const auto s = make_scenario(J{{"fabric", small_tree(16)}, {"jobs", J::array({job})}}, (dir / "s.json").string(),
                               dir.string());
  const auto r = run_scenario(s);
  REQUIRE(r.collectives.size() == 2); // one entry per distinct (op, size)
  CHECK(r.collectives[0].op == "allreduce");
  CHECK(r.collectives[0].samples_us.size() == 6); // two calls per pass, three measured passes
  CHECK(r.collectives[1].op == "allgather");
  CHECK(r.collectives[1].samples_us.size() == 3);
  // The timed third call starts 100 us into its pass: four passes take at least 4 x 100 us.
  CHECK(r.sim_time.to_us() >= 400.0);
  job["workload"]["trace"] = "missing.json";
  CHECK(ibn::test::error_of([&] {
          run_scenario(make_scenario(J{{"fabric", small_tree(16)}, {"jobs", J::array({job})}}, "s.json", dir.string()));
        }).find("missing.json") != std::string::npos);
}

TEST_CASE("runner: variability keys are opt-in and do what they say") {
  // 4 nodes x 1 GPU, ring of 1 MiB on an NDR tree (8 iterations).
  auto doc = [](const J& var) {
    J d{{"fabric", small_tree(8)}, {"jobs", J::array({one_job(4, "1M", 8)})}};
    if (!var.is_null()) d["variability"] = var;
    return d;
  };
  const auto base_s = make_scenario(doc(nullptr), "t", "");
  CHECK(!base_s.effective.contains("variability")); // not written into the effective document unless given
  const auto base = run_scenario(base_s).collectives.at(0).samples_us;
  // An all-zero variability section changes nothing, bit for bit.
  const auto zero = run_scenario(make_scenario(
      doc(J{{"state_sigma", 0.0}, {"stragglers", {{"count", 0}}}, {"launch", {{"median_us", 0.0}}}}), "t",
      ""));
  CHECK(zero.collectives.at(0).samples_us == base);
  // Run state: every sample scaled by the run's factor exp(sigma z) (one z per run): the ratio is the same
  // for all iterations, and differs from 1.
  const auto st =
      run_scenario(make_scenario(doc(J{{"state_sigma", 0.3}}), "t", "")).collectives.at(0).samples_us;
  REQUIRE(st.size() == base.size());
  const double f = st[0] / base[0];
  CHECK(std::abs(f - 1) > 1e-6);
  for (std::size_t i = 0; i < st.size(); ++i) CHECK(st[i] / base[i] == doctest::Approx(f).epsilon(1e-9));
  // A straggler whose NIC runs at half rate: each transfer it sends is posted later by its serialization time
  // at the full rate (1/0.5 - 1 = 1). The collective is slower, by at most the sum of those delays (every
  // straggler transfer on the critical path): it sends 2(n-1)/n x 1 MiB, 1.5 MiB x 8 / 400 Gb/s = 31.5 us.
  const auto sl =
      run_scenario(make_scenario(doc(J{{"stragglers", {{"count", 1}, {"rate_factor", 0.5}}}}), "t", ""))
          .collectives.at(0)
          .samples_us;
  const double bound = 1.5 * 1048576 * 8 / 400e9 * 1e6;
  for (std::size_t i = 0; i < sl.size(); ++i) {
    INFO("with straggler " << sl[i] << " us, without " << base[i] << " us");
    CHECK(sl[i] > base[i] + 1.0);
    CHECK(sl[i] <= base[i] + bound + 1e-3);
  }
  // A straggler whose ranks start 50 us late: the collective, measured from the first rank's start, is
  // slower by at most 50 us and by more than nothing.
  const auto dl =
      run_scenario(make_scenario(doc(J{{"stragglers", {{"count", 1}, {"delay_us", 50.0}}}}), "t", ""))
          .collectives.at(0)
          .samples_us;
  for (std::size_t i = 0; i < dl.size(); ++i) {
    CHECK(dl[i] > base[i] + 1.0);
    CHECK(dl[i] <= base[i] + 50.0 + 1e-3);
  }
  // Launch jitter: the base latency NCCL's cost model charges already holds its typical part, so the run
  // charges base - (1 - tail_p) x median x exp(sigma^2 / 2) (LognormalPareto::typical) and reports it.
  const auto lj =
      run_scenario(make_scenario(doc(J{{"launch", {{"median_us", 2.0}, {"sigma", 0.5}}}}), "t", ""));
  const double base_launch = run_scenario(base_s).collectives.at(0).launch_us;
  REQUIRE(base_launch > 3);
  CHECK(lj.collectives.at(0).launch_us == doctest::Approx(base_launch - 2.0 * std::exp(0.125)).epsilon(1e-6));
  // More stragglers than nodes: an error naming the key.
  CHECK_THROWS_WITH_AS(run_scenario(make_scenario(doc(J{{"stragglers", {{"count", 5}}}}), "t", "")),
                       doctest::Contains("variability.stragglers.count"), InputError);
  // Bad values are refused by the schema, naming the key.
  CHECK_THROWS_WITH_AS(make_scenario(doc(J{{"stragglers", {{"rate_factor", 1.5}}}}), "t", ""),
                       doctest::Contains("variability.stragglers.rate_factor"), InputError);
}
