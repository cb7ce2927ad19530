// perftest output parser: every real fixture in tests/data/perftest (values read by hand from the files),
// unit conversion, the error-vs-warning rules for damaged tables, and the odd shapes real terminals give.
#include "calibration/perftest_parser.hpp"
#include "sim/error.hpp"

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace ibn;
using namespace ibn::calib;

namespace {

std::string fixture(const std::string& name) {
  return std::string(IBNETSIM_TEST_DATA) + "/perftest/" + name;
}

std::vector<PerftestRun> load(const std::string& name) {
  return parse_perftest_file(fixture(name));
}

std::vector<PerftestRun> parse_text(const std::string& text, const std::string& source = "mem.txt") {
  std::istringstream in(text);
  return parse_perftest(in, source);
}

/// The message of the InputError thrown by parse_text, or "" when none is thrown.
std::string error_of(const std::string& text, const std::string& source = "mem.txt") {
  try {
    parse_text(text, source);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

bool starts_with(const std::string& s, const std::string& p) {
  return s.rfind(p, 0) == 0;
}

// A small ib_write_lat section; the table header is line 9, the first row line 10.
const std::string kLatHead =
    "user@host:~$ ib_write_lat -a 10.0.0.1\n"                           // 1
    "---------------------------------------------------------------\n" // 2
    "                    RDMA_Write Latency Test\n"                     // 3
    " Dual-port       : OFF\t\tDevice         : mlx5_0\n"               // 4
    " Number of qps   : 1\t\tTransport type : IB\n"                     // 5
    " Mtu             : 4096[B]\n"                                      // 6
    " Link type       : IB\n"                                           // 7
    "---------------------------------------------------------------\n" // 8
    " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]"
    "    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec]\n"; // 9
const std::string kLatRow2 = " 2       1000          1.00           2.00         1.10               1.20"
                             "          0.10            1.50                    1.90\n";
const std::string kLatRow4 = " 4       1000          1.01           2.01         1.11               1.21"
                             "          0.11            1.51                    1.91\n";
const std::string kLatRow8 = " 8       1000          1.02           2.02         1.12               1.22"
                             "          0.12            1.52                    1.92\n";
const std::string kRule = "---------------------------------------------------------------\n";

// A small ib_write_bw section with a bandwidth header in `unit`; the table header is line 7.
std::string bw_text(const std::string& unit, const std::string& rows,
                    const std::string& title = "RDMA_Write BW Test",
                    const std::string& cmd = "$ ib_write_bw -a 10.0.0.1") {
  return cmd + "\n" +                                                        // 1
         "---------------------------------------------------------------\n" // 2
         "                    " +
         title + "\n" +                                                      // 3
         " Number of qps   : 2\t\tTransport type : IB\n"                     // 4
         " Link type       : IB\n"                                           // 5
         "---------------------------------------------------------------\n" // 6
         " #bytes     #iterations    BW peak[" +
         unit + "]    BW average[" + unit + "]   MsgRate[Mpps]\n" + // 7
         rows;
}

} // namespace

// ---------------------------------------------------------------------------------------------------------
// Real fixtures
// ---------------------------------------------------------------------------------------------------------

TEST_CASE("perftest cx3 ib_write_lat -a: full latency table with percentiles") {
  const auto runs = load("cx3-mt4099-qdr40g-ib-ib_write_lat-a.txt");
  REQUIRE(runs.size() == 1);
  const PerftestRun& r = runs[0];
  CHECK(r.tool == PerftestTool::ib_write_lat);
  CHECK(r.is_latency());
  CHECK(r.title == "RDMA_Write Latency Test");
  CHECK(r.command == "ib_write_lat -a --iter 20000 192.168.1.60");
  CHECK(r.device == "mlx4_0");
  CHECK(r.num_qps == 1);
  CHECK(r.transport_type == "IB");
  CHECK(r.connection_type == "RC");
  CHECK(r.mtu_bytes == 2048);
  CHECK(r.link_type == "IB");
  CHECK(r.max_inline_bytes == 220);
  CHECK(r.tx_depth == 1);
  CHECK(r.rdma_cm_qps == false);
  CHECK(r.data_exchange == "Ethernet");
  CHECK(r.role == PerftestRole::client);
  CHECK(r.bw_unit.empty());
  CHECK(r.first_line == 3);
  CHECK(r.table_line == 17);
  CHECK(r.warnings.empty());
  REQUIRE(r.rows.size() == 23);
  for (std::size_t i = 0; i < r.rows.size(); ++i)
    CHECK(r.rows[i].size_bytes == (std::uint64_t{2} << i)); // 2 .. 2^23

  const PerftestRow& first = r.rows.front();
  CHECK(first.line == 18);
  CHECK(first.size_bytes == 2);
  CHECK(first.iterations == 20000);
  CHECK(first.t_min_us == 0.88);
  CHECK(first.t_max_us == 6.84);
  CHECK(first.t_typical_us == 0.98);
  CHECK(first.t_avg_us == 1.03);
  CHECK(first.t_stdev_us == 0.20);
  CHECK(first.p99_us == 1.21);
  CHECK(first.p999_us == 5.42);
  CHECK_FALSE(first.bw_avg_gbps.has_value());
  CHECK_FALSE(first.msg_rate_mpps.has_value());

  const PerftestRow& last = r.rows.back();
  CHECK(last.size_bytes == 8388608);
  CHECK(last.t_min_us == 2296.01);
  CHECK(last.t_max_us == 2345.48);
  CHECK(last.t_typical_us == 2302.01);
  CHECK(last.t_avg_us == 2304.98);
  CHECK(last.t_stdev_us == 6.43);
  CHECK(last.p99_us == 2327.01);
  CHECK(last.p999_us == 2335.48);
}

TEST_CASE("perftest cx3 ib_send_lat -a: send latency, shell noise before the header") {
  // The file starts with a prompt line and a stray "0" line before the header block.
  const auto runs = load("cx3-mt4099-qdr40g-ib-ib_send_lat-a.txt");
  REQUIRE(runs.size() == 1);
  const PerftestRun& r = runs[0];
  CHECK(r.tool == PerftestTool::ib_send_lat);
  CHECK(r.command == "ib_send_lat -a --iter 20000 192.168.1.6");
  CHECK(r.device == "mlx4_0");
  CHECK(r.mtu_bytes == 2048);
  CHECK(r.link_type == "IB");
  CHECK(r.max_inline_bytes == 236);
  CHECK(r.warnings.empty());
  REQUIRE(r.rows.size() == 23);
  const PerftestRow& first = r.rows.front();
  CHECK(first.size_bytes == 2);
  CHECK(first.iterations == 20000);
  CHECK(first.t_min_us == 1.02);
  CHECK(first.t_max_us == 11.76);
  CHECK(first.t_typical_us == 1.07);
  CHECK(first.t_avg_us == 1.11);
  CHECK(first.t_stdev_us == 0.30);
  CHECK(first.p99_us == 1.68);
  CHECK(first.p999_us == 5.00);
  const PerftestRow& last = r.rows.back();
  CHECK(last.size_bytes == 8388608);
  CHECK(last.t_min_us == 2239.42);
  CHECK(last.t_max_us == 4189.77);
  CHECK(last.t_typical_us == 2247.02);
  CHECK(last.p999_us == 3761.26);
}

TEST_CASE("perftest cx3 ib_write_bw -a: MB/sec (2^20 bytes) converted to Gb/s") {
  const auto runs = load("cx3-mt4099-qdr40g-ib-ib_write_bw-a.txt");
  REQUIRE(runs.size() == 1);
  const PerftestRun& r = runs[0];
  CHECK(r.tool == PerftestTool::ib_write_bw);
  CHECK_FALSE(r.is_latency());
  // The command wrapped onto a second line ("192.168.1.60" alone): only the first line is the command.
  CHECK(r.command == "ib_write_bw -a --iter 20000");
  CHECK(r.device == "mlx4_0");
  CHECK(r.num_qps == 1);
  CHECK(r.mtu_bytes == 2048);
  CHECK(r.link_type == "IB");
  CHECK(r.tx_depth == 128);
  CHECK(r.cq_moderation == 100);
  CHECK(r.max_inline_bytes == 0);
  CHECK(r.bw_unit == "MB/sec");
  CHECK(r.bw_peak_measured);
  CHECK_FALSE(r.bidirectional);
  CHECK_FALSE(r.run_infinitely);
  CHECK(r.warnings.empty());
  REQUIRE(r.rows.size() == 23);
  const PerftestRow& first = r.rows.front();
  CHECK(first.line == 20);
  CHECK(first.size_bytes == 2);
  CHECK(first.iterations == 20000);
  // 9.88 MB/sec * 8 * 1048576 / 1e9 = 0.08287944704 Gb/s
  CHECK(*first.bw_peak_gbps == doctest::Approx(0.08287944704).epsilon(1e-12));
  CHECK(*first.bw_avg_gbps == doctest::Approx(0.08204058624).epsilon(1e-12));
  CHECK(first.msg_rate_mpps == 5.128076);
  CHECK_FALSE(first.t_min_us.has_value());
  const PerftestRow& last = r.rows.back();
  CHECK(last.size_bytes == 8388608);
  // 3665.25 MB/sec = 30.746345472 Gb/s: a 4X QDR link (32 Gb/s data rate) nearly full.
  CHECK(*last.bw_avg_gbps == doctest::Approx(30.746345472).epsilon(1e-12));
  CHECK(last.msg_rate_mpps == 0.000458);
}

TEST_CASE("perftest cx6dx RoCE ib_write_bw --report_gbits: Gb/sec kept as printed") {
  const auto runs = load("cx6dx-roce-k8s-pod-ib_write_bw-a-nvidia-cns.txt");
  REQUIRE(runs.size() == 1);
  const PerftestRun& r = runs[0];
  CHECK(r.tool == PerftestTool::ib_write_bw);
  CHECK(r.command == "ib_write_bw -d mlx5_0 -a -F --report_gbits -q 1 192.168.111.2");
  CHECK(r.device == "mlx5_0");
  CHECK(r.num_qps == 1);
  CHECK(r.mtu_bytes == 1024);
  CHECK(r.link_type == "Ethernet");
  CHECK(r.gid_index == 4);
  CHECK(r.rdma_cm_qps == false); // printed "rdma_cm QPs\t : OFF" (tab before the colon)
  CHECK(r.bw_unit == "Gb/sec");
  CHECK(r.warnings.empty());
  REQUIRE(r.rows.size() == 23);
  // Below 0.1 Gb/s perftest prints six decimals (its "inc_accuracy" format).
  CHECK(r.rows.front().bw_peak_gbps == 0.080755);
  CHECK(r.rows.front().bw_avg_gbps == 0.073090);
  CHECK(r.rows.front().msg_rate_mpps == 4.568094);
  CHECK(r.rows[1].bw_avg_gbps == 0.15);
  CHECK(r.rows.back().size_bytes == 8388608);
  CHECK(r.rows.back().bw_peak_gbps == 52.52);
  CHECK(r.rows.back().bw_avg_gbps == 52.52);
  CHECK(r.rows.back().msg_rate_mpps == 0.000783);
}

TEST_CASE("perftest DGX Spark --run_infinitely: two ports, repeated rows of one size") {
  const auto runs = load("dgx-spark-cx7-roce-ib_write_bw-64k-2ports-run_infinitely.txt");
  REQUIRE(runs.size() == 2);
  const std::vector<std::string> devices = {"rocep1s0f0", "roceP2p1s0f0"};
  const std::vector<std::size_t> rows = {5, 6};
  for (std::size_t i = 0; i < 2; ++i) {
    const PerftestRun& r = runs[i];
    CHECK(r.tool == PerftestTool::ib_write_bw);
    CHECK(r.device == devices[i]);
    CHECK(r.num_qps == 1);
    CHECK(r.mtu_bytes == 1024);
    CHECK(r.link_type == "Ethernet");
    CHECK(r.gid_index == 3);
    CHECK(r.cq_moderation == 1);
    CHECK(r.bw_unit == "Gb/sec");
    CHECK(r.run_infinitely);
    CHECK_FALSE(r.bw_peak_measured); // "WARNING: BW peak won't be measured in this run."
    CHECK(r.warnings.empty());       // no closing rule, but --run_infinitely only ends that way
    REQUIRE(r.rows.size() == rows[i]);
    for (const PerftestRow& row : r.rows) {
      CHECK(row.size_bytes == 65536);
      CHECK(row.bw_peak_gbps == 0.0);
    }
  }
  CHECK(runs[0].first_line == 6);
  CHECK(runs[0].rows.front().iterations == 882805);
  CHECK(runs[0].rows.front().bw_avg_gbps == 92.57);
  CHECK(runs[0].rows[3].bw_avg_gbps == 92.56);
  CHECK(runs[1].first_line == 39);
  CHECK(runs[1].rows.front().bw_avg_gbps == 97.28);
  CHECK(runs[1].rows[4].bw_avg_gbps == 97.29);
  CHECK(runs[1].rows.back().iterations == 927807);
  CHECK(runs[1].rows.back().msg_rate_mpps == 0.185554);
}

TEST_CASE("perftest ucx issue ib_read_bw PARTIAL: truncated table gives a warning naming the line") {
  const auto runs = load("github-issue-ucx-8852-ib_read_bw-a-mlx5-ib-PARTIAL.txt");
  REQUIRE(runs.size() == 1);
  const PerftestRun& r = runs[0];
  CHECK(r.tool == PerftestTool::ib_read_bw);
  CHECK(r.command == "ib_read_bw  cn2  -a -F -d mlx5_1");
  CHECK(r.device == "mlx5_1");
  CHECK(r.mtu_bytes == 4096);
  CHECK(r.link_type == "IB");
  CHECK(r.outstanding_reads == 16);
  CHECK_FALSE(r.max_inline_bytes.has_value()); // read tests print "Outstand reads" instead
  CHECK(r.bw_unit == "MB/sec");
  CHECK(r.table_line == 19); // header says "iterations" without '#'
  REQUIRE(r.rows.size() == 7);
  CHECK(r.rows.front().size_bytes == 2);
  CHECK(r.rows.front().iterations == 1000);
  CHECK(*r.rows.front().bw_peak_gbps == doctest::Approx(4.86 * 8 * 1048576 / 1e9).epsilon(1e-12));
  CHECK(r.rows.back().size_bytes == 128);
  CHECK(*r.rows.back().bw_avg_gbps == doctest::Approx(2.6008879104).epsilon(1e-12)); // 310.05 MB/sec
  REQUIRE(r.warnings.size() == 1);
  CHECK(starts_with(r.warnings[0], fixture("github-issue-ucx-8852-ib_read_bw-a-mlx5-ib-PARTIAL.txt") +
                                       ":27: table truncated"));
}

TEST_CASE("perftest MOC CX7 RoCE q1: rdma_cm, TOS, GID index, tabs in rows") {
  const auto runs = load("moc-cx7-roce-h100node-baremetal-ib_write_bw-a-q1-hostmem.txt");
  REQUIRE(runs.size() == 1);
  const PerftestRun& r = runs[0];
  CHECK(r.tool == PerftestTool::ib_write_bw);
  CHECK(r.command.empty());
  CHECK(r.first_line == 2);
  CHECK(r.device == "mlx5_2");
  CHECK(r.num_qps == 1);
  CHECK(r.mtu_bytes == 4096);
  CHECK(r.link_type == "Ethernet");
  CHECK(r.gid_index == 3);
  CHECK(r.rdma_cm_qps == true);
  CHECK(r.data_exchange == "rdma_cm"); // "Data ex. method : rdma_cm \tTOS    : 41"
  CHECK(r.tos == 41);
  CHECK(r.dual_port == false);
  CHECK(r.use_srq == false);
  CHECK_FALSE(r.odp.has_value()); // not printed by this perftest version
  // Every "Key : Value" pair is kept in order, also those without a typed field (two per line here).
  REQUIRE(r.header_fields.size() == 20);
  CHECK(r.header_fields[7] == std::pair<std::string, std::string>("Lock-free", "OFF"));
  CHECK(r.header_fields[12] == std::pair<std::string, std::string>("CQE Poll Batch", "16"));
  CHECK(r.header_fields[15] == std::pair<std::string, std::string>("GID index", "3"));
  CHECK(r.header_fields[19] == std::pair<std::string, std::string>("TOS", "41"));
  CHECK(r.bw_unit == "Gb/sec");
  CHECK(r.warnings.empty());
  REQUIRE(r.rows.size() == 23);
  CHECK(r.rows.front().iterations == 5000);
  CHECK(r.rows.front().bw_peak_gbps == 0.057234);
  CHECK(r.rows.front().bw_avg_gbps == 0.056891);
  CHECK(r.rows.back().size_bytes == 8388608);
  CHECK(r.rows.back().bw_peak_gbps == 226.25);
  CHECK(r.rows.back().bw_avg_gbps == 226.24);
}

TEST_CASE("perftest MOC CX7 RoCE q16: 16 QPs, 32 address lines before the table") {
  const auto runs = load("moc-cx7-roce-h100node-baremetal-ib_write_bw-a-q16-hostmem.txt");
  REQUIRE(runs.size() == 1);
  const PerftestRun& r = runs[0];
  CHECK(r.num_qps == 16);
  CHECK(r.device == "mlx5_2");
  CHECK(r.mtu_bytes == 4096);
  CHECK(r.link_type == "Ethernet");
  CHECK(r.table_line == 83);
  CHECK(r.warnings.empty());
  REQUIRE(r.rows.size() == 23);
  CHECK(r.rows.front().iterations == 80000);
  CHECK(r.rows.front().bw_avg_gbps == 0.056186);
  CHECK(r.rows[12].size_bytes == 8192);
  CHECK(r.rows[12].bw_avg_gbps == 226.56);
  CHECK(r.rows.back().bw_avg_gbps == 230.91);
  CHECK(r.rows.back().msg_rate_mpps == 0.003441);
}

TEST_CASE("perftest Azure HBv3: four sections (server/client x lat/bw) in markdown, each cut at 16K") {
  const std::string name = "azure-hbv3-cx6vf-hdr200-ib_send_lat-ib_send_bw-a-truncated16K.txt";
  const auto runs = load(name);
  REQUIRE(runs.size() == 4);
  const std::vector<PerftestTool> tools = {PerftestTool::ib_send_lat, PerftestTool::ib_send_lat,
                                           PerftestTool::ib_send_bw, PerftestTool::ib_send_bw};
  const std::vector<PerftestRole> roles = {PerftestRole::server, PerftestRole::client, PerftestRole::server,
                                           PerftestRole::client};
  const std::vector<std::size_t> first = {16, 55, 100, 141};
  const std::vector<std::size_t> cut = {47, 86, 132, 173};
  for (std::size_t i = 0; i < 4; ++i) {
    const PerftestRun& r = runs[i];
    CAPTURE(i);
    CHECK(r.tool == tools[i]);
    CHECK(r.role == roles[i]);
    CHECK(r.first_line == first[i]);
    CHECK(r.device == "mlx5_ib0");
    CHECK(r.mtu_bytes == 4096);
    CHECK(r.link_type == "IB");
    CHECK(r.num_qps == 1);
    REQUIRE(r.rows.size() == 14);
    CHECK(r.rows.front().size_bytes == 2);
    CHECK(r.rows.back().size_bytes == 16384);
    CHECK(r.rows.front().iterations == 100000);
    REQUIRE(r.warnings.size() == 1);
    CHECK(starts_with(r.warnings[0], fixture(name) + ":" + std::to_string(cut[i]) + ": table truncated"));
  }
  CHECK(runs[0].command == "ib_send_lat --all --CPU-freq --iters=100000");
  CHECK(runs[0].rx_depth == 512);
  CHECK(runs[1].tx_depth == 1);
  CHECK(runs[0].rows.front().t_min_us == 1.55);
  CHECK(runs[0].rows.front().p999_us == 3.49);
  CHECK(runs[1].rows.front().p999_us == 3.65);
  CHECK(runs[1].rows.back().t_typical_us == 3.76);
  CHECK(runs[1].rows.back().p99_us == 3.92);

  // ib_send_bw: "BW peak won't be measured", MiB/sec (= perftest's MB/sec), 23547.97 MiB/s = 197.53 Gb/s on
  // HDR.
  for (std::size_t i = 2; i < 4; ++i) {
    CHECK(runs[i].bw_unit == "MiB/sec");
    CHECK_FALSE(runs[i].bw_peak_measured);
    CHECK(runs[i].cq_moderation == 100);
    CHECK(runs[i].rows.front().bw_peak_gbps == 0.0);
  }
  CHECK(runs[3].command == "ib_send_bw --all --CPU-freq   --iters=100000 10.31.0.7");
  CHECK(runs[3].tx_depth == 128);
  CHECK(*runs[2].rows.front().bw_avg_gbps == doctest::Approx(9.29 * 8 * 1048576 / 1e9).epsilon(1e-12));
  CHECK(*runs[3].rows.back().bw_avg_gbps == doctest::Approx(197.53468952576).epsilon(1e-12));
  CHECK(runs[3].rows.back().msg_rate_mpps == 1.507070);
}

TEST_CASE("perftest_mbps_to_gbps: MB/sec is 2^20 bytes per second") {
  CHECK(perftest_mbps_to_gbps(1000.0) == doctest::Approx(8.388608).epsilon(1e-15));
  const auto mb = parse_text(
      bw_text("MB/sec", " 65536      1000             1000.00            1000.00   \t\t 0.016000\n" + kRule));
  const auto gb = parse_text(
      bw_text("Gb/sec", " 65536      1000             8.39               8.39   \t\t 0.016000\n" + kRule));
  REQUIRE(mb.size() == 1);
  REQUIRE(gb.size() == 1);
  CHECK(*mb[0].rows[0].bw_avg_gbps == doctest::Approx(8.388608).epsilon(1e-12));
  CHECK(gb[0].rows[0].bw_avg_gbps == 8.39);
  CHECK(mb[0].num_qps == 2);
}

// ---------------------------------------------------------------------------------------------------------
// Shapes of real terminal output
// ---------------------------------------------------------------------------------------------------------

TEST_CASE("perftest CRLF line ends parse like LF") {
  std::string text = kLatHead + kLatRow2 + kLatRow4 + kRule;
  std::string crlf;
  for (char c : text) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  const auto runs = parse_text(crlf);
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].device == "mlx5_0");
  CHECK(runs[0].link_type == "IB");
  CHECK(runs[0].command == "ib_write_lat -a 10.0.0.1");
  REQUIRE(runs[0].rows.size() == 2);
  CHECK(runs[0].rows[1].p999_us == 1.91);
  CHECK(runs[0].warnings.empty());
}

