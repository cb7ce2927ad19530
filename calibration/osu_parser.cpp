#include "calibration/osu_parser.hpp"

#include "calibration/text_scan.hpp"
#include "sim/atomic_file.hpp"
#include "sim/error.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <fstream>

namespace ibn::calib {
namespace {

using detail::find_word;
using detail::Line;
using detail::split_ws;
using detail::starts_with;
using detail::trim;

// ---- columns ---------------------------------------------------------------------------------------------

enum class Col { avg_lat, min_lat, max_lat, p50, p90, p99, bw_mbps, bw_mibps, msg_rate, iterations, defects };

struct Layout {
  std::vector<Col> cols; ///< after the size column
  std::vector<std::string> names;
  bool imb = false;
};

/// Known column names, as token sequences (OSU's "Latency (us)" is read with the space before '('
/// removed).
struct ColName {
  std::array<std::string_view, 3> toks;
  std::size_t n;
  Col col;
};
constexpr std::array<ColName, 18> kOsuCols = {{
    {{"Avg", "Latency(us)", ""}, 2, Col::avg_lat},
    {{"Min", "Latency(us)", ""}, 2, Col::min_lat},
    {{"Max", "Latency(us)", ""}, 2, Col::max_lat},
    {{"Avg", "Lat(us)", ""}, 2, Col::avg_lat},
    {{"Min", "Lat(us)", ""}, 2, Col::min_lat},
    {{"Max", "Lat(us)", ""}, 2, Col::max_lat},
    {{"Latency(us)", "", ""}, 1, Col::avg_lat},
    {{"P50", "Tail", "Lat(us)"}, 3, Col::p50},
    {{"P90", "Tail", "Lat(us)"}, 3, Col::p90},
    {{"P99", "Tail", "Lat(us)"}, 3, Col::p99},
    {{"Bandwidth(MB/s)", "", ""}, 1, Col::bw_mbps},
    {{"Avg", "Bandwidth(MB/s)", ""}, 2, Col::bw_mbps},
    {{"Bandwidth", "(MB/s)", ""}, 2, Col::bw_mbps},
    {{"MB/s", "", ""}, 1, Col::bw_mbps},
    {{"Messages/s", "", ""}, 1, Col::msg_rate},
    {{"Iterations", "", ""}, 1, Col::iterations},
    {{"Iters", "", ""}, 1, Col::iterations},
    {{"Latency", "(us)", ""}, 2, Col::avg_lat},
}};

/// "Size  Avg Latency(us)  Min Latency(us) ..." (the text after the leading '#').
Layout parse_osu_header(std::string_view c, const std::string& source, std::size_t line) {
  std::string norm;
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (c[i] == ' ' || c[i] == '\t') {
      std::size_t j = i;
      while (j < c.size() && (c[j] == ' ' || c[j] == '\t')) ++j;
      if (j < c.size() && c[j] == '(') {
        i = j - 1;
        continue;
      }
    }
    norm += c[i];
  }
  const auto toks = split_ws(norm);
  Layout lay;
  std::size_t i = 1; // toks[0] == "Size"
  while (i < toks.size()) {
    bool found = false;
    for (const ColName& cn : kOsuCols) {
      if (i + cn.n > toks.size()) continue;
      bool ok = true;
      for (std::size_t k = 0; k < cn.n && ok; ++k) ok = toks[i + k] == cn.toks[k];
      if (!ok) continue;
      std::string name;
      for (std::size_t k = 0; k < cn.n; ++k) name += (k ? " " : "") + std::string(toks[i + k]);
      lay.cols.push_back(cn.col);
      lay.names.push_back(name);
      i += cn.n;
      found = true;
      break;
    }
    if (!found)
      throw InputError(
          at_line(source, line,
                  "unknown column '" + std::string(toks[i]) +
                      "' in the OSU table header (expected Latency (us), Avg/Min/Max Latency(us), "
                      "Bandwidth (MB/s), MB/s, Messages/s, Iterations, P50/P90/P99 Tail Lat(us))"));
  }
  if (lay.cols.empty())
    throw InputError(at_line(source, line, "OSU table header has no column after 'Size'"));
  return lay;
}

/// "#bytes #repetitions t[usec] Mbytes/sec" / "#bytes #repetitions t_min[usec] t_max[usec] t_avg[usec]".
Layout parse_imb_header(std::string_view t, const std::string& source, std::size_t line) {
  const auto toks = split_ws(t);
  Layout lay;
  lay.imb = true;
  for (std::size_t i = 1; i < toks.size(); ++i) {
    const std::string_view k = toks[i];
    Col c{};
    if (k == "#repetitions")
      c = Col::iterations;
    else if (k == "t[usec]" || k == "t_avg[usec]")
      c = Col::avg_lat;
    else if (k == "t_min[usec]")
      c = Col::min_lat;
    else if (k == "t_max[usec]")
      c = Col::max_lat;
    else if (k == "Mbytes/sec" || k == "Mbytes/s" || k == "MBytes/sec")
      c = Col::bw_mibps;
    else if (k == "defects")
      c = Col::defects;
    else
      throw InputError(at_line(source, line,
                               "unknown column '" + std::string(k) +
                                   "' in the IMB table header (expected #repetitions, t[usec], t_min[usec], "
                                   "t_max[usec], t_avg[usec], Mbytes/sec, defects)"));
    lay.cols.push_back(c);
    lay.names.emplace_back(k);
  }
  if (lay.cols.empty())
    throw InputError(at_line(source, line, "IMB table header has no column after #bytes"));
  return lay;
}

bool is_imb_header(std::string_view t) {
  return starts_with(t, "#bytes") && t.find("#repetitions") != std::string_view::npos;
}

// ---- benchmarks ------------------------------------------------------------------------------------------

struct Bench {
  std::string name;
  OsuKind kind = OsuKind::latency;
  std::string collective;
  bool bidirectional = false;
};

/// The benchmark an OSU title names ("OSU MPI Allreduce Latency Test v7.5").
std::optional<Bench> bench_from_title(std::string_view title) {
  const std::string l = detail::to_lower(title);
  auto has = [&](std::string_view w) { return l.find(w) != std::string::npos; };
  auto coll = [](const char* name, const char* c) { return Bench{name, OsuKind::collective, c, false}; };
  if (has("allreduce") || has("all-reduce")) return coll("osu_allreduce", "allreduce");
  if (has("reduce_scatter") || has("reduce-scatter") || has("reduce scatter"))
    return coll("osu_reduce_scatter", "reduce_scatter");
  if (has("all-to-all") || has("alltoall")) return coll("osu_alltoall", "alltoall");
  if (has("allgather") || has("all-gather")) return coll("osu_allgather", "allgather");
  if (has("broadcast") || has("bcast")) return coll("osu_bcast", "bcast");
  if (has("reduce")) return coll("osu_reduce", "reduce");
  if (has("gather")) return coll("osu_gather", "gather");
  if (has("scatter")) return coll("osu_scatter", "scatter");
  if (has("barrier")) return coll("osu_barrier", "barrier");
  if (has("multi latency") || has("multi-latency"))
    return Bench{"osu_multi_lat", OsuKind::latency, "", false};
  if (has("multiple bandwidth") || has("message rate"))
    return Bench{"osu_mbw_mr", OsuKind::bandwidth, "", false};
  if (has("bi-directional") || has("bidirectional")) return Bench{"osu_bibw", OsuKind::bandwidth, "", true};
  if (has("bandwidth")) return Bench{"osu_bw", OsuKind::bandwidth, "", false};
  if (has("latency")) return Bench{"osu_latency", OsuKind::latency, "", false};
  return std::nullopt;
}

/// An IMB-MPI1 benchmark name ("PingPong", "Allreduce").
Bench imb_bench(std::string_view name) {
  const std::string n(name);
  const std::string l = detail::to_lower(name);
  if (l == "pingpong" || l == "pingping" || l == "pingpong_specificsource" || l == "pingping_specificsource")
    return Bench{"IMB-MPI1 " + n, OsuKind::latency, "", false};
  std::string c = l;
  if (c == "reduce_scatter_block") c = "reduce_scatter";
  return Bench{"IMB-MPI1 " + n, OsuKind::collective, c, false};
}

/// The benchmark a command line names ("osu_latency -x 1000", "./IMB-MPI1 PingPong", a path to either).
std::optional<Bench> bench_from_command(std::string_view line) {
  const auto toks = split_ws(line);
  for (std::size_t i = 0; i < toks.size(); ++i) {
    std::string_view tok = toks[i];
    const std::size_t slash = tok.find_last_of('/');
    if (slash != std::string_view::npos) tok = tok.substr(slash + 1);
    if (starts_with(tok, "osu_")) {
      const std::string name(tok);
      static constexpr std::array<std::pair<std::string_view, std::string_view>, 6> pt = {{
          {"osu_latency", "latency"},
          {"osu_multi_lat", "latency"},
          {"osu_bw", "bandwidth"},
          {"osu_bibw", "bandwidth"},
          {"osu_mbw_mr", "bandwidth"},
          {"osu_latency_mt", "latency"},
      }};
      for (const auto& [n, k] : pt)
        if (tok == n)
          return Bench{name, k == "latency" ? OsuKind::latency : OsuKind::bandwidth, "", tok == "osu_bibw"};
      const std::string c = name.substr(4);
      if (c.empty() || !std::all_of(c.begin(), c.end(), [](char ch) {
            return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_';
          }))
        continue;
      return Bench{name, OsuKind::collective, c, false};
    }
    if (starts_with(tok, "IMB-MPI1")) {
      if (i + 1 >= toks.size() || toks[i + 1].front() == '-')
        return Bench{"IMB-MPI1", OsuKind::latency, "", false};
      return imb_bench(toks[i + 1]);
    }
  }
  return std::nullopt;
}

// ---- launcher lines --------------------------------------------------------------------------------------

/// Largest process, node or per-node count read from a launcher or comment line; larger is "not said".
constexpr int kMaxCount = 10'000'000;

std::optional<int> small_int(std::string_view t) {
  const auto v = detail::parse_u64(t);
  if (!v || *v == 0 || *v > std::uint64_t{kMaxCount}) return std::nullopt;
  return static_cast<int>(*v);
}

bool is_launcher_name(std::string_view tok) {
  const std::size_t slash = tok.find_last_of('/');
  if (slash != std::string_view::npos) tok = tok.substr(slash + 1);
  return tok == "mpirun" || tok == "mpiexec" || tok == "mpiexec.hydra" || tok == "orterun" || tok == "srun" ||
         tok == "prun" || tok == "aprun";
}

bool is_prompt(std::string_view tok) {
  const char c = tok.back();
  return c == '$' || c == '#' || c == '>' || c == '%';
}

bool is_program(std::string_view tok) {
  const std::size_t slash = tok.find_last_of('/');
  if (slash != std::string_view::npos) tok = tok.substr(slash + 1);
  return starts_with(tok, "osu_") || starts_with(tok, "IMB-");
}

// ---- the reader ------------------------------------------------------------------------------------------

class Reader {
 public:
  Reader(std::vector<Line> lines, const std::string& source) : lines_(std::move(lines)), source_(source) {}

