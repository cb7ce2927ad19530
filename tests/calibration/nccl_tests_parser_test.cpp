// nccl-tests log parser: the three real fixtures in tests/data/nccl-tests (values read by hand from the
// files), collective inference when the log does not name it, and the error-vs-warning rules.
#include "calibration/nccl_tests_parser.hpp"
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
  return std::string(IBNETSIM_TEST_DATA) + "/nccl-tests/" + name;
}

std::vector<NcclTestsRun> load(const std::string& name) {
  return parse_nccl_tests_file(fixture(name));
}

std::vector<NcclTestsRun> parse_text(const std::string& text, const std::string& source = "mem.log") {
  std::istringstream in(text);
  return parse_nccl_tests(in, source);
}

std::string error_of(const std::string& text, const std::string& source = "mem.log") {
  try {
    parse_text(text, source);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// `text` without the lines containing `needle`.
std::string without_lines(const std::string& text, const std::string& needle) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line))
    if (line.find(needle) == std::string::npos) out += line + "\n";
  return out;
}

bool starts_with(const std::string& s, const std::string& p) {
  return s.rfind(p, 0) == 0;
}

bool any_warning(const NcclTestsRun& r, const std::string& part) {
  for (const std::string& w : r.warnings)
    if (w.find(part) != std::string::npos) return true;
  return false;
}

const std::string kXxrjun = "h100-1node-8gpu-nvlink-xxrjun-cluster01-single.log";
const std::string kMoc = "moc-h100-cx7-roce400g-2node-all_reduce_roce_1gpu-nogdr-cci-moc.log";
const std::string kTogether = "together-h100-1node-8gpu-nvlink-all_reduce_ring.out";

// A 2-rank all_reduce test; the table header is line 6, rows from line 8.
const std::string kHead =
    "# Collective test starting: all_reduce_perf\n" // 1
    "# nThread 1 nGpus 1 minBytes 8 maxBytes 32 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 "
    "validation: 1 graph: 0\n"                                                            // 2
    "#  Rank  0 Group  0 Pid 11 on node-a device  0 [0000:06:00] NVIDIA H100 80GB HBM3\n" // 3
    "#  Rank  1 Group  0 Pid 22 on node-b device  0 [0000:06:00] NVIDIA H100 80GB HBM3\n" // 4
    "#                                                              out-of-place                       "
    "in-place\n" // 5
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   "
    "busbw #wrong\n" // 6
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  "
    "(GB/s)\n"; // 7
const std::string kRow8 = "           8             2     float     sum      -1    20.00    0.00    0.00     "
                          " 0    20.10    0.00    0.00      0\n";
const std::string kRow16 = "          16             4     float     sum      -1    20.50    0.00    0.00    "
                           "  0    20.60    0.00    0.00      0\n";
const std::string kRow32 = "          32             8     float     sum      -1    21.00    0.00    0.00    "
                           "  0    21.10    0.00    0.00      0\n";
const std::string kTail = "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0.001 \n";

} // namespace

// ---------------------------------------------------------------------------------------------------------
// Real fixtures
// ---------------------------------------------------------------------------------------------------------

