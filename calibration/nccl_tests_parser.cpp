#include "calibration/nccl_tests_parser.hpp"

#include "calibration/nccl_tests_table.hpp"

#include "calibration/text_scan.hpp"
#include "sim/atomic_file.hpp"
#include "sim/error.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <map>
#include <set>

namespace ibn::calib {
namespace {

using detail::find_word;
using detail::Line;
using detail::split_ws;
using detail::starts_with;
using detail::trim;

using nccl_table::Binary;
using nccl_table::find_binary;
using nccl_table::find_command;
using nccl_table::is_table_header;
using nccl_table::Layout;
using nccl_table::parse_layout;
using nccl_table::type_size;

// ---- per-test state ----------------------------------------------------------------------------------

struct Section {
  NcclTestsRun run;
  bool is_test = false; ///< saw a test marker ("# nThread", "# Collective test starting", version line)
  std::optional<NcclCollective> log_collective;
  std::string log_name;
  std::size_t log_line = 0;
  std::optional<Binary> hint;
  std::map<std::string, std::string> launcher_env; ///< NCCL_* given on the command line (-x NAME=V, ...)
  std::optional<Layout> layout;
  bool table_open = false; ///< rows may still follow
  bool summary_after_rows = false;
  bool summary_seen = false; ///< an "# Out of bounds" / "# Avg bus bandwidth" line, with or without rows
  unsigned markers_seen = 0; ///< Marker bits: a marker seen twice starts a new test
  /// True once this test's output is over (its table or its summary was printed): a command line or NCCL
  /// INFO output that follows belongs to the next test.
  bool complete() const { return layout.has_value() || summary_seen; }
  bool truncated = false;
  bool any_ip = false;
  std::vector<std::size_t> prose; ///< line indices of unknown text between rows
  std::optional<int> info_nranks, info_nnodes, info_local;
  std::uint64_t nccl_library_code = 0;
};

class Reader {
 public:
  Reader(std::vector<Line> lines, const std::string& source) : lines_(std::move(lines)), source_(source) {}

  std::vector<NcclTestsRun> read() {
    for (std::size_t k = 0; k < lines_.size(); ++k) {
      const std::string_view t = trim(lines_[k].text);
      const std::size_t ln = lines_[k].number;
      if (t.empty()) continue;
      if (cur_.run.first_line == 0) cur_.run.first_line = ln;
      if (is_log_line(t)) {
        if (cur_.summary_after_rows || (cur_.summary_seen && !cur_.layout))
          held_info_.push_back(k); // may belong to the next test
        else
          read_info(cur_, t);
        continue;
      }
      if (t.front() == '#') {
        read_comment(t, ln);
        continue;
      }
      if (cur_.layout && cur_.table_open) {
        read_table_line(k);
        continue;
      }
      if (auto b = find_command(t)) note_hint(*b, t);
    }
    for (std::size_t k : held_info_) read_info(cur_, trim(lines_[k].text));
    held_info_.clear();
    close_section();

    const bool any_rows =
        std::any_of(runs_.begin(), runs_.end(), [](const NcclTestsRun& r) { return !r.rows.empty(); });
    if (!any_rows) {
      // What the reader noticed on the way (a table cut mid-row, a test without its table) is the answer to
      // "why no rows": it goes into the message, which is all the user gets.
      std::string seen;
      std::size_t n = 0;
      for (const NcclTestsRun& r : runs_)
        for (const std::string& w : r.warnings)
          if (n++ < 4) seen += (seen.empty() ? "" : "; ") + w;
      if (n > 4) seen += "; and " + std::to_string(n - 4) + " more";
      throw InputError(source_ +
                       ": no nccl-tests results table found (expected a '#  size  count  type ...' "
                       "header followed by rows)" +
                       (seen.empty() ? std::string() : ". The reader noted: " + seen));
    }
    return std::move(runs_);
  }

 private:
  static bool is_log_line(std::string_view t) {
    return t.find(" NCCL INFO") != std::string_view::npos || t.find(" NCCL WARN") != std::string_view::npos ||
           starts_with(t, "NCCL INFO") || starts_with(t, "NCCL WARN") || plain_version(t).has_value();
  }

