#pragma once
// nccl-tests result tables: the binaries' names, data type sizes, the header layout ("size count type redop
// root time algbw busbw #wrong ...") and one row's fields. Used by the log reader in nccl_tests_parser.cpp.
#include "calibration/nccl_tests_parser.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ibn::calib::nccl_table {

struct Binary {
  std::string_view name;
  NcclCollective collective;
};

/// The first nccl-tests binary named in `t` (as a whole word), if any; "*_perf_mpi" counts as the binary.
std::optional<Binary> find_binary(std::string_view t);

/// A wrapper script's option naming the test by its collective ("run_nccl_tests.sh -t all_gather",
/// "--test=all_reduce"): an option token (starting with '-') followed by, or joined by '=' to, a token that
/// is exactly a collective's name with or without underscores ("all_gather", "allgather"). Returns the binary
/// of that collective. A bare word in prose ("the same all_gather test") is not an option and does not count.
std::optional<Binary> find_test_option(std::string_view t);

/// find_binary, else find_test_option: what a command line in `t` says was run.
std::optional<Binary> find_command(std::string_view t);

/// Bytes per element of an nccl-tests data type name ("float", "bf16", ...), if known.
std::optional<std::uint64_t> type_size(std::string_view t);

enum class Desc { size, count, type, redop, root };

struct Layout {
  std::vector<Desc> desc;
  std::vector<bool>
      group_has_wrong;         ///< one entry per result group (1 or 2); true when "#wrong"/"error" is printed
  bool wrong_is_count = false; ///< "#wrong" (a count of bad values), not old "error" (max relative error)
  std::size_t group_size(std::size_t g) const { return group_has_wrong[g] ? 4 : 3; }
  std::size_t oop_fields() const { return desc.size() + group_size(0); }
  std::size_t full_fields() const { return oop_fields() + (group_has_wrong.size() > 1 ? group_size(1) : 0); }
};

/// True for the tokens of a table header line ("size count type ... time ...").
bool is_table_header(const std::vector<std::string_view>& toks);

/// The layout of a header line; InputError naming source:line when it is not one nccl-tests prints.
Layout parse_layout(const std::vector<std::string_view>& toks, const std::string& source, std::size_t line);

/// One result row in `lay`; a field that is not a number throws InputError naming source:line and the column;
/// a non-finite number is kept and noted in `warnings`.
NcclTestsRow parse_row(const std::vector<std::string_view>& toks, const Layout& lay,
                       const std::string& source, std::size_t ln, std::vector<std::string>& warnings);

} // namespace ibn::calib::nccl_table