TEST_CASE("nccl-tests xxrjun: five collectives in one log, one run each") {
  const auto runs = load(kXxrjun);
  REQUIRE(runs.size() == 5);
  const std::vector<NcclCollective> colls = {NcclCollective::all_reduce, NcclCollective::all_gather,
                                             NcclCollective::reduce_scatter, NcclCollective::alltoall,
                                             NcclCollective::sendrecv};
  const std::vector<double> avg = {437.957, 328.618, 330.721, 313.838, 279.874};
  const std::vector<std::size_t> first = {1, 36, 71, 106, 141};
  const std::vector<std::size_t> table = {18, 53, 88, 123, 158};
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const NcclTestsRun& r = runs[i];
    CAPTURE(i);
    CHECK(r.collective == colls[i]);
    CHECK(r.collective_from == "log");
    CHECK(r.nranks == 8);
    CHECK(r.nnodes == 1);
    CHECK(r.gpus_per_node == 8);
    CHECK(r.ranks.size() == 8);
    CHECK(r.nics.empty());
    CHECK(r.nccl_tests_version == "2.17.8");
    CHECK(r.nccl_version == "2.29.2"); // decoded from nccl-library=22902
    CHECK(r.avg_busbw_gbs == avg[i]);
    CHECK(r.out_of_bounds == 0u);
    CHECK(r.first_line == first[i]);
    CHECK(r.table_line == table[i]);
    CHECK(r.warnings.empty());
    REQUIRE(r.rows.size() == 10);
    CHECK(r.rows.front().size_bytes == 33554432);
    CHECK(r.rows.back().size_bytes == 17179869184ULL);
    CHECK(r.config.nthread == 1);
    CHECK(r.config.ngpus == 1);
    CHECK(r.config.min_bytes == 33554432u);
    CHECK(r.config.max_bytes == 68719476736ULL);
    CHECK(r.config.step_factor == 2.0);
    CHECK_FALSE(r.config.step_bytes.has_value());
    CHECK(r.config.warmup_iters == 5);
    CHECK(r.config.iters == 20);
    CHECK(r.config.agg_iters == 1);
    CHECK(r.config.validation == 1);
    CHECK(r.config.graph == 0);
  }
  const NcclTestsRow& ar = runs[0].rows.front();
  CHECK(ar.line == 20);
  CHECK(ar.count == 4194304);
  CHECK(ar.type == "double");
  CHECK(ar.redop == "sum");
  CHECK(ar.root == -1);
  CHECK(ar.oop.time_us == 182.87);
  CHECK(ar.oop.algbw_gbs == 183.49);
  CHECK(ar.oop.busbw_gbs == 321.10);
  CHECK(ar.oop.wrong == 0.0);
  REQUIRE(ar.ip.has_value());
  CHECK(ar.ip->time_us == 182.88);
  CHECK(ar.ip->algbw_gbs == 183.48);
  CHECK(ar.ip->busbw_gbs == 321.08);
  CHECK(runs[0].rows.back().oop.time_us == 62340.7);
  CHECK(runs[0].rows.back().oop.busbw_gbs == 482.27);

  // all_gather: count per rank (33554432 / 8 B / 8 ranks), redop none.
  CHECK(runs[1].rows.front().count == 524288);
  CHECK(runs[1].rows.front().redop == "none");
  CHECK(runs[1].rows.back().ip->busbw_gbs == 366.03);

  // alltoall and sendrecv print "N/A" for in-place #wrong.
  REQUIRE(runs[3].rows.front().ip.has_value());
  CHECK(runs[3].rows.front().oop.wrong == 0.0);
  CHECK_FALSE(runs[3].rows.front().ip->wrong.has_value());
  CHECK(runs[3].rows.front().ip->busbw_gbs == 237.47);
  CHECK(runs[4].rows.front().oop.algbw_gbs == 79.48);
  CHECK(runs[4].rows.front().oop.busbw_gbs == 79.48); // sendrecv: busbw == algbw
  CHECK(runs[4].rows.back().oop.busbw_gbs == 367.25);
  CHECK_FALSE(runs[4].rows.back().ip->wrong.has_value());

  const NcclTestsRank& r7 = runs[0].ranks[7];
  CHECK(r7.rank == 7);
  CHECK(r7.group == 0);
  CHECK(r7.pid == 4180135);
  CHECK(r7.host == "cnode3-002");
  CHECK(r7.device == 7);
  CHECK(r7.bus_id == "0000:df:00");
  CHECK(r7.gpu == "NVIDIA H100 80GB HBM3");
}

TEST_CASE("nccl-tests together: single-process 8-GPU all_reduce 8 B .. 8 GiB") {
  const auto runs = load(kTogether);
  REQUIRE(runs.size() == 1);
  const NcclTestsRun& r = runs[0];
  CHECK(r.collective == NcclCollective::all_reduce);
  CHECK(r.collective_from == "log");
  CHECK(r.nranks == 8);
  CHECK(r.nnodes == 1);
  CHECK(r.gpus_per_node == 8);
  CHECK(r.config.ngpus == 8);
  CHECK(r.config.min_bytes == 8u);
  CHECK(r.config.max_bytes == 8589934592ULL);
  CHECK(r.nccl_tests_version == "2.17.9");
  CHECK(r.nccl_version == "2.26.2");
  CHECK(r.ranks[3].bus_id == "0000:3b:00");
  CHECK(r.ranks[3].host == "gpu-dp-2jvzl-pqq7p");
  CHECK(r.avg_busbw_gbs == 122.955);
  CHECK(r.warnings.empty());
  REQUIRE(r.rows.size() == 31);
  for (std::size_t i = 0; i < r.rows.size(); ++i) CHECK(r.rows[i].size_bytes == (std::uint64_t{8} << i));
  CHECK(r.rows.front().count == 2);
  CHECK(r.rows.front().type == "float");
  CHECK(r.rows.front().oop.time_us == 34.98);
  CHECK(r.rows.front().oop.algbw_gbs == 0.0);
  // 512 KiB: out-of-place and in-place differ a lot in the real data (13.26 vs 20.74 GB/s busbw).
  CHECK(r.rows[16].size_bytes == 524288);
  CHECK(r.rows[16].oop.busbw_gbs == 13.26);
  CHECK(r.rows[16].ip->busbw_gbs == 20.74);
  CHECK(r.rows.back().count == 2147483648ULL);
  CHECK(r.rows.back().oop.time_us == 40838.9);
  CHECK(r.rows.back().oop.algbw_gbs == 210.34);
  CHECK(r.rows.back().oop.busbw_gbs == 368.09);
  CHECK(r.rows.back().ip->busbw_gbs == 368.62);
}

