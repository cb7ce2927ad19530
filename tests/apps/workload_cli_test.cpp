// The workload commands through the binary: run, whatif, nccl-tests (read back by our own nccl-tests parser)
// and their bad-input messages.
#include "calibration/nccl_tests_parser.hpp"
#include "tests/apps/run_cli.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {
using ibn::test::read_json_file;
nlohmann::json read_json(const std::string& path) {
  return read_json_file(path);
}
const std::string kExamples = std::string(IBNETSIM_SOURCE_DIR) + "/scenarios/examples/";
} // namespace

TEST_CASE("nccl-tests front-end: nccl-tests' layout, read back by the nccl-tests parser") {
  const auto r =
      ibn::test::run_cli("nccl-tests all_reduce_perf -b 1M -e 4M -f 2 -g 2 --nodes 2 -n 3 -w 1 -q");
  REQUIRE(r.code == 0);
  std::istringstream in(r.out);
  const auto runs = ibn::calib::parse_nccl_tests(in, "simulated all_reduce_perf");
  REQUIRE(runs.size() == 1);
  const auto& run = runs[0];
  REQUIRE(run.rows.size() == 3);
  CHECK(run.rows[0].size_bytes == 1u << 20);
  CHECK(run.rows[2].size_bytes == 4u << 20);
  for (const auto& row : run.rows) {
    CHECK(row.oop.time_us > 0);
    REQUIRE(row.ip.has_value());
    // busbw = algbw x 2(n-1)/n with n = 4 ranks (nccl-tests' definition), to the printed precision.
    CHECK(row.oop.busbw_gbs == doctest::Approx(row.oop.algbw_gbs * 1.5).epsilon(0.01));
    CHECK(row.oop.algbw_gbs == doctest::Approx(row.size_bytes / (row.oop.time_us * 1e3)).epsilon(0.01));
  }
  CHECK(run.rows[2].oop.busbw_gbs > run.rows[0].oop.busbw_gbs); // bandwidth grows with size
  REQUIRE(run.avg_busbw_gbs.has_value());
  CHECK(ibn::test::run_cli("nccl-tests all_reduce_perff -b 1M -e 4M").code == 2);
  CHECK(ibn::test::run_cli("nccl-tests all_reduce_perf -b 4M -e 1M").code == 2);
}

TEST_CASE("run: every example scenario runs and writes results.json with its manifest") {
  for (const auto& e : std::filesystem::directory_iterator(kExamples)) {
    if (e.path().extension() != ".json") continue;
    const auto dir = ibn::test::scratch_dir("run-" + e.path().stem().string()).string();
    const auto r = ibn::test::run_cli("run " + e.path().string() +
                                      " --set 'jobs[0].workload.iterations=3' -q -o " + dir);
    INFO(e.path().string() << "\n" << r.out);
    REQUIRE(r.code == 0);
    const auto j = read_json(dir + "/results.json");
    CHECK(j.at("manifest").at("version").is_string());
    CHECK(j.at("manifest").at("config").at("jobs").at(0).at("workload").at("iterations") == 3);
    CHECK(j.at("collectives").at(0).at("samples_us").size() == 3);
    CHECK(j.at("collectives").at(0).at("completion_us").at("p50").get<double>() > 0);
    CHECK(!j.at("links").at("by_tier").empty());
    CHECK(std::filesystem::exists(dir + "/results.csv"));
  }
}

TEST_CASE("whatif: a scenario's study over two ratios and both routing modes, report included") {
  const auto dir = ibn::test::scratch_dir("whatif-small").string();
  const auto r = ibn::test::run_cli("whatif " + kExamples +
                                    "small-allreduce.json --oversubscription 1:1,3:1 "
                                    "--set 'jobs[0].workload.iterations=3' -q -o " +
                                    dir);
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto w = read_json(dir + "/whatif.json");
  CHECK(w.at("rows").size() == 8); // 2 ratios x 2 routing modes x 2 sizes
  CHECK(w.at("rows").at(0).at("ratio") == 1.0);
  CHECK(w.at("rows").back().at("ratio") == 3.0);
  CHECK(std::filesystem::exists(dir + "/report.html"));
  CHECK(std::filesystem::exists(dir + "/points/3t1-adaptive/results.json"));
  CHECK(r.out.find("p99.9 us") != std::string::npos);
}