  /// "2.26.2+cuda12.8" -> "2.26.2": digits separated by dots (two or three groups), then optionally '+' and
  /// a build tag; anything else is not a version.
  static std::optional<std::string> version_token(std::string_view tok) {
    const std::string_view v = tok.substr(0, tok.find('+'));
    std::size_t groups = 0;
    for (std::size_t i = 0; i <= v.size(); ++groups) {
      const std::size_t dot = std::min(v.find('.', i), v.size());
      if (dot == i || !detail::parse_u64(v.substr(i, dot - i))) return std::nullopt;
      i = dot + 1;
    }
    if (groups < 2 || groups > 3) return std::nullopt;
    return std::string(v);
  }

  /// The line NCCL prints at init with NCCL_DEBUG=VERSION (and nccl-tests between the rank lines and the
  /// table), without the "HOST:PID:TID NCCL INFO" prefix: "NCCL version 2.26.2+cuda12.8".
  static std::optional<std::string> plain_version(std::string_view t) {
    if (!starts_with(t, "NCCL version ")) return std::nullopt;
    const auto toks = split_ws(t);
    return toks.size() >= 3 ? version_token(toks[2]) : std::nullopt;
  }

  void note_hint(const Binary& b, std::string_view command) {
    auto env = launcher_env(command);
    if (cur_.complete()) {
      pending_hint_ = b; // a command after this test's table: it starts the next one
      pending_env_ = std::move(env);
    } else {
      cur_.hint = b;
      cur_.launcher_env = std::move(env);
    }
  }

  /// NCCL_* variables a launcher line sets for the test: mpirun's "-x NAME=V", MPICH's "-genv NAME V",
  /// "--env NAME=V", srun's "--export=ALL,NAME=V", and "NAME=V" words before the binary (env or shell).
  static std::map<std::string, std::string> launcher_env(std::string_view command) {
    std::map<std::string, std::string> env;
    const auto toks = split_ws(command);
    auto add = [&](std::string_view kv) {
      const std::size_t eq = kv.find('=');
      if (eq == std::string_view::npos || eq == 0 || !starts_with(kv, "NCCL_")) return;
      std::string v(kv.substr(eq + 1));
      if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front())
        v = v.substr(1, v.size() - 2);
      env[std::string(kv.substr(0, eq))] = v;
    };
    for (std::size_t i = 0; i < toks.size(); ++i) {
      const std::string_view t = toks[i];
      if ((t == "-x" || t == "--env") && i + 1 < toks.size()) {
        add(toks[++i]);
      } else if ((t == "-genv" || t == "-env") && i + 2 < toks.size()) {
        if (starts_with(toks[i + 1], "NCCL_")) env[std::string(toks[i + 1])] = std::string(toks[i + 2]);
        i += 2;
      } else if (starts_with(t, "--export=")) {
        std::string_view rest = t.substr(9);
        while (!rest.empty()) {
          const std::size_t comma = rest.find(',');
          add(rest.substr(0, comma));
          if (comma == std::string_view::npos) break;
          rest = rest.substr(comma + 1);
        }
      } else {
        add(t);
      }
    }
    return env;
  }

  /// The lines that open a test's output, in the order nccl-tests prints them.
  enum Marker : unsigned { version_line = 1, test_starting = 2, nthread = 4, table_header = 8 };

  /// A test marker starts a new section when the current one already has its table or its summary, or has
  /// seen the same marker (a test cut before its table, as in a page that elides output, then the next test).
  void marker(std::size_t ln, Marker kind) {
    const bool repeated = (cur_.markers_seen & kind) != 0;
    if (cur_.complete() || repeated) {
      close_section();
      cur_ = Section{};
      cur_.run.first_line = ln;
      cur_.hint = pending_hint_;
      pending_hint_.reset();
      cur_.launcher_env = std::move(pending_env_);
      pending_env_.clear();
      for (std::size_t k : held_info_) read_info(cur_, trim(lines_[k].text));
    } else {
      for (std::size_t k : held_info_) read_info(cur_, trim(lines_[k].text));
    }
    held_info_.clear();
    cur_.is_test = true;
    cur_.markers_seen |= kind;
  }

