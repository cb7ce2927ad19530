// The variability model through the binary (issue 17 item 2): `calibrate fit --repeats`, `validate repeats
// --leave-one-out` and `whatif --stragglers`, on the repeated nccl-tests fixtures (tests/data/SOURCES.md).
#include "tests/apps/run_cli.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

namespace {

std::string data(const std::string& rel) {
  return std::string(IBNETSIM_TEST_DATA) + "/" + rel;
}

const std::string kAbciA =
    data("nccl-tests/a100-hdr200x4-ib-2node-16gpu-all_reduce-4B-32M-abci-aist-job7194279.log");
const std::string kAbciB =
    data("nccl-tests/a100-hdr200x4-ib-2node-16gpu-all_reduce-4B-32M-ibcudasupport-abci-aist-job7109619.log");
const std::string kSnelA = data("nccl-tests/h100-ndr200-ib-2node-8gpu-all_reduce-snellius-odissei.log");
const std::string kSnelB =
    data("nccl-tests/h100-ndr200-ib-2node-8gpu-all_reduce-repeat-n100-snellius-odissei.log");

} // namespace

TEST_CASE("calibrate fit --repeats writes a variability section, mismatched and bad inputs exit 2") {
  const auto dir = ibn::test::scratch_dir("var-fit");
  const auto out = (dir / "p.json").string();
  const auto r =
      ibn::test::run_cli("calibrate fit " + data("perftest/cx3-mt4099-qdr40g-ib-ib_write_lat-a.txt") +
                         " --link-rate QDR --repeats " + kSnelA + " " + kSnelB + " -o " + out);
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto p = ibn::test::read_json_file(out);
  REQUIRE(p.contains("variability"));
  const auto& v = p.at("variability");
  CHECK(v.at("inputs").size() == 2);
  CHECK(v.at("state").size() >= 20); // one entry per size measured by both runs
  for (const auto& s : v.at("state")) {
    CHECK(s.at("runs").get<int>() == 2);
    CHECK(s.at("sigma").get<double>() >= 0);
  }
  // The 16 KiB out-of-place outlier of the first run (90.85 us vs 22.59 in place) is a tail event.
  CHECK(v.at("tail_events").get<int>() >= 1);
  // The smallest excess is xm; the outlier's excess is |90.85 - 22.59| x 20 iterations = 1365.2 us.
  CHECK(v.at("launch").at("tail_xm_us").get<double>() > 0);
  CHECK(v.at("launch").at("tail_xm_us").get<double>() <= 1365.2 + 1e-6);
  // Added to an existing profile with --base: the device part is kept.
  const auto out2 = (dir / "p2.json").string();
  const auto r2 = ibn::test::run_cli("calibrate fit --base " + out + " --repeats " + kAbciA + " " + kAbciB +
                                     " -o " + out2);
  INFO(r2.out);
  REQUIRE(r2.code == 0);
  const auto p2 = ibn::test::read_json_file(out2);
  CHECK(p2.at("device") == p.at("device"));
  CHECK(p2.at("variability").at("inputs").at(0).get<std::string>() == kAbciA);
  // A run of another configuration: exit 2 naming the file.
  const auto bad = ibn::test::run_cli("calibrate fit --base " + out + " --repeats " + kAbciA + " " + kSnelA +
                                      " -o " + (dir / "x.json").string());
  CHECK(bad.code == 2);
  CHECK(bad.out.find(kSnelA + ": not a repeat of") != std::string::npos);
  // A file that is no benchmark output: exit 2 naming it.
  const auto junk = (dir / "junk.txt").string();
  std::ofstream(junk) << "hello\nworld\n";
  const auto bad2 = ibn::test::run_cli("calibrate fit --base " + out + " --repeats " + kAbciA + " " + junk +
                                       " -o " + (dir / "x.json").string());
  CHECK(bad2.code == 2);
  CHECK(bad2.out.find(junk) != std::string::npos);
  // --repeats without a device profile to write into.
  const auto bad3 = ibn::test::run_cli("calibrate fit --repeats " + kAbciA + " " + kAbciB + " -o " +
                                       (dir / "x.json").string());
  CHECK(bad3.code == 2);
  CHECK(bad3.out.find("--base") != std::string::npos);
  // A profile with a broken variability section is refused, naming the JSON path.
  auto broken = p;
  broken["variability"]["launch"]["tail_p"] = -1;
  const auto bp = (dir / "broken.json").string();
  std::ofstream(bp) << broken.dump(2);
  const auto bad4 = ibn::test::run_cli("calibrate fit --base " + bp + " --repeats " + kAbciA + " " + kAbciB +
                                       " -o " + (dir / "x.json").string());
  CHECK(bad4.code == 2);
  CHECK(bad4.out.find("$.variability.launch.tail_p") != std::string::npos);
}

