// `validate nccl-tests` on a real 2-node RoCE nccl-tests run, with a profile fitted from the same
// hardware's perftest run (tests/data/SOURCES.md: MOC H100 / ConnectX-7).
#include "tests/apps/run_cli.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

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
  // The log says "GDR 0": the run is flagged and simulated with packet.gpudirect=false (host staging).
  CHECK(v.at("runs").at(0).at("gdr") == false);
  // Two notes: its NICs run RoCE (RoCEv2 framing), and "GDR 0".
  REQUIRE(v.at("notes").size() == 2);
  CHECK(v.at("notes").at(0).get<std::string>().find("packet.link_layer=rocev2") != std::string::npos);
  CHECK(v.at("notes").at(1).get<std::string>().find("GDR 0") != std::string::npos);
  // NCCL_ALGO=RING and 2 nodes x 1 GPU: the tuning model picks Simple for GiB sizes, so the simulated
  // busbw is the profile's plateau (B = 225 Gb/s = 28.1 GB/s payload) staged through host memory in series
  // at the same rate (docs/packet-models.md "Host path": 1 / (1/B + 1/B) = B/2 = 14.1 GB/s), not LL's
  // quarter of it.
  for (const auto& row : rows) {
    CHECK(row.at("simulated").get<double>() > 0.9 * 225 / 16);
    CHECK(row.at("simulated").get<double>() < 1.02 * 225 / 16);
  }
  CHECK(v.at("summary").at("max_abs_error_pct").get<double>() >=
        v.at("summary").at("median_abs_error_pct").get<double>());
  CHECK(ibn::test::run_cli("validate nccl-tests " + data + "/perftest/cx3-mt4099-qdr40g-ib-ib_write_bw-a.txt")
            .code == 2);
}

namespace {
/// Median |error_pct| of a validate JSON's rows at sizes >= `from` bytes.
double median_error_from(const nlohmann::json& v, std::uint64_t from) {
  std::vector<double> e;
  for (const auto& r : v.at("rows"))
    if (r.at("size_bytes").get<std::uint64_t>() >= from)
      e.push_back(std::abs(r.at("error_pct").get<double>()));
  REQUIRE(!e.empty());
  std::sort(e.begin(), e.end());
  return e.size() % 2 ? e[e.size() / 2] : 0.5 * (e[e.size() / 2 - 1] + e[e.size() / 2]);
}
} // namespace

TEST_CASE("calibrate nvlink: fitted on one H100 node's all_gather, predicts another H100 node's ring "
          "all_reduce at the sizes it was fitted on (>= 32 MiB) within 10 %") {
  const std::string data = IBNETSIM_TEST_DATA;
  const auto dir = ibn::test::scratch_dir("nvlink-fit").string();
  const std::string ag = data + "/nccl-tests/h100-1node-8gpu-nvlink-xxrjun-cluster01-single.log";
  const std::string ar = data + "/nccl-tests/together-h100-1node-8gpu-nvlink-all_reduce_ring.out";
  const auto fit =
      ibn::test::run_cli("calibrate nvlink " + ag + " --test all_gather_perf -o " + dir + "/nv.json");
  INFO(fit.out);
  REQUIRE(fit.code == 0);
  const auto j = nlohmann::json::parse(ibn::test::read_text_file(dir + "/nv.json"));
  const double bw = j.at("nvlink").at("bandwidth_gbps"), lat = j.at("nvlink").at("latency_us");
  CHECK(j.at("fit").at("rows").size() == 6); // 32 MiB .. 1 GiB (--max-bytes 1G by default)
  // The fit is better on its own rows than the defaults (3600 Gb/s, 0.7 us).
  const auto own_default = ibn::test::run_cli(
      "validate nccl-tests " + ag + " --test all_gather_perf -n 1 --max-bytes 1G --json 2>/dev/null");
  REQUIRE(own_default.code == 0);
  CHECK(j.at("fit").at("summary").at("median_abs_error_pct").get<double>() <
        nlohmann::json::parse(own_default.out).at("summary").at("median_abs_error_pct").get<double>());
  // Cross-validation on the other machine's log, which the fit never saw.
  const std::string sets = " --set nvlink.bandwidth_gbps=" + std::to_string(bw) +
                           " --set nvlink.latency_us=" + std::to_string(lat);
  const auto pred =
      ibn::test::run_cli("validate nccl-tests " + ar + " -n 1 --max-bytes 1G --json" + sets + " 2>/dev/null");
  const auto dflt =
      ibn::test::run_cli("validate nccl-tests " + ar + " -n 1 --max-bytes 1G --json 2>/dev/null");
  REQUIRE(pred.code == 0);
  REQUIRE(dflt.code == 0);
  const double fitted_err = median_error_from(nlohmann::json::parse(pred.out), 32u << 20);
  const double default_err = median_error_from(nlohmann::json::parse(dflt.out), 32u << 20);
  MESSAGE("NVLink fit " << bw << " Gb/s, " << lat << " us; ring all_reduce >= 32 MiB median |error| "
                        << fitted_err << " % (defaults: " << default_err << " %)");
  CHECK(fitted_err <= 10.0);
  CHECK(fitted_err < default_err);
  // A multi-node log is refused with its line.
  const auto bad =
      ibn::test::run_cli("calibrate nvlink " + data +
                         "/nccl-tests/moc-h100-cx7-roce400g-2node-all_reduce_roce_1gpu-nogdr-cci-moc.log");
  CHECK(bad.code == 2);
  CHECK(bad.out.find("single-node") != std::string::npos);
}