  void read_comment(std::string_view t, std::size_t ln) {
    std::string_view c = t;
    while (!c.empty() && c.front() == '#') c.remove_prefix(1);
    c = trim(c);
    const auto toks = split_ws(c);
    if (cur_.layout && !cur_.run.rows.empty()) cur_.table_open = false; // a comment after rows ends the table

    if (starts_with(c, "nccl-tests version")) {
      marker(ln, version_line);
      if (toks.size() >= 3) cur_.run.nccl_tests_version = std::string(toks[2]);
      for (std::string_view tok : toks)
        if (starts_with(tok, "nccl-library="))
          if (auto v = detail::parse_u64(tok.substr(13))) cur_.nccl_library_code = *v;
      return;
    }
    if (starts_with(c, "Collective test starting:") || starts_with(c, "Collective test concluded:")) {
      const bool starting = starts_with(c, "Collective test starting:");
      const auto b = find_binary(c);
      if (starting) marker(ln, test_starting);
      if (b && (starting || !cur_.log_collective)) {
        cur_.log_collective = b->collective;
        cur_.log_name = std::string(b->name);
        cur_.log_line = ln;
      }
      return;
    }
    if (starts_with(c, "nThread")) {
      marker(ln, nthread);
      read_config(toks);
      return;
    }
    if (!toks.empty() && toks.front() == "Rank") {
      read_rank(toks, c, ln);
      return;
    }
    if (is_table_header(toks)) {
      if (cur_.complete()) marker(ln, table_header); // a second table without markers between: a new test
      cur_.layout = parse_layout(toks, source_, ln);
      cur_.table_open = true;
      cur_.run.table_line = ln;
      return;
    }
    if (starts_with(c, "Out of bounds values")) {
      const std::size_t colon = c.find(':');
      const auto rest = split_ws(colon == std::string_view::npos ? std::string_view() : c.substr(colon + 1));
      if (!rest.empty()) cur_.run.out_of_bounds = detail::parse_u64(rest[0]);
      if (rest.size() > 1 && rest[1] != "OK")
        cur_.run.warnings.push_back(
            at_line(source_, ln, "nccl-tests reports out-of-bounds values: '" + std::string(c) + "'"));
      if (!cur_.run.rows.empty()) cur_.summary_after_rows = true;
      cur_.summary_seen = true;
      return;
    }
    if (starts_with(c, "Avg bus bandwidth")) {
      const std::size_t colon = c.find(':');
      const auto rest = split_ws(colon == std::string_view::npos ? std::string_view() : c.substr(colon + 1));
      const auto v = rest.empty() ? std::nullopt : detail::parse_number(rest[0]);
      if (v && std::isfinite(*v))
        cur_.run.avg_busbw_gbs = *v;
      else
        cur_.run.warnings.push_back(
            at_line(source_, ln, "cannot read the average bus bandwidth: '" + std::string(c) + "'"));
      if (!cur_.run.rows.empty()) cur_.summary_after_rows = true;
      cur_.summary_seen = true;
      return;
    }
  }

  void read_config(const std::vector<std::string_view>& toks) {
    NcclTestsConfig& cfg = cur_.run.config;
    auto int_at = [&](std::size_t i) -> std::optional<int> {
      if (i >= toks.size()) return std::nullopt;
      const auto v = detail::parse_i64(toks[i]);
      if (!v || *v < 0 || *v > 1000000000) return std::nullopt;
      return static_cast<int>(*v);
    };
    auto u64_at = [&](std::size_t i) -> std::optional<std::uint64_t> {
      return i < toks.size() ? detail::parse_u64(toks[i]) : std::nullopt;
    };
    for (std::size_t i = 0; i < toks.size(); ++i) {
      const std::string_view t = toks[i];
      if (t == "nThread")
        cfg.nthread = int_at(i + 1);
      else if (t == "nGpus")
        cfg.ngpus = int_at(i + 1);
      else if (t == "minBytes")
        cfg.min_bytes = u64_at(i + 1);
      else if (t == "maxBytes")
        cfg.max_bytes = u64_at(i + 1);
      else if (t == "validation:")
        cfg.validation = int_at(i + 1);
      else if (t == "graph:")
        cfg.graph = int_at(i + 1);
      else if (t == "iters:") {
        const std::string_view prev = i > 0 ? toks[i - 1] : std::string_view();
        if (prev == "warmup")
          cfg.warmup_iters = int_at(i + 1);
        else if (prev == "agg")
          cfg.agg_iters = int_at(i + 1);
        else
          cfg.iters = int_at(i + 1);
      } else if (t == "step:" && i + 1 < toks.size()) {
        const std::string_view s = toks[i + 1];
        const std::size_t paren = s.find('(');
        const std::string_view num = s.substr(0, paren);
        if (s.find("(factor)") != std::string_view::npos)
          cfg.step_factor = detail::parse_number(num);
        else if (s.find("(bytes)") != std::string_view::npos)
          cfg.step_bytes = detail::parse_u64(num);
      }
    }
  }