TEST_CASE("nccl-tests MOC: 2 nodes over RoCE with NCCL INFO lines inside the table") {
  const auto runs = load(kMoc);
  REQUIRE(runs.size() == 1);
  const NcclTestsRun& r = runs[0];
  // Neither the log nor a command names it; the table fits all_reduce or sendrecv (2 ranks: busbw ==
  // algbw for both), and the file name says all_reduce.
  CHECK(r.collective == NcclCollective::all_reduce);
  CHECK(r.collective_from == "file name");
  CHECK(r.nranks == 2);
  CHECK(r.nnodes == 2);
  CHECK(r.gpus_per_node == 1);
  REQUIRE(r.ranks.size() == 2);
  CHECK(r.ranks[0].host == "MOC-R4PCC04U37");
  CHECK(r.ranks[1].host == "MOC-R4PCC04U35");
  CHECK(r.ranks[1].pid == 753223);
  REQUIRE(r.nics.size() == 1);
  CHECK(r.nics[0].host == "MOC-R4PCC04U37");
  CHECK(r.nics[0].name == "mlx5_5");
  CHECK(r.nics[0].port == 1);
  CHECK(r.nics[0].link_layer == "RoCE");
  CHECK(r.network == "IB");
  CHECK(r.nccl_version == "2.26.2");
  CHECK(r.nccl_tests_version.empty());
  CHECK(r.nchannels == 2);
  CHECK(r.algo == "RING");
  CHECK(r.proto.empty());
  CHECK(r.env.at("NCCL_IB_HCA") == "mlx5_5");
  CHECK(r.env.at("NCCL_IB_GID_INDEX") == "3");
  CHECK(r.env.at("NCCL_SOCKET_IFNAME") == "eno7np0");
  CHECK(r.gdr == false);
  CHECK(r.config.min_bytes == 1073741824u);
  CHECK(r.config.max_bytes == 27950841856ULL);
  CHECK(r.config.step_bytes == 2147483648ULL);
  CHECK_FALSE(r.config.step_factor.has_value());
  CHECK(r.table_line == 47);
  CHECK(r.avg_busbw_gbs == 15.0418);
  CHECK(r.warnings.empty());
  REQUIRE(r.rows.size() == 13);
  const NcclTestsRow& f = r.rows.front();
  CHECK(f.line == 56);
  CHECK(f.size_bytes == 1073741824);
  CHECK(f.count == 268435456);
  CHECK(f.type == "float");
  CHECK(f.redop == "sum");
  CHECK(f.oop.time_us == 71024);
  CHECK(f.oop.algbw_gbs == 15.12);
  CHECK(f.oop.busbw_gbs == 15.12);
  CHECK(f.ip->time_us == 70967);
  const NcclTestsRow& l = r.rows.back();
  CHECK(l.size_bytes == 26843545600ULL);
  CHECK(l.oop.time_us == 1793105);
  CHECK(l.oop.busbw_gbs == 14.97);
  CHECK(l.ip->busbw_gbs == 15.00);
}

TEST_CASE("nccl-tests MOC under a neutral name: ambiguous table gives a warning") {
  const auto runs = parse_text(slurp(fixture(kMoc)), "run.log");
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].collective == NcclCollective::all_reduce);
  CHECK(runs[0].collective_from == "table");
  REQUIRE(runs[0].warnings.size() == 1);
  CHECK(runs[0].warnings[0] == "run.log:47: the table fits all_reduce or sendrecv; assuming all_reduce");
}

// ---------------------------------------------------------------------------------------------------------
// Collective inference
// ---------------------------------------------------------------------------------------------------------

