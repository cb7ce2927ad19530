#include "calibration/perftest_parser.hpp"

#include "calibration/text_scan.hpp"
#include "sim/atomic_file.hpp"
#include "sim/error.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>

namespace ibn::calib {
namespace {

using detail::find_word;
using detail::Line;
using detail::split_ws;
using detail::trim;

constexpr std::array<PerftestTool, 6> kTools = {PerftestTool::ib_write_bw, PerftestTool::ib_write_lat,
                                                PerftestTool::ib_send_bw,  PerftestTool::ib_send_lat,
                                                PerftestTool::ib_read_bw,  PerftestTool::ib_read_lat};

struct Title {
  PerftestTool tool;
  bool bidirectional;
};

/// Recognises a perftest test title ("RDMA_Write BW Test", "Send Bidirectional BW Test",
/// "RDMA_Read Latency Test"). Prose that merely ends in "... Test" is not a title. A title of a test
/// this reader does not cover (atomic) is an error.
std::optional<Title> parse_title(std::string_view text, const std::string& source, std::size_t line) {
  const auto toks = split_ws(text);
  if (toks.size() < 3 || toks.back() != "Test") return std::nullopt;
  const std::string_view verb = toks.front();
  if (verb != "Send" && verb != "RDMA_Write" && verb != "RDMA_Read" && verb != "Atomic") return std::nullopt;
  bool bw = false, lat = false, bidir = false;
  for (std::size_t i = 1; i + 1 < toks.size(); ++i) {
    const std::string_view t = toks[i];
    if (t == "BW")
      bw = true;
    else if (t == "Latency")
      lat = true;
    else if (t == "Bidirectional")
      bidir = true;
    else if (t == "Post" || t == "List" || t == "forwarding" || t == "Multicast" || t == "CMP_AND_SWAP" ||
             t == "FETCH_AND_ADD")
      continue;
    else
      return std::nullopt;
  }
  if (bw == lat) return std::nullopt;
  if (verb == "Atomic")
    throw InputError(at_line(source, line,
                             "atomic perftest tests are not supported (only ib_write/send/read _bw/_lat): '" +
                                 std::string(trim(text)) + "'"));
  if (verb == "Send") return Title{bw ? PerftestTool::ib_send_bw : PerftestTool::ib_send_lat, bidir};
  if (verb == "RDMA_Write") return Title{bw ? PerftestTool::ib_write_bw : PerftestTool::ib_write_lat, bidir};
  return Title{bw ? PerftestTool::ib_read_bw : PerftestTool::ib_read_lat, bidir};
}

/// A latency as perftest prints it ("1.23 us").
std::string fmt_us(double us) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f us", us);
  return b;
}

[[noreturn]] void fail_at(const std::string& source, std::size_t line, const std::string& msg) {
  throw InputError(at_line(source, line, msg));
}

bool is_table_header(std::string_view t) {
  return detail::starts_with(trim(t), "#bytes");
}

// ---- table layout -------------------------------------------------------------------------------------

enum class Col {
  size,
  sl,
  iterations,
  t_min,
  t_max,
  t_typical,
  t_avg,
  t_stdev,
  p99,
  p999,
  tps,
  bw_peak,
  bw_avg,
  msg_rate,
  bw_port1,
  rate_port1,
  bw_port2,
  rate_port2,
  cpu_util
};

const char* col_name(Col c) {
  switch (c) {
  case Col::size:
    return "#bytes";
  case Col::sl:
    return "#sl";
  case Col::iterations:
    return "#iterations";
  case Col::t_min:
    return "t_min";
  case Col::t_max:
    return "t_max";
  case Col::t_typical:
    return "t_typical";
  case Col::t_avg:
    return "t_avg";
  case Col::t_stdev:
    return "t_stdev";
  case Col::p99:
    return "99% percentile";
  case Col::p999:
    return "99.9% percentile";
  case Col::tps:
    return "tps average";
  case Col::bw_peak:
    return "BW peak";
  case Col::bw_avg:
    return "BW average";
  case Col::msg_rate:
    return "MsgRate";
  case Col::bw_port1:
    return "BW Port1";
  case Col::rate_port1:
    return "MsgRate Port1";
  case Col::bw_port2:
    return "BW Port2";
  case Col::rate_port2:
    return "MsgRate Port2";
  case Col::cpu_util:
    return "CPU_Util";
  }
  return "?";
}

bool is_integer_col(Col c) {
  return c == Col::size || c == Col::iterations || c == Col::sl;
}
bool is_bw_col(Col c) {
  return c == Col::bw_peak || c == Col::bw_avg || c == Col::bw_port1 || c == Col::bw_port2;
}

struct Layout {
  std::vector<Col> cols;
  bool latency = false;
  std::string bw_unit;
  double bw_to_gbps = 1.0;
};

/// A case-insensitive cursor over a header line (column labels are matched by hand: <regex> trips
/// GCC 12's -Wmaybe-uninitialized under the sanitizer build).
struct Cursor {
  std::string_view s;
  std::size_t p = 0;