  /// "Rank  0 Group  0 Pid 4180122 on cnode3-002 device  0 [0000:1b:00] NVIDIA H100 80GB HBM3" (Group is
  /// missing in older nccl-tests).
  void read_rank(const std::vector<std::string_view>& toks, std::string_view c, std::size_t ln) {
    NcclTestsRank r;
    bool ok = toks.size() >= 2;
    std::size_t i = 2;
    if (ok) {
      const auto rank = detail::parse_u64(toks[1]);
      ok = rank.has_value();
      if (ok) r.rank = static_cast<int>(*rank);
    }
    auto take = [&](std::string_view key) -> std::optional<std::string_view> {
      if (i + 1 < toks.size() && toks[i] == key) {
        i += 2;
        return toks[i - 1];
      }
      return std::nullopt;
    };
    if (ok)
      if (auto g = take("Group")) {
        const auto v = detail::parse_u64(*g);
        ok = v.has_value();
        if (ok) r.group = static_cast<int>(*v);
      }
    if (ok) {
      const auto pid = take("Pid");
      const auto pidv = pid ? detail::parse_i64(*pid) : std::nullopt;
      const auto host = take("on");
      const auto dev = take("device");
      const auto devv = dev ? detail::parse_u64(*dev) : std::nullopt;
      ok = pidv && host && devv;
      if (ok) {
        r.pid = *pidv;
        r.host = std::string(*host);
        r.device = static_cast<int>(*devv);
      }
    }
    if (!ok) {
      cur_.run.warnings.push_back(
          at_line(source_, ln, "cannot read nccl-tests rank line '" + std::string(c) + "'"));
      return;
    }
    if (i < toks.size() && toks[i].front() == '[' && toks[i].back() == ']') {
      r.bus_id = std::string(toks[i].substr(1, toks[i].size() - 2));
      ++i;
    }
    if (i < toks.size()) {
      const std::size_t at = static_cast<std::size_t>(toks[i].data() - c.data());
      r.gpu = std::string(trim(c.substr(at)));
    }
    cur_.run.ranks.push_back(std::move(r));
  }

  void read_info(Section& s, std::string_view t) {
    if (auto v = plain_version(t)) {
      s.run.nccl_version = *v;
      return;
    }
    std::string_view pre = t;
    std::size_t at = t.find("NCCL INFO");
    if (at == std::string_view::npos) return; // NCCL WARN lines carry no metadata we use
    pre = trim(t.substr(0, at));
    const std::string msg(trim(t.substr(at + 9)));
    // "HOST:PID:TID [DEV]" prefix
    std::string host;
    if (!pre.empty()) {
      const std::string_view first = split_ws(pre).front();
      const std::size_t c1 = first.find(':');
      if (c1 != std::string_view::npos && first.find(':', c1 + 1) != std::string_view::npos)
        host = std::string(first.substr(0, c1));
    }
    NcclTestsRun& run = s.run;
    const std::string_view mv(msg);
    const auto toks = split_ws(mv);
    auto int_after = [&](std::string_view key) -> std::optional<int> {
      for (std::size_t i = 0; i + 1 < toks.size(); ++i)
        if (toks[i] == key) {
          const auto v = detail::parse_u64(toks[i + 1]);
          if (v && *v <= 100000000) return static_cast<int>(*v);
        }
      return std::nullopt;
    };
    if (starts_with(mv, "NCCL version ")) {
      if (toks.size() > 2)
        if (auto v = version_token(toks[2])) run.nccl_version = *v;
      return;
    }
    if (starts_with(mv, "NET/IB : Using ")) {
      std::string_view list = mv.substr(15);
      list = list.substr(0, list.find(';'));
      for (std::string_view tok : split_ws(list))
        if (auto nic = parse_nic(tok, host)) {
          const bool dup = std::any_of(run.nics.begin(), run.nics.end(), [&](const NcclTestsNic& n) {
            return n.host == nic->host && n.name == nic->name && n.port == nic->port;
          });
          if (!dup) run.nics.push_back(std::move(*nic));
        }
      return;
    }
    if (starts_with(mv, "Using network ")) {
      run.network = std::string(trim(mv.substr(14)));
      return;
    }
    // "comm 0x.. rank 0 nRanks 2 nNodes 2 localRanks 1 ..." / "ncclCommInitRank comm 0x.. rank 0 nranks 2
    // ..."
    if (auto n = int_after("nRanks"))
      s.info_nranks = n;
    else if (auto m = int_after("nranks"))
      s.info_nranks = m;
    if (auto n = int_after("nNodes")) s.info_nnodes = n;
    if (auto n = int_after("localRanks")) s.info_local = n;
    // "Channel 00/02 : 0 1" (the ring order; not "Channel 00/0 : 1[0] -> 0[0] via NET/IB/1")
    if (toks.size() >= 4 && toks[0] == "Channel" && toks[2] == ":" &&
        std::all_of(toks.begin() + 3, toks.end(),
                    [](std::string_view t) { return detail::parse_u64(t).has_value(); })) {
      const std::size_t slash = toks[1].find('/');
      const auto n =
          slash == std::string_view::npos ? std::nullopt : detail::parse_u64(toks[1].substr(slash + 1));
      if (n && *n > 0 && *n < 100000)
        run.nchannels = std::max(run.nchannels.value_or(0), static_cast<int>(*n));
      return;
    }
    // "NCCL_ALGO set by environment to RING", "NCCL_IB_HCA set to mlx5_5"
    for (std::string_view phrase :
         {std::string_view(" set by environment to "), std::string_view(" set to ")}) {
      const std::size_t at_phrase = mv.find(phrase);
      if (at_phrase == std::string_view::npos || at_phrase == 0) continue;
      const std::string_view key = mv.substr(0, at_phrase);
      if (split_ws(key).size() != 1 || (phrase == " set to " && !starts_with(key, "NCCL_"))) continue;
      std::string v(trim(mv.substr(at_phrase + phrase.size())));
      while (!v.empty() && v.back() == '.') v.pop_back();
      run.env[std::string(key)] = v;
      return;
    }
    // A connection "via NET/<transport>/<dev>..." names "/GDRDMA" when it uses GPUDirect RDMA; one without it
    // stages through host memory. Any GDRDMA connection makes the run a GDR run; "GDR N" below has the
    // last word.
    if (mv.find("/GDRDMA") != std::string_view::npos)
      run.gdr = true;
    else if (mv.find(" via NET/") != std::string_view::npos && !run.gdr)
      run.gdr = false;
    if (mv.find("Connected all") != std::string_view::npos)
      if (auto g = int_after("GDR")) run.gdr = *g != 0;
  }