TEST_CASE("validate repeats --leave-one-out: rows, per-run coverage and ratio errors") {
  const auto r = ibn::test::run_cli("validate repeats " + kAbciA + " " + kAbciB + " " + kSnelA + " " +
                                    kSnelB + " --leave-one-out --max-bytes 4K -n 2 --draws 400 --json");
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j.at("runs").size() == 4);
  std::size_t points = 0;
  for (const auto& run : j.at("runs")) {
    REQUIRE(!run.contains("error"));
    CHECK(run.at("coverage_pct").get<double>() >= 0);
    CHECK(run.at("coverage_pct").get<double>() <= 100);
    points += run.at("points").get<std::size_t>();
  }
  CHECK(j.at("summary").at("points").get<std::size_t>() == points);
  for (const auto& row : j.at("rows")) {
    CHECK(row.at("size_bytes").get<std::uint64_t>() <= 4096);
    CHECK(row.at("p1_us").get<double>() <= row.at("p50_us").get<double>());
    CHECK(row.at("p50_us").get<double>() <= row.at("p99_us").get<double>());
    // inside is what the numbers say.
    const double t = row.at("measured_oop_us");
    const bool in = t >= row.at("p1_us").get<double>() && t <= row.at("p99_us").get<double>();
    if (!in) CHECK(row.at("inside").get<bool>() == false);
    CHECK(row.at("measured_n").get<int>() == 4); // two runs x (out-of-place, in-place)
  }
  // Without --leave-one-out, with too few runs, or with an OSU file: exit 2.
  CHECK(ibn::test::run_cli("validate repeats " + kAbciA + " " + kAbciB + " " + kSnelA).code == 2);
  const auto few = ibn::test::run_cli("validate repeats " + kAbciA + " " + kAbciB + " --leave-one-out");
  CHECK(few.code == 2);
  const auto osu = data("osu/a100node-hdr200-ib-2node-1pair-osu_multi_lat-host-abci-aist-job7249071.txt");
  const auto o =
      ibn::test::run_cli("validate repeats " + kAbciA + " " + kAbciB + " " + osu + " --leave-one-out");
  CHECK(o.code == 2);
  CHECK(o.out.find(osu) != std::string::npos);
}

TEST_CASE("validate repeats: per-configuration fabric and keys, and NCCL costs fitted on the other runs") {
  const auto hdr = (ibn::test::scratch_dir("var-per-config") / "hdr.json").string();
  REQUIRE(ibn::test::run_cli("topo generate fat-tree --tiers 2 --radix 64 --hosts 64 --rate HDR -o " + hdr)
              .code == 0);
  const std::string logs =
      kAbciA + " " + kAbciB + " " + kSnelA + " " + kSnelB + " --leave-one-out -n 2 --draws 400 --json";
  auto sim_at = [](const nlohmann::json& j, const std::string& file, std::uint64_t size) {
    for (const auto& r : j.at("rows"))
      if (r.at("held_back") == file && r.at("size_bytes") == size) return r.at("simulated_us").get<double>();
    return -1.0;
  };
  const auto plain = ibn::test::run_cli("validate repeats " + logs + " --max-bytes 32M");
  REQUIRE(plain.code == 0);
  const auto pj = nlohmann::json::parse(plain.out);
  // The ABCI runs on HDR with 4 NICs per node (named by file name), the Snellius runs as before.
  const std::string abci_name = kAbciB.substr(kAbciB.rfind('/') + 1);
  const auto per = ibn::test::run_cli("validate repeats " + logs + " --max-bytes 32M --fabric-for " +
                                      abci_name + "=" + hdr + " --nics-for " + abci_name + "=4 --set-for " +
                                      abci_name + "=nccl.version=2.8.4");
  INFO(per.out);
  REQUIRE(per.code == 0);
  const auto jj = nlohmann::json::parse(per.out);
  // 32 MiB over four HDR ports (4 x 25 GB/s) instead of eight NDR ones (8 x 50 GB/s): slower, for both ABCI
  // runs (one configuration), and the Snellius runs unchanged.
  const double before = sim_at(pj, kAbciA, 33554432), after = sim_at(jj, kAbciA, 33554432);
  CHECK(after > 1.5 * before);
  CHECK(sim_at(jj, kAbciB, 33554432) == doctest::Approx(after));
  CHECK(sim_at(jj, kSnelA, 33554432) == doctest::Approx(sim_at(pj, kSnelA, 33554432)));
  bool named = false;
  for (const auto& run : jj.at("runs"))
    if (run.at("file") == kAbciA) {
      named = run.at("settings").at("from") == abci_name && run.at("settings").at("nics_per_node") == 4;
    }
  CHECK(named);
  // --fit-costs: each held-back run simulated with costs fitted on the other run of its configuration only.
  const auto fit = ibn::test::run_cli("validate repeats " + logs + " --max-bytes 64K --fit-costs");
  INFO(fit.out);
  REQUIRE(fit.code == 0);
  const auto fj = nlohmann::json::parse(fit.out);
  CHECK(fj.at("summary").at("fit_costs") == true);
  for (const auto& run : fj.at("runs")) {
    REQUIRE(run.contains("nccl_fit"));
    const auto& on = run.at("nccl_fit").at("fitted_on");
    REQUIRE(on.size() == 1);
    CHECK(on[0] != run.at("file")); // never the held-back run
    const std::string f = run.at("file");
    const std::string twin = f == kAbciA ? kAbciB : f == kAbciB ? kAbciA : f == kSnelA ? kSnelB : kSnelA;
    CHECK(on[0] == twin);
    CHECK(run.at("nccl_fit").at("net_step_us").get<double>() >= 0);
  }
  // The two Snellius fits differ (each run its own twin's costs), so the held-back runs' simulations do.
  CHECK(sim_at(fj, kSnelA, 8) != doctest::Approx(sim_at(fj, kSnelB, 8)));
  // A configuration with one run has nothing to fit on: reported, not compared.
  const auto abci4 =
      data("nccl-tests/a100-hdr200x4-ib-4node-32gpu-all_reduce-4B-32M-abci-aist-job7194285.log");
  const auto lone =
      ibn::test::run_cli("validate repeats " + logs + " " + abci4 + " --max-bytes 4K --fit-costs");
  REQUIRE(lone.code == 0);
  const auto lj = nlohmann::json::parse(lone.out);
  bool reported = false;
  for (const auto& run : lj.at("runs"))
    if (run.at("file") == abci4)
      reported =
          run.at("error").get<std::string>().find("no other run of its configuration") != std::string::npos;
  CHECK(reported);
  // Bad settings: a LOG that is not an input, two settings for one configuration, no '='.
  const auto unknown = ibn::test::run_cli("validate repeats " + logs + " --fabric-for nosuch.log=" + hdr);
  CHECK(unknown.code == 2);
  CHECK(unknown.out.find("nosuch.log") != std::string::npos);
  const auto twice = ibn::test::run_cli("validate repeats " + logs + " --nics-for " + kAbciA +
                                        "=4 --nics-for " + kAbciB + "=2");
  CHECK(twice.code == 2);
  CHECK(twice.out.find("one configuration") != std::string::npos);
  CHECK(ibn::test::run_cli("validate repeats " + logs + " --set-for " + kAbciA + "=nccl.costs").code == 2);
  CHECK(ibn::test::run_cli("validate repeats " + logs + " --fit-max-bytes 1K").code == 2);
}