  std::vector<OsuRun> read() {
    for (std::size_t k = 0; k < lines_.size(); ++k) {
      const std::string_view t = trim(lines_[k].text);
      const std::size_t ln = lines_[k].number;
      if (t.empty()) {
        if (table_open_ && !runs_.back().rows.empty()) close_table();
        continue;
      }
      if (t.front() == '#') {
        read_comment(t, ln);
        continue;
      }
      if (detail::is_fence(t)) {
        close_table();
        continue;
      }
      if (auto l = parse_launcher(std::string(t))) {
        close_table();
        l->line = ln;
        launcher_ = l;
        if (auto b = bench_from_command(t)) command(*b, t);
        continue;
      }
      if (table_open_) {
        read_table_line(k);
        continue;
      }
      if (auto b = bench_from_command(t)) command(*b, t);
    }
    close_table();
    const bool any = std::any_of(runs_.begin(), runs_.end(), [](const OsuRun& r) { return !r.rows.empty(); });
    if (!any)
      throw InputError(source_ + ": no OSU or IMB result table found (expected an OSU '# Size  Latency (us)' "
                                 "or an IMB '#bytes #repetitions ...' header followed by rows)");
    return std::move(runs_);
  }

 private:
  void command(const Bench& b, std::string_view t) {
    pending_ = b;
    pending_command_ = std::string(t);
    pending_from_title_ = false;
  }