  /// "[0]mlx5_5:1/RoCE" -> {host, "mlx5_5", 1, "RoCE"}; anything else (e.g. "[RO]") -> empty.
  static std::optional<NcclTestsNic> parse_nic(std::string_view tok, const std::string& host) {
    if (tok.empty() || tok.front() != '[') return std::nullopt;
    const std::size_t close = tok.find(']');
    if (close == std::string_view::npos || !detail::parse_u64(tok.substr(1, close - 1))) return std::nullopt;
    const std::string_view rest = tok.substr(close + 1);
    const std::size_t colon = rest.find(':');
    const std::size_t slash = rest.find('/');
    if (colon == std::string_view::npos || slash == std::string_view::npos || colon == 0 || slash < colon)
      return std::nullopt;
    const auto port = detail::parse_u64(rest.substr(colon + 1, slash - colon - 1));
    const std::string_view link = rest.substr(slash + 1);
    if (!port || *port > 255 || link.empty()) return std::nullopt;
    return NcclTestsNic{host, std::string(rest.substr(0, colon)), static_cast<int>(*port), std::string(link)};
  }

  // ---- rows ----

  /// True when another row of the current table follows line index `k`.
  bool row_follows(std::size_t k) const {
    for (; k < lines_.size(); ++k) {
      const std::string_view t = trim(lines_[k].text);
      if (t.empty() || is_log_line(t) || detail::is_truncation_marker(t) ||
          t.find('|') != std::string_view::npos)
        continue;
      if (t.front() == '#') return false;
      if (detail::looks_like_row(t)) return true;
    }
    return false;
  }

