// End-to-end tests of `ibnetsim perftest`: the output is perftest's layout, our own perftest parser
// (calibration/perftest_parser.hpp) reads it back to the printed numbers, and bad input exits 2 naming
// the flag or host.
#include "calibration/perftest_parser.hpp"
#include "scenarios/perftest.hpp"
#include "tests/apps/run_cli.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

using ibn::test::run_cli;
using ibn::test::scratch_dir;
namespace calib = ibn::calib;

namespace {

/// The whitespace-separated fields of every table row (the lines between the "#bytes" header and the
/// closing dashed line).
std::vector<std::vector<std::string>> table_rows(const std::string& out) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(out);
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.find("#bytes") != std::string::npos) {
      inside = true;
      continue;
    }
    if (!inside) continue;
    if (line.rfind("-----", 0) == 0) break;
    std::istringstream f(line);
    std::vector<std::string> fields;
    for (std::string t; f >> t;) fields.push_back(t);
    rows.push_back(fields);
  }
  return rows;
}

calib::PerftestRun parse_one(const std::string& out) {
  std::istringstream in(out);
  const auto runs = calib::parse_perftest(in, "ibnetsim-stdout");
  REQUIRE(runs.size() == 1);
  return runs.front();
}

double num(const std::string& s) {
  return std::strtod(s.c_str(), nullptr);
}

} // namespace

TEST_CASE("perftest ib_write_bw -a --report_gbits: perftest's layout, read back by our parser") {
  const auto r = run_cli("perftest ib_write_bw -a --report_gbits");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("                    RDMA_Write BW Test\n") != std::string::npos);
  CHECK(r.out.find(" Dual-port       : OFF          Device         : ibnetsim0\n") != std::string::npos);
  CHECK(r.out.find(" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n") !=
        std::string::npos);
  CHECK(r.out.find(" Simulated by ibnetsim ") != std::string::npos);
  CHECK(
      r.out.rfind("---------------------------------------------------------------------------------------\n",
                  0) == 0);
  const auto run = parse_one(r.out);
  CHECK(run.tool == calib::PerftestTool::ib_write_bw);
  CHECK(run.title == "RDMA_Write BW Test");
  CHECK(run.warnings.empty());
  CHECK(run.device == "ibnetsim0");
  CHECK(run.mtu_bytes == 4096);
  CHECK(run.num_qps == 1);
  CHECK(run.tx_depth == 128);
  CHECK(run.transport_type == "IB");
  CHECK(run.connection_type == "RC");
  CHECK(run.link_type == "IB");
  CHECK(run.max_inline_bytes == 0);
  CHECK(run.use_srq == false);
  CHECK(run.rdma_cm_qps == false);
  CHECK(run.data_exchange == "Ethernet");
  CHECK(run.bw_unit == "Gb/sec");
  CHECK_FALSE(run.bidirectional);
  const auto printed = table_rows(r.out);
  REQUIRE(run.rows.size() == 23);
  REQUIRE(printed.size() == 23);
  for (std::size_t i = 0; i < run.rows.size(); ++i) {
    const auto& row = run.rows[i];
    CAPTURE(row.size_bytes);
    REQUIRE(printed[i].size() == 5);
    CHECK(row.size_bytes == (2ull << i));
    CHECK(std::to_string(row.size_bytes) == printed[i][0]);
    CHECK(std::to_string(row.iterations) == printed[i][1]);
    CHECK(*row.bw_peak_gbps == num(printed[i][2]));
    CHECK(*row.bw_avg_gbps == num(printed[i][3]));
    CHECK(*row.msg_rate_mpps == num(printed[i][4]));
    CHECK(*row.bw_peak_gbps >= *row.bw_avg_gbps);
  }
  CHECK(run.rows[15].size_bytes == 65536);
  CHECK(run.rows[15].iterations == 5000);  // perftest's default: 312.5 MiB, under the cap
  CHECK(run.rows.back().iterations == 64); // 8 MiB: capped at 512 MiB per size
  CHECK(r.out.find("iterations capped at 512 MiB per size") != std::string::npos);

  // The printed numbers are the driver's (rounded to perftest's 2 decimals).
  const auto p = ibn::scen::back_to_back_path({ibn::topo::Generation::NDR, 4}, 3.0, {});
  ibn::scen::PerftestSpec spec;
  spec.sizes = {65536};
  spec.iterations = 5000;
  spec.src = p.src;
  spec.dst = p.dst;
  const auto direct = ibn::scen::run_perftest(p.fabric, p.tables, p.config, spec).front();
  CHECK(*run.rows[15].bw_avg_gbps == doctest::Approx(direct.bw_avg_gbps).epsilon(0.00002));
  CHECK(*run.rows[15].msg_rate_mpps == doctest::Approx(direct.msg_rate_mpps).epsilon(1e-5));
}