  bool eat(std::string_view w) {
    if (s.size() - p < w.size()) return false;
    for (std::size_t i = 0; i < w.size(); ++i)
      if (std::tolower(static_cast<unsigned char>(s[p + i])) !=
          std::tolower(static_cast<unsigned char>(w[i])))
        return false;
    p += w.size();
    return true;
  }
  bool blanks() {
    std::size_t q = p;
    while (q < s.size() && (s[q] == ' ' || s[q] == '\t')) ++q;
    const bool any = q > p;
    p = q;
    return any;
  }
  bool boundary() const { return p >= s.size() || s[p] == ' ' || s[p] == '\t'; }
  /// "[unit]" -> "unit"
  std::optional<std::string> bracket() {
    if (p >= s.size() || s[p] != '[') return std::nullopt;
    const std::size_t e = s.find(']', p);
    if (e == std::string_view::npos) return std::nullopt;
    std::string unit(s.substr(p + 1, e - p - 1));
    p = e + 1;
    return unit;
  }
};

struct Label {
  Col col;
  std::string unit; ///< "[...]" part for latency and bandwidth columns
};

/// Matches one column label at c.p ("#bytes", "t_min[usec]", "99.9% percentile[usec]", "BW peak[MB/sec]",
/// "MsgRate[Mpps]", ...); on failure c.p is left unchanged.
std::optional<Label> match_label(Cursor& c) {
  const std::size_t start = c.p;
  using Word = std::pair<std::string_view, Col>;
  constexpr std::array<Word, 5> plain = {{{"#bytes", Col::size},
                                          {"bytes", Col::size},
                                          {"#sl", Col::sl},
                                          {"#iterations", Col::iterations},
                                          {"iterations", Col::iterations}}};
  for (const auto& [w, col] : plain) {
    c.p = start;
    if (c.eat(w) && c.boundary()) return Label{col, ""};
  }
  constexpr std::array<Word, 5> stats = {{{"t_min", Col::t_min},
                                          {"t_max", Col::t_max},
                                          {"t_typical", Col::t_typical},
                                          {"t_avg", Col::t_avg},
                                          {"t_stdev", Col::t_stdev}}};
  for (const auto& [w, col] : stats) {
    c.p = start;
    if (c.eat(w))
      if (auto unit = c.bracket()) return Label{col, *unit};
  }
  constexpr std::array<Word, 2> pct = {{{"99.9%", Col::p999}, {"99%", Col::p99}}};
  for (const auto& [w, col] : pct) {
    c.p = start;
    if (c.eat(w)) {
      c.blanks();
      if (c.eat("percentile"))
        if (auto unit = c.bracket()) return Label{col, *unit};
    }
  }
  c.p = start;
  if (c.eat("tps") && c.blanks() && c.eat("average") && c.boundary()) return Label{Col::tps, ""};
  c.p = start;
  if (c.eat("BW") && c.blanks()) {
    const std::size_t q = c.p;
    constexpr std::array<Word, 4> bw = {{{"peak", Col::bw_peak},
                                         {"average", Col::bw_avg},
                                         {"Port1", Col::bw_port1},
                                         {"Port2", Col::bw_port2}}};
    for (const auto& [w, col] : bw) {
      c.p = q;
      if (c.eat(w))
        if (auto unit = c.bracket()) return Label{col, *unit};
    }
  }
  c.p = start;
  if (c.eat("MsgRate")) {
    const std::size_t q = c.p;
    if (c.eat("[Mpps]")) return Label{Col::msg_rate, ""};
    c.p = q;
    if (c.blanks()) {
      const std::size_t r = c.p;
      if (c.eat("Port1[Mpps]")) return Label{Col::rate_port1, ""};
      c.p = r;
      if (c.eat("Port2[Mpps]")) return Label{Col::rate_port2, ""};
    }
  }
  c.p = start;
  if (c.eat("CPU_Util[%]")) return Label{Col::cpu_util, ""};
  c.p = start;
  return std::nullopt;
}

bool is_latency_col(Col c) {
  return c == Col::t_min || c == Col::t_max || c == Col::t_typical || c == Col::t_avg || c == Col::t_stdev ||
         c == Col::p99 || c == Col::p999 || c == Col::tps;
}

/// Reads the column labels of a "#bytes ..." header. Labels contain spaces ("BW peak[MB/sec]",
/// "99% percentile[usec]"), so they are matched left to right, and every character of the header must
/// belong to a known label.
Layout parse_layout(std::string_view header, const std::string& source, std::size_t line) {
  const std::string h(trim(header));
  Layout lay;
  bool any_lat = false, any_bw = false;
  auto fail = [&](const std::string& msg) { fail_at(source, line, msg); };
  auto check_lat_unit = [&](const std::string& unit) {
    if (unit == "usec") return;
    if (unit == "cycles")
      fail("latency table in CPU cycles (perftest -C) cannot be converted to microseconds; rerun without -C");
    fail("unknown latency unit '[" + unit + "]' in perftest table header (expected [usec])");
  };
  auto set_bw_unit = [&](const std::string& unit) {
    double f = 0;
    if (unit == "MB/sec" || unit == "MiB/sec")
      f = perftest_mbps_to_gbps(1.0);
    else if (unit == "Gb/sec")
      f = 1.0;
    else
      fail("unknown bandwidth unit '[" + unit +
           "]' in perftest table header (expected MB/sec, MiB/sec or Gb/sec)");
    if (!lay.bw_unit.empty() && lay.bw_unit != unit)
      fail("perftest table header mixes bandwidth units '" + lay.bw_unit + "' and '" + unit + "'");
    lay.bw_unit = unit;
    lay.bw_to_gbps = f;
  };

  Cursor c{h, 0};
  while (true) {
    c.blanks();
    if (c.p >= h.size()) break;
    const auto label = match_label(c);
    if (!label)
      fail_at(source, line, "unrecognised column in perftest table header at '" + h.substr(c.p) + "'");
    if (is_latency_col(label->col)) {
      if (label->col != Col::tps) check_lat_unit(label->unit);
      any_lat = true;
    } else if (is_bw_col(label->col)) {
      set_bw_unit(label->unit);
      any_bw = true;
    }
    lay.cols.push_back(label->col);
  }
  if (lay.cols.empty() || lay.cols.front() != Col::size ||
      std::find(lay.cols.begin(), lay.cols.end(), Col::iterations) == lay.cols.end())
    fail("perftest table header must start with '#bytes' and have an '#iterations' column");
  if (any_lat == any_bw)
    fail(any_lat ? "perftest table header mixes latency and bandwidth columns"
                 : "perftest table header has neither latency nor bandwidth columns");
  for (std::size_t i = 0; i < lay.cols.size(); ++i)
    if (std::find(lay.cols.begin() + static_cast<std::ptrdiff_t>(i) + 1, lay.cols.end(), lay.cols[i]) !=
        lay.cols.end())
      fail(std::string("perftest table header repeats column '") + col_name(lay.cols[i]) + "'");
  lay.latency = any_lat;
  return lay;
}

// ---- header block --------------------------------------------------------------------------------------

/// Splits a header line into "Key : Value" pairs. perftest prints up to two pairs per line, separated
/// by tabs or runs of spaces: " Dual-port       : OFF\t\tDevice         : mlx5_2",
/// " Data ex. method : rdma_cm \tTOS    : 41", " rdma_cm QPs\t : ON".
std::vector<std::pair<std::string, std::string>> split_pairs(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t colon = text.find(':', pos);
    if (colon == std::string_view::npos) break;
    const std::string_view key = trim(text.substr(pos, colon - pos));
    std::size_t vstart = colon + 1;
    while (vstart < text.size() && (text[vstart] == ' ' || text[vstart] == '\t')) ++vstart;
    std::size_t vend = vstart;
    while (vend < text.size() && text[vend] != '\t' &&
           !(text[vend] == ' ' && vend + 1 < text.size() && text[vend + 1] == ' '))
      ++vend;
    const std::string_view value = trim(text.substr(vstart, vend - vstart));
    if (!key.empty()) out.emplace_back(std::string(key), std::string(value));
    pos = vend;
  }
  return out;
}

