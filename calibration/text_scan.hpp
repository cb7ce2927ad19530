#pragma once
// Small line-scanning helpers shared by the measurement-log parsers in calibration/ (perftest,
// nccl-tests). They read text as it comes from terminals and web pages: CRLF or LF line ends, an
// optional UTF-8 byte-order mark, tabs mixed with spaces.
//
// Numbers are parsed strictly (std::from_chars, whole token, no sign unless asked for); callers decide
// whether a token that is not a number is an error.
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ibn::calib::detail {

/// The largest message size a perftest or OSU/IMB table may hold (docs/calibration.md "Input files"): 2 GiB,
/// the bound of `perftest -s` (and of an MPI count of bytes). A larger size is refused at its line: it cannot
/// be a measurement, and simulated it overflowed the engine's clock.
inline constexpr std::uint64_t kMaxPerftestOsuBytes = std::uint64_t{1} << 31;
/// The largest size an nccl-tests table may hold: 1 TiB (more than any GPU holds; the scenario key
/// jobs[].workload.sizes allows 1.1e13).
inline constexpr std::uint64_t kMaxNcclTestsBytes = std::uint64_t{1} << 40;

struct Line {
  std::string text;   ///< without the line end ("\n" or "\r\n")
  std::size_t number; ///< 1-based
};

/// Reads every line of `in`, dropping "\r" before "\n" and a leading UTF-8 BOM.
std::vector<Line> read_lines(std::istream& in);

std::string_view trim(std::string_view s);
/// Splits on any run of spaces and tabs.
std::vector<std::string_view> split_ws(std::string_view s);
std::string to_lower(std::string_view s);
bool starts_with(std::string_view s, std::string_view prefix);

/// "123" -> 123; rejects signs, fractions, exponents, trailing text.
std::optional<std::uint64_t> parse_u64(std::string_view tok);
/// "-1" / "12" -> value; rejects fractions and trailing text.
std::optional<std::int64_t> parse_i64(std::string_view tok);
/// A decimal number as printf prints it: "0.98", "15668.1", "1e-07", "inf", "-nan". Whole token only.
std::optional<double> parse_number(std::string_view tok);

/// Position of `word` in `s` where it is not part of a longer identifier ([A-Za-z0-9_] on either side),
/// or npos.
std::size_t find_word(std::string_view s, std::string_view word);

/// A dashed rule line such as perftest's "-----...-----" (10 or more '-' and nothing else).
bool is_rule(std::string_view s);
/// A markdown code fence ("```" or "```text").
bool is_fence(std::string_view s);
/// An elision marker left where output was cut: "...", "....", "…", "[truncated]", "(output omitted)",
/// "[snip]".
bool is_truncation_marker(std::string_view s);
/// A line that looks like a numeric table row (its first token starts with a digit, or at least half of
/// three or more tokens are numbers): such a line inside a table must parse as a row.
bool looks_like_row(std::string_view s);

} // namespace ibn::calib::detail