  void read_table_line(std::size_t k) {
    const std::string_view t = trim(lines_[k].text);
    const std::size_t ln = lines_[k].number;
    NcclTestsRun& run = cur_.run;
    if (t.find('|') != std::string_view::npos)
      return; // NCCL's Func/Proto/Algo matrix, printed late by some versions
    if (detail::is_truncation_marker(t)) {
      run.warnings.push_back(at_line(source_, ln, "table truncated at '" + std::string(t) + "'"));
      cur_.truncated = true;
      return;
    }
    if (!detail::looks_like_row(t)) {
      if (auto b = find_command(t)) note_hint(*b, t);
      cur_.prose.push_back(k);
      return;
    }
    const Layout& lay = *cur_.layout;
    const auto toks = split_ws(t);
    const std::size_t full = lay.full_fields();
    const std::size_t oop = lay.oop_fields();
    auto count_msg = [&]() {
      return "table row has " + std::to_string(toks.size()) + " fields, the header at line " +
             std::to_string(run.table_line) + " has " + std::to_string(full);
    };
    if (toks.size() > full) throw InputError(at_line(source_, ln, count_msg()));
    // A row split by interleaved NCCL INFO output: its size/count/type columns went onto an earlier line,
    // this line holds only the result columns (it starts with a time such as 87.18, not a whole size), and
    // rows follow. It cannot be told which size it belongs to: ignored, with a warning.
    if (toks.size() == full - lay.desc.size() && !detail::parse_u64(toks[0]) &&
        detail::parse_number(toks[0]) && row_follows(k + 1)) {
      run.warnings.push_back(at_line(source_, ln,
                                     "a row split by interleaved output (only its " +
                                         std::to_string(toks.size()) +
                                         " result columns are on this line): row ignored"));
      return;
    }

    NcclTestsRow row = nccl_table::parse_row(toks, lay, source_, ln, cur_.run.warnings);
    const bool two_groups = lay.group_has_wrong.size() > 1;
    const bool oop_only_ok = two_groups && toks.size() == oop && !cur_.any_ip;
    if (toks.size() < full && !oop_only_ok) {
      if (row_follows(k + 1)) throw InputError(at_line(source_, ln, count_msg()));
      run.warnings.push_back(at_line(source_, ln,
                                     "table truncated: the last row has " + std::to_string(toks.size()) +
                                         " of " + std::to_string(full) + " fields (row ignored)"));
      cur_.truncated = true;
      cur_.table_open = false;
      return;
    }
    if (row.ip) cur_.any_ip = true;
    for (std::size_t p : cur_.prose)
      run.warnings.push_back(
          at_line(source_, lines_[p].number,
                  "ignored text inside the table: '" + std::string(trim(lines_[p].text)) + "'"));
    cur_.prose.clear();
    // A size seen before (a row pasted twice; or two steps of -i that round to one size): the first is kept.
    for (const NcclTestsRow& prev : run.rows)
      if (row.size_bytes > 0 && prev.size_bytes == row.size_bytes) {
        run.warnings.push_back(at_line(source_, ln,
                                       "size " + std::to_string(row.size_bytes) +
                                           " appears again (first at line " + std::to_string(prev.line) +
                                           "): this row is ignored, the first kept"));
        return;
      }
    run.rows.push_back(std::move(row));
  }

  // ---- closing a test ----

  void close_section() {
    Section& s = cur_;
    if (!s.layout && !s.is_test) return; // stray text, not a test
    NcclTestsRun& run = s.run;
    run.source = source_;
    if (!s.layout)
      run.warnings.push_back(
          at_line(source_, run.first_line, "no results table for this test (aborted or cut short?)"));
    else if (run.rows.empty())
      run.warnings.push_back(at_line(source_, run.table_line, "the results table has no rows"));
    else if (!s.summary_after_rows && !s.truncated)
      run.warnings.push_back(
          at_line(source_, run.rows.back().line,
                  "table may be truncated: no '# Out of bounds' / '# Avg bus bandwidth' summary "
                  "after the last row"));

    std::size_t wrong_rows = 0, first_wrong = 0;
    for (const NcclTestsRow& r : run.rows) {
      const bool w = (r.oop.wrong && *r.oop.wrong > 0) || (r.ip && r.ip->wrong && *r.ip->wrong > 0);
      if (w && wrong_rows++ == 0) first_wrong = r.line;
    }
    if (wrong_rows > 0 && s.layout && s.layout->wrong_is_count)
      run.warnings.push_back(at_line(
          source_, first_wrong, std::to_string(wrong_rows) + " row(s) report wrong results (#wrong > 0)"));

    if (run.nccl_version.empty() && s.nccl_library_code > 0)
      run.nccl_version = nccl_version_from_code(s.nccl_library_code);
    // The launcher line's NCCL_* variables, unless NCCL's own INFO lines said what it read (those win).
    for (const auto& [k, v] : s.launcher_env) run.env.emplace(k, v);
    if (auto it = run.env.find("NCCL_ALGO"); it != run.env.end()) run.algo = it->second;
    if (auto it = run.env.find("NCCL_PROTO"); it != run.env.end()) run.proto = it->second;

    settle_counts(s);
    settle_collective(s);
    runs_.push_back(std::move(run));
  }

