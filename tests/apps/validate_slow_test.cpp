// `validate nccl-tests` on a real 2-node RoCE nccl-tests run, with a profile fitted from the same
// hardware's perftest run (tests/data/SOURCES.md: MOC H100 / ConnectX-7).
#include "tests/apps/run_cli.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>

TEST_CASE("validate nccl-tests: measured vs simulated busbw rows and summary (CLI.md JSON)") {
  const std::string data = IBNETSIM_TEST_DATA;
  const auto dir = ibn::test::scratch_dir("validate").string();
  const auto fit = ibn::test::run_cli(
      "calibrate fit " + data + "/perftest/moc-cx7-roce-h100node-baremetal-ib_write_bw-a-q1-hostmem.txt -o " +
      dir + "/moc.json");
  REQUIRE(fit.code == 0);
  const auto r =
      ibn::test::run_cli("validate nccl-tests " + data +
                         "/nccl-tests/moc-h100-cx7-roce400g-2node-all_reduce_roce_1gpu-nogdr-cci-moc.log "
                         "--profile " +
                         dir + "/moc.json -n 1 --max-bytes 3G --json 2>/dev/null");
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto v = nlohmann::json::parse(r.out);
  const auto& rows = v.at("rows");
  REQUIRE(rows.size() == 2); // the 1 GiB and 3 GiB rows (larger ones skipped by --max-bytes)
  for (const auto& row : rows) {
    for (const char* k : {"file", "test", "size_bytes", "measured", "simulated", "error_pct"})
      CHECK(row.contains(k));
    const double m = row.at("measured"), s = row.at("simulated"), e = row.at("error_pct");
    CHECK(e == doctest::Approx((s - m) / m * 100).epsilon(0.001));
    CHECK(s > 0);
  }
  CHECK(v.at("runs").at(0).at("nodes") == 2);
  // The log says "GDR 0": the run is flagged (host-memory staging is not modelled).
  CHECK(v.at("runs").at(0).at("gdr") == false);
  REQUIRE(v.at("notes").size() == 1);
  CHECK(v.at("notes").at(0).get<std::string>().find("GDR 0") != std::string::npos);
  // NCCL_ALGO=RING and 2 nodes x 1 GPU: the tuning model picks Simple for GiB sizes, so the simulated
  // busbw is the profile's plateau (B = 225 Gb/s = 28.1 GB/s payload), not LL's quarter of it.
  for (const auto& row : rows) CHECK(row.at("simulated").get<double>() > 0.9 * 225 / 8);
  CHECK(v.at("summary").at("max_abs_error_pct").get<double>() >=
        v.at("summary").at("median_abs_error_pct").get<double>());
  CHECK(ibn::test::run_cli("validate nccl-tests " + data + "/perftest/cx3-mt4099-qdr40g-ib-ib_write_bw-a.txt")
            .code == 2);
}
