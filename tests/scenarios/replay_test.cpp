// Replay inputs: the JSON trace format (valid traces and every kind of bad input, named by JSON path) and
// NCCL debug logs (constructed fixtures in tests/data/nccl-logs, whose expected values are read by hand
// from the files, plus the real nccl-tests log that has INIT lines but no COLL lines).
#include "scenarios/replay.hpp"
#include "sim/error.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace ibn;
using namespace ibn::scen;
using ibn::test::error_of;

namespace {

std::string fixture(const std::string& name) {
  return std::string(IBNETSIM_TEST_DATA) + "/nccl-logs/" + name;
}

ReplayTrace trace(const std::string& text) {
  std::istringstream in(text);
  return parse_trace_json(in, "t.json");
}

std::string trace_error(const std::string& text) {
  return error_of([&] { trace(text); });
}

/// A one-job trace with one call whose body is `call`.
std::string one_call(const std::string& call) {
  return R"({"jobs": [{"name": "j", "calls": [)" + call + "]}]}";
}

ReplayTrace log_text(const std::string& text) {
  std::istringstream in(text);
  return parse_nccl_log(in, "mem.log");
}

} // namespace

TEST_CASE("replay: a JSON trace with timed and dependent calls") {
  const auto t = trace(R"({
    "format": "ibnetsim-trace", "version": 1,
    "jobs": [
      {"name": "train", "nranks": 16, "calls": [
        {"op": "allreduce", "size_bytes": "64MiB", "at_us": 0, "algorithm": "ring"},
        {"op": "all_gather", "count": 1048576, "datatype": "bf16", "after": "previous", "gap_us": 150.5},
        {"op": "ReduceScatter", "size_bytes": 4096, "after": "previous", "nranks": 4}
      ]},
      {"name": "bg-job", "calls": [{"op": "alltoall", "size_bytes": 1000, "at_us": 20}]}
    ]})");
  REQUIRE(t.calls.size() == 4);
  CHECK(t.jobs() == std::vector<std::string>{"train", "bg-job"});
  const auto& a = t.calls[0];
  CHECK(a.job == "train");
  CHECK(a.op == "allreduce");
  CHECK(a.size_bytes == 64ull << 20);
  CHECK(a.nranks == 16);
  CHECK(a.at == Time::zero());
  CHECK(a.algorithm == "ring");
  CHECK(a.where == "t.json: /jobs/0/calls/0");
  const auto& b = t.calls[1];
  CHECK(b.op == "allgather");
  CHECK(b.datatype == "bfloat16");
  CHECK(b.count == 1048576);
  CHECK(b.size_bytes == 2097152);    // count x 2 B
  CHECK(b.bytes_per_rank == 131072); // size / 16 ranks
  CHECK(!b.at);
  CHECK(b.gap == Time::ns(150500));
  const auto& c = t.calls[2];
  CHECK(c.op == "reducescatter");
  CHECK(c.nranks == 4);
  CHECK(c.bytes_per_rank == 1024);
  CHECK(c.gap == Time::zero());
  CHECK(t.calls[3].op == "alltoall");
  CHECK(t.calls[3].nranks == 0);
  CHECK(t.calls[3].at == Time::us(20));
}

