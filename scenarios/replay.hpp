#pragma once
// Replay inputs: a JSON trace of collective calls per job, and NCCL debug logs (NCCL_DEBUG=INFO,
// NCCL_DEBUG_SUBSYS=COLL) — both become one list of CollectiveCall (DESIGN.md §5; docs/workloads.md
// "Trace format" and "NCCL log parsing").
//
// Sizes follow nccl-tests' "size" column, the convention of CollectiveSpec::size_bytes: AllReduce,
// Broadcast, Reduce, SendRecv, Send, Recv: the buffer (count x sizeof(type)); AllGather and ReduceScatter:
// the whole gathered buffer (nranks x the per-rank part). NCCL logs the per-rank count for AllGather
// (sendcount) and ReduceScatter (recvcount), so for those two size_bytes = count x sizeof x nranks and
// bytes_per_rank = count x sizeof. In a JSON trace `count` means size_bytes / sizeof(datatype), as the
// nccl-tests "count" column does.
//
// Timing: a call is timed (`at`: it starts at that time, whatever else runs) or dependent (no `at`: it
// starts `gap` after the previous call of the same job has completed; the first call of a job that is
// dependent starts at `gap`). NCCL logs carry no times, so every logged call is dependent, with the gap of
// NcclLogOptions.
//
// NCCL log lines read (format of NCCL's own INFO calls, enqueue.cc and init.cc, 2.x):
//   HOST:PID:TID [DEV] NCCL INFO AllReduce: opCount 3 sendbuff 0x.. recvbuff 0x.. count 262144 datatype 7
//       op 0 root 0 comm 0x.. [nranks=16] stream 0x..     (opCount is hexadecimal; extra trailing fields,
//       such as RCCL's "task N globalrank N", are ignored)
//   ... NCCL INFO ncclCommInitRank comm 0x.. rank R nranks N ... commId 0x.. - Init START|COMPLETE
//   ... NCCL INFO comm 0x.. rank R nRanks N nNodes M localRanks L localRank l MNNVL 0
//   ... NCCL INFO 8 coll channels, 8 collnet channels, 0 nvls channels, 8 p2p channels, 2 p2p channels per
//   peer
//   ... NCCL INFO Channel 03/08 : 0 1 2 3 ...           (ring order lines; "NN/MM": MM channels)
// Communicators: a (HOST:PID, comm pointer) pair is one rank of a communicator; ranks whose init line
// carries the same commId are one communicator, named by its commId ("0x48682ccd036f5cb1"); without a
// commId the job is named "HOST:PID/0xPTR". Every rank logs every collective: the copies are merged by
// (communicator, opCount, position among the rank's calls with that opCount), so a communicator's
// collective appears once. Send and Recv are per rank (rank, peer = the logged root) and are not merged.
// Channel lines ("N coll channels", "Channel NN/MM :") belong to the communicator named by the next
// "comm 0x.. rank" line of the same HOST:PID:TID (NCCL prints them from the init thread, before
// "Init COMPLETE"; newer versions also name the comm before them); channel lines with no such line after
// them go to the communicator that thread named last.
//
// Errors and warnings: a JSON trace that is not valid JSON, has an unknown key, a missing or wrong value
// is an InputError naming the source and the JSON path ("trace.json: /jobs/0/calls/3/op: ..."). In a log,
// a COLL line cut short or malformed (a required field missing: opCount, count, datatype, comm, nranks) is
// skipped with a warning "FILE:LINE: ..."; a line that lacks only the trailing "stream" is kept with a
// warning; an unknown datatype or operation is skipped with a warning. Other lines, prompts and prose are
// ignored. A log with no COLL line gives an empty call list and a warning (NCCL_DEBUG_SUBSYS=COLL unset?).
#include "sim/time.hpp"

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace ibn::scen {

struct CollectiveCall {
  std::string job;                  ///< trace: job name; NCCL log: communicator (commId or HOST:PID/0xPTR)
  std::string op;                   ///< allreduce, allgather, reducescatter, alltoall, broadcast, reduce,
                                    ///< sendrecv, send, recv
  std::uint64_t size_bytes = 0;     ///< nccl-tests convention (header comment)
  std::uint64_t bytes_per_rank = 0; ///< what one rank passes to NCCL: count x sizeof(datatype)
  std::uint64_t count = 0;    ///< elements as given (log: NCCL's count argument); 0 if size_bytes was given
  std::string datatype;       ///< int8, uint8, int32, uint32, int64, uint64, float16, float32, float64,
                              ///< bfloat16, float8e4m3, float8e5m2; empty if size_bytes was given
  std::uint32_t nranks = 0;   ///< ranks of the communicator; 0 = not given (use the job's)
  std::optional<Time> at;     ///< timed call: start time
  Time gap;                   ///< dependent call: delay after the previous call of the job completes
  std::string algorithm;      ///< requested algorithm; empty = automatic
  std::uint64_t op_count = 0; ///< NCCL opCount (log)
  int rank = -1;              ///< log: the logging rank (Send/Recv), -1 if unknown or merged
  int peer = -1;              ///< log Send/Recv: the peer rank (NCCL's root field)
  std::size_t line = 0;       ///< log: 1-based line of the first copy; JSON: 0
  std::string where;          ///< "FILE:LINE" (log) or "FILE: /jobs/J/calls/C" (JSON)
};

/// What a log tells about one communicator.
struct CommInfo {
  std::string job; ///< as in CollectiveCall::job
  std::uint32_t nranks = 0;
  std::uint32_t ranks_seen = 0;    ///< distinct ranks whose lines are in the log
  std::uint32_t coll_channels = 0; ///< from "N coll channels" (0 if absent)
  std::uint32_t ring_channels = 0; ///< from "Channel NN/MM :" ring lines: MM (0 if absent)
  std::uint32_t channels() const { return coll_channels ? coll_channels : ring_channels; }
};

struct ReplayTrace {
  std::vector<CollectiveCall> calls; ///< grouped by job (jobs in order of first appearance), in call order
  std::vector<CommInfo> comms;       ///< NCCL logs only, in order of first appearance
  std::vector<std::string> warnings; ///< "FILE:LINE: text"
  std::vector<std::string> jobs() const; ///< job names in order of first appearance
  const CommInfo* comm(const std::string& job) const;
};

/// Canonical operation name ("AllReduce", "all_reduce", "all-reduce" -> "allreduce"), or "" if unknown.
std::string canonical_op(const std::string& name);
/// Size in bytes of a datatype name (canonical or an alias: "float", "half", "bf16", "fp32", "ncclFloat32"),
/// with its canonical name; nullopt if unknown.
struct DatatypeInfo {
  std::string name;
  std::uint32_t bytes = 0;
};
std::optional<DatatypeInfo> datatype_by_name(const std::string& name);
/// NCCL's ncclDataType_t value (ncclInt8 = 0 ... ncclBfloat16 = 9, ncclFloat8e4m3 = 10, ncclFloat8e5m2 = 11).
std::optional<DatatypeInfo> nccl_datatype(std::int64_t value);

/// Parses a JSON trace (docs/workloads.md). `source` names the input in messages.
ReplayTrace parse_trace_json(std::istream& in, const std::string& source);
ReplayTrace read_trace_json(const std::string& path);

struct NcclLogOptions {
  Time gap = Time::zero(); ///< gap given to every logged (dependent) call
};
/// Parses NCCL INFO output. `source` names the input in warnings.
ReplayTrace parse_nccl_log(std::istream& in, const std::string& source, const NcclLogOptions& opt = {});
/// Reads one or more log files (e.g. one per rank with NCCL_DEBUG_FILE) into one trace.
ReplayTrace read_nccl_logs(const std::vector<std::string>& paths, const NcclLogOptions& opt = {});
/// A JSON trace when the file's first non-blank character is '{', else an NCCL log.
ReplayTrace read_replay_file(const std::string& path, const NcclLogOptions& opt = {});

} // namespace ibn::scen