TEST_CASE("perftest bidirectional: title and -b flag") {
  const auto runs = parse_text(
      bw_text("Gb/sec", " 65536      1000             180.00             179.50   \t\t 0.342000\n" + kRule,
              "RDMA_Write Bidirectional BW Test", "$ ib_write_bw -b -q 2 10.0.0.1"));
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].bidirectional);
  CHECK(runs[0].tool == PerftestTool::ib_write_bw);
  CHECK(runs[0].rows[0].bw_avg_gbps == 179.5);
  // -b on the command line alone also marks it
  const auto b = parse_text(
      bw_text("Gb/sec", " 65536 1000 1.0 1.0 0.1\n" + kRule, "Send BW Test", "$ ib_send_bw -b host"));
  CHECK(b[0].bidirectional);
  CHECK(b[0].tool == PerftestTool::ib_send_bw);
}

TEST_CASE("perftest older latency header with fewer columns is read by its header") {
  const std::string text = "                    RDMA_Read Latency Test\n"
                           " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]\n"
                           " 2       1000          2.43           9.80         2.50\n"
                           " 4       1000          2.44           9.10         2.51\n" +
                           kRule;
  const auto runs = parse_text(text);
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].tool == PerftestTool::ib_read_lat);
  REQUIRE(runs[0].rows.size() == 2);
  CHECK(runs[0].rows[0].t_min_us == 2.43);
  CHECK(runs[0].rows[0].t_typical_us == 2.50);
  CHECK_FALSE(runs[0].rows[0].t_avg_us.has_value());
  CHECK_FALSE(runs[0].rows[0].p99_us.has_value());
  CHECK(runs[0].warnings.empty());
}