TEST_CASE("nccl-tests collective inferred from the table when the log does not name it") {
  const std::string text = without_lines(slurp(fixture(kXxrjun)), "Collective test");
  const auto runs = parse_text(text, "cluster.log");
  REQUIRE(runs.size() == 5);
  // all_reduce: count*8 == size and busbw/algbw = 1.75 = 2(n-1)/n for n = 8.
  CHECK(runs[0].collective == NcclCollective::all_reduce);
  CHECK(runs[0].collective_from == "table");
  CHECK(runs[0].warnings.empty());
  // all_gather and alltoall print the same table shape: a warning says so.
  CHECK(runs[1].collective == NcclCollective::all_gather);
  CHECK(any_warning(runs[1], "the table fits all_gather or alltoall"));
  CHECK(runs[2].collective == NcclCollective::reduce_scatter);
  CHECK(runs[2].warnings.empty());
  CHECK(any_warning(runs[3], "the table fits all_gather or alltoall"));
  // sendrecv: count*8 == size and busbw == algbw with 8 ranks.
  CHECK(runs[4].collective == NcclCollective::sendrecv);
  CHECK(runs[4].collective_from == "table");
}

TEST_CASE("nccl-tests collective from a command line, contradiction with the table is a warning") {
  const std::string base = without_lines(slurp(fixture(kXxrjun)), "Collective test");
  // Put a command line in front of the 4th test (its version line) naming alltoall_perf.
  const std::string marker = "# nccl-tests version";
  std::size_t pos = 0;
  for (int i = 0; i < 4; ++i) pos = base.find(marker, pos + (i ? 1 : 0));
  const std::string text =
      base.substr(0, pos) + "$ mpirun -np 8 ./build/alltoall_perf -b 32M -e 64G -f 2\n" + base.substr(pos);
  const auto runs = parse_text(text, "cluster.log");
  REQUIRE(runs.size() == 5);
  CHECK(runs[3].collective == NcclCollective::alltoall);
  CHECK(runs[3].collective_from == "command line");
  CHECK(runs[3].warnings.empty());
  CHECK(runs[2].collective == NcclCollective::reduce_scatter); // the command did not leak backwards

  // The log says all_reduce but the rows are a reduce_scatter table (size = 8 x count x 4 B).
  const std::string wrong = kHead.substr(0, kHead.find("#  Rank")) +
                            "#  Rank  0 Group  0 Pid 1 on a device  0 [0000:01:00] GPU\n"
                            "#  Rank  1 Group  0 Pid 2 on a device  1 [0000:02:00] GPU\n" +
                            kHead.substr(kHead.find("#      ")) +
                            "          64             8     float     sum      -1    20.00    0.00    0.00   "
                            "   0    20.10    0.00    0.00      0\n" +
                            kTail;
  const auto w = parse_text(wrong);
  REQUIRE(w.size() == 1);
  CHECK(w[0].collective == NcclCollective::all_reduce);
  CHECK(any_warning(w[0], "the log names all_reduce but the table looks like reduce_scatter"));
}

TEST_CASE("nccl-tests root column: broadcast and reduce") {
  const std::string head = "#       size         count      type   redop    root     time   algbw   busbw "
                           "#wrong     time   algbw   busbw #wrong\n";
  const auto b =
      parse_text(head + "  1024  256  float  none  0  10.0  0.10  0.10  0  10.0  0.10  0.10  0\n" + kTail);
  CHECK(b[0].collective == NcclCollective::broadcast);
  CHECK(b[0].rows[0].root == 0);
  const auto r =
      parse_text(head + "  1024  256  float  sum  0  10.0  0.10  0.10  0  10.0  0.10  0.10  0\n" + kTail);
  CHECK(r[0].collective == NcclCollective::reduce);
}

// ---------------------------------------------------------------------------------------------------------
// Layout variants
// ---------------------------------------------------------------------------------------------------------

TEST_CASE("nccl-tests older layout: no root column, 'error' instead of #wrong") {
  const std::string text =
      "#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  "
      "error\n"
      "#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"
      "           8             2   float     sum    39.25    0.00    0.00  1e-07    38.89    0.00    0.00  "
      "1e-07\n"
      "          16             4   float     sum    39.40    0.00    0.00  0e+00    39.10    0.00    0.00  "
      "0e+00\n" +
      kTail;
  const auto runs = parse_text(text, "all_reduce_old.log");
  REQUIRE(runs.size() == 1);
  REQUIRE(runs[0].rows.size() == 2);
  CHECK(runs[0].collective == NcclCollective::all_reduce);
  CHECK_FALSE(runs[0].rows[0].root.has_value());
  CHECK(runs[0].rows[0].oop.wrong == 1e-07);
  CHECK(runs[0].rows[0].oop.time_us == 39.25);
  REQUIRE(runs[0].rows[1].ip.has_value());
  CHECK(runs[0].rows[1].ip->time_us == 39.10);
  CHECK(runs[0].rows[1].ip->wrong == 0.0);
  CHECK(runs[0].warnings.empty());
}

