// `validate osu` through the binary on the real OSU / IMB fixtures (tests/data/osu, SOURCES.md).
#include "tests/apps/run_cli.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

namespace {
const std::string kData = IBNETSIM_TEST_DATA;
const std::string kHostLat =
    kData + "/osu/a100node-hdr200-ib-2node-1pair-osu_multi_lat-host-abci-aist-job7249071.txt";
const std::string kHostBw =
    kData + "/osu/a100node-hdr200-ib-2node-1pair-osu_mbw_mr-host-abci-aist-job7249071.txt";
const std::string kOci =
    kData + "/osu/oci-bm.optimized3.36-roce100g-osu_latency-bw-allreduce4node-alltoall1node.txt";
const std::string kImb = kData + "/osu/orfeo-cx6-hdr-ib-imb-mpi1-pingpong-internode-default-vs-openib.txt";

void check_rows(const nlohmann::json& v) {
  REQUIRE(v.at("rows").size() > 0);
  for (const auto& r : v.at("rows")) {
    for (const char* k : {"size_bytes", "measured_us", "predicted_p50_us", "predicted_p99_us", "error_pct"})
      REQUIRE(r.contains(k));
    const double m = r.at("measured_us"), p50 = r.at("predicted_p50_us"), p99 = r.at("predicted_p99_us");
    CHECK(p50 > 0);
    CHECK(p99 >= p50);
    CHECK(r.at("error_pct").get<double>() == doctest::Approx((p50 - m) / m * 100).epsilon(0.001));
  }
  CHECK(v.at("summary").at("max_abs_error_pct").get<double>() >=
        v.at("summary").at("median_abs_error_pct").get<double>());
}
} // namespace

TEST_CASE("validate osu: no launcher line and no --nodes/--ppn is exit 2 naming what is missing") {
  const auto r = ibn::test::run_cli("validate osu " + kHostLat);
  CHECK(r.code == 2);
  CHECK(r.out.find(kHostLat + ":2: osu_multi_lat") != std::string::npos);
  CHECK(r.out.find("no launcher line") != std::string::npos);
  CHECK(r.out.find("--nodes N --ppn K") != std::string::npos);
  // One of the pair alone is not enough either.
  CHECK(ibn::test::run_cli("validate osu " + kHostLat + " --nodes 2").code == 2);
  // A point-to-point run is two nodes of one rank each.
  const auto wrong = ibn::test::run_cli("validate osu " + kHostLat + " --nodes 4 --ppn 36");
  CHECK(wrong.code == 2);
  CHECK(wrong.out.find("between two nodes") != std::string::npos);
}

TEST_CASE("validate osu: osu_multi_lat host-to-host on HDR, rows per size") {
  const auto r = ibn::test::run_cli("validate osu " + kHostLat +
                                    " --nodes 2 --ppn 1 --rate HDR --samples 50 --json 2>/dev/null");
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto v = nlohmann::json::parse(r.out);
  CHECK(v.at("rows").size() == 24);
  check_rows(v);
  CHECK(v.at("runs").at(0).at("shape_from") == "--nodes/--ppn");
  // Latency grows with size in the simulation as on the machine: 4 MiB at HDR takes >= 4 MiB / 25 GB/s.
  const auto& last = v.at("rows").back();
  CHECK(last.at("size_bytes") == 4194304);
  CHECK(last.at("predicted_p50_us").get<double>() > 4194304 / 25e3);
}

TEST_CASE("validate osu: osu_mbw_mr bandwidth rows carry MB/s") {
  const auto r =
      ibn::test::run_cli("validate osu " + kHostBw +
                         " --nodes 2 --ppn 1 --rate HDR --repeats 2 --max-bytes 64K --json 2>/dev/null");
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto v = nlohmann::json::parse(r.out);
  check_rows(v);
  CHECK(v.at("runs").at(0).at("window") == 64);
  for (const auto& row : v.at("rows")) {
    const double size = row.at("size_bytes");
    CHECK(row.at("measured_us").get<double>() ==
          doctest::Approx(size / row.at("measured_mbps").get<double>()).epsilon(0.001));
    // No more than the HDR link: 200 Gb/s = 25,000 MB/s.
    CHECK(row.at("predicted_mbps").get<double>() < 25000);
  }
}