TEST_CASE("replay: bad JSON traces name the path") {
  CHECK(trace_error(one_call(R"({"op": "allreduce", "sise_bytes": 4, "at_us": 0})")) ==
        "t.json: /jobs/0/calls/0/sise_bytes: unknown key 'sise_bytes' (allowed: op, size_bytes, count, "
        "datatype, "
        "at_us, after, gap_us, algorithm, nranks)");
  CHECK(trace_error(one_call(R"({"op": "allreduce", "size_bytes": 4, "at_us": 0, "after": "previous"})")) ==
        "t.json: /jobs/0/calls/0: give either 'at_us' (a timed call) or 'after': \"previous\" (a dependent "
        "call)");
  CHECK(trace_error(one_call(R"({"op": "allreduce", "size_bytes": 4})")).find("give either 'at_us'") !=
        std::string::npos);
  CHECK(trace_error(one_call(R"({"op": "allreduce", "size_bytes": 4, "after": "call 3"})")) ==
        "t.json: /jobs/0/calls/0/after: expected \"previous\" (the job's previous call), got \"call 3\"");
  CHECK(trace_error(one_call(R"({"op": "allreduce", "size_bytes": 4, "at_us": 3, "gap_us": 1})")) ==
        "t.json: /jobs/0/calls/0/gap_us: 'gap_us' goes with 'after', not with 'at_us'");
  CHECK(trace_error(one_call(R"({"op": "allfoo", "size_bytes": 4, "at_us": 0})"))
            .find("t.json: /jobs/0/calls/0/op: unknown operation \"allfoo\"") == 0);
  CHECK(trace_error(one_call(R"({"op": "allreduce", "count": 4, "datatype": "float13", "at_us": 0})"))
            .find("t.json: /jobs/0/calls/0/datatype: unknown datatype \"float13\"") == 0);
  CHECK(trace_error(one_call(R"({"op": "allreduce", "count": 4, "at_us": 0})")) ==
        "t.json: /jobs/0/calls/0: 'count' needs a 'datatype' (float32, bfloat16, ...)");
  CHECK(trace_error(one_call(R"({"op": "allreduce", "size_bytes": 4, "count": 1, "at_us": 0})")) ==
        "t.json: /jobs/0/calls/0: give either 'size_bytes' or 'count' with 'datatype'");
  CHECK(trace_error(one_call(R"({"op": "allreduce", "size_bytes": -4, "at_us": 0})")) ==
        "t.json: /jobs/0/calls/0/size_bytes: expected a positive integer, got -4");
  CHECK(trace_error(one_call(R"({"op": "allreduce", "size_bytes": "4Q", "at_us": 0})"))
            .find("t.json: /jobs/0/calls/0/size_bytes: cannot read '4Q'") == 0);
  CHECK(trace_error(one_call(R"({"op": "allreduce", "size_bytes": 4, "at_us": -1})")) ==
        "t.json: /jobs/0/calls/0/at_us: expected a number of microseconds >= 0, got -1");
  CHECK(trace_error(R"({"jobs": [{"name": "j", "calls": [{"op": "allreduce", "size_bytes": 4, "at_us": 0}]},
                                 {"name": "j", "calls": [{"op": "allreduce", "size_bytes": 4, "at_us": 0}]}]})") ==
        "t.json: /jobs/1/name: job 'j' is defined twice");
  CHECK(trace_error(R"({"jobs": []})") == "t.json: /jobs: expected a non-empty list of jobs, got []");
  CHECK(trace_error(R"({"job": []})") == "t.json: /job: unknown key 'job' (allowed: format, version, jobs)");
  CHECK(trace_error(R"({"version": 2, "jobs": []})") ==
        "t.json: /version: this reader knows version 1, got 2");
  CHECK(trace_error(R"({"jobs": [{"name": "j"}]})") == "t.json: /jobs/0: missing key 'calls'");
  // Syntax errors carry nlohmann's line and column.
  const auto syn = trace_error("{\"jobs\": [\n  {\"name\": \"j\",, }\n]}");
  INFO(syn);
  CHECK(syn.find("t.json:2:") == 0); // file:line:col
  CHECK(syn.find(": not valid JSON:") != std::string::npos);
  CHECK(error_of([] { read_trace_json("/nonexistent/trace.json"); }) ==
        "/nonexistent/trace.json: cannot open the trace file");
}

TEST_CASE("replay: names of operations and NCCL datatypes") {
  CHECK(canonical_op("AllReduce") == "allreduce");
  CHECK(canonical_op("all_reduce_perf") == "allreduce");
  CHECK(canonical_op("reduce-scatter") == "reducescatter");
  CHECK(canonical_op("ncclAllGather") == "allgather");
  CHECK(canonical_op("Frobnicate").empty());
  // nccl.h: ncclInt8 = 0, ncclUint8, ncclInt32, ncclUint32, ncclInt64, ncclUint64, ncclFloat16, ncclFloat32,
  // ncclFloat64, ncclBfloat16 = 9, ncclFloat8e4m3 = 10, ncclFloat8e5m2 = 11.
  const std::vector<std::pair<std::string, std::uint32_t>> want = {
      {"int8", 1},    {"uint8", 1},   {"int32", 4},   {"uint32", 4},   {"int64", 8},      {"uint64", 8},
      {"float16", 2}, {"float32", 4}, {"float64", 8}, {"bfloat16", 2}, {"float8e4m3", 1}, {"float8e5m2", 1}};
  for (std::int64_t i = 0; i < 12; ++i) {
    const auto d = nccl_datatype(i);
    REQUIRE(d);
    CHECK(d->name == want[static_cast<std::size_t>(i)].first);
    CHECK(d->bytes == want[static_cast<std::size_t>(i)].second);
  }
  CHECK(!nccl_datatype(12));
  CHECK(!nccl_datatype(-1));
  CHECK(datatype_by_name("ncclFloat32")->name == "float32");
  CHECK(datatype_by_name("half")->bytes == 2);
  CHECK(datatype_by_name("double")->bytes == 8);
}

