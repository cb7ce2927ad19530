// Regressions of issue 16 item 6, through the binary: each case failed before its fix.
#include "tests/apps/run_cli.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

namespace {
const std::string kData = IBNETSIM_TEST_DATA;
}

TEST_CASE(
    "validate nccl-tests --engine flow on a log with several tests (SimGrid is one engine per process)") {
  // Five tests in one log: each is simulated in its own child process. Before: the second test threw
  // SimGrid's "one FlowEngine per process" internal error (exit 1).
  const auto r =
      ibn::test::run_cli("validate nccl-tests " + kData +
                         "/nccl-tests/h100-1node-8gpu-nvlink-xxrjun-cluster01-single.log --engine flow -n 1 "
                         "--max-bytes 32M --json 2>/dev/null");
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto v = nlohmann::json::parse(r.out);
  CHECK(v.at("runs").size() == 5);
  CHECK(v.at("rows").size() == 5);
  // The same rows as the packet engine would not be expected, but every test got a positive busbw.
  for (const auto& row : v.at("rows")) CHECK(row.at("simulated").get<double>() > 0);
}

TEST_CASE("validate nccl-tests: NCCL_ALGO=RING in a sendrecv log is ignored, as NCCL does for p2p") {
  // Before: the ring algorithm was requested for sendrecv and the run exited 2.
  const auto r =
      ibn::test::run_cli("validate nccl-tests " + kData +
                         "/nccl-tests/moc-h100-cx7-roce400g-2node-sendrecv_roce_1gpu-nogdr-cci-moc.log "
                         "--engine flow -n 1 --max-bytes 1G --json 2>/dev/null");
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto v = nlohmann::json::parse(r.out);
  REQUIRE(v.at("runs").size() == 1);
  CHECK(v.at("runs").at(0).at("test") == "sendrecv_perf");
  CHECK(v.at("runs").at(0).at("algorithm") == "auto");
  // No "GDR N" line, but its NET connections name no GDRDMA: simulated with host staging.
  CHECK(v.at("runs").at(0).at("gdr") == false);
  CHECK(v.at("rows").size() == 1);
}

TEST_CASE("validate nccl-tests: a '_perf_mpi' log starting with 0-byte rows") {
  // Before: "cannot tell which collective was measured" (exit 2).
  const auto r = ibn::test::run_cli("validate nccl-tests " + kData +
                                    "/nccl-tests/h100-ndr200-ib-2node-8gpu-all_gather-snellius-odissei.log "
                                    "--engine flow -n 1 --max-bytes 64K --json 2>/dev/null");
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto v = nlohmann::json::parse(r.out);
  CHECK(v.at("runs").at(0).at("test") == "all_gather_perf");
  CHECK(v.at("runs").at(0).at("nodes") == 2);
  CHECK(v.at("rows").size() > 0);
}

TEST_CASE("validate --engine flow: bad input found inside the child process is still exit 2") {
  // The child's InputError crossed the process boundary as a plain error (exit 1, "internal error").
  const auto r =
      ibn::test::run_cli("validate nccl-tests " + kData +
                         "/nccl-tests/h100-1node-8gpu-nvlink-xxrjun-cluster01-single.log --engine flow -n 1 "
                         "--max-bytes 32M --set nvlink.bandwidth_gbps=-5");
  CHECK(r.code == 2);
  CHECK(r.out.find("nvlink.bandwidth_gbps") != std::string::npos);
  CHECK(r.out.find("internal error") == std::string::npos);
  const auto o =
      ibn::test::run_cli("validate osu " + kData +
                         "/osu/oci-bm.optimized3.36-roce100g-osu_latency-bw-allreduce4node-alltoall1node.txt "
                         "--test osu_allreduce "
                         "--engine flow --max-bytes 64 -n 1 --set nvlink.latency_us=-1");
  CHECK(o.code == 2);
  CHECK(o.out.find("nvlink.latency_us") != std::string::npos);
}

TEST_CASE(
    "validate nccl-tests: a how-to page naming the test by 'run_nccl_tests.sh -t all_gather', two tests "
    "cut before their tables") {
  // Before: "cannot tell which collective was measured" (exit 2) for the tests cut before their tables.
  const auto r = ibn::test::run_cli(
      "validate nccl-tests " + kData +
      "/nccl-tests/b200-gke-a4-roce-cx7-400g-2node-16gpu-all_gather-1K-8G-doc-kubernetes-sigs-"
      "dranet.md --engine flow -n 1 --max-bytes 64M --json 2>/dev/null");
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto v = nlohmann::json::parse(r.out);
  REQUIRE(v.at("runs").size() == 1);
  CHECK(v.at("runs").at(0).at("test") == "all_gather_perf");
  CHECK(v.at("runs").at(0).at("nodes") == 2);
  CHECK(v.at("runs").at(0).at("gpus_per_node") == 8);
  CHECK(v.at("runs").at(0).at("nccl_version") == "2.26.6"); // the plain "NCCL version" line
  CHECK(v.at("rows").size() == 17); // 1 KiB .. 64 MiB (1 KiB prints busbw 0.00: compared by its time)
  REQUIRE(v.at("notes").size() == 2);
  CHECK(v.at("notes").at(0).get<std::string>().find(":613: this test has no results table") !=
        std::string::npos);
}

