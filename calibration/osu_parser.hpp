#pragma once
// Reader for MPI micro-benchmark outputs: the OSU Micro-Benchmarks (osu_latency, osu_multi_lat, osu_bw,
// osu_bibw, osu_mbw_mr and the collectives osu_allreduce, osu_alltoall, osu_allgather, osu_bcast,
// osu_reduce, ...) and Intel MPI Benchmarks IMB-MPI1 tables (PingPong, PingPing, Sendrecv, Exchange and
// the collectives Allreduce, Alltoall, Bcast, ...). Output as it comes from terminals and web pages:
// shell prompts, launcher lines, markdown around the tables, CRLF, several benchmarks in one file.
// Each table becomes one OsuRun.
//
// What is read:
//  - OSU: the title "# OSU MPI Latency Test v7.5" (or "# OSU MPI-CUDA ..."), the comment lines under it
//    ("# Send Buffer on DEVICE (D) and Receive Buffer on DEVICE (D)", "# [ pairs: 8 ] [ window size: 64 ]",
//    "# Datatype: MPI_CHAR."), the column header "# Size  Latency (us)" / "# Size  Avg Latency(us)  Min
//    Latency(us)  Max Latency(us)  Iterations" / "# Size  Bandwidth (MB/s)" / "# Size  MB/s  Messages/s"
//    (and OMB 7's "P50/P90/P99 Tail Lat(us)"), then rows "SIZE VALUE ...";
//  - IMB: "# Benchmarking PingPong", "# #processes = 2", the header "#bytes #repetitions t[usec]
//    Mbytes/sec" (pt2pt) or "#bytes #repetitions t_min[usec] t_max[usec] t_avg[usec]" (collectives),
//    then rows. Without a "# Benchmarking" line the benchmark comes from the command line (IMB-MPI1
//    PingPong);
//  - the launcher line before a table (mpirun/mpiexec/srun/prun): processes (-n/-np/--np/-c for mpirun,
//    -n/--ntasks for srun), processes per node (-N and -npernode/--npernode and --map-by ppr:K:node for
//    Open MPI, -ppn/-perhost for MPICH/Intel MPI, --ntasks-per-node for srun), nodes (srun -N/--nodes, the
//    host names of -host/-H/--host).
//
// Units: latency in microseconds; OSU bandwidth in MB/s with 1 MB = 1e6 bytes (OMB divides bytes by 1e6);
// IMB "Mbytes/sec" is MiB/s (IMB divides by 2^20) and is stored converted to MB/s (1e6 B/s).
//
// Error vs warning (the same rules as perftest_parser.hpp):
//  - InputError("FILE:LINE: ..."): a line inside a table that looks like a row (or starts with a signed or
//    fractional number, "-64 1.57") but has a non-number where a number belongs, or more fields than the
//    header; a row with too few fields followed by more rows; a size above 2 GiB
//    (detail::kMaxPerftestOsuBytes); a size repeated in one table; a column header that is not one of the
//    known columns;
//  - InputError("FILE: ..."): no OSU/IMB result row anywhere; unreadable file;
//  - Warnings "FILE:LINE: ..." on the run: a table cut mid-row at its end (the row is dropped and the
//    message names its line), an elision marker in a table, stray text between rows, a table whose
//    benchmark cannot be told (rows kept, benchmark "unknown").
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace ibn::calib {

/// What a table measures.
enum class OsuKind {
  latency,    ///< point to point, one-way latency (osu_latency, osu_multi_lat, IMB PingPong t[usec])
  bandwidth,  ///< point to point, bandwidth (osu_bw, osu_bibw, osu_mbw_mr)
  collective, ///< a collective's average latency (osu_allreduce, IMB Allreduce t_avg)
};
const char* to_string(OsuKind k);

struct OsuRow {
  std::uint64_t size_bytes = 0;
  /// Latency tables: average latency in us (OSU "Latency"/"Avg Latency", IMB "t[usec]"/"t_avg[usec]").
  std::optional<double> latency_us;
  std::optional<double> min_latency_us, max_latency_us; ///< OSU -f, IMB t_min / t_max
  std::optional<double> p50_us, p90_us, p99_us;         ///< OMB 7 tail latency columns
  /// Bandwidth tables: MB/s (1e6 B/s); IMB's Mbytes/sec converted from MiB/s.
  std::optional<double> bandwidth_mbps;
  std::optional<double> messages_per_s;    ///< osu_mbw_mr
  std::optional<std::uint64_t> iterations; ///< OSU -f "Iterations", IMB "#repetitions"
  std::size_t line = 0;
};

/// What the launcher line said (absent fields: not on the line).
struct OsuLauncher {
  std::string text; ///< the whole line
  std::size_t line = 0;
  std::optional<int> processes, per_node, nodes;
};

struct OsuRun {
  std::string benchmark; ///< "osu_latency", "osu_allreduce", "IMB-MPI1 PingPong", ..., or "unknown"
  OsuKind kind = OsuKind::latency;
  std::string collective;     ///< "allreduce", "alltoall", ... for collectives; "" for pt2pt
  std::string suite;          ///< "OSU" or "IMB"
  std::string title;          ///< "OSU MPI Latency Test v7.5", "Benchmarking PingPong" (without '#')
  std::string version;        ///< "7.5" (OSU title)
  bool bidirectional = false; ///< osu_bibw
  std::optional<int> pairs, window_size; ///< "# [ pairs: 8 ] [ window size: 64 ]"
  std::optional<int> processes;          ///< IMB "# #processes = 2"
  std::string buffers;                   ///< "# Send Buffer on DEVICE (D) and ..." (trimmed), "" = host
  bool device_buffers = false;           ///< a buffer line naming DEVICE / CUDA / ROCm memory
  std::string datatype;                  ///< "MPI_CHAR"
  std::string command;                   ///< the benchmark's command line, if one was seen
  std::optional<OsuLauncher> launcher;   ///< the launcher line before this table, if any
  std::vector<std::string> columns;      ///< the header's columns after the size
  std::vector<OsuRow> rows;
  std::vector<std::string> warnings; ///< "FILE:LINE: text"
  std::string source;
  std::size_t first_line = 0; ///< title line, or the header when there is no title
  std::size_t table_line = 0; ///< column header line
};

/// Parses every OSU / IMB table in `in`; `source` names the input in messages.
std::vector<OsuRun> parse_osu(std::istream& in, const std::string& source);
/// Same, reading `path`; a missing or unreadable file is an InputError naming the path.
std::vector<OsuRun> parse_osu_file(const std::string& path);

/// Reads a launcher command line ("mpirun -n 144 -N 36 ...", "srun -N 4 --ntasks-per-node=36 ...");
/// nullopt when `line` does not start an MPI launcher (after an optional shell prompt).
std::optional<OsuLauncher> parse_launcher(const std::string& line);

} // namespace ibn::calib