std::optional<int> leading_int(std::string_view v) {
  v = trim(v);
  if (v.size() >= 3 && v.substr(v.size() - 3) == "[B]") v.remove_suffix(3);
  const auto n = detail::parse_i64(trim(v));
  if (!n || *n < -1000000000 || *n > 1000000000) return std::nullopt;
  return static_cast<int>(*n);
}

std::optional<bool> on_off(std::string_view v) {
  if (v == "ON") return true;
  if (v == "OFF") return false;
  return std::nullopt;
}

void apply_field(PerftestRun& run, const std::string& key, const std::string& value, std::size_t line) {
  run.header_fields.emplace_back(key, value);
  const std::string k = detail::to_lower(key);
  auto set_int = [&](std::optional<int>& dst) {
    dst = leading_int(value);
    if (!dst)
      run.warnings.push_back(
          at_line(run.source, line, "cannot read header field '" + key + "' value '" + value + "'"));
  };
  auto set_bool = [&](std::optional<bool>& dst) {
    dst = on_off(value);
    if (!dst)
      run.warnings.push_back(
          at_line(run.source, line,
                  "cannot read header field '" + key + "' value '" + value + "' (expected ON or OFF)"));
  };
  if (k == "device")
    run.device = value;
  else if (k == "number of qps")
    set_int(run.num_qps);
  else if (k == "transport type")
    run.transport_type = value;
  else if (k == "connection type")
    run.connection_type = value;
  else if (k == "mtu")
    set_int(run.mtu_bytes);
  else if (k == "link type")
    run.link_type = value;
  else if (k == "max inline data")
    set_int(run.max_inline_bytes);
  else if (k == "tx depth")
    set_int(run.tx_depth);
  else if (k == "rx depth")
    set_int(run.rx_depth);
  else if (k == "cq moderation")
    set_int(run.cq_moderation);
  else if (k == "outstand reads")
    set_int(run.outstanding_reads);
  else if (k == "gid index")
    set_int(run.gid_index);
  else if (k == "tos")
    set_int(run.tos);
  else if (k == "dual-port")
    set_bool(run.dual_port);
  else if (k == "using srq")
    set_bool(run.use_srq);
  else if (k == "rdma_cm qps")
    set_bool(run.rdma_cm_qps);
  else if (k.find("odp") != std::string::npos)
    set_bool(run.odp);
  else if (k == "data ex. method")
    run.data_exchange = value;
}