TEST_CASE("validate nccl-tests: the version of a log run with NCCL_DEBUG=VERSION reaches the cost model") {
  // Before: "NCCL version 2.26.2+cuda12.8" without the NCCL INFO prefix was not read (empty nccl_version).
  const auto r = ibn::test::run_cli(
      "validate nccl-tests " + kData +
      "/nccl-tests/h100-ndr400x8-ib-2node-4node-8node-all_reduce-nccl-tests-issue309.md --engine flow -n 1 "
      "--max-bytes 1M --json 2>/dev/null");
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto v = nlohmann::json::parse(r.out);
  REQUIRE(v.at("runs").size() >= 2);
  CHECK(v.at("runs").at(0).at("nccl_version") == "2.26.2");
  CHECK(v.at("runs").at(1).at("nccl_version") == "2.26.2");
}

TEST_CASE(
    "calibrate fit: a perftest report whose rows begin with '#' reads (no 'no perftest result table')") {
  // Issue 16 item 6: such a report was "no perftest result table found" (exit 2). The parser's unit test is
  // tests/calibration/perftest_parser_test.cpp "perftest report pasted as comments"; this one goes through
  // the binary.
  const auto dir = ibn::test::scratch_dir("hashed-perftest");
  const std::string hashed = (dir / "hashed.txt").string();
  {
    std::ifstream in(kData + "/perftest/cx3-mt4099-qdr40g-ib-ib_write_bw-a.txt", std::ios::binary);
    std::ofstream out(hashed, std::ios::binary);
    std::string line;
    while (std::getline(in, line)) out << "# " << line << "\n";
  }
  const auto plain = ibn::test::run_cli(
      "calibrate fit " + kData + "/perftest/cx3-mt4099-qdr40g-ib-ib_write_bw-a.txt --link-rate QDR -o " +
      (dir / "plain.json").string());
  const auto r =
      ibn::test::run_cli("calibrate fit " + hashed + " --link-rate QDR -o " + (dir / "hashed.json").string());
  INFO(r.out);
  REQUIRE(plain.code == 0);
  CHECK(r.code == 0);
  CHECK(r.out.find("no perftest result table") == std::string::npos);
  // The same fit: the profiles' bandwidth parameters agree.
  auto load = [](const std::filesystem::path& p) {
    std::ifstream in(p);
    return nlohmann::json::parse(in);
  };
  const auto a = load(dir / "plain.json"), b = load(dir / "hashed.json");
  CHECK(a.at("bandwidth") == b.at("bandwidth"));
}

TEST_CASE("validate nccl-tests: the text table names each row's job and what the simulation ran") {
  // Issue 309's file holds 2-, 4- and 8-node runs of one test: without a job column their rows were
  // indistinguishable in the table. The last column is the algorithm/protocol the simulation ran.
  const auto r =
      ibn::test::run_cli("validate nccl-tests " + kData +
                         "/nccl-tests/h100-ndr400x8-ib-2node-4node-8node-all_reduce-nccl-tests-issue309.md "
                         "--engine flow -n 1 --max-bytes 1M 2>/dev/null");
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("job") != std::string::npos);
  CHECK(r.out.find("simulated as") != std::string::npos);
  CHECK(r.out.find(" 2x8 ") != std::string::npos);
  CHECK(r.out.find(" 4x8 ") != std::string::npos);
  CHECK(r.out.find(" 8x8 ") != std::string::npos);
  CHECK(r.out.find("tree/ll") != std::string::npos);
}

TEST_CASE(
    "validate nccl-tests: a log whose NICs all run RoCE is simulated with RoCEv2 framing, and says so") {
  // MOC's NET/IB line names one RoCE port: packet.link_layer=rocev2 (82-byte headers), with a note. Snellius
  // lists an Ethernet mlx5_0 beside four InfiniBand ports: left on InfiniBand framing, no note.
  const auto moc =
      ibn::test::run_cli("validate nccl-tests " + kData +
                         "/nccl-tests/moc-h100-cx7-roce400g-2node-all_reduce_roce_1gpu-nogdr-cci-moc.log "
                         "--engine flow -n 1 --max-bytes 2G --json 2>/dev/null");
  INFO(moc.out);
  REQUIRE(moc.code == 0);
  const auto v = nlohmann::json::parse(moc.out);
  bool roce_note = false;
  for (const auto& n : v.at("notes"))
    roce_note |= n.get<std::string>().find("packet.link_layer=rocev2") != std::string::npos;
  CHECK(roce_note);
  // The framing reaches the simulation: the same run forced back to InfiniBand headers is faster.
  const auto ib =
      ibn::test::run_cli("validate nccl-tests " + kData +
                         "/nccl-tests/moc-h100-cx7-roce400g-2node-all_reduce_roce_1gpu-nogdr-cci-moc.log "
                         "--engine flow -n 1 --max-bytes 2G --set packet.link_layer=ib --json 2>/dev/null");
  REQUIRE(ib.code == 0);
  const auto w = nlohmann::json::parse(ib.out);
  REQUIRE(v.at("rows").size() == w.at("rows").size());
  REQUIRE(!v.at("rows").empty());
  CHECK(v.at("rows")[0].at("simulated").get<double>() < w.at("rows")[0].at("simulated").get<double>());
  const auto sn = ibn::test::run_cli("validate nccl-tests " + kData +
                                     "/nccl-tests/h100-ndr200-ib-2node-8gpu-all_gather-snellius-odissei.log "
                                     "--engine flow -n 1 --max-bytes 4K 2>&1");
  REQUIRE(sn.code == 0);
  CHECK(sn.out.find("RoCE") == std::string::npos);
}