TEST_CASE("perftest other column sets perftest prints: duration latency, per-port, QoS, CPU util") {
  // -D duration latency (RESULT_FMT_LAT_DUR)
  const auto dur = parse_text("                    Send Latency Test\n"
                              " #bytes        #iterations       t_avg[usec]    tps average\n"
                              " 2             1234567           1.62           617000.12\n" +
                              kRule);
  REQUIRE(dur[0].rows.size() == 1);
  CHECK(dur[0].rows[0].iterations == 1234567);
  CHECK(dur[0].rows[0].t_avg_us == 1.62);
  CHECK(dur[0].rows[0].tps_avg == 617000.12);
  CHECK_FALSE(dur[0].rows[0].t_min_us.has_value());
  // --report-per-port (RESULT_FMT_PER_PORT), in Gb/sec
  const auto pp =
      parse_text("                    RDMA_Write BW Test\n"
                 " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]   "
                 "BW Port1[Gb/sec]   MsgRate Port1[Mpps]   BW Port2[Gb/sec]   MsgRate Port2[Mpps]\n"
                 " 65536      5000           190.00             189.00             0.360000        94.50  "
                 "            0.180000              94.50              0.180000\n" +
                 kRule);
  REQUIRE(pp[0].rows.size() == 1);
  CHECK(pp[0].rows[0].bw_avg_gbps == 189.0);
  CHECK(pp[0].rows[0].bw_port1_gbps == 94.5);
  CHECK(pp[0].rows[0].msg_rate_port2_mpps == 0.18);
  // QoS table with an "#sl" column, MB/sec, and a CPU utilisation column
  const auto qos =
      parse_text("                    Send BW Test\n"
                 " #bytes    #sl      #iterations    BW peak[MB/sec]    BW average[MB/sec]   "
                 "MsgRate[Mpps]    CPU_Util[%]\n"
                 " 65536    3           1000           1000.00            1000.00                  "
                 "0.016000\t    12.50\n" +
                 kRule);
  REQUIRE(qos[0].rows.size() == 1);
  CHECK(qos[0].rows[0].sl == 3);
  CHECK(qos[0].rows[0].iterations == 1000);
  CHECK(*qos[0].rows[0].bw_avg_gbps == doctest::Approx(8.388608).epsilon(1e-12));
  CHECK(qos[0].rows[0].cpu_util_pct == 12.5);
}

