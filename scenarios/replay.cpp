#include "scenarios/replay.hpp"

#include "calibration/text_scan.hpp"
#include "sim/atomic_file.hpp"
#include "sim/error.hpp"
#include "sim/json_text.hpp"
#include "sim/units.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

namespace ibn::scen {
namespace {

using nlohmann::json;
namespace ts = calib::detail;

struct DtypeRow {
  const char* name;
  std::uint32_t bytes;
};
// Index = ncclDataType_t value (nccl.h: ncclInt8 = 0 ... ncclBfloat16 = 9, ncclFloat8e4m3 = 10,
// ncclFloat8e5m2 = 11).
constexpr std::array<DtypeRow, 12> kNcclTypes = {{{"int8", 1},
                                                  {"uint8", 1},
                                                  {"int32", 4},
                                                  {"uint32", 4},
                                                  {"int64", 8},
                                                  {"uint64", 8},
                                                  {"float16", 2},
                                                  {"float32", 4},
                                                  {"float64", 8},
                                                  {"bfloat16", 2},
                                                  {"float8e4m3", 1},
                                                  {"float8e5m2", 1}}};

std::string squash(const std::string& s) {
  std::string r;
  for (const char c : s)
    if (c != '_' && c != '-' && c != ' ') r += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

bool is_p2p(const std::string& op) {
  return op == "send" || op == "recv";
}
bool is_gathered(const std::string& op) {
  return op == "allgather" || op == "reducescatter";
}

std::string show(const json& v) {
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

// ---------------------------------------------------------------------------------------------------------
// JSON trace

class TraceReader {
 public:
  explicit TraceReader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& msg) const {
    throw InputError(source_ + ": " + (path.empty() ? "/" : path) + ": " + msg);
  }

  template <std::size_t N>
  void check_keys(const json& obj, const std::string& path, const std::array<const char*, N>& allowed) const {
    if (!obj.is_object()) fail(path, "expected a JSON object, got " + show(obj));
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      if (std::find_if(allowed.begin(), allowed.end(), [&](const char* k) { return it.key() == k; }) !=
          allowed.end())
        continue;
      std::string known;
      for (const char* k : allowed) known += (known.empty() ? "" : ", ") + std::string(k);
      fail(path + "/" + it.key(), "unknown key '" + it.key() + "' (allowed: " + known + ")");
    }
  }

  const std::string& str(const json& obj, const std::string& path, const char* key) const {
    const json& v = obj.at(key);
    if (!v.is_string() || v.get_ref<const std::string&>().empty())
      fail(path + "/" + key, "expected a non-empty string, got " + show(v));
    return v.get_ref<const std::string&>();
  }

  std::uint64_t positive(const json& obj, const std::string& path, const char* key) const {
    const json& v = obj.at(key);
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > 0) return v.get<std::uint64_t>();
    if (v.is_number_integer() && v.get<std::int64_t>() > 0)
      return static_cast<std::uint64_t>(v.get<std::int64_t>());
    fail(path + "/" + key, "expected a positive integer, got " + show(v));
  }

  double nonneg_us(const json& obj, const std::string& path, const char* key) const {
    const json& v = obj.at(key);
    if (v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() >= 0) return v.get<double>();
    fail(path + "/" + key, "expected a number of microseconds >= 0, got " + show(v));
  }