bool is_address_line(std::string_view t) {
  return detail::starts_with(t, "local address") || detail::starts_with(t, "remote address") ||
         detail::starts_with(t, "GID:") || detail::starts_with(t, "ETH");
}

// Messages perftest (or the shell) prints between table rows that are not data.
bool is_known_noise(std::string_view t) {
  return t.find("Conflicting CPU frequency") != std::string_view::npos ||
         t.find("WARNING") != std::string_view::npos || t.find("Warning") != std::string_view::npos;
}

// ---- the reader ------------------------------------------------------------------------------------------

struct Preamble {
  std::string command;
  std::optional<PerftestTool> command_tool;
  bool waiting_for_client = false;
  bool no_peak = false;
};

class Reader {
 public:
  Reader(std::vector<Line> lines, const std::string& source) : lines_(std::move(lines)), source_(source) {}

  std::vector<PerftestRun> read() {
    enum class State { outside, header } state = State::outside;
    std::size_t i = 0;
    while (i < lines_.size()) {
      const std::string_view t = trim(lines_[i].text);
      const std::size_t ln = lines_[i].number;
      if (auto title = parse_title(t, source_, ln)) {
        start_run(title->tool, std::string(t), title->bidirectional, ln);
        state = State::header;
        ++i;
        continue;
      }
      if (is_table_header(t)) {
        if (runs_.empty() || runs_.back().table_line != 0 || in_preamble_) start_untitled_run(ln);
        i = read_table(i);
        state = State::outside;
        continue;
      }
      if (note_preamble(t, ln)) {
        state = State::outside; // a new command: the previous header block got no table
      } else if (state == State::header) {
        read_header_line(t, ln);
      }
      ++i;
    }
    finish();
    return std::move(runs_);
  }

