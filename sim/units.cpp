#include "sim/units.hpp"

#include "sim/error.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace ibn {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

// Splits "12.5Gbps" into the number "12.5" and the suffix "Gbps".
void split_number(std::string_view s, std::string_view& num, std::string_view& suffix) {
  std::size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
  num = s.substr(0, i);
  suffix = trim(s.substr(i));
}

[[noreturn]] void bad(const std::string& what, std::string_view text, const std::string& expected) {
  throw InputError(what + ": cannot read '" + std::string(text) + "' (expected " + expected + ")");
}

double to_double(std::string_view num, const std::string& what, std::string_view text, const std::string& exp) {
  if (num.empty()) bad(what, text, exp);
  double v = 0;
  auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
  if (ec != std::errc() || p != num.data() + num.size() || !std::isfinite(v)) bad(what, text, exp);
  return v;
}

} // namespace

std::uint64_t parse_size_bytes(std::string_view text, const std::string& what) {
  const std::string exp = "a size such as 4096, 64K, 64KiB, 1M, 1MiB or 1G";
  const std::string_view s = trim(text);
  if (!s.empty() && s.front() == '-') throw InputError(what + ": size must not be negative, got '" + std::string(text) + "'");
  std::string_view num, suffix;
  split_number(s, num, suffix);
  const double v = to_double(num, what, text, exp);
  const std::string suf = lower(suffix);
  double mult = 1;
  if (suf.empty() || suf == "b") mult = 1;
  else if (suf == "k" || suf == "kib" || suf == "kb") mult = 1024.0;
  else if (suf == "m" || suf == "mib" || suf == "mb") mult = 1024.0 * 1024.0;
  else if (suf == "g" || suf == "gib" || suf == "gb") mult = 1024.0 * 1024.0 * 1024.0;
  else if (suf == "t" || suf == "tib" || suf == "tb") mult = 1024.0 * 1024.0 * 1024.0 * 1024.0;
  else bad(what, text, exp);
  const double bytes = v * mult;
  if (bytes != std::floor(bytes)) bad(what, text, "a whole number of bytes");
  if (bytes > 1.8e19) bad(what, text, "a size below 16 EiB");
  return static_cast<std::uint64_t>(bytes);
}

std::uint64_t parse_plain_rate_bps(std::string_view text, const std::string& what) {
  const std::string exp = "a rate such as 200Gbps, 200Gb/s or 100000Mbps";
  const std::string_view s = trim(text);
  if (!s.empty() && s.front() == '-') throw InputError(what + ": rate must be positive, got '" + std::string(text) + "'");
  std::string_view num, suffix;
  split_number(s, num, suffix);
  const double v = to_double(num, what, text, exp);
  std::string suf = lower(suffix);
  for (const char* tail : {"bps", "b/s", "bit/s"}) {
    const std::string t(tail);
    if (suf.size() >= t.size() && suf.compare(suf.size() - t.size(), t.size(), t) == 0) {
      suf.resize(suf.size() - t.size());
      break;
    }
  }
  double mult = 0;
  if (suf == "g") mult = 1e9;
  else if (suf == "m") mult = 1e6;
  else if (suf == "t") mult = 1e12;
  else if (suf == "k") mult = 1e3;
  else bad(what, text, exp);
  if (v <= 0) throw InputError(what + ": rate must be positive, got '" + std::string(text) + "'");
  return static_cast<std::uint64_t>(std::llround(v * mult));
}

double parse_nonneg_double(std::string_view text, const std::string& what) {
  const std::string_view s = trim(text);
  if (!s.empty() && s.front() == '-') throw InputError(what + ": must not be negative, got '" + std::string(text) + "'");
  return to_double(s, what, text, "a non-negative number");
}

std::int64_t parse_positive_int(std::string_view text, const std::string& what) {
  const std::string_view s = trim(text);
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size())
    throw InputError(what + ": cannot read '" + std::string(text) + "' (expected a positive whole number)");
  if (v <= 0) throw InputError(what + ": must be positive, got '" + std::string(text) + "'");
  return v;
}

std::string format_size(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (u < 4 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++u;
  }
  return std::to_string(bytes) + units[u];
}

std::string format_g(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

} // namespace ibn
