#pragma once
// Reader for perftest output (ib_write_bw, ib_write_lat, ib_send_bw, ib_send_lat, ib_read_bw,
// ib_read_lat) as it comes from real terminals: shell prompts, prose, markdown fences and other output
// around the tables, CRLF, several tests in one file (server and client side, one test after another),
// `-a` sweeps, several QPs, bidirectional (-b), --report_gbits, --run_infinitely, old and new column sets.
// Each test section ("RDMA_Write BW Test" header block + "#bytes ..." table) becomes one PerftestRun.
//
// Units (what perftest prints -> what is stored):
//  - Bandwidth is stored in Gb/s, 1 Gb = 1e9 bit. perftest's "MB/sec" is MiB/s: print_report_bw() divides
//    bytes/s by format_factor 0x100000 (2^20) for MB/sec and by 125000000 (1e9 bit / 8) for Gb/sec, and
//    newer releases print the same MB number with the honest label "MiB/sec". So
//    X MB/sec = X MiB/sec = X * 8 * 2^20 / 1e9 Gb/s exactly, and Gb/sec values are stored as printed.
//    Bidirectional runs print (and we store) the sum of both directions.
//  - Latency statistics are in microseconds ("[usec]" columns; t_typical is the median). Tables in CPU
//    cycles (perftest -C) are rejected: they cannot be converted without the clock rate.
//  - Message rate in Mpps (1e6 messages/s), as printed.
//
// Error vs warning (the same rules as nccl_tests_parser.hpp):
//  - InputError("FILE:LINE: ..."): a line inside a table that looks like a row (starts with a digit, or is
//    mostly numbers) but has a non-number where a number belongs, or more fields than the header; a row
//    with too few fields that is followed by more rows of the same table (garbage, not a cut); a row that
//    cannot be a measurement: a message size of 0 or above 2 GiB (detail::kMaxPerftestOsuBytes), 0
//    iterations, a t_typical below t_min, or a negative number in any column (size, iterations, latency,
//    bandwidth, message rate), as damaged as a non-number and refused the same way; a size twice in a table
//    that is not a --run_infinitely run (which repeats one size);
//    an unknown column or unit in a "#bytes" header; a title of a test this reader does not cover.
//  - InputError("FILE: ..."): no perftest result row anywhere in the file (empty file, prose only);
//    a file that cannot be opened (file variant).
//  - Warning "FILE:LINE: table truncated ..." on the run: an elision marker ("...", "[truncated]") in a
//    table; the table's last row cut short (fewer fields, all numeric). "table may be truncated ...":
//    a table that stops (end of file, code fence, next test) without perftest's closing "----" rule,
//    unless it is a --run_infinitely run, which only ever ends that way. A header block with no table
//    at all gets "no result table". Stray text between rows (e.g. "Conflicting CPU frequency ...") is
//    skipped; unknown text is named in a warning.
//
// Output pasted as comments (every line, rows included, behind "# ", as in a script or notebook) reads the
// same as the plain output: one leading "#" followed by a blank (or alone on its line) is dropped first.
//
// Limitations: atomic and raw Ethernet tests are not covered; role (server/client) is a best
// guess from the "Waiting for client" banner and the "TX depth" line.
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ibn::calib {

enum class PerftestTool { ib_write_bw, ib_write_lat, ib_send_bw, ib_send_lat, ib_read_bw, ib_read_lat };
/// "ib_write_bw", ...
const char* to_string(PerftestTool t);
bool is_latency_tool(PerftestTool t);

enum class PerftestRole { unknown, server, client };
const char* to_string(PerftestRole r);

/// One line of a perftest result table. Columns absent from that table's header stay empty.
struct PerftestRow {
  std::uint64_t size_bytes = 0;
  std::uint64_t iterations = 0;
  std::size_t line = 0; ///< line number in the source

  // Latency tables, microseconds.
  std::optional<double> t_min_us, t_max_us, t_typical_us, t_avg_us, t_stdev_us, p99_us, p999_us;
  std::optional<double> tps_avg; ///< duration mode (-D) latency table: transactions per second

  // Bandwidth tables, Gb/s (1e9 bit/s) and Mpps.
  std::optional<double> bw_peak_gbps, bw_avg_gbps, msg_rate_mpps;
  std::optional<double> bw_port1_gbps, msg_rate_port1_mpps, bw_port2_gbps,
      msg_rate_port2_mpps;            ///< --report-per-port
  std::optional<std::int64_t> sl;     ///< QoS tables ("#sl" column)
  std::optional<double> cpu_util_pct; ///< --cpu_util
};

/// One test section: header block + result table.
struct PerftestRun {
  PerftestTool tool = PerftestTool::ib_write_bw;
  std::string title;   ///< e.g. "RDMA_Write BW Test"; empty when the tool was taken from the command line
  std::string command; ///< the command line echoed before the test ("ib_write_bw -a ..."), if any
  PerftestRole role = PerftestRole::unknown;
  bool bidirectional = false;   ///< "Bidirectional" in the title or -b/--bidirectional on the command line
  bool run_infinitely = false;  ///< --run_infinitely on the command line, or every row has the same size
  bool bw_peak_measured = true; ///< false after "WARNING: BW peak won't be measured in this run."

  /// Every "Key : Value" pair of the header block, in order, keys and values trimmed.
  std::vector<std::pair<std::string, std::string>> header_fields;
  // Typed copies of the usual header fields (empty when the header does not print them).
  std::string device;                  ///< "Device"
  std::optional<int> num_qps;          ///< "Number of qps"
  std::string transport_type;          ///< "Transport type": IB, IW, ...
  std::string connection_type;         ///< "Connection type": RC, UC, UD, XRC, DC
  std::optional<int> mtu_bytes;        ///< "Mtu : 4096[B]"
  std::string link_type;               ///< "Link type": IB or Ethernet (RoCE)
  std::optional<int> max_inline_bytes; ///< "Max inline data : 236[B]"
  std::optional<int> tx_depth, rx_depth, cq_moderation, outstanding_reads, gid_index, tos;
  std::optional<bool> dual_port, use_srq, rdma_cm_qps, odp;
  std::string data_exchange; ///< "Data ex. method": Ethernet or rdma_cm

  std::string
      bw_unit; ///< unit printed in the bandwidth header ("MB/sec", "MiB/sec", "Gb/sec"); empty for latency
  std::vector<PerftestRow> rows;
  std::vector<std::string> warnings; ///< "FILE:LINE: text"
  std::string source;
  std::size_t first_line = 0; ///< title line, or the table header line when there is no title
  std::size_t table_line = 0; ///< "#bytes ..." header line; 0 when the section has no table

  bool is_latency() const { return is_latency_tool(tool); }
};

/// Parses every perftest test section in `in`; `source` names the input in messages.
std::vector<PerftestRun> parse_perftest(std::istream& in, const std::string& source);
/// Same, reading `path`; a missing or unreadable file is an InputError naming the path.
std::vector<PerftestRun> parse_perftest_file(const std::string& path);

/// perftest's "MB/sec" (= MiB/s) to Gb/s: x * 8 * 2^20 / 1e9.
constexpr double perftest_mbps_to_gbps(double mb_per_s) {
  return mb_per_s * 8.0 * 1048576.0 / 1e9;
}

} // namespace ibn::calib