TEST_CASE("perftest skips known messages between rows and names unknown ones in a warning") {
  const std::string text =
      kLatHead +
      "Conflicting CPU frequency values detected: 1846.550000 != 2596.396000. CPU Frequency is not max.\n" +
      kLatRow2 + "some stray text\n" + kLatRow4 + kRule;
  const auto runs = parse_text(text);
  REQUIRE(runs[0].rows.size() == 2);
  REQUIRE(runs[0].warnings.size() == 1);
  CHECK(runs[0].warnings[0] == "mem.txt:12: ignored text inside the table: 'some stray text'");
}

TEST_CASE("perftest table without the closing rule at end of file: 'may be truncated' warning") {
  const auto runs = parse_text(kLatHead + kLatRow2 + kLatRow4);
  REQUIRE(runs[0].rows.size() == 2);
  REQUIRE(runs[0].warnings.size() == 1);
  CHECK(starts_with(runs[0].warnings[0], "mem.txt:11: table may be truncated"));
}

TEST_CASE("perftest table without a title takes the tool from the command line") {
  const std::string text =
      "$ ib_write_bw 192.168.100.1\n"
      " #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]\n"
      " 65536      5000             3293.63            3293.56             0.052697\n" +
      kRule;
  const auto runs = parse_text(text);
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].tool == PerftestTool::ib_write_bw);
  CHECK(runs[0].title.empty());
  CHECK(runs[0].first_line == 2);
  CHECK(*runs[0].rows[0].bw_avg_gbps == doctest::Approx(3293.56 * 8 * 1048576 / 1e9).epsilon(1e-12));
}