 private:
  /// Remembers the command line, the "BW peak won't be measured" warning and the server banner seen
  /// before a test header. Returns true when the line is a command line.
  bool note_preamble(std::string_view t, std::size_t /*ln*/) {
    if (t.find("peak won't be measured") != std::string_view::npos) pre_.no_peak = true;
    if (t.find("Waiting for client") != std::string_view::npos) {
      if (!runs_.empty() && runs_.back().table_line == 0 && !in_preamble_)
        runs_.back().role = PerftestRole::server;
      else
        pre_.waiting_for_client = true;
    }
    std::size_t best = std::string_view::npos;
    PerftestTool best_tool = PerftestTool::ib_write_bw;
    for (PerftestTool tool : kTools) {
      const std::size_t p = find_word(t, to_string(tool));
      if (p < best) {
        best = p;
        best_tool = tool;
      }
    }
    if (best == std::string_view::npos) return false;
    pre_.command = std::string(trim(t.substr(best)));
    pre_.command_tool = best_tool;
    in_preamble_ = true;
    return true;
  }

  void read_header_line(std::string_view t, std::size_t ln) {
    if (t.empty() || detail::is_rule(t) || is_address_line(t)) return;
    if (t.find(':') == std::string_view::npos) return;
    for (const auto& [k, v] : split_pairs(t)) apply_field(runs_.back(), k, v, ln);
  }

  void start_run(PerftestTool tool, std::string title, bool bidir, std::size_t ln) {
    PerftestRun run;
    run.tool = tool;
    run.title = std::move(title);
    run.bidirectional = bidir;
    run.source = source_;
    run.first_line = ln;
    if (pre_.command_tool && *pre_.command_tool == tool) run.command = pre_.command;
    if (pre_.waiting_for_client) run.role = PerftestRole::server;
    if (pre_.no_peak) run.bw_peak_measured = false;
    for (std::string_view tok : split_ws(run.command)) {
      if (tok == "-b" || tok == "--bidirectional") run.bidirectional = true;
      if (tok == "--run_infinitely") run.run_infinitely = true;
    }
    pre_ = Preamble{};
    in_preamble_ = false;
    runs_.push_back(std::move(run));
  }

