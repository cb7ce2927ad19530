// nccl-tests result tables: the binaries' names, data type sizes, the header layout and one row's fields
// (split from nccl_tests_parser.cpp, which reads a whole log around them).
#include "calibration/nccl_tests_table.hpp"

#include "calibration/text_scan.hpp"
#include "sim/error.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace ibn::calib::nccl_table {

using detail::find_word;

namespace {
// nccl-tests binaries; gather/scatter/hypercube exist but are not modelled (-> unknown).
constexpr std::array<Binary, 10> kBinaries = {{
    {"all_reduce_perf", NcclCollective::all_reduce},
    {"all_gather_perf", NcclCollective::all_gather},
    {"reduce_scatter_perf", NcclCollective::reduce_scatter},
    {"alltoall_perf", NcclCollective::alltoall},
    {"sendrecv_perf", NcclCollective::sendrecv},
    {"broadcast_perf", NcclCollective::broadcast},
    {"reduce_perf", NcclCollective::reduce},
    {"gather_perf", NcclCollective::unknown},
    {"scatter_perf", NcclCollective::unknown},
    {"hypercube_perf", NcclCollective::unknown},
}};

} // namespace

// The first nccl-tests binary named in `t` (as a whole word), if any. The MPI build's names
/// ("all_reduce_perf_mpi", nccl-tests built with MPI=1 in some packagings) count as the binary.
std::optional<Binary> find_binary(std::string_view t) {
  std::optional<Binary> best;
  std::size_t best_pos = std::string_view::npos;
  for (const Binary& b : kBinaries) {
    const std::string mpi = std::string(b.name) + "_mpi";
    const std::size_t p = std::min(find_word(t, b.name), find_word(t, mpi));
    if (p < best_pos) {
      best_pos = p;
      best = b;
    }
  }
  return best;
}

std::optional<Binary> find_test_option(std::string_view t) {
  // The binary whose name is `name` + "_perf", `name` compared without underscores ("allgather").
  auto by_collective_name = [](std::string_view name) -> std::optional<Binary> {
    std::string bare;
    for (char c : name)
      if (c != '_') bare += c;
    if (bare.empty()) return std::nullopt;
    for (const Binary& b : kBinaries) {
      std::string_view stem = b.name.substr(0, b.name.size() - 5); // without "_perf"
      std::string stem_bare;
      for (char c : stem)
        if (c != '_') stem_bare += c;
      if (bare == stem_bare && (name == stem || name.find('_') == std::string_view::npos)) return b;
    }
    return std::nullopt;
  };
  const auto toks = detail::split_ws(t);
  for (std::size_t i = 0; i < toks.size(); ++i) {
    const std::string_view tok = toks[i];
    if (tok.size() < 2 || tok.front() != '-' || tok == "--") continue;
    if (const std::size_t eq = tok.find('='); eq != std::string_view::npos) {
      if (auto b = by_collective_name(tok.substr(eq + 1))) return b;
      continue;
    }
    if (i + 1 < toks.size())
      if (auto b = by_collective_name(toks[i + 1])) return b;
  }
  return std::nullopt;
}

std::optional<Binary> find_command(std::string_view t) {
  if (auto b = find_binary(t)) return b;
  return find_test_option(t);
}

std::optional<std::uint64_t> type_size(std::string_view t) {
  const std::string s = detail::to_lower(t);
  if (s == "int8" || s == "uint8" || s == "char" || s == "f8e4m3" || s == "f8e5m2" || s == "fp8_e4m3" ||
      s == "fp8_e5m2")
    return 1;
  if (s == "half" || s == "float16" || s == "bfloat16" || s == "bf16" || s == "fp16") return 2;
  if (s == "int32" || s == "uint32" || s == "int" || s == "float" || s == "float32") return 4;
  if (s == "int64" || s == "uint64" || s == "double" || s == "float64") return 8;
  return std::nullopt;
}

// ---- table layout -------------------------------------------------------------------------------------

bool is_table_header(const std::vector<std::string_view>& toks) {
  auto has = [&](std::string_view w) { return std::find(toks.begin(), toks.end(), w) != toks.end(); };
  return !toks.empty() && toks.front() == "size" && has("count") && has("time");
}