TEST_CASE("replay: NCCL log of a 16-rank job, two ranks' copies merged, a cut last line") {
  const auto t =
      read_nccl_logs({fixture("train-2node-16rank-nccl2.21-coll.log")}, NcclLogOptions{Time::us(3)});
  // opCount 0..f on communicator commId 0x9c3f1e2d4b5a6978, logged by rank 0 and rank 8.
  REQUIRE(t.calls.size() == 16);
  CHECK(t.jobs() == std::vector<std::string>{"0x9c3f1e2d4b5a6978"});
  for (std::size_t i = 0; i < t.calls.size(); ++i) {
    CHECK(t.calls[i].op_count == i); // opCount is hexadecimal: "a" .. "f" are 10 .. 15
    CHECK(t.calls[i].nranks == 16);
    CHECK(!t.calls[i].at);
    CHECK(t.calls[i].gap == Time::us(3));
  }
  CHECK(t.calls[0].op == "broadcast");
  CHECK(t.calls[0].size_bytes == 4u << 20); // 1048576 x float32
  CHECK(t.calls[1].op == "allreduce");
  CHECK(t.calls[1].size_bytes == 1u << 20);
  for (std::size_t i = 2; i < 12; ++i) {
    CHECK(t.calls[i].op == "allreduce");
    CHECK(t.calls[i].datatype == "bfloat16");
    CHECK(t.calls[i].size_bytes == 32u << 20); // 16777216 x 2 B
  }
  CHECK(t.calls[12].op == "allgather");
  CHECK(t.calls[12].bytes_per_rank == 2u << 20); // sendcount 1048576 x bf16
  CHECK(t.calls[12].size_bytes == 32u << 20);    // x 16 ranks
  CHECK(t.calls[13].op == "reducescatter");
  CHECK(t.calls[13].size_bytes == 32u << 20);
  CHECK(t.calls[14].size_bytes == 8);         // 1 x int64
  CHECK(t.calls[15].size_bytes == 32u << 20); // rank 8's copy (rank 0's line is cut)
  CHECK(t.calls[15].where == fixture("train-2node-16rank-nccl2.21-coll.log") + ":65");
  CHECK(t.calls[2].line == 38); // first copy of opCount 2 (rank 0), after the prose line
  REQUIRE(t.warnings.size() == 1);
  CHECK(t.warnings[0] ==
        fixture("train-2node-16rank-nccl2.21-coll.log") +
            ":64: truncated or malformed NCCL COLL line (AllReduce: no valid count); skipped");
  REQUIRE(t.comms.size() == 1);
  CHECK(t.comms[0].job == "0x9c3f1e2d4b5a6978");
  CHECK(t.comms[0].nranks == 16);
  CHECK(t.comms[0].ranks_seen == 2);
  CHECK(t.comms[0].coll_channels == 8);
  CHECK(t.comms[0].ring_channels == 8);
  CHECK(t.comms[0].channels() == 8);
}

TEST_CASE("replay: older NCCL log with launcher tags, two communicators and Send/Recv") {
  const auto t = read_nccl_logs({fixture("pp-1proc-nccl2.10-two-comms-p2p.log")});
  const std::string world = "node7:31337/0x55d8c05a2b40", sub = "node7:31337/0x55d8c1f03c80";
  CHECK(t.jobs() == std::vector<std::string>{world, sub});
  REQUIRE(t.calls.size() == 5);
  CHECK(t.calls[0].job == world);
  CHECK(t.calls[0].op == "allreduce");
  CHECK(t.calls[0].size_bytes == 8u << 20); // 4194304 x float16
  CHECK(t.calls[1].job == world);
  CHECK(t.calls[1].op_count == 1);
  CHECK(t.calls[2].job == sub);
  CHECK(t.calls[2].op == "allgather");
  CHECK(t.calls[2].size_bytes == 4u << 20); // 524288 x float32 x 2 ranks
  CHECK(t.calls[3].op == "send");
  CHECK(t.calls[3].peer == 1);
  CHECK(t.calls[3].rank == 0);
  CHECK(t.calls[3].size_bytes == 131072);
  CHECK(t.calls[4].op == "recv"); // same opCount as the Send (one group), not merged
  CHECK(t.calls[4].op_count == 1);
  CHECK(t.warnings.empty());
  REQUIRE(t.comms.size() == 2);
  CHECK(t.comm(world)->nranks == 4);
  CHECK(t.comm(world)->channels() == 4);
  CHECK(t.comm(world)->ring_channels == 4); // "Channel 00 : 3[1b000] -> 0[1a000]" is not a ring line
  CHECK(t.comm(sub)->nranks == 2);
  CHECK(t.comm(sub)->coll_channels == 2);
  CHECK(t.comm(sub)->ring_channels == 2);
}