  void settle_counts(Section& s) {
    NcclTestsRun& run = s.run;
    const std::size_t where = run.table_line != 0 ? run.table_line : run.first_line;
    auto agree = [&](std::optional<int>& dst, std::optional<int> from_info, const char* what) {
      if (!from_info) return;
      if (!dst)
        dst = from_info;
      else if (*dst != *from_info)
        run.warnings.push_back(at_line(source_, where,
                                       std::string(what) + ": the rank lines say " + std::to_string(*dst) +
                                           ", NCCL INFO says " + std::to_string(*from_info)));
    };
    if (!run.ranks.empty()) {
      std::map<std::string, int> per_host;
      std::set<int> ids;
      for (const NcclTestsRank& r : run.ranks) {
        ++per_host[r.host];
        ids.insert(r.rank);
      }
      run.nranks = static_cast<int>(ids.size());
      run.nnodes = static_cast<int>(per_host.size());
      int most = 0;
      for (const auto& [h, n] : per_host) most = std::max(most, n);
      run.gpus_per_node = most;
    }
    agree(run.nranks, s.info_nranks, "number of ranks");
    agree(run.nnodes, s.info_nnodes, "number of nodes");
    agree(run.gpus_per_node, s.info_local, "GPUs per node");
    if (!run.gpus_per_node && run.nranks && run.nnodes && *run.nnodes > 0 && *run.nranks % *run.nnodes == 0)
      run.gpus_per_node = *run.nranks / *run.nnodes;
  }

  /// Collectives the table is consistent with (see the header comment); empty when it says nothing.
  std::vector<NcclCollective> table_candidates(const NcclTestsRun& run) const {
    using C = NcclCollective;
    // The first row that carries data: sweeps from -b 0 begin with "0 0" rows, which fit every collective.
    const auto first = std::find_if(run.rows.begin(), run.rows.end(),
                                    [](const NcclTestsRow& x) { return x.size_bytes > 0 && x.count > 0; });
    if (first == run.rows.end()) return {};
    const NcclTestsRow& r = *first;
    const bool no_op = r.redop.empty() || r.redop == "none";
    if (r.root && *r.root >= 0) return {no_op ? C::broadcast : C::reduce};
    const auto ts = type_size(r.type);
    if (!ts || r.count == 0 || r.size_bytes % (r.count * *ts) != 0) return {};
    const std::uint64_t ratio = r.size_bytes / (r.count * *ts);
    const std::optional<int> n = run.nranks;
    if (ratio == 1) {
      if (no_op) return {C::sendrecv};
      if (n && *n > 2) {
        // busbw/algbw: all_reduce 2(n-1)/n, sendrecv 1. Use the largest row (least rounding).
        const NcclTestsRow& big = run.rows.back();
        if (big.oop.algbw_gbs >= 1.0) {
          const double f = big.oop.busbw_gbs / big.oop.algbw_gbs;
          const double ar = 2.0 * (*n - 1) / *n;
          return std::abs(f - ar) < std::abs(f - 1.0) ? std::vector<C>{C::all_reduce}
                                                      : std::vector<C>{C::sendrecv};
        }
      }
      return {C::all_reduce, C::sendrecv};
    }
    if (n && ratio != static_cast<std::uint64_t>(*n)) return {};
    return no_op ? std::vector<C>{C::all_gather, C::alltoall} : std::vector<C>{C::reduce_scatter};
  }

  static std::optional<NcclCollective> collective_in_name(const std::string& source) {
    using C = NcclCollective;
    std::string base =
        source.substr(source.find_last_of("/\\") == std::string::npos ? 0 : source.find_last_of("/\\") + 1);
    base = detail::to_lower(base);
    const std::array<std::pair<std::string_view, C>, 11> names = {{
        {"reduce_scatter", C::reduce_scatter},
        {"reducescatter", C::reduce_scatter},
        {"all_reduce", C::all_reduce},
        {"allreduce", C::all_reduce},
        {"all_gather", C::all_gather},
        {"allgather", C::all_gather},
        {"alltoall", C::alltoall},
        {"all_to_all", C::alltoall},
        {"sendrecv", C::sendrecv},
        {"broadcast", C::broadcast},
        {"reduce", C::reduce},
    }};
    for (const auto& [name, c] : names)
      if (base.find(name) != std::string::npos) return c;
    return std::nullopt;
  }