  /// A new run for a title or a header without a title.
  OsuRun& start_run(std::size_t ln) {
    close_table();
    OsuRun r;
    r.source = source_;
    r.first_line = ln;
    r.launcher = launcher_;
    r.command = pending_command_;
    if (pending_) {
      r.benchmark = pending_->name;
      r.kind = pending_->kind;
      r.collective = pending_->collective;
      r.bidirectional = pending_->bidirectional;
    }
    runs_.push_back(std::move(r));
    have_title_ = true;
    return runs_.back();
  }

  void read_comment(std::string_view t, std::size_t ln) {
    if (is_imb_header(t)) {
      header(parse_imb_header(t, source_, ln), "IMB", ln);
      return;
    }
    std::string_view c = t;
    while (!c.empty() && (c.front() == '#' || c.front() == ' ' || c.front() == '\t')) c.remove_prefix(1);
    c = trim(c);
    if (table_open_ && !runs_.back().rows.empty()) close_table(); // a comment after rows ends the table
    if (c.empty() || std::all_of(c.begin(), c.end(), [](char ch) { return ch == '-' || ch == '='; })) return;
    if (starts_with(c, "OSU ")) {
      const auto b = bench_from_title(c);
      if (b) {
        pending_ = b;
        pending_from_title_ = true;
      }
      OsuRun& r = start_run(ln);
      r.suite = "OSU";
      r.title = std::string(c);
      if (b) {
        r.benchmark = b->name;
        r.kind = b->kind;
        r.collective = b->collective;
        r.bidirectional = b->bidirectional;
      }
      const auto toks = split_ws(c);
      if (!toks.empty() && toks.back().size() > 1 && toks.back().front() == 'v')
        r.version = toks.back().substr(1);
      return;
    }
    if (starts_with(c, "Benchmarking ")) {
      const auto toks = split_ws(c);
      if (toks.size() >= 2) {
        pending_ = imb_bench(toks[1]);
        pending_from_title_ = true;
      }
      OsuRun& r = start_run(ln);
      r.suite = "IMB";
      r.title = std::string(c);
      return;
    }
    if (starts_with(c, "Size") && (c.size() == 4 || c[4] == ' ' || c[4] == '\t')) {
      header(parse_osu_header(c, source_, ln), "OSU", ln);
      return;
    }
    if (!have_title_ || runs_.empty()) return;
    OsuRun& r = runs_.back();
    if (starts_with(c, "#processes") || starts_with(c, "processes")) {
      const std::size_t eq = c.find('=');
      if (eq != std::string_view::npos) r.processes = small_int(trim(c.substr(eq + 1)));
      return;
    }
    if (starts_with(c, "Datatype:")) {
      std::string d(trim(c.substr(9)));
      while (!d.empty() && d.back() == '.') d.pop_back();
      r.datatype = d;
      return;
    }
    if (c.find("Buffer on") != std::string_view::npos) {
      r.buffers = std::string(c);
      const std::string l = detail::to_lower(c);
      r.device_buffers = l.find("device") != std::string::npos || l.find("cuda") != std::string::npos ||
                         l.find("rocm") != std::string::npos || l.find("managed") != std::string::npos;
      return;
    }
    if (c.find("pairs:") != std::string_view::npos || c.find("window size:") != std::string_view::npos) {
      auto after = [&](std::string_view key) -> std::optional<int> {
        const std::size_t p = c.find(key);
        if (p == std::string_view::npos) return std::nullopt;
        const auto toks = split_ws(c.substr(p + key.size()));
        return toks.empty() ? std::nullopt : small_int(toks.front());
      };
      r.pairs = after("pairs:");
      r.window_size = after("window size:");
      return;
    }
  }