  ReplayTrace read(const json& root) const {
    static constexpr std::array<const char*, 3> kTop = {"format", "version", "jobs"};
    static constexpr std::array<const char*, 3> kJob = {"name", "nranks", "calls"};
    static constexpr std::array<const char*, 9> kCall = {
        "op", "size_bytes", "count", "datatype", "at_us", "after", "gap_us", "algorithm", "nranks"};
    check_keys(root, "", kTop);
    if (root.contains("format") && root["format"] != "ibnetsim-trace")
      fail("/format", "expected \"ibnetsim-trace\", got " + show(root["format"]));
    if (root.contains("version") && root["version"] != 1)
      fail("/version", "this reader knows version 1, got " + show(root["version"]));
    if (!root.contains("jobs")) fail("", "missing key 'jobs' (a list of {\"name\", \"calls\"})");
    const json& jobs = root["jobs"];
    if (!jobs.is_array() || jobs.empty())
      fail("/jobs", "expected a non-empty list of jobs, got " + show(jobs));

    ReplayTrace t;
    std::set<std::string> names;
    for (std::size_t ji = 0; ji < jobs.size(); ++ji) {
      const std::string jp = "/jobs/" + std::to_string(ji);
      const json& job = jobs[ji];
      check_keys(job, jp, kJob);
      if (!job.contains("name")) fail(jp, "missing key 'name'");
      if (!job.contains("calls")) fail(jp, "missing key 'calls'");
      const std::string name = str(job, jp, "name");
      if (!names.insert(name).second) fail(jp + "/name", "job '" + name + "' is defined twice");
      const std::uint32_t job_nranks =
          job.contains("nranks")
              ? static_cast<std::uint32_t>(std::min<std::uint64_t>(positive(job, jp, "nranks"), 1u << 30))
              : 0;
      const json& calls = job["calls"];
      if (!calls.is_array() || calls.empty())
        fail(jp + "/calls", "expected a non-empty list of calls, got " + show(calls));
      for (std::size_t ci = 0; ci < calls.size(); ++ci) {
        const std::string cp = jp + "/calls/" + std::to_string(ci);
        const json& c = calls[ci];
        check_keys(c, cp, kCall);
        CollectiveCall call;
        call.job = name;
        call.where = source_ + ": " + cp;
        if (!c.contains("op")) fail(cp, "missing key 'op'");
        call.op = canonical_op(str(c, cp, "op"));
        if (call.op.empty() || is_p2p(call.op))
          fail(cp + "/op",
               "unknown operation " + show(c["op"]) +
                   " (expected allreduce, allgather, reducescatter, alltoall, broadcast, reduce or "
                   "sendrecv)");
        call.nranks =
            c.contains("nranks")
                ? static_cast<std::uint32_t>(std::min<std::uint64_t>(positive(c, cp, "nranks"), 1u << 30))
                : job_nranks;
        const bool has_size = c.contains("size_bytes"), has_count = c.contains("count");
        if (has_size == has_count) fail(cp, "give either 'size_bytes' or 'count' with 'datatype'");
        if (has_size) {
          if (c.contains("datatype"))
            fail(cp + "/datatype", "'datatype' goes with 'count', not with 'size_bytes'");
          const json& v = c["size_bytes"];
          call.size_bytes = v.is_string()
                                ? parse_size_bytes(v.get<std::string>(), source_ + ": " + cp + "/size_bytes")
                                : positive(c, cp, "size_bytes");
          if (call.size_bytes == 0) fail(cp + "/size_bytes", "must be at least 1 byte");
        } else {
          if (!c.contains("datatype")) fail(cp, "'count' needs a 'datatype' (float32, bfloat16, ...)");
          const auto dt = datatype_by_name(str(c, cp, "datatype"));
          if (!dt)
            fail(cp + "/datatype",
                 "unknown datatype " + show(c["datatype"]) +
                     " (int8, uint8, int32, uint32, int64, uint64, float16, float32, float64, "
                     "bfloat16, float8e4m3, float8e5m2)");
          call.count = positive(c, cp, "count");
          call.datatype = dt->name;
          call.size_bytes = call.count * dt->bytes;
        }
        call.bytes_per_rank = call.size_bytes;
        if (is_gathered(call.op) && call.nranks > 0) call.bytes_per_rank = call.size_bytes / call.nranks;
        const bool timed = c.contains("at_us"), after = c.contains("after");
        if (timed == after)
          fail(cp, "give either 'at_us' (a timed call) or 'after': \"previous\" (a dependent call)");
        if (timed) {
          if (c.contains("gap_us")) fail(cp + "/gap_us", "'gap_us' goes with 'after', not with 'at_us'");
          call.at = Time::from_us(nonneg_us(c, cp, "at_us"));
          // A job's calls run one after another in list order (one NCCL stream): a timed call listed after
          // a later one would wait for it, not start at its time.
          for (auto it = t.calls.rbegin(); it != t.calls.rend() && it->job == call.job; ++it) {
            if (!it->at) continue;
            if (*it->at > *call.at)
              fail(cp + "/at_us", "starts before the job's earlier call at " + show(json(it->at->to_us())) +
                                      " us; a job's calls run in list order (one stream): list them by time");
            break;
          }
        } else {
          if (c["after"] != "previous")
            fail(cp + "/after", "expected \"previous\" (the job's previous call), got " + show(c["after"]));
          if (c.contains("gap_us")) call.gap = Time::from_us(nonneg_us(c, cp, "gap_us"));
        }
        if (c.contains("algorithm")) call.algorithm = str(c, cp, "algorithm");
        t.calls.push_back(std::move(call));
      }
    }
    return t;
  }