Layout parse_layout(const std::vector<std::string_view>& toks, const std::string& source, std::size_t line) {
  auto fail = [&](const std::string& msg) -> Layout { throw InputError(at_line(source, line, msg)); };
  Layout lay;
  std::size_t i = 0;
  for (; i < toks.size(); ++i) {
    const std::string_view t = toks[i];
    if (t == "size")
      lay.desc.push_back(Desc::size);
    else if (t == "count")
      lay.desc.push_back(Desc::count);
    else if (t == "type")
      lay.desc.push_back(Desc::type);
    else if (t == "redop")
      lay.desc.push_back(Desc::redop);
    else if (t == "root")
      lay.desc.push_back(Desc::root);
    else
      break;
  }
  if (lay.desc.size() < 3 || lay.desc[0] != Desc::size || lay.desc[1] != Desc::count ||
      lay.desc[2] != Desc::type)
    return fail("nccl-tests table header must start with 'size count type'");
  while (i < toks.size()) {
    if (lay.group_has_wrong.size() == 2)
      return fail("nccl-tests table header has more than two result groups");
    if (i + 3 > toks.size() || toks[i] != "time" || toks[i + 1] != "algbw" || toks[i + 2] != "busbw")
      return fail("unrecognised nccl-tests table header at '" + std::string(toks[i]) +
                  "' (expected 'time algbw busbw #wrong')");
    i += 3;
    const bool count = i < toks.size() && (toks[i] == "#wrong" || toks[i] == "wrong");
    const bool wrong = count || (i < toks.size() && toks[i] == "error");
    if (count) lay.wrong_is_count = true;
    if (wrong) ++i;
    lay.group_has_wrong.push_back(wrong);
  }
  if (lay.group_has_wrong.empty()) return fail("nccl-tests table header has no 'time algbw busbw' columns");
  return lay;
}

namespace {

[[noreturn]] void bad_field(const std::string& source, std::size_t line, const std::string& col,
                            std::string_view tok, const char* what) {
  throw InputError(
      at_line(source, line, "column '" + col + "' is not " + what + ": '" + std::string(tok) + "'"));
}

const char* desc_name(Desc d) {
  switch (d) {
  case Desc::size:
    return "size";
  case Desc::count:
    return "count";
  case Desc::type:
    return "type";
  case Desc::redop:
    return "redop";
  case Desc::root:
    return "root";
  }
  return "?";
}

} // namespace

NcclTestsRow parse_row(const std::vector<std::string_view>& toks, const Layout& lay,
                       const std::string& source, std::size_t ln, std::vector<std::string>& warnings) {
  NcclTestsRow row;
  row.line = ln;
  auto bad = [&](const std::string& col, std::string_view tok, const char* what) {
    bad_field(source, ln, col, tok, what);
  };
  std::size_t i = 0;
  for (; i < lay.desc.size() && i < toks.size(); ++i) {
    const std::string_view tok = toks[i];
    switch (lay.desc[i]) {
    case Desc::size:
    case Desc::count: {
      const auto v = detail::parse_u64(tok);
      if (!v) bad(desc_name(lay.desc[i]), tok, "a whole number");
      if (lay.desc[i] == Desc::size && *v > detail::kMaxNcclTestsBytes)
        throw InputError(
            at_line(source, ln,
                    "column 'size' is " + std::string(tok) + " B, above the largest size read (" +
                        std::to_string(detail::kMaxNcclTestsBytes) + " B = 1 TiB): not a measurement"));
      (lay.desc[i] == Desc::size ? row.size_bytes : row.count) = *v;
      break;
    }
    case Desc::type:
      if (!std::isalpha(static_cast<unsigned char>(tok.front()))) bad("type", tok, "a data type name");
      row.type = std::string(tok);
      break;
    case Desc::redop:
      if (!std::isalpha(static_cast<unsigned char>(tok.front()))) bad("redop", tok, "a reduction name");
      row.redop = std::string(tok);
      break;
    case Desc::root: {
      const auto v = detail::parse_i64(tok);
      if (!v) bad("root", tok, "a whole number");
      row.root = *v;
      break;
    }
    }
  }
  for (std::size_t g = 0; g < lay.group_has_wrong.size() && i < toks.size(); ++g) {
    const char* side = g == 0 ? "out-of-place " : "in-place ";
    NcclTestsResult r;
    const std::array<const char*, 3> names = {"time", "algbw", "busbw"};
    const std::array<double*, 3> dst = {&r.time_us, &r.algbw_gbs, &r.busbw_gbs};
    for (std::size_t f = 0; f < 3 && i < toks.size(); ++f, ++i) {
      const auto v = detail::parse_number(toks[i]);
      if (!v) bad(std::string(side) + names[f], toks[i], "a number");
      if (!std::isfinite(*v))
        warnings.push_back(at_line(
            source, ln, std::string("column '") + side + names[f] + "' is '" + std::string(toks[i]) + "'"));
      *dst[f] = *v;
    }
    if (lay.group_has_wrong[g] && i < toks.size()) {
      if (toks[i] != "N/A") {
        const auto v = detail::parse_number(toks[i]);
        if (!v) bad(std::string(side) + "#wrong", toks[i], "a number or N/A");
        r.wrong = *v;
      }
      ++i;
    }
    if (g == 0)
      row.oop = r;
    else if (i == lay.full_fields())
      row.ip = r;
  }
  return row;
}

} // namespace ibn::calib::nccl_table