  void start_untitled_run(std::size_t ln) {
    if (!pre_.command_tool)
      throw InputError(
          at_line(source_, ln,
                  "perftest table without a test title ('RDMA_Write BW Test', ...) or a command line "
                  "naming the tool: cannot tell which test printed it"));
    start_run(*pre_.command_tool, std::string(), false, ln);
  }

  /// True when another row of the current table follows line index `k` (before the table ends).
  bool row_follows(std::size_t k) const {
    for (; k < lines_.size(); ++k) {
      const std::string_view t = trim(lines_[k].text);
      if (t.empty() || detail::is_truncation_marker(t)) continue;
      if (detail::is_rule(t) || detail::is_fence(t) || is_table_header(t) ||
          parse_title(t, source_, lines_[k].number))
        return false;
      if (detail::looks_like_row(t)) return true;
    }
    return false;
  }

  /// Reads the table whose "#bytes" header is at index `h`; returns the index of the first line that
  /// is not part of it.
  std::size_t read_table(std::size_t h) {
    PerftestRun& run = runs_.back();
    const Layout lay = parse_layout(lines_[h].text, source_, lines_[h].number);
    run.table_line = lines_[h].number;
    if (run.first_line == 0) run.first_line = run.table_line;
    if (lay.latency != run.is_latency())
      throw InputError(at_line(source_, run.table_line,
                               std::string("a ") + (lay.latency ? "latency" : "bandwidth") +
                                   " table under the " + to_string(run.tool) + " test header"));
    run.bw_unit = lay.bw_unit;

    bool closed = false, truncated = false;
    std::vector<std::size_t> prose;
    std::size_t k = h + 1;
    for (; k < lines_.size(); ++k) {
      const std::string_view t = trim(lines_[k].text);
      const std::size_t ln = lines_[k].number;
      if (t.empty()) continue;
      if (detail::is_rule(t)) {
        closed = true;
        ++k;
        break;
      }
      if (is_table_header(t) && run.rows.empty()) continue; // the header printed twice
      if (detail::is_fence(t) || is_table_header(t) || parse_title(t, source_, ln)) break;
      if (detail::is_truncation_marker(t)) {
        run.warnings.push_back(at_line(source_, ln, "table truncated at '" + std::string(t) + "'"));
        truncated = true;
        continue;
      }
      if (!detail::looks_like_row(t)) {
        if (!is_known_noise(t)) prose.push_back(k);
        continue;
      }
      const auto toks = split_ws(t);
      const std::size_t n = lay.cols.size();
      if (toks.size() > n)
        throw InputError(at_line(source_, ln,
                                 "table row has " + std::to_string(toks.size()) +
                                     " fields, the header at line " + std::to_string(run.table_line) +
                                     " has " + std::to_string(n)));
      PerftestRow row = parse_row(toks, lay, ln, run);
      if (toks.size() < n) {
        if (row_follows(k + 1))
          throw InputError(at_line(source_, ln,
                                   "table row has " + std::to_string(toks.size()) +
                                       " fields, the header at line " + std::to_string(run.table_line) +
                                       " has " + std::to_string(n)));
        run.warnings.push_back(at_line(source_, ln,
                                       "table truncated: the last row has " + std::to_string(toks.size()) +
                                           " of " + std::to_string(n) + " fields (row ignored)"));
        truncated = true;
        continue;
      }
      if (row.t_min_us && row.t_typical_us && *row.t_typical_us < *row.t_min_us)
        throw InputError(at_line(source_, ln,
                                 "t_typical " + fmt_us(*row.t_typical_us) + " is below t_min " +
                                     fmt_us(*row.t_min_us) + " (a row that cannot be a measurement)"));
      for (std::size_t p : prose)
        run.warnings.push_back(
            at_line(source_, lines_[p].number,
                    "ignored text inside the table: '" + std::string(trim(lines_[p].text)) + "'"));
      prose.clear();
      run.rows.push_back(row);
    }
    // A size twice in a table that is not a --run_infinitely run (which repeats one size): a row pasted
    // twice.
    const bool one_size = std::all_of(run.rows.begin(), run.rows.end(), [&](const PerftestRow& r) {
      return r.size_bytes == run.rows.front().size_bytes;
    });
    for (std::size_t i = 0; i < run.rows.size() && !one_size; ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (run.rows[j].size_bytes == run.rows[i].size_bytes)
          throw InputError(at_line(source_, run.rows[i].line,
                                   "size " + std::to_string(run.rows[i].size_bytes) +
                                       " appears again (first at line " + std::to_string(run.rows[j].line) +
                                       "): a row pasted twice?"));

    if (run.rows.size() > 1 && one_size) run.run_infinitely = true;
    if (!closed && !truncated && !run.rows.empty() && !run.run_infinitely)
      run.warnings.push_back(
          at_line(source_, run.rows.back().line,
                  "table may be truncated: it ends without perftest's closing '----' line"));
    return k;
  }

  PerftestRow parse_row(const std::vector<std::string_view>& toks, const Layout& lay, std::size_t ln,
                        PerftestRun& run) const {
    PerftestRow row;
    row.line = ln;
    for (std::size_t c = 0; c < toks.size(); ++c) {
      const Col col = lay.cols[c];
      const std::string_view tok = toks[c];
      if (is_integer_col(col)) {
        const auto v = detail::parse_u64(tok);
        const auto signed_v = v ? std::nullopt : detail::parse_number(tok);
        if (signed_v && *signed_v < 0)
          throw InputError(at_line(source_, ln,
                                   std::string("column '") + col_name(col) + "' is negative: '" +
                                       std::string(tok) + "' (a row that cannot be a measurement)"));
        if (!v)
          throw InputError(at_line(source_, ln,
                                   std::string("column '") + col_name(col) + "' is not a whole number: '" +
                                       std::string(tok) + "'"));
        if (col == Col::size && *v == 0)
          throw InputError(at_line(source_, ln,
                                   std::string("column '") + col_name(col) +
                                       "' is 0: perftest sends at least 1 byte (a row that cannot be a "
                                       "measurement)"));
        if (col == Col::size && *v > detail::kMaxPerftestOsuBytes)
          throw InputError(
              at_line(source_, ln,
                      "column '#bytes' is " + std::string(tok) + ", above the largest size read (" +
                          std::to_string(detail::kMaxPerftestOsuBytes) + " B, perftest's -s bound)"));
        if (col == Col::iterations && *v == 0)
          throw InputError(
              at_line(source_, ln, "column '#iterations' is 0 (a row that cannot be a measurement)"));
        if (col == Col::size)
          row.size_bytes = *v;
        else if (col == Col::iterations)
          row.iterations = *v;
        else
          row.sl = static_cast<std::int64_t>(*v);
        continue;
      }
      const auto v = detail::parse_number(tok);
      if (!v)
        throw InputError(at_line(source_, ln,
                                 std::string("column '") + col_name(col) + "' is not a number: '" +
                                     std::string(tok) + "'"));
      if (!std::isfinite(*v)) {
        run.warnings.push_back(at_line(source_, ln,
                                       std::string("column '") + col_name(col) + "' is '" + std::string(tok) +
                                           "' (left empty)"));
        continue;
      }
      if (*v < 0)
        throw InputError(at_line(source_, ln,
                                 std::string("column '") + col_name(col) + "' is negative: '" +
                                     std::string(tok) + "' (a row that cannot be a measurement)"));
      const double x = is_bw_col(col) ? *v * lay.bw_to_gbps : *v;
      switch (col) {
      case Col::t_min:
        row.t_min_us = x;
        break;
      case Col::t_max:
        row.t_max_us = x;
        break;
      case Col::t_typical:
        row.t_typical_us = x;
        break;
      case Col::t_avg:
        row.t_avg_us = x;
        break;
      case Col::t_stdev:
        row.t_stdev_us = x;
        break;
      case Col::p99:
        row.p99_us = x;
        break;
      case Col::p999:
        row.p999_us = x;
        break;
      case Col::tps:
        row.tps_avg = x;
        break;
      case Col::bw_peak:
        row.bw_peak_gbps = x;
        break;
      case Col::bw_avg:
        row.bw_avg_gbps = x;
        break;
      case Col::msg_rate:
        row.msg_rate_mpps = x;
        break;
      case Col::bw_port1:
        row.bw_port1_gbps = x;
        break;
      case Col::rate_port1:
        row.msg_rate_port1_mpps = x;
        break;
      case Col::bw_port2:
        row.bw_port2_gbps = x;
        break;
      case Col::rate_port2:
        row.msg_rate_port2_mpps = x;
        break;
      case Col::cpu_util:
        row.cpu_util_pct = x;
        break;
      default:
        break;
      }
    }
    return row;
  }

  void finish() {
    bool any_rows = false;
    for (PerftestRun& run : runs_) {
      if (run.role == PerftestRole::unknown && run.tx_depth && !run.bidirectional)
        run.role = PerftestRole::client;
      if (run.table_line == 0)
        run.warnings.push_back(
            at_line(source_, run.first_line, "no result table after the test header (output cut short?)"));
      else if (run.rows.empty())
        run.warnings.push_back(at_line(source_, run.table_line, "the result table has no rows"));
      any_rows = any_rows || !run.rows.empty();
    }
    if (!any_rows)
      throw InputError(source_ + ": no perftest result table found (expected a test header such as "
                                 "'RDMA_Write BW Test' and a '#bytes #iterations ...' table)");
  }

  std::vector<Line> lines_;
  const std::string& source_;
  std::vector<PerftestRun> runs_;
  Preamble pre_;
  bool in_preamble_ = false; ///< a command line was seen after the last test header
};

} // namespace

