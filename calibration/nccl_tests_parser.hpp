#pragma once
// Reader for nccl-tests logs (all_reduce_perf, all_gather_perf, reduce_scatter_perf, alltoall_perf,
// sendrecv_perf, broadcast_perf, reduce_perf), with or without NCCL_DEBUG=INFO output mixed in. One
// NcclTestsRun per results table: a log holding several collectives one after another (a benchmark
// script's output) gives one run each.
//
// What is read:
//  - "# nccl-tests version 2.17.8 nccl-headers=22902 nccl-library=22902",
//    "# Collective test starting: X_perf";
//  - "# nThread 1 nGpus 8 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 ...";
//  - "# Using devices" rank lines:
//    "#  Rank  0 Group  0 Pid 1583223 on HOST device  0 [0000:29:00] NVIDIA H100 ...";
//  - the table: size count type redop root | time algbw busbw #wrong (out-of-place) | the same in-place.
//    Columns are taken from the header line, so older layouts (no root column, "error" instead of
//    "#wrong") read too; "N/A" in #wrong reads as empty. Rows printing only the out-of-place group have
//    no in-place result, as long as no earlier row of the table had one (otherwise it is a cut row);
//  - "# Out of bounds values : 0 OK", "# Avg bus bandwidth : 437.957";
//  - the plain "NCCL version 2.26.2+cuda12.8" line (NCCL_DEBUG=VERSION; no "NCCL INFO" prefix), anywhere in
//    the test's output, tables included;
//  - NCCL INFO lines: "NCCL version 2.26.2+cuda", "NET/IB : Using [0]mlx5_5:1/RoCE [RO]; OOB ...",
//    "ncclCommInitRank ... nranks 2", "comm ... nRanks 2 nNodes 2 localRanks 1", "Channel 00/02 : 0 1",
//    "NCCL_ALGO set by environment to RING", "NCCL_IB_HCA set to mlx5_5", "Connected all rings ... GDR 0".
//
// Units: time in microseconds; algbw and busbw in GB/s exactly as nccl-tests prints them
// (1 GB = 1e9 bytes; multiply by 8 for Gb/s).
//
// A test starts at "# nccl-tests version", "# Collective test starting", "# nThread" or a table header once
// the previous test has its table or its summary, or when one of those lines comes a second time (a test
// whose output was cut before its table, as pages that elide output have: a run with no rows and a warning).
//
// The collective comes, in this order, from "# Collective test starting: X_perf", from a command line
// naming X_perf or passing a collective's name as an option's value (a wrapper script's
// "run_nccl_tests.sh -t all_gather", "--test=allreduce"), or from the table itself: a root >= 0 means
// broadcast/reduce; count*sizeof(type) == size means all_reduce or sendrecv (told apart by busbw/algbw =
// 2(n-1)/n vs 1 when n > 2); size == n*count*sizeof(type) means reduce_scatter (with a redop) or
// all_gather/alltoall (redop none). When the table leaves a choice, a collective named in the file name
// decides; otherwise the first candidate is taken with a warning. A log line that contradicts the table gets
// a warning too. Binary names with the MPI build's "_mpi" suffix ("all_gather_perf_mpi") name the same test;
// the table test uses the first row that carries data (rows "0 0 ..." of a sweep from -b 0 fit every
// collective and are passed over).
//
// Error vs warning (the same rules as perftest_parser.hpp):
//  - InputError("FILE:LINE: ..."): a line in a table that looks like a row but has a non-number where a
//    number belongs, or more fields than the header; a row with too few fields followed by more rows;
//    a size above 1 TiB (detail::kMaxNcclTestsBytes); an unknown column in the table header.
//  - InputError("FILE: ..."): no results row in the whole file (empty file, prose only, a table cut or
//    garbled before its first row); the message ends with the warnings below that the reader collected on
//    the way ("FILE:LINE: table truncated ..."), so a cut log says where; unreadable file.
//  - Warnings "FILE:LINE: ..." on the run: an elision marker ("...", "[truncated]") in a table; a last
//    row cut short (fewer fields, all numeric: the row is dropped); a table with no "# Out of bounds" /
//    "# Avg bus bandwidth" summary after it ("table may be truncated"); a size above 0 printed a second
//    time in one table (the first row is kept, the second ignored: two -i steps may round to one size);
//    rows with #wrong > 0 (not old
//    "error" values); an out-of-bounds FAILED; rank/host counts that disagree with NCCL INFO; an unknown
//    or ambiguous collective; stray text between rows.
//
// Limitations: lines prefixed by MPI launchers (mpirun --tag-output "[1,0]<stdout>:") are not unwrapped;
// gather/scatter/hypercube tests read with collective unknown.
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ibn::calib {

enum class NcclCollective {
  unknown,
  all_reduce,
  all_gather,
  reduce_scatter,
  alltoall,
  sendrecv,
  broadcast,
  reduce
};
/// "all_reduce", "all_gather", "reduce_scatter", "alltoall", "sendrecv", "broadcast", "reduce", "unknown".
const char* to_string(NcclCollective c);

/// One half (out-of-place or in-place) of a results row.
struct NcclTestsResult {
  double time_us = 0;
  double algbw_gbs = 0; ///< GB/s, 1e9 bytes/s
  double busbw_gbs = 0; ///< GB/s, 1e9 bytes/s
  /// "#wrong" (count of wrong values) or, in old nccl-tests, "error" (max relative error, e.g. 1e-07);
  /// empty when printed as "N/A" or absent.
  std::optional<double> wrong;
};

struct NcclTestsRow {
  std::uint64_t size_bytes = 0;
  std::uint64_t count = 0; ///< elements, as printed (per rank for all_gather/alltoall/reduce_scatter)
  std::string type;        ///< "float", "double", "half", ...
  std::string redop;       ///< "sum", "none", ...; empty when the table has no redop column
  std::optional<std::int64_t> root;  ///< -1 for rootless collectives; empty when the table has no root column
  NcclTestsResult oop;               ///< out-of-place
  std::optional<NcclTestsResult> ip; ///< in-place; empty when not printed
  std::size_t line = 0;
};

/// "#  Rank  0 Group  0 Pid 4180122 on cnode3-002 device  0 [0000:1b:00] NVIDIA H100 80GB HBM3"
struct NcclTestsRank {
  int rank = 0;
  std::optional<int> group;
  std::int64_t pid = 0;
  std::string host;
  int device = 0;
  std::string bus_id; ///< "0000:1b:00"
  std::string gpu;    ///< "NVIDIA H100 80GB HBM3"
};

/// A NIC NCCL said it uses: "NET/IB : Using [0]mlx5_5:1/RoCE" on host MOC-R4PCC04U37.
struct NcclTestsNic {
  std::string host; ///< host prefix of the NCCL INFO line ("" when the line has none)
  std::string name; ///< "mlx5_5"
  int port = 0;
  std::string link_layer; ///< "IB" or "RoCE"
};

/// The "# nThread ..." line.
struct NcclTestsConfig {
  std::optional<int> nthread, ngpus;
  std::optional<std::uint64_t> min_bytes, max_bytes;
  std::optional<double> step_factor;       ///< "step: 2(factor)"
  std::optional<std::uint64_t> step_bytes; ///< "step: 2147483648(bytes)"
  std::optional<int> warmup_iters, iters, agg_iters, validation, graph;
};

struct NcclTestsRun {
  NcclCollective collective = NcclCollective::unknown;
  std::string collective_from; ///< "log", "command line", "table", "file name" or "" (unknown)
  std::optional<int> nranks, nnodes, gpus_per_node;
  std::vector<NcclTestsRank> ranks;
  std::vector<NcclTestsNic> nics;
  std::string network;                    ///< "Using network IB" -> "IB"
  std::string nccl_version;               ///< "2.26.2" (NCCL INFO, else decoded from nccl-library=22602)
  std::string nccl_tests_version;         ///< "2.17.9"
  std::optional<int> nchannels;           ///< from "Channel 00/02 : 0 1"
  std::map<std::string, std::string> env; ///< "NCCL_ALGO" -> "RING", "NCCL_IB_HCA" -> "mlx5_5"
  std::string algo, proto;                ///< NCCL_ALGO / NCCL_PROTO when set
  /// GPUDirect RDMA, from "Connected all rings ... GDR 0", or from the channel lines: any ".../GDRDMA"
  /// connection -> true, "via NET/..." connections none of which is GDRDMA -> false.
  std::optional<bool> gdr;
  NcclTestsConfig config;
  std::vector<NcclTestsRow> rows;
  std::optional<double> avg_busbw_gbs;        ///< "# Avg bus bandwidth : X" (GB/s)
  std::optional<std::uint64_t> out_of_bounds; ///< "# Out of bounds values : 0 OK"
  std::vector<std::string> warnings;          ///< "FILE:LINE: text"
  std::string source;
  std::size_t first_line = 0; ///< first line of this test's output
  std::size_t table_line = 0; ///< the "size count type ..." header line
};

/// Parses every nccl-tests results table in `in`; `source` names the input in messages (and its file
/// name may name the collective).
std::vector<NcclTestsRun> parse_nccl_tests(std::istream& in, const std::string& source);
/// Same, reading `path`; a missing or unreadable file is an InputError naming the path.
std::vector<NcclTestsRun> parse_nccl_tests_file(const std::string& path);

/// The first line of `in` that only nccl-tests output has ("# nThread ...", "# nccl-tests version",
/// "# Collective test starting", the table header's "out-of-place", "# Avg bus bandwidth", or a test binary's
/// name such as all_reduce_perf), if any. A file with such a line is an nccl-tests log even when no row of
/// its table parses (a log cut or garbled mid-table): `calibrate fit` then reports this reader's error, not
/// perftest's.
std::optional<std::size_t> nccl_tests_marker_line(std::istream& in);

/// Decodes NCCL_VERSION_CODE: 22602 -> "2.26.2" (>= 2.9: major*10000+minor*100+patch), 2708 -> "2.7.8".
std::string nccl_version_from_code(std::uint64_t code);

} // namespace ibn::calib