 private:
  std::string source_;
};

// ---------------------------------------------------------------------------------------------------------
// NCCL log

struct ProcComm {
  std::string proc; // HOST:PID
  std::string ptr;  // comm pointer
  bool operator<(const ProcComm& o) const { return std::tie(proc, ptr) < std::tie(o.proc, o.ptr); }
};

struct CommState {
  std::string comm_id; // from the init line, when printed
  int rank = -1;
  std::uint32_t nranks = 0;
  std::uint32_t coll_channels = 0;
  std::uint32_t ring_channels = 0;
  std::size_t first_seen = 0; // order of first appearance
};

struct PendingCall {
  CollectiveCall call;
  ProcComm pc;
  std::size_t copy = 0; // position among this rank's calls with the same opCount
  std::size_t order = 0;
};

bool is_pointer(std::string_view s) {
  if (s == "(nil)" || s == "0") return true;
  if (s.size() < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) return false;
  return std::all_of(s.begin() + 2, s.end(),
                     [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

std::optional<std::uint64_t> parse_hex(std::string_view s) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  if (s.empty() || s.size() > 16) return std::nullopt;
  std::uint64_t v = 0;
  for (const char c : s) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return std::nullopt;
    v = v * 16 + static_cast<std::uint64_t>(std::isdigit(static_cast<unsigned char>(c))
                                                ? c - '0'
                                                : std::tolower(static_cast<unsigned char>(c)) - 'a' + 10);
  }
  return v;
}

class LogParser {
 public:
  explicit LogParser(NcclLogOptions opt) : opt_(opt) {}

  void feed(std::istream& in, const std::string& source) {
    source_ = source;
    const std::size_t before = pending_.size();
    for (const auto& l : ts::read_lines(in)) line(l.text, l.number);
    if (pending_.size() == before)
      warnings_.push_back(source +
                          ": no NCCL COLL lines (\"NCCL INFO AllReduce: opCount ...\") found; was the "
                          "run made with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL?");
  }

  ReplayTrace finish() {
    // Channel lines never followed by a comm line: the thread's last named communicator.
    for (const auto& [thread, pc] : current_) take_pending(thread, comm(pc));
    ReplayTrace t;
    t.warnings = std::move(warnings_);
    // Communicator names: commId when known, else HOST:PID/0xPTR.
    auto job_of = [&](const ProcComm& pc) {
      const auto it = comms_.find(pc);
      if (it != comms_.end() && !it->second.comm_id.empty()) return it->second.comm_id;
      return pc.proc + "/" + pc.ptr;
    };
    // Merge the ranks' copies of each collective.
    std::map<std::tuple<std::string, std::uint64_t, std::size_t>, std::size_t> seen; // -> index in merged
    std::vector<CollectiveCall> merged;
    for (auto& p : pending_) {
      p.call.job = job_of(p.pc);
      if (!is_p2p(p.call.op)) {
        const auto key = std::make_tuple(p.call.job, p.call.op_count, p.copy);
        const auto [it, inserted] = seen.emplace(key, merged.size());
        if (!inserted) {
          const auto& first = merged[it->second];
          if (first.op != p.call.op || first.size_bytes != p.call.size_bytes)
            t.warnings.push_back(
                p.call.where + ": " + p.call.op + " of " + std::to_string(p.call.size_bytes) +
                " bytes differs from the same call (opCount " + std::to_string(p.call.op_count) +
                ") of another rank at " + first.where + " (" + first.op + ", " +
                std::to_string(first.size_bytes) + " bytes); kept the first");
          continue;
        }
        p.call.rank = -1;
      }
      merged.push_back(std::move(p.call));
    }
    // Group by job, jobs in order of first appearance, calls in log order.
    std::vector<std::string> order;
    std::map<std::string, std::vector<CollectiveCall>> by_job;
    for (auto& c : merged) {
      if (!by_job.count(c.job)) order.push_back(c.job);
      by_job[c.job].push_back(std::move(c));
    }
    for (const auto& j : order)
      for (auto& c : by_job[j]) t.calls.push_back(std::move(c));

    // Communicator summaries.
    std::vector<std::pair<std::size_t, ProcComm>> by_first;
    for (const auto& [pc, st] : comms_) by_first.emplace_back(st.first_seen, pc);
    std::sort(by_first.begin(), by_first.end());
    std::map<std::string, std::size_t> idx;
    std::map<std::string, std::set<int>> ranks;
    for (const auto& [first, pc] : by_first) {
      const auto& st = comms_.at(pc);
      const std::string job = job_of(pc);
      auto [it, inserted] = idx.emplace(job, t.comms.size());
      if (inserted) {
        t.comms.push_back(CommInfo{});
        t.comms.back().job = job;
      }
      CommInfo& ci = t.comms[it->second];
      ci.nranks = std::max(ci.nranks, st.nranks);
      ci.coll_channels = std::max(ci.coll_channels, st.coll_channels);
      ci.ring_channels = std::max(ci.ring_channels, st.ring_channels);
      ranks[job].insert(st.rank >= 0 ? st.rank : -1 - static_cast<int>(first));
    }
    for (auto& ci : t.comms) ci.ranks_seen = static_cast<std::uint32_t>(ranks[ci.job].size());
    return t;
  }

 private:
  void warn(std::size_t n, const std::string& msg) { warnings_.push_back(at_line(source_, n, msg)); }

  CommState& comm(const ProcComm& pc) {
    auto [it, inserted] = comms_.emplace(pc, CommState{});
    if (inserted) it->second.first_seen = comms_.size();
    return it->second;
  }

  void line(const std::string& text, std::size_t n) {
    const auto info = text.find("NCCL INFO ");
    if (info == std::string::npos) return;
    // Prefix "HOST:PID:TID [DEV] " just before "NCCL INFO" (possibly after launcher tags).
    std::string proc = "?", thread = "?";
    {
      std::string_view pre = ts::trim(std::string_view(text).substr(0, info));
      const auto toks = ts::split_ws(pre);
      if (toks.size() >= 2) {
        const std::string_view id = toks[toks.size() - 2];
        const auto c2 = id.rfind(':');
        const auto c1 =
            c2 == std::string_view::npos || c2 == 0 ? std::string_view::npos : id.rfind(':', c2 - 1);
        if (c1 != std::string_view::npos) {
          std::string_view host = id.substr(0, c1);
          if (const auto gt = host.rfind('>'); gt != std::string_view::npos)
            host = host.substr(gt + 1); // "<stdout>:"
          if (!host.empty() && host.front() == ':') host.remove_prefix(1);
          proc = std::string(host) + ":" + std::string(id.substr(c1 + 1, c2 - c1 - 1));
          thread = std::string(id);
        }
      }
    }
    const std::string_view body = std::string_view(text).substr(info + 10);
    const auto toks = ts::split_ws(body);
    if (toks.empty()) return;

    // Collective call: "Op: opCount ..."
    if (toks[0].size() > 1 && toks[0].back() == ':' && toks.size() >= 2 && toks[1] == "opCount") {
      coll_line(toks, proc, n);
      return;
    }
    if (toks[0].size() > 1 && toks[0].back() == ':' && toks.size() == 1 &&
        std::all_of(toks[0].begin(), toks[0].end() - 1,
                    [](char c) { return std::isalpha(static_cast<unsigned char>(c)); })) {
      const std::string op = canonical_op(std::string(toks[0].substr(0, toks[0].size() - 1)));
      if (!op.empty()) warn(n, "truncated NCCL COLL line (ends after the operation name); skipped");
      return;
    }
    // "[ncclCommInitRank] comm 0x.. rank R nranks|nRanks N ... [commId 0x..]"
    for (std::size_t i = 0; i + 5 < toks.size() && i < 2; ++i) {
      if (toks[i] == "comm" && is_pointer(toks[i + 1]) && toks[i + 2] == "rank" &&
          (toks[i + 4] == "nranks" || toks[i + 4] == "nRanks")) {
        const ProcComm pc{proc, std::string(toks[i + 1])};
        CommState& st = comm(pc);
        if (const auto r = ts::parse_u64(toks[i + 3])) st.rank = static_cast<int>(*r);
        if (const auto r = ts::parse_u64(toks[i + 5])) st.nranks = static_cast<std::uint32_t>(*r);
        for (std::size_t k = i + 6; k + 1 < toks.size(); ++k)
          if (toks[k] == "commId" && is_pointer(toks[k + 1])) st.comm_id = std::string(toks[k + 1]);
        current_[thread] = pc;
        take_pending(thread, st);
        return;
      }
    }
    // "N coll channels, ..."
    if (toks.size() >= 3 && toks[1] == "coll" && (toks[2] == "channels," || toks[2] == "channels")) {
      if (const auto v = ts::parse_u64(toks[0]))
        pending_channels_[thread].coll = static_cast<std::uint32_t>(*v);
      return;
    }
    // Ring order line "Channel NN/MM : r r r" (connection lines "Channel 00/0 : 1[0] -> 0[0] ..." excluded).
    if (toks.size() >= 4 && toks[0] == "Channel" && toks[2] == ":") {
      const auto slash = toks[1].find('/');
      if (slash == std::string_view::npos) return;
      for (std::size_t k = 3; k < toks.size(); ++k)
        if (!ts::parse_u64(toks[k])) return;
      const auto total = ts::parse_u64(toks[1].substr(slash + 1));
      if (total) {
        auto& p = pending_channels_[thread];
        p.ring = std::max(p.ring, static_cast<std::uint32_t>(*total));
      }
    }
  }

  /// Channel lines wait for the next line of the same thread that names a communicator (NCCL >= 2.12
  /// prints the comm first and "Init COMPLETE" after; older versions only "Init COMPLETE" after).
  void take_pending(const std::string& thread, CommState& st) {
    const auto it = pending_channels_.find(thread);
    if (it == pending_channels_.end()) return;
    if (it->second.coll) st.coll_channels = it->second.coll;
    st.ring_channels = std::max(st.ring_channels, it->second.ring);
    pending_channels_.erase(it);
  }

  void coll_line(const std::vector<std::string_view>& toks, const std::string& proc, std::size_t n) {
    const std::string name(toks[0].substr(0, toks[0].size() - 1));
    const std::string op = canonical_op(name);
    if (op.empty()) {
      warn(n, "unknown NCCL operation '" + name + "'; line skipped");
      return;
    }
    std::optional<std::uint64_t> op_count, count;
    std::optional<std::int64_t> dtype, root;
    std::optional<std::uint32_t> nranks;
    std::string comm_ptr;
    bool stream = false;
    for (std::size_t i = 1; i < toks.size(); ++i) {
      const std::string_view k = toks[i];
      const std::string_view v = i + 1 < toks.size() ? toks[i + 1] : std::string_view();
      if (k.rfind("[nranks=", 0) == 0) {
        std::string_view num = k.substr(8);
        if (!num.empty() && num.back() == ']') {
          num.remove_suffix(1);
          if (const auto r = ts::parse_u64(num)) nranks = static_cast<std::uint32_t>(*r);
        }
        continue;
      }
      if (v.empty()) break;
      if (k == "opCount") {
        op_count = parse_hex(v);
      } else if (k == "count") {
        count = ts::parse_u64(v);
      } else if (k == "datatype") {
        dtype = ts::parse_i64(v);
      } else if (k == "root") {
        root = ts::parse_i64(v);
      } else if (k == "comm") {
        if (is_pointer(v)) comm_ptr = std::string(v);
      } else if (k == "stream") {
        stream = is_pointer(v);
      } else {
        continue; // sendbuff, recvbuff, op, task, globalrank, ...: not needed
      }
      ++i;
    }
    std::string missing;
    if (!op_count)
      missing = "opCount";
    else if (!count)
      missing = "count";
    else if (!dtype)
      missing = "datatype";
    else if (comm_ptr.empty())
      missing = "comm";
    else if (!nranks)
      missing = "[nranks=N]";
    if (!missing.empty()) {
      warn(n, "truncated or malformed NCCL COLL line (" + name + ": no valid " + missing + "); skipped");
      return;
    }
    if (!stream) warn(n, "NCCL COLL line ends before 'stream' (truncated?); the call is kept");
    const auto dt = nccl_datatype(*dtype);
    if (!dt) {
      warn(n, "unknown NCCL datatype " + std::to_string(*dtype) + " (known 0-11); line skipped");
      return;
    }
    PendingCall p;
    p.pc = ProcComm{proc, comm_ptr};
    CommState& st = comm(p.pc);
    if (st.nranks == 0) st.nranks = *nranks;
    CollectiveCall& c = p.call;
    c.op = op;
    c.count = *count;
    c.datatype = dt->name;
    c.nranks = *nranks;
    c.op_count = *op_count;
    c.bytes_per_rank = *count * dt->bytes;
    c.size_bytes = is_gathered(op) ? c.bytes_per_rank * *nranks : c.bytes_per_rank;
    c.gap = opt_.gap;
    c.line = n;
    c.where = source_ + ":" + std::to_string(n);
    if (is_p2p(op)) {
      c.rank = st.rank;
      c.peer = root ? static_cast<int>(*root) : -1;
    }
    p.copy = copies_[std::make_tuple(p.pc.proc, p.pc.ptr, *op_count)]++;
    p.order = pending_.size();
    pending_.push_back(std::move(p));
  }

  NcclLogOptions opt_;
  std::string source_;
  std::vector<std::string> warnings_;
  std::map<ProcComm, CommState> comms_;
  std::map<std::string, ProcComm> current_; // HOST:PID:TID -> the communicator it last named
  struct Channels {
    std::uint32_t coll = 0, ring = 0;
  };
  std::map<std::string, Channels> pending_channels_; // HOST:PID:TID -> channel lines not yet attributed
  std::map<std::tuple<std::string, std::string, std::uint64_t>, std::size_t> copies_;
  std::vector<PendingCall> pending_;
};

} // namespace

std::vector<std::string> ReplayTrace::jobs() const {
  std::vector<std::string> v;
  for (const auto& c : calls)
    if (std::find(v.begin(), v.end(), c.job) == v.end()) v.push_back(c.job);
  return v;
}

const CommInfo* ReplayTrace::comm(const std::string& job) const {
  for (const auto& c : comms)
    if (c.job == job) return &c;
  return nullptr;
}

std::string canonical_op(const std::string& name) {
  static const std::map<std::string, std::string> kOps = {{"allreduce", "allreduce"},
                                                          {"allgather", "allgather"},
                                                          {"reducescatter", "reducescatter"},
                                                          {"alltoall", "alltoall"},
                                                          {"broadcast", "broadcast"},
                                                          {"bcast", "broadcast"},
                                                          {"reduce", "reduce"},
                                                          {"sendrecv", "sendrecv"},
                                                          {"send", "send"},
                                                          {"recv", "recv"}};
  std::string s = squash(name);
  if (s.size() > 4 && s.rfind("nccl", 0) == 0) s = s.substr(4);
  if (s.size() > 5 && s.substr(s.size() - 5) == "_perf") s.resize(s.size() - 5);
  if (s.size() > 4 && s.substr(s.size() - 4) == "perf") s.resize(s.size() - 4);
  const auto it = kOps.find(s);
  return it == kOps.end() ? "" : it->second;
}

std::optional<DatatypeInfo> datatype_by_name(const std::string& name) {
  static const std::map<std::string, std::string> kAliases = {
      {"char", "int8"},         {"i8", "int8"},       {"u8", "uint8"},       {"int", "int32"},
      {"i32", "int32"},         {"u32", "uint32"},    {"i64", "int64"},      {"u64", "uint64"},
      {"half", "float16"},      {"fp16", "float16"},  {"f16", "float16"},    {"float", "float32"},
      {"fp32", "float32"},      {"f32", "float32"},   {"double", "float64"}, {"fp64", "float64"},
      {"f64", "float64"},       {"bf16", "bfloat16"}, {"b16", "bfloat16"},   {"fp8e4m3", "float8e4m3"},
      {"fp8e5m2", "float8e5m2"}};
  std::string s = squash(name);
  if (s.size() > 4 && s.rfind("nccl", 0) == 0) s = s.substr(4);
  if (const auto it = kAliases.find(s); it != kAliases.end()) s = it->second;
  for (const auto& row : kNcclTypes)
    if (s == row.name) return DatatypeInfo{row.name, row.bytes};
  return std::nullopt;
}

std::optional<DatatypeInfo> nccl_datatype(std::int64_t value) {
  if (value < 0 || value >= static_cast<std::int64_t>(kNcclTypes.size())) return std::nullopt;
  const auto& row = kNcclTypes[static_cast<std::size_t>(value)];
  return DatatypeInfo{row.name, row.bytes};
}

ReplayTrace parse_trace_json(std::istream& in, const std::string& source) {
  std::ostringstream text;
  text << in.rdbuf();
  const json root = parse_json_text(text.str(), source, "not valid JSON"); // file:line:col, overflow, nesting
  return TraceReader(source).read(root);
}

ReplayTrace read_trace_json(const std::string& path) {
  refuse_folder(path, "a trace file");
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open the trace file");
  return parse_trace_json(in, path);
}

ReplayTrace parse_nccl_log(std::istream& in, const std::string& source, const NcclLogOptions& opt) {
  LogParser p(opt);
  p.feed(in, source);
  return p.finish();
}

ReplayTrace read_nccl_logs(const std::vector<std::string>& paths, const NcclLogOptions& opt) {
  if (paths.empty()) throw InputError("no NCCL log file given");
  LogParser p(opt);
  for (const auto& path : paths) {
    refuse_folder(path, "an NCCL log");
    std::ifstream in(path);
    if (!in) throw InputError(path + ": cannot open the NCCL log");
    p.feed(in, path);
  }
  return p.finish();
}

ReplayTrace read_replay_file(const std::string& path, const NcclLogOptions& opt) {
  refuse_folder(path, "a replay file");
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open the replay file");
  char c = 0;
  while (in.get(c) && std::isspace(static_cast<unsigned char>(c))) {
  }
  in.close();
  return c == '{' ? read_trace_json(path) : read_nccl_logs({path}, opt);
}

} // namespace ibn::scen
