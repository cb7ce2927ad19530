#include "calibration/text_scan.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <istream>

namespace ibn::calib::detail {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}
bool is_ident(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

} // namespace

std::vector<Line> read_lines(std::istream& in) {
  std::vector<Line> lines;
  std::string text;
  std::size_t number = 0;
  while (std::getline(in, text)) {
    ++number;
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (number == 1 && starts_with(text, "\xEF\xBB\xBF")) text.erase(0, 3);
    lines.push_back(Line{std::move(text), number});
    text.clear();
  }
  return lines;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split_ws(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && is_space(s[i])) ++i;
    const std::size_t start = i;
    while (i < s.size() && !is_space(s[i])) ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

std::string to_lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::optional<std::uint64_t> parse_u64(std::string_view tok) {
  if (tok.empty() || !std::isdigit(static_cast<unsigned char>(tok.front()))) return std::nullopt;
  std::uint64_t v = 0;
  const auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
  if (ec != std::errc() || p != tok.data() + tok.size()) return std::nullopt;
  return v;
}

std::optional<std::int64_t> parse_i64(std::string_view tok) {
  if (tok.empty()) return std::nullopt;
  std::int64_t v = 0;
  const auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
  if (ec != std::errc() || p != tok.data() + tok.size()) return std::nullopt;
  return v;
}

std::optional<double> parse_number(std::string_view tok) {
  if (tok.empty()) return std::nullopt;
  std::string_view body = tok;
  if (body.front() == '-' || body.front() == '+') body.remove_prefix(1);
  // from_chars does not take a leading '+'; printf never prints one, but "-nan" and "-1" occur.
  if (body.empty() || tok.front() == '+') return std::nullopt;
  double v = 0;
  const auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
  if (ec != std::errc() || p != tok.data() + tok.size()) return std::nullopt;
  return v;
}

std::size_t find_word(std::string_view s, std::string_view word) {
  std::size_t pos = s.find(word);
  while (pos != std::string_view::npos) {
    const bool left_ok = pos == 0 || !is_ident(s[pos - 1]);
    const std::size_t end = pos + word.size();
    const bool right_ok = end >= s.size() || !is_ident(s[end]);
    if (left_ok && right_ok) return pos;
    pos = s.find(word, pos + 1);
  }
  return std::string_view::npos;
}

bool is_rule(std::string_view s) {
  s = trim(s);
  return s.size() >= 10 && std::all_of(s.begin(), s.end(), [](char c) { return c == '-'; });
}

bool is_fence(std::string_view s) {
  return starts_with(trim(s), "```");
}

bool is_truncation_marker(std::string_view s) {
  s = trim(s);
  if (s.empty()) return false;
  if (s == "\xE2\x80\xA6" || s == "[...]" || s == "(...)") return true; // U+2026 HORIZONTAL ELLIPSIS
  if (s.size() >= 3 && std::all_of(s.begin(), s.end(), [](char c) { return c == '.'; })) return true;
  if (s.size() > 40) return false;
  const std::string l = to_lower(s);
  return l.find("truncated") != std::string::npos || l.find("omitted") != std::string::npos ||
         l.find("snip") != std::string::npos;
}

bool looks_like_row(std::string_view s) {
  const auto toks = split_ws(s);
  if (toks.empty()) return false;
  if (std::isdigit(static_cast<unsigned char>(toks.front().front()))) return true;
  if (toks.size() < 3) return false;
  const auto numeric = std::count_if(
      toks.begin(), toks.end(), [](std::string_view t) { return parse_number(t).has_value() || t == "N/A"; });
  return static_cast<std::size_t>(numeric) * 2 >= toks.size();
}

} // namespace ibn::calib::detail