const char* to_string(PerftestTool t) {
  switch (t) {
  case PerftestTool::ib_write_bw:
    return "ib_write_bw";
  case PerftestTool::ib_write_lat:
    return "ib_write_lat";
  case PerftestTool::ib_send_bw:
    return "ib_send_bw";
  case PerftestTool::ib_send_lat:
    return "ib_send_lat";
  case PerftestTool::ib_read_bw:
    return "ib_read_bw";
  case PerftestTool::ib_read_lat:
    return "ib_read_lat";
  }
  return "?";
}

bool is_latency_tool(PerftestTool t) {
  return t == PerftestTool::ib_write_lat || t == PerftestTool::ib_send_lat || t == PerftestTool::ib_read_lat;
}

const char* to_string(PerftestRole r) {
  switch (r) {
  case PerftestRole::unknown:
    return "unknown";
  case PerftestRole::server:
    return "server";
  case PerftestRole::client:
    return "client";
  }
  return "?";
}

std::vector<PerftestRun> parse_perftest(std::istream& in, const std::string& source) {
  auto lines = detail::read_lines(in);
  // Output pasted as comments ("# #bytes ...", "# 65536 5000 ..."), e.g. into a script or a
  // notebook: perftest itself never prints a '#' followed by a blank, so one such prefix is dropped.
  for (auto& l : lines) {
    const std::size_t at = l.text.find_first_not_of(" \t");
    if (at == std::string::npos || l.text[at] != '#') continue;
    if (at + 1 == l.text.size() || l.text[at + 1] == ' ' || l.text[at + 1] == '\t') l.text.erase(0, at + 1);
  }
  return Reader(std::move(lines), source).read();
}

std::vector<PerftestRun> parse_perftest_file(const std::string& path) {
  refuse_folder(path, "a perftest output file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open perftest output file");
  return parse_perftest(in, path);
}

} // namespace ibn::calib