TEST_CASE("perftest ib_write_lat -a and ib_read_lat: latency tables read back, 2 B write = 0.62 us") {
  auto r = run_cli("perftest ib_write_lat -a");
  REQUIRE(r.code == 0);
  auto run = parse_one(r.out);
  CHECK(run.tool == calib::PerftestTool::ib_write_lat);
  CHECK(run.title == "RDMA_Write Latency Test");
  CHECK(run.warnings.empty());
  CHECK(run.tx_depth == 1);
  CHECK(run.mtu_bytes == 4096);
  const auto printed = table_rows(r.out);
  REQUIRE(run.rows.size() == 23);
  REQUIRE(printed.size() == 23);
  for (std::size_t i = 0; i < run.rows.size(); ++i) {
    const auto& row = run.rows[i];
    REQUIRE(printed[i].size() == 9);
    CHECK(std::to_string(row.size_bytes) == printed[i][0]);
    CHECK(std::to_string(row.iterations) == printed[i][1]);
    CHECK(*row.t_min_us == num(printed[i][2]));
    CHECK(*row.t_max_us == num(printed[i][3]));
    CHECK(*row.t_typical_us == num(printed[i][4]));
    CHECK(*row.t_avg_us == num(printed[i][5]));
    CHECK(*row.t_stdev_us == num(printed[i][6]));
    CHECK(*row.p99_us == num(printed[i][7]));
    CHECK(*row.p999_us == num(printed[i][8]));
  }
  // 300 ns + 0.88 ns + 14.28 ns + 300 ns = 615.16 ns.
  CHECK(*run.rows[0].t_typical_us == doctest::Approx(0.62));
  CHECK(run.rows[0].iterations == 1000);
  CHECK(run.rows.back().iterations == 32); // 8 MiB ping-pong: 16 MiB per iteration, 512 MiB cap

  r = run_cli("perftest ib_read_lat -s 4096 -n 100");
  REQUIRE(r.code == 0);
  run = parse_one(r.out);
  CHECK(run.tool == calib::PerftestTool::ib_read_lat);
  CHECK(run.outstanding_reads == 16);
  REQUIRE(run.rows.size() == 1);
  CHECK(run.rows[0].iterations == 100);
  // 711.84 ns (request + response + nic_tx + nic_rx) + 600 ns of responder processing (nic_rx + nic_tx).
  CHECK(*run.rows[0].t_typical_us == doctest::Approx(1.31));
}

TEST_CASE("perftest ib_read_bw -q 2 in MB/sec, ib_send_bw -b, -m 2048: header fields and units") {
  auto r = run_cli("perftest ib_read_bw -s 1M -q 2 -n 50");
  REQUIRE(r.code == 0);
  auto run = parse_one(r.out);
  CHECK(run.tool == calib::PerftestTool::ib_read_bw);
  CHECK(run.title == "RDMA_Read BW Test");
  CHECK(run.num_qps == 2);
  CHECK(run.outstanding_reads == 16);
  CHECK(run.bw_unit == "MB/sec");
  REQUIRE(run.rows.size() == 1);
  auto printed = table_rows(r.out);
  REQUIRE(printed.size() == 1);
  CHECK(run.rows[0].iterations == 100); // 50 per QP x 2 QPs, as perftest prints
  CHECK(*run.rows[0].bw_avg_gbps == doctest::Approx(calib::perftest_mbps_to_gbps(num(printed[0][3]))));
  // MB = 2^20 bytes: 397.48 Gb/s = 47,384 MB/sec.
  CHECK(*run.rows[0].bw_avg_gbps == doctest::Approx(397.4).epsilon(0.002));

  r = run_cli("perftest ib_send_bw -b -n 200 --report_gbits");
  REQUIRE(r.code == 0);
  run = parse_one(r.out);
  CHECK(run.tool == calib::PerftestTool::ib_send_bw);
  CHECK(run.title == "Send Bidirectional BW Test");
  CHECK(run.bidirectional);
  REQUIRE(run.rows.size() == 1);
  CHECK(*run.rows[0].bw_avg_gbps == doctest::Approx(2 * 397.5).epsilon(0.005)); // sum of both directions

  r = run_cli("perftest ib_send_lat -m 2048 -n 20");
  REQUIRE(r.code == 0);
  run = parse_one(r.out);
  CHECK(run.tool == calib::PerftestTool::ib_send_lat);
  CHECK(run.title == "Send Latency Test");
  CHECK(run.mtu_bytes == 2048);
}