TEST_CASE("validate osu: nodes and ranks per node from the launcher lines (OCI), IMB PingPong") {
  const auto a = ibn::test::run_cli(
      "validate osu " + kOci + " --test osu_allreduce --rate EDR --max-bytes 1K -n 3 --json 2>/dev/null");
  INFO(a.out);
  REQUIRE(a.code == 0);
  const auto v = nlohmann::json::parse(a.out);
  REQUIRE(v.at("runs").size() == 1);
  CHECK(v.at("runs").at(0).at("nodes") == 4);
  CHECK(v.at("runs").at(0).at("ppn") == 36);
  CHECK(v.at("runs").at(0).at("shape_from").get<std::string>().find("launcher line") == 0);
  CHECK(v.at("rows").size() == 9); // 4 B .. 1 KiB
  check_rows(v);
  // The whole file: osu_alltoall is read but not simulated (a note says so); osu_latency and osu_bw run.
  const auto all =
      ibn::test::run_cli("validate osu " + kOci + " --rate EDR --max-bytes 4 -n 2 --json 2>/dev/null");
  INFO(all.out);
  REQUIRE(all.code == 0);
  const auto w = nlohmann::json::parse(all.out);
  bool alltoall_note = false;
  for (const auto& n : w.at("notes"))
    alltoall_note =
        alltoall_note || n.get<std::string>().find("osu_alltoall: not simulated") != std::string::npos;
  CHECK(alltoall_note);
  // The 4 B AllReduce row is Open MPI's, not NCCL's: no NCCL per-step software cost may be charged (it was,
  // silently, once nccl.costs became on by default: 355 us instead of 33). Closed form of the hierarchical
  // algorithm on 4 nodes x 36 ranks with latency-bound steps: 2 x 35 shared-memory steps of the default
  // shm latency 0.4 us, plus 2 x 3 inter-node ring steps, each at least the one-way network latency that
  // the same run predicts for osu_latency (1 B) and at most twice it; the byte terms are nanoseconds.
  double lat = 0, ar4 = 0;
  for (const auto& r : w.at("rows")) {
    if (r.at("benchmark") == "osu_latency") lat = r.at("predicted_p50_us");
    if (r.at("benchmark") == "osu_allreduce" && r.at("size_bytes") == 4) ar4 = r.at("predicted_p50_us");
  }
  REQUIRE(lat > 0);
  CHECK(ar4 >= 70 * 0.4 + 6 * lat);
  CHECK(ar4 <= 70 * 0.4 * 1.1 + 6 * 2 * lat);

  const auto imb = ibn::test::run_cli("validate osu " + kImb + " --rate HDR --samples 20 --json 2>/dev/null");
  INFO(imb.out);
  REQUIRE(imb.code == 0);
  const auto iv = nlohmann::json::parse(imb.out);
  CHECK(iv.at("rows").size() == 48);
  check_rows(iv);
}

TEST_CASE("validate osu: a table cut mid-row is exit 2 naming the file and line") {
  const auto dir = ibn::test::scratch_dir("validate-osu-cut");
  const auto path = (dir / "cut.txt").string();
  {
    std::ofstream f(path, std::ios::binary);
    f << "$ mpirun -np 2 -npernode 1 osu_latency\n# OSU MPI Latency Test v7.5\n# Size       Avg Latency(us)\n"
         "1                       1.67\n2             \n";
  }
  const auto r = ibn::test::run_cli("validate osu " + path);
  CHECK(r.code == 2);
  CHECK(r.out.find(path + ":5: table cut mid-row") != std::string::npos);
}

TEST_CASE("validate osu --profile: the profile's noise spreads p99 above p50, and reruns are identical") {
  const auto dir = ibn::test::scratch_dir("validate-osu-profile").string();
  const auto fit = ibn::test::run_cli(
      "calibrate fit " + kData +
      "/perftest/azure-hbv3-cx6vf-hdr200-ib_send_lat-ib_send_bw-a-truncated16K.txt --link-rate HDR -o " +
      dir + "/az.json");
  REQUIRE(fit.code == 0);
  const std::string cmd = "validate osu " + kHostLat + " --nodes 2 --ppn 1 --profile " + dir +
                          "/az.json --samples 200 --max-bytes 1K --json 2>/dev/null";
  const auto a = ibn::test::run_cli(cmd);
  INFO(a.out);
  REQUIRE(a.code == 0);
  CHECK(ibn::test::run_cli(cmd).out == a.out);
  const auto v = nlohmann::json::parse(a.out);
  check_rows(v);
  bool spread = false;
  for (const auto& r : v.at("rows"))
    spread = spread || r.at("predicted_p99_us").get<double>() > r.at("predicted_p50_us").get<double>();
  CHECK(spread);
  // With the profile the small-message latency includes the host's share: above the bare engine's.
  const auto bare =
      nlohmann::json::parse(ibn::test::run_cli("validate osu " + kHostLat +
                                               " --nodes 2 --ppn 1 --rate HDR --samples 20 --max-bytes 1K "
                                               "--json 2>/dev/null")
                                .out);
  CHECK(v.at("rows").at(0).at("predicted_p50_us").get<double>() >
        bare.at("rows").at(0).at("predicted_p50_us").get<double>());
}