  void header(Layout lay, const char* suite, std::size_t ln) {
    // A header right under a title (and its comment lines) belongs to it; otherwise it starts a run.
    if (runs_.empty() || !have_title_ || runs_.back().table_line != 0) start_run(ln);
    OsuRun& r = runs_.back();
    have_title_ = false;
    if (r.suite.empty()) r.suite = suite;
    r.table_line = ln;
    r.columns = lay.names;
    const bool has_bw = std::any_of(lay.cols.begin(), lay.cols.end(),
                                    [](Col c) { return c == Col::bw_mbps || c == Col::msg_rate; });
    const bool has_lat =
        std::any_of(lay.cols.begin(), lay.cols.end(), [](Col c) { return c == Col::avg_lat; });
    if (r.benchmark.empty()) {
      r.benchmark = "unknown";
      r.kind = has_lat ? OsuKind::latency : OsuKind::bandwidth;
      r.warnings.push_back(at_line(source_, ln,
                                   "cannot tell which benchmark printed this table (no title or command "
                                   "line); read as a " +
                                       std::string(to_string(r.kind)) + " table"));
    }
    if (!lay.imb && r.kind == OsuKind::bandwidth && !has_bw)
      throw InputError(at_line(source_, ln, r.benchmark + " table without a bandwidth column"));
    if ((r.kind == OsuKind::latency || r.kind == OsuKind::collective) && !has_lat)
      throw InputError(at_line(source_, ln, r.benchmark + " table without a latency column"));
    layout_ = std::move(lay);
    table_open_ = true;
    prose_.clear();
    pending_.reset();
    pending_command_.clear();
  }