TEST_CASE("perftest --fabric --pair: the path crosses the tree's switches") {
  const auto dir = scratch_dir("cli_perftest_fabric");
  const std::string fab = (dir / "f.json").string();
  REQUIRE(run_cli("topo generate fat-tree --tiers 2 --radix 4 -o " + fab).code == 0);
  auto r = run_cli("perftest ib_write_lat --fabric " + fab + " --pair host-0,host-2 -n 20");
  REQUIRE(r.code == 0);
  auto run = parse_one(r.out);
  REQUIRE(run.rows.size() == 1);
  // 615.16 ns back to back + 3 x 200 ns + 14.28 ns + 2 x 153.9 ns = 1537.24 ns.
  CHECK(*run.rows[0].t_typical_us == doctest::Approx(1.54));
  CHECK(r.out.find("host-0 -> host-2: 4 cables, 3 switches, ftree routing") != std::string::npos);
  r = run_cli("perftest ib_write_bw --fabric " + fab + " --pair host-0,host-7 -n 1000 --report_gbits");
  REQUIRE(r.code == 0);
  run = parse_one(r.out);
  // Line rate x 65536 / (65536 + 16 x 26 + 16) = 397.38 Gb/s, less the fill and drain of the longer
  // path (~3 us of 1.3 ms).
  CHECK(*run.rows[0].bw_avg_gbps == doctest::Approx(397.38).epsilon(0.005));

  // Bad pairs and fabrics: exit 2, the message names the flag and the host.
  r = run_cli("perftest ib_write_bw --fabric " + fab + " --pair host-0,nohost");
  CHECK(r.code == 2);
  CHECK(r.out.find("--pair") != std::string::npos);
  CHECK(r.out.find("'nohost'") != std::string::npos);
  r = run_cli("perftest ib_write_bw --fabric " + fab + " --pair host-0,spine-1");
  CHECK(r.code == 2);
  CHECK(r.out.find("'spine-1'") != std::string::npos);
  CHECK(r.out.find("not an HCA") != std::string::npos);
  r = run_cli("perftest ib_write_bw --fabric " + (dir / "missing.json").string() + " --pair host-0,host-1");
  CHECK(r.code == 2);
  CHECK(r.out.find("--fabric") != std::string::npos);
  CHECK(r.out.find("missing.json") != std::string::npos);
  r = run_cli("perftest ib_write_bw --fabric " + fab + " --pair host-0,host-1 --rate HDR");
  CHECK(r.code == 2);
  CHECK(r.out.find("--rate") != std::string::npos);
  r = run_cli("perftest ib_write_bw --fabric " + fab);
  CHECK(r.code == 2);
  CHECK(r.out.find("--pair") != std::string::npos);
}

TEST_CASE("perftest bad input exits 2 naming the flag or the tool") {
  struct Case {
    std::string args, expect;
  };
  const std::vector<Case> cases = {
      {"ib_write_xx", "ib_write_xx"},
      {"ib_write_bw -a -s 64", "-a and -s"},
      {"ib_write_bw -s -5", "-s"},
      {"ib_write_bw -s 0", "-s"},
      {"ib_write_bw -q 0", "-q"},
      {"ib_write_bw -n 2", "-n"},
      {"ib_write_bw -t 0", "-t"},
      {"ib_write_bw -m 1500", "-m"},
      {"ib_write_lat -b", "-b"},
      {"ib_write_lat -q 4", "-q"},
      {"ib_write_bw --rate XYZ", "--rate"},
      {"ib_write_bw --cable-m -1", "--cable-m"},
      {"ib_write_bw --cable-m 0", "--cable-m"},
      {"ib_write_bw --profile p.json", "--profile: p.json: cannot open the profile"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.args);
    const auto r = run_cli("perftest " + c.args);
    CHECK(r.code == 2);
    CHECK(r.out.find(c.expect) != std::string::npos);
  }
}