TEST_CASE("replay: damaged NCCL COLL lines are skipped with a warning naming the line") {
  const auto t = read_nccl_logs({fixture("damaged-lines.log")});
  REQUIRE(t.calls.size() == 2);
  CHECK(t.calls[0].op == "allreduce");
  CHECK(t.calls[0].size_bytes == 4096);
  CHECK(t.calls[0].line == 2);
  CHECK(t.calls[1].op == "allgather");
  CHECK(t.calls[1].size_bytes == 8192); // 2048 x int8 x 4 ranks
  CHECK(t.calls[1].line == 5);
  const std::string f = fixture("damaged-lines.log");
  const std::vector<std::string> want = {
      f + ":3: unknown NCCL datatype 42 (known 0-11); line skipped",
      f + ":4: unknown NCCL operation 'Frobnicate'; line skipped",
      f + ":5: NCCL COLL line ends before 'stream' (truncated?); the call is kept",
      f + ":6: truncated or malformed NCCL COLL line (ReduceScatter: no valid count); skipped",
      f + ":7: truncated or malformed NCCL COLL line (AllReduce: no valid opCount); skipped",
      f + ":8: truncated NCCL COLL line (ends after the operation name); skipped"};
  CHECK(t.warnings == want);
}

TEST_CASE("replay: the real nccl-tests log has INIT lines but no COLL lines") {
  const std::string f = std::string(IBNETSIM_TEST_DATA) +
                        "/nccl-tests/moc-h100-cx7-roce400g-2node-all_reduce_roce_1gpu-nogdr-cci-moc.log";
  const auto t = read_nccl_logs({f});
  CHECK(t.calls.empty());
  REQUIRE(t.warnings.size() == 1);
  CHECK(t.warnings[0].find("no NCCL COLL lines") != std::string::npos);
  REQUIRE(t.comms.size() == 1);
  CHECK(t.comms[0].job == "0x48682ccd036f5cb1");
  CHECK(t.comms[0].nranks == 2);
  CHECK(t.comms[0].coll_channels == 2);
  CHECK(t.comms[0].ring_channels == 2);
}

TEST_CASE("replay: per-rank log files merge into one communicator") {
  // Split the 16-rank fixture into one file per host, as NCCL_DEBUG_FILE=nccl.%h.%p would write them.
  std::ifstream in(fixture("train-2node-16rank-nccl2.21-coll.log"));
  const auto dir = std::filesystem::temp_directory_path() / "ibnetsim-replay-test";
  std::filesystem::create_directories(dir);
  const auto a = (dir / "gpu-a01.log").string(), b = (dir / "gpu-a02.log").string();
  {
    std::ofstream oa(a), ob(b);
    std::string l;
    while (std::getline(in, l)) (l.rfind("gpu-a02", 0) == 0 ? ob : oa) << l << "\n";
  }
  const auto t = read_nccl_logs({a, b});
  CHECK(t.calls.size() == 16);
  CHECK(t.jobs().size() == 1);
  CHECK(t.comms.size() == 1);
  CHECK(t.comms[0].ranks_seen == 2);
  std::filesystem::remove_all(dir);
  CHECK(error_of([] { read_nccl_logs({"/nonexistent/nccl.log"}); }) ==
        "/nonexistent/nccl.log: cannot open the NCCL log");
  // read_replay_file tells a JSON trace from a log by the first non-blank character.
  std::filesystem::create_directories(dir);
  const auto j = (dir / "t.json").string();
  std::ofstream(j) << "\n  " << one_call(R"({"op": "allreduce", "size_bytes": 8, "at_us": 1})");
  CHECK(read_replay_file(j).calls.at(0).size_bytes == 8);
  CHECK(read_replay_file(fixture("damaged-lines.log")).calls.size() == 2);
  std::filesystem::remove_all(dir);
}

TEST_CASE("replay: a rank copy that disagrees with the first copy is reported") {
  const auto t = log_text(
      "h:1:1 [0] NCCL INFO comm 0x10 rank 0 nranks 2 cudaDev 0 busId 1000 commId 0xabc - Init COMPLETE\n"
      "h:2:2 [1] NCCL INFO comm 0x20 rank 1 nranks 2 cudaDev 1 busId 2000 commId 0xabc - Init COMPLETE\n"
      "h:1:1 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count 8 datatype 7 op 0 root 0 "
      "comm 0x10 "
      "[nranks=2] stream 0x5\n"
      "h:2:2 [1] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count 16 datatype 7 op 0 root 0 "
      "comm 0x20 "
      "[nranks=2] stream 0x5\n");
  REQUIRE(t.calls.size() == 1);
  CHECK(t.calls[0].size_bytes == 32);
  REQUIRE(t.warnings.size() == 1);
  CHECK(t.warnings[0] ==
        "mem.log:4: allreduce of 64 bytes differs from the same call (opCount 0) of another rank "
        "at mem.log:3 (allreduce, 32 bytes); kept the first");
}