TEST_CASE("nccl-tests out-of-place-only last row after rows with in-place results is a cut") {
  const std::string oop_only =
      "          32             8     float     sum      -1    21.00    0.00    0.00      0\n";
  const auto runs = parse_text(kHead + kRow8 + kRow16 + oop_only);
  REQUIRE(runs[0].rows.size() == 2);
  REQUIRE(runs[0].warnings.size() == 1);
  CHECK(runs[0].warnings[0] == "mem.log:10: table truncated: the last row has 9 of 13 fields (row ignored)");
}

TEST_CASE("nccl-tests table printing only out-of-place results") {
  const std::string text =
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw "
      "  busbw #wrong\n"
      "        1024            32     float    none      -1    10.00    0.10    0.09      0\n"
      "        2048            64     float    none      -1    11.00    0.19    0.17      0\n" +
      kTail;
  const auto runs = parse_text(text);
  REQUIRE(runs[0].rows.size() == 2);
  CHECK_FALSE(runs[0].rows[0].ip.has_value());
  CHECK(runs[0].rows[1].oop.busbw_gbs == 0.17);
  CHECK(runs[0].warnings.size() ==
        1); // only the "fits all_gather or alltoall" note (no rank lines: n unknown)
  CHECK(any_warning(runs[0], "fits all_gather or alltoall"));
}

TEST_CASE("nccl-tests CRLF log parses like LF") {
  std::string text = kHead + kRow8 + kRow16 + kTail;
  std::string crlf;
  for (char c : text) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  const auto runs = parse_text(crlf);
  REQUIRE(runs.size() == 1);
  REQUIRE(runs[0].rows.size() == 2);
  CHECK(runs[0].ranks[1].gpu == "NVIDIA H100 80GB HBM3");
  CHECK(runs[0].avg_busbw_gbs == 0.001);
  CHECK(runs[0].nnodes == 2);
}

// ---------------------------------------------------------------------------------------------------------
// Damaged input: error vs warning
// ---------------------------------------------------------------------------------------------------------

TEST_CASE("nccl-tests letter in a number field is an error naming the line") {
  const std::string bad = "          16             4     float     sum      -1    20.5O    0.00    0.00     "
                          " 0    20.60    0.00    0.00      0\n";
  CHECK(error_of(kHead + kRow8 + bad + kRow32 + kTail) ==
        "mem.log:9: column 'out-of-place time' is not a number: '20.5O'");
  CHECK(starts_with(error_of(kHead + kRow8 + bad), "mem.log:9: column 'out-of-place time'"));
  CHECK(starts_with(error_of(kHead + kRow8 +
                             "          16             4     float     sum      -1    20.50    0.00    0.00  "
                             "    x    20.60    0.00    0.00      0\n"),
                    "mem.log:9: column 'out-of-place #wrong' is not a number or N/A: 'x'"));
}

TEST_CASE("nccl-tests short row: truncation at the end, error when more rows follow") {
  const std::string cut = "          16             4     float     sum      -1    20.50    0.00\n";
  const auto runs = parse_text(kHead + kRow8 + cut);
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].rows.size() == 1);
  REQUIRE(runs[0].warnings.size() == 1);
  CHECK(runs[0].warnings[0] == "mem.log:9: table truncated: the last row has 7 of 13 fields (row ignored)");
  CHECK(error_of(kHead + kRow8 + cut + kRow32 + kTail) ==
        "mem.log:9: table row has 7 fields, the header at line 6 has 13");
  CHECK(starts_with(error_of(kHead + kRow8 + "  16 4 float sum -1 1 1 1 0 1 1 1 0 9\n"),
                    "mem.log:9: table row has 14 fields"));
}

TEST_CASE("nccl-tests table with no summary after it: 'may be truncated' warning") {
  const auto runs = parse_text(kHead + kRow8 + kRow16);
  REQUIRE(runs[0].warnings.size() == 1);
  CHECK(starts_with(runs[0].warnings[0], "mem.log:9: table may be truncated"));
  CHECK_FALSE(runs[0].avg_busbw_gbs.has_value());
  // With the summary: no warning; 2 ranks on two hosts.
  const auto ok = parse_text(kHead + kRow8 + kRow16 + kTail);
  CHECK(ok[0].warnings.empty());
  CHECK(ok[0].collective == NcclCollective::all_reduce);
  CHECK(ok[0].nranks == 2);
  CHECK(ok[0].nnodes == 2);
  CHECK(ok[0].gpus_per_node == 1);
}