  void close_table() {
    table_open_ = false;
    prose_.clear();
  }

  /// True when another row of the current table follows line index `k`.
  bool row_follows(std::size_t k) const {
    for (; k < lines_.size(); ++k) {
      const std::string_view t = trim(lines_[k].text);
      if (t.empty()) return false;
      if (detail::is_truncation_marker(t)) continue;
      if (t.front() == '#' || detail::is_fence(t)) return false;
      if (detail::looks_like_row(t)) return true;
    }
    return false;
  }

  void read_table_line(std::size_t k) {
    const std::string_view t = trim(lines_[k].text);
    const std::size_t ln = lines_[k].number;
    OsuRun& run = runs_.back();
    if (detail::is_truncation_marker(t)) {
      run.warnings.push_back(at_line(source_, ln, "table truncated at '" + std::string(t) + "'"));
      return;
    }
    const auto toks = split_ws(t);
    // A line starting with a signed or fractional number ("-64 1.57") is a damaged row, not prose: OSU rows
    // have two columns, too few for looks_like_row to count.
    if (!detail::looks_like_row(t) && !detail::parse_number(toks.front())) {
      prose_.push_back(k);
      return;
    }
    const std::size_t n = layout_.cols.size() + 1;
    if (toks.size() > n)
      throw InputError(at_line(source_, ln,
                               "table row has " + std::to_string(toks.size()) +
                                   " fields, the header at line " + std::to_string(run.table_line) + " has " +
                                   std::to_string(n)));
    if (toks.size() < n)
      throw InputError(at_line(source_, ln,
                               std::string("table cut mid-row: ") + std::to_string(toks.size()) + " of " +
                                   std::to_string(n) + " fields (the header at line " +
                                   std::to_string(run.table_line) + ")" +
                                   (row_follows(k + 1) ? "" : "; the output ends here")));
    OsuRow row;
    row.line = ln;
    const auto size = detail::parse_u64(toks[0]);
    if (!size)
      throw InputError(
          at_line(source_, ln, "column 'size' is not a whole number: '" + std::string(toks[0]) + "'"));
    if (*size > detail::kMaxPerftestOsuBytes)
      throw InputError(at_line(source_, ln,
                               "column 'size' is " + std::string(toks[0]) +
                                   " B, above the largest size read (" +
                                   std::to_string(detail::kMaxPerftestOsuBytes) + " B): not a measurement"));
    row.size_bytes = *size;
    for (std::size_t i = 1; i < toks.size(); ++i) {
      const Col c = layout_.cols[i - 1];
      const std::string& name = layout_.names[i - 1];
      if (c == Col::iterations || c == Col::defects) {
        const auto v = detail::parse_u64(toks[i]);
        if (!v && c == Col::iterations)
          throw InputError(at_line(
              source_, ln, "column '" + name + "' is not a whole number: '" + std::string(toks[i]) + "'"));
        if (c == Col::iterations) row.iterations = *v;
        continue;
      }
      const auto v = detail::parse_number(toks[i]);
      if (!v)
        throw InputError(
            at_line(source_, ln, "column '" + name + "' is not a number: '" + std::string(toks[i]) + "'"));
      // A time or a rate that cannot be one (nan, inf, negative) is bad input, as a non-number is.
      if (!std::isfinite(*v) || *v < 0)
        throw InputError(at_line(source_, ln,
                                 "column '" + name + "' is '" + std::string(toks[i]) +
                                     "', which no measurement gives (a time or rate is a finite number >= 0)"));
      switch (c) {
      case Col::avg_lat:
        row.latency_us = *v;
        break;
      case Col::min_lat:
        row.min_latency_us = *v;
        break;
      case Col::max_lat:
        row.max_latency_us = *v;
        break;
      case Col::p50:
        row.p50_us = *v;
        break;
      case Col::p90:
        row.p90_us = *v;
        break;
      case Col::p99:
        row.p99_us = *v;
        break;
      case Col::bw_mbps:
        row.bandwidth_mbps = *v;
        break;
      case Col::bw_mibps:
        row.bandwidth_mbps = *v * 1048576.0 / 1e6;
        break;
      case Col::msg_rate:
        row.messages_per_s = *v;
        break;
      default:
        break;
      }
    }
    for (std::size_t p : prose_)
      run.warnings.push_back(
          at_line(source_, lines_[p].number,
                  "ignored text inside the table: '" + std::string(trim(lines_[p].text)) + "'"));
    prose_.clear();
    // Sizes ascend in every OSU/IMB table; a size seen before is a second run pasted without its header.
    for (const auto& prev : run.rows)
      if (prev.size_bytes == row.size_bytes)
        throw InputError(at_line(source_, ln,
                                 "size " + std::to_string(row.size_bytes) + " appears again (first at line " +
                                     std::to_string(prev.line) +
                                     "): two runs in one table? give each run its own file or header"));
    if (!run.rows.empty() && row.size_bytes < run.rows.back().size_bytes)
      run.warnings.push_back(at_line(source_, ln,
                                     "size " + std::to_string(row.size_bytes) + " follows " +
                                         std::to_string(run.rows.back().size_bytes) + " (sizes do not ascend)"));
    run.rows.push_back(row);
  }

