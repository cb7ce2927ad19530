#include "sim/json_text.hpp"

#include "sim/error.hpp"

#include <algorithm>
#include <unordered_set>
#include <vector>

namespace ibn {
namespace {

using json = nlohmann::json;

/// A SAX pass that only tracks where it is ($.a.b[3]) and remembers the first error's position.
class Locator : public nlohmann::json_sax<json> {
public:
  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t&) override { return value(); }
  bool binary(binary_t&) override { return value(); }
  bool start_object(std::size_t) override {
    stack_.push_back({false, 0, {}});
    return true;
  }
  bool key(string_t& k) override {
    stack_.back().key = k;
    return true;
  }
  bool end_object() override { return end(); }
  bool start_array(std::size_t) override {
    stack_.push_back({true, 0, {}});
    return true;
  }
  bool end_array() override { return end(); }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception&) override {
    error_position = position;
    error_path = path();
    return false;
  }

  std::size_t error_position = 0;
  std::string error_path;

private:
  struct Level {
    bool array;
    std::size_t index;
    std::string key;
  };
  bool value() {
    if (!stack_.empty() && stack_.back().array) ++stack_.back().index;
    return true;
  }
  bool end() {
    stack_.pop_back();
    return value();
  }
  std::string path() const {
    std::string p = "$";
    for (const auto& l : stack_) {
      if (l.array) p += "[" + std::to_string(l.index) + "]";
      else p += "." + l.key;
    }
    return p;
  }
  std::vector<Level> stack_;
};

/// The DOM builder of json::parse, plus what a plain parse cannot tell: the first key an object repeats
/// ($.jobs[0].seed). (A parser callback did the same at 3x the parse time of a 19 MB fabric; this costs about
/// 20 %.)
class DomWithDuplicateKeys {
 public:
  explicit DomWithDuplicateKeys(json& root) : dom_(root, true) {}
  bool null() { return value(dom_.null()); }
  bool boolean(bool b) { return value(dom_.boolean(b)); }
  bool number_integer(json::number_integer_t n) { return value(dom_.number_integer(n)); }
  bool number_unsigned(json::number_unsigned_t n) { return value(dom_.number_unsigned(n)); }
  bool number_float(json::number_float_t n, const json::string_t& s) {
    return value(dom_.number_float(n, s));
  }
  bool string(json::string_t& s) { return value(dom_.string(s)); }
  bool binary(json::binary_t& b) { return value(dom_.binary(b)); }
  bool start_object(std::size_t n) {
    stack_.push_back(Level{false, 0, {}, {}, {}});
    return dom_.start_object(n);
  }
  bool key(json::string_t& k) {
    Level& l = stack_.back();
    l.key = k;
    if (l.seen(k) && found.empty()) found = path();
    return dom_.key(k);
  }
  bool end_object() { return end(dom_.end_object()); }
  bool start_array(std::size_t n) {
    stack_.push_back(Level{true, 0, {}, {}, {}});
    return dom_.start_array(n);
  }
  bool end_array() { return end(dom_.end_array()); }
  template <class Exception> bool parse_error(std::size_t pos, const std::string& tok, const Exception& e) {
    return dom_.parse_error(pos, tok, e); // throws e (exceptions allowed)
  }

  std::string found;

 private:
  static constexpr std::size_t kLinear = 16;
  struct Level {
    bool array;
    std::size_t index;
    std::string key;
    std::vector<std::string> keys;        // small objects: a linear scan beats a set
    std::unordered_set<std::string> many; // objects of more than kLinear keys
    bool seen(const std::string& k) {
      if (!many.empty()) return !many.insert(k).second;
      if (std::find(keys.begin(), keys.end(), k) != keys.end()) return true;
      keys.push_back(k);
      if (keys.size() > kLinear) many.insert(keys.begin(), keys.end());
      return false;
    }
  };
  bool value(bool ok) {
    if (!stack_.empty() && stack_.back().array) ++stack_.back().index;
    return ok;
  }
  bool end(bool ok) {
    stack_.pop_back();
    return value(ok);
  }
  std::string path() const {
    std::string p = "$";
    for (const auto& l : stack_) {
      if (l.array)
        p += "[" + std::to_string(l.index) + "]";
      else
        p += "." + l.key;
    }
    return p;
  }
  nlohmann::detail::json_sax_dom_parser<json> dom_;
  std::vector<Level> stack_;
};