TEST_CASE("nccl-tests non-zero #wrong is reported") {
  const std::string bad = "          16             4     float     sum      -1    20.50    0.00    0.00     "
                          " 3    20.60    0.00    0.00      0\n";
  const auto runs = parse_text(kHead + kRow8 + bad + kTail);
  CHECK(runs[0].rows[1].oop.wrong == 3.0);
  CHECK(any_warning(runs[0], "mem.log:9: 1 row(s) report wrong results"));
}

TEST_CASE("nccl-tests input without a table is an error naming the file") {
  CHECK(starts_with(error_of("", "empty.log"), "empty.log: no nccl-tests results table found"));
  CHECK(
      starts_with(error_of("Running the benchmark now.\nIt failed before printing anything.\n", "prose.log"),
                  "prose.log: no nccl-tests results table found"));
  CHECK(starts_with(error_of(kHead, "hdr.log"), "hdr.log: no nccl-tests results table found"));
  const std::string path = fixture("no-such.log");
  try {
    parse_nccl_tests_file(path);
    FAIL("expected InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find(path) != std::string::npos);
  }
}

TEST_CASE("nccl_version_from_code decodes both NCCL version code schemes") {
  CHECK(nccl_version_from_code(22602) == "2.26.2");
  CHECK(nccl_version_from_code(21803) == "2.18.3");
  CHECK(nccl_version_from_code(2708) == "2.7.8");
}

TEST_CASE("nccl-tests '_perf_mpi' binary names and sweeps starting at 0 B (Snellius all_gather log)") {
  // Regression: "# Collective test starting: all_gather_perf_mpi" was not read as all_gather_perf and
  // the first rows "0 0 float none -1 ..." hid the table's shape: "cannot tell which collective".
  const auto runs = load("h100-ndr200-ib-2node-8gpu-all_gather-snellius-odissei.log");
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].collective == NcclCollective::all_gather);
  CHECK(runs[0].collective_from == "log");
  CHECK(runs[0].nranks == 8);
  CHECK(runs[0].nnodes == 2);
  CHECK(runs[0].rows.front().size_bytes == 0);
  // Without the log lines and under a neutral name, the table still narrows it to all_gather/alltoall.
  const auto bare =
      parse_text(without_lines(slurp(fixture("h100-ndr200-ib-2node-8gpu-all_gather-snellius-odissei.log")),
                               "Collective test"),
                 "run.log");
  REQUIRE(bare.size() == 1);
  CHECK(bare[0].collective == NcclCollective::all_gather);
  CHECK(any_warning(bare[0], "the table fits all_gather or alltoall"));
  // A command line naming the MPI build's binary.
  const auto cmd = parse_text("$ mpirun -np 2 ./build/sendrecv_perf_mpi -b 8 -e 16\n"
                              "#       size         count      type   redop    root     time   algbw   busbw "
                              "#wrong     time   algbw   busbw #wrong\n"
                              "           8             2     float     sum      -1    10.00    0.00    0.00 "
                              "     0    10.00    0.00    0.00      0\n"
                              "          16             4     float     sum      -1    10.00    0.00    0.00 "
                              "     0    10.00    0.00    0.00      0\n"
                              "# Avg bus bandwidth    : 0\n",
                              "x.log");
  REQUIRE(cmd.size() == 1);
  CHECK(cmd[0].collective == NcclCollective::sendrecv);
  CHECK(cmd[0].collective_from == "command line");
}

TEST_CASE("nccl-tests parser: a row split by interleaved NCCL INFO output is ignored with a warning") {
  // Snellius all_reduce (tests/data/SOURCES.md): the 2 MiB row's size columns are on line 334, followed by
  // NCCL INFO lines; its result columns ("87.18 24.05 42.10 0 85.11 ...") are alone on line 396.
  const auto runs = ibn::calib::parse_nccl_tests_file(
      std::string(IBNETSIM_TEST_DATA) +
      "/nccl-tests/h100-ndr200-ib-2node-8gpu-all_reduce-snellius-odissei.log");
  REQUIRE(runs.size() == 1);
  const auto& r = runs[0];
  bool warned = false;
  for (const auto& w : r.warnings)
    warned = warned || (w.find(":396:") != std::string::npos && w.find("split") != std::string::npos);
  CHECK(warned);
  CHECK(r.rows.size() == 30); // 8 B .. 8 GiB is 31 sizes, minus the split one
  for (const auto& row : r.rows) CHECK(row.size_bytes != 2097152);
  CHECK(r.rows.back().size_bytes == 8589934592ull);
  CHECK(r.rows.back().oop.time_us == doctest::Approx(96276));
}