  std::vector<Line> lines_;
  const std::string& source_;
  std::vector<OsuRun> runs_;
  std::optional<OsuLauncher> launcher_;
  std::optional<Bench> pending_;
  bool pending_from_title_ = false;
  std::string pending_command_;
  bool have_title_ = false; ///< the last run was started by a title and has no header yet
  bool table_open_ = false;
  Layout layout_;
  std::vector<std::size_t> prose_;
};

} // namespace

const char* to_string(OsuKind k) {
  switch (k) {
  case OsuKind::latency:
    return "latency";
  case OsuKind::bandwidth:
    return "bandwidth";
  case OsuKind::collective:
    return "collective";
  }
  return "?";
}

std::optional<OsuLauncher> parse_launcher(const std::string& line) {
  const auto toks = split_ws(line);
  std::size_t at = toks.size();
  for (std::size_t i = 0; i < toks.size(); ++i) {
    if (is_launcher_name(toks[i]) && (i == 0 || is_prompt(toks[i - 1]))) {
      at = i;
      break;
    }
    if (!is_prompt(toks[i]) && i > 2) break;
  }
  if (at == toks.size()) return std::nullopt;
  std::string_view name = toks[at];
  if (const std::size_t s = name.find_last_of('/'); s != std::string_view::npos) name = name.substr(s + 1);
  const bool slurm = name == "srun";
  OsuLauncher l;
  l.text = std::string(trim(std::string_view(line)));
  std::vector<std::string> hosts;
  for (std::size_t i = at + 1; i < toks.size(); ++i) {
    std::string_view opt = toks[i];
    if (is_program(opt)) break;
    std::string_view val;
    bool has_val = false;
    if (const std::size_t eq = opt.find('='); starts_with(opt, "--") && eq != std::string_view::npos) {
      val = opt.substr(eq + 1);
      opt = opt.substr(0, eq);
      has_val = true;
    } else if (i + 1 < toks.size()) {
      val = toks[i + 1];
    }
    auto take = [&]() -> std::string_view {
      if (!has_val) ++i;
      return val;
    };
    // srun's joined short options: "-N4", "-n144"
    if (slurm && opt.size() > 2 && opt[0] == '-' && opt[1] != '-' && (opt[1] == 'N' || opt[1] == 'n')) {
      if (auto v = small_int(opt.substr(2))) (opt[1] == 'N' ? l.nodes : l.processes) = v;
      continue;
    }
    if (slurm) {
      if (opt == "-N" || opt == "--nodes")
        l.nodes = small_int(take());
      else if (opt == "-n" || opt == "--ntasks")
        l.processes = small_int(take());
      else if (opt == "--ntasks-per-node")
        l.per_node = small_int(take());
      continue;
    }
    if (opt == "-n" || opt == "-np" || opt == "--np" || opt == "-c")
      l.processes = small_int(take());
    else if (opt == "-N" || opt == "-npernode" || opt == "--npernode" || opt == "-ppn" || opt == "--ppn" ||
             opt == "-perhost" || opt == "--perhost")
      l.per_node = small_int(take());
    else if (opt == "--map-by" || opt == "-map-by") {
      const std::string v = detail::to_lower(take());
      if (starts_with(v, "ppr:")) {
        const std::size_t c2 = v.find(':', 4);
        if (c2 != std::string::npos && v.find("node", c2) != std::string::npos)
          l.per_node = small_int(std::string_view(v).substr(4, c2 - 4));
      }
    } else if (opt == "-host" || opt == "--host" || opt == "-H" || opt == "-hosts" || opt == "--hosts") {
      std::string_view list = take();
      while (!list.empty()) {
        const std::size_t comma = list.find(',');
        std::string_view h = list.substr(0, comma);
        h = h.substr(0, h.find(':'));
        if (!h.empty() && std::find(hosts.begin(), hosts.end(), h) == hosts.end()) hosts.emplace_back(h);
        if (comma == std::string_view::npos) break;
        list.remove_prefix(comma + 1);
      }
    }
  }
  if (!hosts.empty() && !l.nodes) l.nodes = static_cast<int>(hosts.size());
  if (l.processes && l.per_node && !l.nodes) l.nodes = (*l.processes + *l.per_node - 1) / *l.per_node;
  if (l.processes && l.nodes && !l.per_node && *l.processes % *l.nodes == 0)
    l.per_node = *l.processes / *l.nodes;
  if (l.nodes && l.per_node && !l.processes) { // in 64 bits: each factor may be up to kMaxCount
    const std::int64_t p = std::int64_t{*l.nodes} * *l.per_node;
    if (p <= kMaxCount) l.processes = static_cast<int>(p);
  }
  return l;
}

std::vector<OsuRun> parse_osu(std::istream& in, const std::string& source) {
  return Reader(detail::read_lines(in), source).read();
}

std::vector<OsuRun> parse_osu_file(const std::string& path) {
  refuse_folder(path, "an OSU/IMB output file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open OSU/IMB output file");
  return parse_osu(in, path);
}

} // namespace ibn::calib