TEST_CASE("run and whatif: bad input names the file and key, exit code 2") {
  const auto dir = ibn::test::scratch_dir("bad-scenario");
  const auto bad = (dir / "bad.json").string();
  std::ofstream(bad) << "{\"jobs\": [{\"nodez\": 2}]}";
  auto r = ibn::test::run_cli("run " + bad + " -o " + (dir / "o").string());
  CHECK(r.code == 2);
  CHECK(r.out.find("key 'jobs[0].nodez'") != std::string::npos);
  const auto broken = (dir / "broken.json").string();
  std::ofstream(broken) << "{\n\"seed\": 1,\n";
  r = ibn::test::run_cli("run " + broken + " -o " + (dir / "o").string());
  CHECK(r.code == 2);
  CHECK(r.out.find(broken + ":3:") != std::string::npos);
  r = ibn::test::run_cli("whatif --set jobs[0].nodes=-3 -o " + (dir / "o").string());
  CHECK(r.code == 2);
  CHECK(r.out.find("jobs[0].nodes") != std::string::npos);
  r = ibn::test::run_cli("whatif --routing sideways -o " + (dir / "o").string());
  CHECK(r.code == 2);
  // Keys that set the same thing and disagree: refused, naming both (not one silently overwriting the other).
  const auto example = kExamples + "small-allreduce.json";
  r = ibn::test::run_cli("run " + example + " --set routing.adaptive=per-packet --set packet.ar_mode=off -o " +
                         (dir / "o").string());
  CHECK(r.code == 2);
  CHECK(r.out.find("'routing.adaptive'") != std::string::npos);
  CHECK(r.out.find("'packet.ar_mode'") != std::string::npos);
  r = ibn::test::run_cli("run " + example + " --set cc.algorithm=none --set packet.cc=dcqcn -o " + (dir / "o").string());
  CHECK(r.code == 2);
  CHECK(r.out.find("'cc.algorithm'") != std::string::npos);
  CHECK(r.out.find("'packet.cc'") != std::string::npos);
  r = ibn::test::run_cli("run " + example + " --set packet.mtu_bytes=lots -o " + (dir / "o").string());
  CHECK(r.code == 2);
  CHECK(r.out.find("packet.mtu_bytes") != std::string::npos);
}

TEST_CASE("run --trace: a Chrome trace of the first measured iteration's transfers") {
  const auto dir = ibn::test::scratch_dir("run-trace").string();
  const auto r =
      ibn::test::run_cli("run " + kExamples + "small-allreduce.json --set 'jobs[0].workload.iterations=2' " +
                         "--set 'jobs[0].workload.sizes=256K' -q -o " + dir + " --trace " + dir + "/t.json");
  REQUIRE(r.code == 0);
  const auto t = read_json(dir + "/t.json");
  std::size_t spans = 0, net = 0;
  for (const auto& e : t.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    ++spans;
    CHECK(e.at("dur").get<double>() >= 0);
    if (e.at("name").get<std::string>().find("(net)") != std::string::npos) ++net;
  }
  // One iteration of a 32-rank ring AllReduce: every transfer of the DAG appears once.
  const auto res = read_json(dir + "/results.json");
  const auto& per = res.at("collectives").at(0).at("transfers_per_iteration");
  CHECK(spans == per.at("network").get<std::size_t>() + per.at("nvlink").get<std::size_t>());
  CHECK(net == per.at("network").get<std::size_t>());
}

TEST_CASE("run --calibration: the profile's host latency and noise reach both engines' samples") {
  // A profile fitted from the real ConnectX-3 ib_write runs (tests/data/SOURCES.md). The executor adds
  // host_latency(bytes) + one noise draw per network transfer, whichever engine moves the bytes, so with the
  // profile the 20 samples of one size spread out (without it and without jitter the flow engine's are
  // all equal: nothing in a fluid model varies between iterations) and the median grows.
  const auto dir = ibn::test::scratch_dir("run-calibrated");
  const std::string data = std::string(IBNETSIM_TEST_DATA) + "/perftest/";
  const std::string prof = (dir / "cx3.json").string();
  REQUIRE(ibn::test::run_cli("calibrate fit " + data + "cx3-mt4099-qdr40g-ib-ib_write_bw-a.txt " + data +
                             "cx3-mt4099-qdr40g-ib-ib_write_lat-a.txt --link-rate QDR -o " + prof)
              .code == 0);
  for (const std::string engine : {"packet", "flow"}) {
    std::vector<double> p50, spread;
    for (const std::string& cal : {std::string(), prof}) {
      const auto out = (dir / (engine + (cal.empty() ? "-none" : "-cx3"))).string();
      const auto r = ibn::test::run_cli("run " + kExamples + "small-allreduce.json --engine " + engine +
                                        " --set 'jobs[0].workload.sizes=256K' --set calibration=" + cal +
                                        " -q -o " + out);
      INFO(engine << " calibration '" << cal << "'\n" << r.out);
      REQUIRE(r.code == 0);
      const auto j = read_json(out + "/results.json");
      const auto& c = j.at("collectives").at(0).at("completion_us");
      p50.push_back(c.at("p50").get<double>());
      spread.push_back(c.at("max").get<double>() - c.at("min").get<double>());
      if (!cal.empty()) CHECK(j.at("manifest").at("calibration").at("noise_segments").get<int>() > 0);
    }
    INFO(engine << ": p50 " << p50[0] << " -> " << p50[1] << " us, spread " << spread[0] << " -> "
                << spread[1]);
    CHECK(p50[1] > p50[0]);
    CHECK(spread[1] > spread[0]);
    if (engine == "flow") CHECK(spread[0] == 0.0);
  }
}