TEST_CASE("nccl-tests plain 'NCCL version X+cudaY' line (NCCL_DEBUG=VERSION) gives the NCCL version") {
  // Regression: only the NCCL INFO form ("host:pid:tid [0] NCCL INFO NCCL version ...") was read, so the
  // issue 309 log, run with NCCL_DEBUG=VERSION, had no version.
  const auto runs = load("h100-ndr400x8-ib-2node-4node-8node-all_reduce-nccl-tests-issue309.md");
  REQUIRE(runs.size() >= 2);
  CHECK(runs[0].nccl_version == "2.26.2"); // line 73, 2 nodes bare metal
  CHECK(runs[0].nnodes == 2);
  CHECK(runs[1].nccl_version == "2.26.2"); // line 184, 4 VMs
  CHECK(runs[1].nnodes == 4);
  // The second user's runs print no version: none is carried over from the first user's.
  for (std::size_t i = 2; i < runs.size(); ++i) CHECK(runs[i].nccl_version.empty());

  // Between the rank lines and the table (where nccl-tests prints it), and between rows.
  const std::string plain = kHead + "NCCL version 2.19.3+cuda12.2\n" + kRow8 + kRow16 + kTail;
  auto r = parse_text(plain);
  REQUIRE(r.size() == 1);
  CHECK(r[0].nccl_version == "2.19.3");
  CHECK(r[0].rows.size() == 2);
  CHECK(r[0].warnings.empty());
  r = parse_text(kHead + kRow8 + "NCCL version 2.8.4+cuda11.0\n" + kRow16 + kTail);
  REQUIRE(r.size() == 1);
  CHECK(r[0].nccl_version == "2.8.4");
  CHECK(r[0].rows.size() == 2);
  CHECK(r[0].warnings.empty());
  // After a test's summary it belongs to the next test.
  r = parse_text(kHead + kRow8 + kTail + "NCCL version 2.21.5+cuda12.4\n" + kHead + kRow8 + kTail);
  REQUIRE(r.size() == 2);
  CHECK(r[0].nccl_version.empty());
  CHECK(r[1].nccl_version == "2.21.5");
  // Not a version: ignored like other prose outside a table.
  r = parse_text(kHead + "NCCL version unknown\n" + kRow8 + kTail);
  REQUIRE(r.size() == 1);
  CHECK(r[0].nccl_version.empty());
  // The NCCL INFO form still reads.
  r = parse_text("node-a:11:11 [0] NCCL INFO NCCL version 2.22.3+cuda12.6\n" + kHead + kRow8 + kTail);
  REQUIRE(r.size() == 1);
  CHECK(r[0].nccl_version == "2.22.3");
}

TEST_CASE(
    "nccl-tests B200 GKE how-to page: the collective from the wrapper's '-t all_gather', cut tests kept") {
  // Regression: "cannot tell which collective was measured". The page runs
  // "run_nccl_tests.sh -t all_gather -b 1K -e 8G ..." three times; only the first output has its table, the
  // other two were cut by the author ("# ... (truncated NCCL output for brevity) ...").
  const std::string name =
      "b200-gke-a4-roce-cx7-400g-2node-16gpu-all_gather-1K-8G-doc-kubernetes-sigs-dranet.md";
  const auto runs = load(name);
  REQUIRE(runs.size() == 3);
  const auto& a = runs[0];
  CHECK(a.collective == NcclCollective::all_gather);
  CHECK(a.collective_from == "command line");
  CHECK(a.nranks == 16);
  CHECK(a.nnodes == 2);
  CHECK(a.gpus_per_node == 8);
  CHECK(a.nccl_version == "2.26.6"); // plain "NCCL version 2.26.6+cuda12.8", line 366
  CHECK(a.ranks.at(15).gpu == "NVIDIA B200");
  CHECK(a.config.min_bytes == 1024u);
  CHECK(a.config.max_bytes == 8589934592ull);
  CHECK(a.config.iters == 100);
  REQUIRE(a.rows.size() == 24); // 1 KiB .. 8 GiB
  CHECK(a.rows.front().size_bytes == 1024u);
  CHECK(a.rows.front().oop.time_us == doctest::Approx(280.4));
  CHECK(a.rows.back().size_bytes == 8589934592ull);
  CHECK(a.rows.back().oop.time_us == doctest::Approx(30970));
  CHECK(a.rows.back().oop.busbw_gbs == doctest::Approx(260.03));
  CHECK(a.rows.back().ip->busbw_gbs == doctest::Approx(259.25));
  REQUIRE(a.avg_busbw_gbs);
  CHECK(*a.avg_busbw_gbs == doctest::Approx(59.3638));
  CHECK(a.warnings.empty());
  for (std::size_t i = 1; i < 3; ++i) {
    const auto& cut = runs[i];
    CHECK(cut.rows.empty());
    CHECK(cut.collective == NcclCollective::all_gather);
    CHECK(cut.collective_from == "command line");
    CHECK(cut.nranks == 16);
    CHECK(cut.nnodes == 4); // 4 pods of 4 GPUs
    CHECK(cut.gpus_per_node == 4);
    CHECK(any_warning(cut, "no results table for this test"));
  }
  CHECK(runs[1].avg_busbw_gbs == doctest::Approx(22.2173));

  // Under a neutral name the command line still decides; without the command lines the table fits
  // all_gather and alltoall, and the choice is a warning, not silent.
  const std::string text = slurp(fixture(name));
  const auto neutral = parse_text(text, "page.md");
  CHECK(neutral[0].collective == NcclCollective::all_gather);
  CHECK(neutral[0].collective_from == "command line");
  const auto bare = parse_text(without_lines(text, "run_nccl_tests.sh"), "page.md");
  CHECK(bare[0].collective == NcclCollective::all_gather);
  CHECK(bare[0].collective_from == "table");
  CHECK(any_warning(bare[0], "the table fits all_gather or alltoall; assuming all_gather"));
  CHECK(bare[1].collective == NcclCollective::unknown);
}