TEST_CASE("whatif --stragglers: one point per token, each row names it, bad tokens exit 2") {
  const auto dir = ibn::test::scratch_dir("var-whatif");
  const nlohmann::json scenario = {
      {"name", "strag"},
      {"fabric",
       {{"generator", "fat-tree"},
        {"params",
         {{"tiers", 2}, {"radix", 8}, {"hosts", 16}, {"oversubscription", "1:1"}, {"rate", "NDR"}}}}},
      {"jobs",
       {{{"name", "a"},
         {"nodes", 4},
         {"gpus_per_node", 1},
         {"nics_per_node", 1},
         {"workload",
          {{"sizes", {"1M"}}, {"algorithm", "ring"}, {"channels", 1}, {"iterations", 4}, {"warmup", 0}}}}}}};
  const auto path = (dir / "s.json").string();
  std::ofstream(path) << scenario.dump(2);
  const auto r = ibn::test::run_cli(
      "whatif " + path + " --oversubscription 1:1 --routing off --stragglers none,1x0.5 -j 1 -q -o " +
      (dir / "out").string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto w = ibn::test::read_json_file((dir / "out" / "whatif.json").string());
  REQUIRE(w.at("rows").size() == 2);
  CHECK(w.at("rows").at(0).at("stragglers") == "none");
  CHECK(w.at("rows").at(1).at("stragglers") == "1x0.5");
  CHECK(w.at("manifest").at("dimensions").at("stragglers").size() == 2);
  // A straggler at half rate makes the ring slower at every percentile.
  CHECK(w.at("rows").at(1).at("completion_us").at("p50").get<double>() >
        w.at("rows").at(0).at("completion_us").at("p50").get<double>());
  // Without the flag the rows carry no stragglers key (output unchanged).
  const auto r0 = ibn::test::run_cli("whatif " + path + " --oversubscription 1:1 --routing off -j 1 -q -o " +
                                     (dir / "out0").string());
  REQUIRE(r0.code == 0);
  const auto w0 = ibn::test::read_json_file((dir / "out0" / "whatif.json").string());
  CHECK(!w0.at("rows").at(0).contains("stragglers"));
  CHECK(!w0.at("manifest").at("dimensions").contains("stragglers"));
  CHECK(w0.at("rows").at(0).at("samples_us") ==
        w.at("rows").at(0).at("samples_us")); // "none" = no stragglers
  for (const std::string bad : {"2", "0x0.5", "1x1.5", "1x0.5+20", "ax0.5"}) {
    const auto b =
        ibn::test::run_cli("whatif " + path + " --oversubscription 1:1 --routing off --stragglers " + bad +
                           " -q -o " + (dir / "bad").string());
    CHECK(b.code == 2);
    CHECK(b.out.find("--stragglers") != std::string::npos);
  }
}