/// Offset of the first key an object of `text` (valid JSON) repeats, comparing keys as written (escapes not
/// decoded); npos if none.
std::size_t second_key_offset(const std::string& text) {
  std::vector<std::vector<std::string>> keys; // per open container; arrays hold none
  std::vector<bool> is_object;
  bool expect_key = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      const std::size_t start = i;
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\') ++i;
      if (expect_key && !is_object.empty() && is_object.back()) {
        std::string k = text.substr(start + 1, i - start - 1);
        auto& seen = keys.back();
        if (std::find(seen.begin(), seen.end(), k) != seen.end()) return start;
        seen.push_back(std::move(k));
        expect_key = false;
      }
    } else if (c == '{' || c == '[') {
      keys.emplace_back();
      is_object.push_back(c == '{');
      expect_key = c == '{';
    } else if (c == '}' || c == ']') {
      if (!keys.empty()) keys.pop_back(), is_object.pop_back();
      expect_key = false;
    } else if (c == ',') {
      expect_key = !is_object.empty() && is_object.back();
    }
  }
  return std::string::npos;
}

std::string reason_of(const std::exception& e) {
  std::string reason = e.what();
  if (const auto p = reason.find("] "); reason.starts_with("[json.exception") && p != std::string::npos)
    reason = reason.substr(p + 2);
  return reason;
}

} // namespace

std::pair<std::size_t, std::size_t> json_line_col(const std::string& text, std::size_t offset) {
  offset = std::min(offset, text.size());
  std::size_t line = 1, line_start = 0;
  for (std::size_t i = 0; i < offset; ++i)
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  return {line, offset - line_start + 1};
}

json parse_json_text(const std::string& text, const std::string& source, const std::string& label) {
  // Nesting beyond any file of ours: refused before parsing (70,000 nested objects crashed a recursive walk
  // of the parsed value, exit 139). Strings are skipped, escapes included.
  constexpr int kMaxDepth = 256;
  int depth = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > kMaxDepth) {
        const auto [line, col] = json_line_col(text, i);
        throw InputError(source + ":" + std::to_string(line) + ":" + std::to_string(col) + ": " + label +
                         ": nested more than " + std::to_string(kMaxDepth) + " levels deep");
      }
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  try {
    // JSON allows an object to repeat a key and nlohmann keeps the last value: a scenario with "seed" twice
    // ran silently with the second (found by a walk through the product, 2026-12-07).
    json j;
    DomWithDuplicateKeys dup(j);
    json::sax_parse(text, &dup);
    if (!dup.found.empty()) {
      // Valid JSON, so not the caller's "malformed" label; where the second copy sits, from a scan of the
      // text.
      std::string at;
      if (const std::size_t off = second_key_offset(text); off != std::string::npos) {
        const auto [line, col] = json_line_col(text, off);
        at = ":" + std::to_string(line) + ":" + std::to_string(col);
      }
      throw InputError(
          source + at + ": key " + dup.found +
          " appears twice in one object (JSON allows it, but only one value can hold; remove the other)");
    }
    return j;
  } catch (const json::parse_error& e) {
    // e.byte is 1-based (the last character read).
    const auto [line, col] = json_line_col(text, e.byte == 0 ? 0 : e.byte - 1);
    throw InputError(source + ":" + std::to_string(line) + ":" + std::to_string(col) +
                     ": " + label + ": " + reason_of(e));
  } catch (const json::exception& e) {
    // Not a syntax error (a number overflowing a double, 1e309): a second, SAX pass finds where.
    Locator loc;
    json::sax_parse(text, &loc, json::input_format_t::json, false);
    const auto [line, col] = json_line_col(text, loc.error_position == 0 ? 0 : loc.error_position - 1);
    throw InputError(source + ":" + std::to_string(line) + ":" + std::to_string(col) + ": " + label + ": " +
                     (loc.error_path.empty() || loc.error_path == "$" ? "" : "key " + loc.error_path + ": ") +
                     reason_of(e) + " (numbers must fit a double, at most about 1.8e308)");
  }
}

} // namespace ibn