TEST_CASE("nccl-tests command lines: a wrapper's test option names the collective, prose does not") {
  const std::string rows = kRow8 + kRow16 + kTail;
  const std::string header = kHead.substr(kHead.find('\n') + 1); // without "# Collective test starting"
  auto coll = [&](const std::string& cmd) { return parse_text(cmd + "\n" + header + rows, "x.log")[0]; };
  CHECK(coll("$ ./run_nccl_tests.sh -t all_reduce -b 8 -e 32 h1 h2").collective ==
        NcclCollective::all_reduce);
  CHECK(coll("$ ./run_nccl_tests.sh -t all_reduce -b 8 -e 32 h1 h2").collective_from == "command line");
  CHECK(coll("bench --test=allreduce --nodes 2").collective == NcclCollective::all_reduce);
  CHECK(coll("bench --collective sendrecv").collective == NcclCollective::sendrecv);
  // Contradicting the table: kept, with a warning.
  const auto rs = coll("bench --collective reduce_scatter");
  CHECK(rs.collective == NcclCollective::reduce_scatter);
  CHECK(any_warning(rs, "the log names reduce_scatter but the table looks like"));
  // Not options: nccl-tests' own "-t 1" (threads), a bare word in prose, "--" ending options.
  for (const char* prose : {"mpirun -np 2 ./my_bench -t 1 -g 1", "the same all_gather test gives half",
                            "kubectl exec -it pod -- all_gather"}) {
    INFO(prose);
    CHECK(coll(prose).collective_from != "command line");
  }
}

TEST_CASE("nccl-tests GPUDirect from the channel lines: NET connections without /GDRDMA stage through host") {
  // The MOC sendrecv logs print no "GDR N" line. The 1-GPU run's connections read "via NET/IB/1/Shared" (no
  // GDRDMA); the 4-GPU run's, despite the file's name, "via NET/IB/1(2)/GDRDMA/Shared".
  auto runs = load("moc-h100-cx7-roce400g-2node-sendrecv_roce_1gpu-nogdr-cci-moc.log");
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].gdr == false);
  runs = load("moc-h100-cx7-roce400g-2node-sendrecv_roce_4gpu-nogdr-cci-moc.log");
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].gdr == true);
  // Snellius: "via NET/IB/2/GDRDMA" and "via NET/IB/2(0)/GDRDMA".
  CHECK(load("h100-ndr200-ib-2node-8gpu-all_gather-snellius-odissei.log")[0].gdr == true);
  // A GDRDMA connection anywhere makes it a GDR run, whatever the order of the lines.
  const std::string plain = "host:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0\n";
  const std::string gdr =
      "host:1:2 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/IB/0/GDRDMA\n";
  CHECK(parse_text(kHead + plain + gdr + kRow8 + kTail, "a.log")[0].gdr == true);
  CHECK(parse_text(kHead + gdr + plain + kRow8 + kTail, "b.log")[0].gdr == true);
  CHECK(parse_text(kHead + plain + kRow8 + kTail, "c.log")[0].gdr == false);
  CHECK_FALSE(parse_text(kHead + kRow8 + kTail, "d.log")[0].gdr.has_value());
}