// ---------------------------------------------------------------------------------------------------------
// Damaged input: error vs warning
// ---------------------------------------------------------------------------------------------------------

TEST_CASE("perftest letter in a number field is an error naming the line") {
  const std::string bad = " 4       1000          1.01           2.0l         1.11               1.21"
                          "          0.11            1.51                    1.91\n"; // "2.0l": letter l
  CHECK(error_of(kLatHead + kLatRow2 + bad + kLatRow8 + kRule) ==
        "mem.txt:11: column 't_max' is not a number: '2.0l'");
  // Also as the last row: a cut never produces letters, so it is still an error, not truncation.
  CHECK(starts_with(error_of(kLatHead + kLatRow2 + bad), "mem.txt:11: column 't_max'"));
  // A letter in the size column.
  CHECK(starts_with(
      error_of(kLatHead + kLatRow2 + " 4O      1000   1.0  2.0  1.1  1.2  0.1  1.5  1.9\n" + kRule),
      "mem.txt:11: column '#bytes' is not a whole number: '4O'"));
}

TEST_CASE("perftest row with fewer fields: truncation at the end, error when more rows follow") {
  const std::string cut = " 4       1000          1.01           2.01\n";
  // Last row of the file cut short: warning, row dropped.
  const auto runs = parse_text(kLatHead + kLatRow2 + cut);
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].rows.size() == 1);
  REQUIRE(runs[0].warnings.size() == 1);
  CHECK(runs[0].warnings[0] == "mem.txt:11: table truncated: the last row has 4 of 9 fields (row ignored)");
  // The same short row with a valid row after it: garbage, not a cut.
  CHECK(error_of(kLatHead + kLatRow2 + cut + kLatRow8 + kRule) ==
        "mem.txt:11: table row has 4 fields, the header at line 9 has 9");
  // Too many fields is always an error.
  CHECK(starts_with(error_of(kLatHead + kLatRow2 + " 4 1000 1 2 1 1 0.1 1.5 1.9 7.7\n" + kRule),
                    "mem.txt:11: table row has 10 fields"));
}