  void settle_collective(Section& s) {
    NcclTestsRun& run = s.run;
    const auto cands = table_candidates(run);
    const std::size_t where = run.table_line != 0 ? run.table_line : run.first_line;
    auto names = [&]() {
      std::string out;
      for (NcclCollective c : cands) out += (out.empty() ? "" : " or ") + std::string(to_string(c));
      return out;
    };
    auto check = [&](NcclCollective c, const std::string& name) {
      if (c == NcclCollective::unknown)
        run.warnings.push_back(
            at_line(source_, where, "collective '" + name + "' is not modelled; kept as unknown"));
      else if (!cands.empty() && std::find(cands.begin(), cands.end(), c) == cands.end())
        run.warnings.push_back(
            at_line(source_, where,
                    "the log names " + std::string(to_string(c)) + " but the table looks like " + names()));
    };
    if (s.log_collective) {
      run.collective = *s.log_collective;
      run.collective_from = "log";
      check(run.collective, s.log_name);
      return;
    }
    if (s.hint) {
      run.collective = s.hint->collective;
      run.collective_from = "command line";
      check(run.collective, std::string(s.hint->name));
      return;
    }
    if (cands.size() == 1) {
      run.collective = cands.front();
      run.collective_from = "table";
      return;
    }
    if (cands.empty()) {
      run.warnings.push_back(at_line(source_, where, "cannot tell which collective this table measures"));
      return;
    }
    const auto from_name = collective_in_name(source_);
    if (from_name && std::find(cands.begin(), cands.end(), *from_name) != cands.end()) {
      run.collective = *from_name;
      run.collective_from = "file name";
      return;
    }
    run.collective = cands.front();
    run.collective_from = "table";
    run.warnings.push_back(
        at_line(source_, where, "the table fits " + names() + "; assuming " + to_string(run.collective)));
  }

  std::vector<Line> lines_;
  const std::string& source_;
  std::vector<NcclTestsRun> runs_;
  Section cur_;
  std::optional<Binary> pending_hint_;
  std::map<std::string, std::string> pending_env_;
  std::vector<std::size_t> held_info_;
};

} // namespace

const char* to_string(NcclCollective c) {
  switch (c) {
  case NcclCollective::unknown:
    return "unknown";
  case NcclCollective::all_reduce:
    return "all_reduce";
  case NcclCollective::all_gather:
    return "all_gather";
  case NcclCollective::reduce_scatter:
    return "reduce_scatter";
  case NcclCollective::alltoall:
    return "alltoall";
  case NcclCollective::sendrecv:
    return "sendrecv";
  case NcclCollective::broadcast:
    return "broadcast";
  case NcclCollective::reduce:
    return "reduce";
  }
  return "?";
}

std::string nccl_version_from_code(std::uint64_t code) {
  std::uint64_t major = 0, minor = 0, patch = 0;
  if (code >= 10000) {
    major = code / 10000;
    minor = (code % 10000) / 100;
    patch = code % 100;
  } else {
    major = code / 1000;
    minor = (code % 1000) / 100;
    patch = code % 100;
  }
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

std::vector<NcclTestsRun> parse_nccl_tests(std::istream& in, const std::string& source) {
  return Reader(detail::read_lines(in), source).read();
}

std::optional<std::size_t> nccl_tests_marker_line(std::istream& in) {
  for (const detail::Line& l : detail::read_lines(in)) {
    std::string_view t = trim(l.text);
    const bool comment = !t.empty() && t.front() == '#';
    while (!t.empty() && t.front() == '#') t.remove_prefix(1);
    t = trim(t);
    if (comment && (starts_with(t, "nThread ") || starts_with(t, "nccl-tests version") ||
                    starts_with(t, "Collective test ") || starts_with(t, "Avg bus bandwidth") ||
                    find_word(t, "out-of-place") != std::string_view::npos))
      return l.number;
    if (nccl_table::find_binary(t)) return l.number; // all_reduce_perf, all_gather_perf_mpi, ...
  }
  return std::nullopt;
}

std::vector<NcclTestsRun> parse_nccl_tests_file(const std::string& path) {
  refuse_folder(path, "an nccl-tests log");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open nccl-tests log");
  return parse_nccl_tests(in, path);
}

} // namespace ibn::calib