TEST_CASE("perftest input without a table is an error naming the file") {
  CHECK(starts_with(error_of("", "empty.txt"), "empty.txt: no perftest result table found"));
  CHECK(starts_with(
      error_of("Once provisioned, you can for instance run a Send Latency Test\n\nNothing else here.\n",
               "prose.md"),
      "prose.md: no perftest result table found"));
  // A header block whose table never came is not a result either.
  CHECK(starts_with(error_of(kLatHead.substr(0, kLatHead.find(" #bytes")), "hdr.txt"),
                    "hdr.txt: no perftest result table found"));
}

TEST_CASE("perftest missing file is an error naming the path") {
  const std::string path = std::string(IBNETSIM_TEST_DATA) + "/perftest/no-such-file.txt";
  try {
    parse_perftest_file(path);
    FAIL("expected InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find(path) != std::string::npos);
  }
}

TEST_CASE("perftest unsupported or unreadable headers are errors naming the line") {
  // Latency in CPU cycles (-C) cannot be converted.
  CHECK(starts_with(error_of("                    Send Latency Test\n"
                             " #bytes #iterations    t_min[cycles]    t_max[cycles]  t_typical[cycles]\n"
                             " 2       1000          2000           9000         2100\n"),
                    "mem.txt:2: latency table in CPU cycles"));
  // Unknown bandwidth unit.
  CHECK(starts_with(error_of(bw_text("GB/sec", " 65536 1000 1.0 1.0 0.1\n")),
                    "mem.txt:7: unknown bandwidth unit"));
  // Atomic tests are out of scope.
  CHECK(starts_with(error_of("                    Atomic FETCH_AND_ADD BW Test\n"),
                    "mem.txt:1: atomic perftest tests"));
  // A table with no title and no command: cannot tell the tool.
  CHECK(starts_with(
      error_of(" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
               " 65536      5000             90.0            90.0             0.17\n"),
      "mem.txt:1: perftest table without a test title"));
  // A bandwidth table under a latency title.
  CHECK(starts_with(
      error_of(bw_text("Gb/sec", " 65536 1000 1.0 1.0 0.1\n", "Send Latency Test", "$ ib_send_lat h")),
      "mem.txt:7: a bandwidth table under the ib_send_lat test header"));
}

TEST_CASE(
    "perftest report pasted as comments ('# ' before every line, rows included) reads like the plain one") {
  // Regression: such a report was "no perftest result table found".
  for (const char* name : {"moc-cx7-roce-h100node-baremetal-ib_write_bw-a-q1-hostmem.txt",
                           "cx3-mt4099-qdr40g-ib-ib_write_lat-a.txt"}) {
    std::ifstream in(fixture(name), std::ios::binary);
    std::string line, commented;
    while (std::getline(in, line)) commented += "# " + line + "\n";
    const auto plain = load(name);
    const auto hashed = parse_text(commented);
    REQUIRE(plain.size() == hashed.size());
    for (std::size_t i = 0; i < plain.size(); ++i) {
      CHECK(hashed[i].tool == plain[i].tool);
      REQUIRE(hashed[i].rows.size() == plain[i].rows.size());
      REQUIRE(!plain[i].rows.empty());
      for (std::size_t k = 0; k < plain[i].rows.size(); ++k) {
        CHECK(hashed[i].rows[k].size_bytes == plain[i].rows[k].size_bytes);
        CHECK(hashed[i].rows[k].bw_avg_gbps == plain[i].rows[k].bw_avg_gbps);
        CHECK(hashed[i].rows[k].t_typical_us == plain[i].rows[k].t_typical_us);
        CHECK(hashed[i].rows[k].line == plain[i].rows[k].line);
      }
    }
  }
  // Only the rows behind '#': the header plain, as a notebook cell might print it.
  const auto runs =
      parse_text("                    RDMA_Write BW Test\n"
                 " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
                 "# 65536      5000             92.57              92.57              0.176566\n"
                 "# 131072     5000             93.00              93.00              0.088000\n");
  REQUIRE(runs.size() == 1);
  REQUIRE(runs[0].rows.size() == 2);
  CHECK(*runs[0].rows[1].bw_avg_gbps == doctest::Approx(93.0));
}
