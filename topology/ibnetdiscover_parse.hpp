#pragma once
// The parsed form of ibnetdiscover output (default and -p formats): devices, cable sightings and warnings,
// and the text helpers the parser, the fabric builder and the exporter share (topology/ibnetdiscover.cpp).
// Internal to topology/: not part of the public ibnetdiscover.hpp interface.
#include "topology/ibnetdiscover.hpp"

#include "sim/error.hpp"

#include <cstdint>
#include <cstdio>
#include <istream>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ibn::topo::ibnd {

constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
/// The format carries no cable lengths: HCA cables are taken as 3 m DAC, switch-to-switch as 30 m fibre
/// (unless an "# ibnetsim-node:" line of the exporter gives them).
constexpr double kHcaCableM = 3.0;
constexpr double kSwitchCableM = 30.0;
/// First synthetic GUID handed out by the exporter (EUI-64 "locally administered" bit set, so it cannot be
/// a vendor-assigned GUID).
constexpr std::uint64_t kSyntheticGuidBase = 0x0200000000000001ull;
constexpr std::string_view kAnnotationTag = "# ibnetsim-node:";
/// The largest unicast LID (0xBFFF); 0xC000 and above are multicast LIDs.
constexpr int kMaxUnicastLid = 49151;

// ---------------------------------------------------------------------------------------------------------
// Small text helpers

inline bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}
inline bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
inline bool is_hex(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
inline char to_lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

inline std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = to_lower(c);
  return r;
}

inline bool starts_with(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

inline bool contains_ci(std::string_view hay, std::string_view needle) {
  return lower(hay).find(lower(needle)) != std::string::npos;
}

inline std::string hex16(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

inline std::string hex_short(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(v));
  return buf;
}

/// "1f" -> 0x1f when the whole text is 1..16 hex digits.
inline std::optional<std::uint64_t> parse_hex(std::string_view s) {
  if (starts_with(s, "0x") || starts_with(s, "0X")) s.remove_prefix(2);
  if (s.empty() || s.size() > 16) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : s) {
    if (!is_hex(c)) return std::nullopt;
    const char l = to_lower(c);
    v = (v << 4) | static_cast<std::uint64_t>(is_digit(l) ? l - '0' : l - 'a' + 10);
  }
  return v;
}

inline std::optional<int> parse_small_int(std::string_view s) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  int v = 0;
  for (char c : s) {
    if (!is_digit(c)) return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

/// A forward-only reader over one line.
class Cursor {
 public:
  explicit Cursor(std::string_view s) : s_(s) {}

  void ws() {
    while (i_ < s_.size() && is_space(s_[i_])) ++i_;
  }
  bool at_end() {
    ws();
    return i_ >= s_.size();
  }
  bool peek(char c) const { return i_ < s_.size() && s_[i_] == c; }
  bool eat(char c) {
    if (!peek(c)) return false;
    ++i_;
    return true;
  }
  /// Skips blanks, then consumes `w` if it is there as a whole word.
  bool eat_word(std::string_view w) {
    ws();
    if (s_.substr(i_, w.size()) != w) return false;
    const std::size_t e = i_ + w.size();
    if (e < s_.size() && !is_space(s_[e]) && s_[e] != '"' && s_[e] != '[' && s_[e] != '(') return false;
    i_ = e;
    return true;
  }
  std::optional<int> integer() {
    std::size_t e = i_;
    while (e < s_.size() && is_digit(s_[e])) ++e;
    auto v = parse_small_int(s_.substr(i_, e - i_));
    if (v) i_ = e;
    return v;
  }
  /// "text" (no escapes, as ibnetdiscover prints it).
  std::optional<std::string> quoted() {
    if (!peek('"')) return std::nullopt;
    const std::size_t close = s_.find('"', i_ + 1);
    if (close == std::string_view::npos) return std::nullopt;
    std::string r(s_.substr(i_ + 1, close - i_ - 1));
    i_ = close + 1;
    return r;
  }
  /// "text" with backslash escapes (our annotations).
  std::optional<std::string> escaped_quoted() {
    if (!peek('"')) return std::nullopt;
    std::string r;
    for (std::size_t j = i_ + 1; j < s_.size(); ++j) {
      char c = s_[j];
      if (c == '"') {
        i_ = j + 1;
        return r;
      }
      if (c == '\\' && j + 1 < s_.size()) {
        c = s_[++j];
        if (c == 'n')
          c = '\n';
        else if (c == 't')
          c = '\t';
        else if (c == 'r')
          c = '\r';
      }
      r += c;
    }
    return std::nullopt;
  }
  /// Text up to (not including) `c`; nothing consumed when `c` does not occur.
  std::optional<std::string_view> until(char c) {
    const std::size_t e = s_.find(c, i_);
    if (e == std::string_view::npos) return std::nullopt;
    auto r = s_.substr(i_, e - i_);
    i_ = e;
    return r;
  }
  std::string_view token() {
    ws();
    std::size_t e = i_;
    while (e < s_.size() && !is_space(s_[e])) ++e;
    auto r = s_.substr(i_, e - i_);
    i_ = e;
    return r;
  }
  std::string_view rest() {
    ws();
    auto r = s_.substr(i_);
    i_ = s_.size();
    return r;
  }

 private:
  std::string_view s_;
  std::size_t i_ = 0;
};

inline std::string escape(std::string_view s) {
  std::string r;
  for (char c : s) {
    if (c == '\\' || c == '"') {
      r += '\\';
      r += c;
    } else if (c == '\n')
      r += "\\n";
    else if (c == '\t')
      r += "\\t";
    else if (c == '\r')
      r += "\\r";
    else
      r += c;
  }
  return r;
}

/// Text that can sit between the quotes of an ibnetdiscover description.
inline std::string sanitize_desc(std::string_view s) {
  std::string r;
  for (char c : s) r += (c == '"') ? '\'' : (static_cast<unsigned char>(c) < 0x20 ? ' ' : c);
  return r;
}

// ---------------------------------------------------------------------------------------------------------
// Parsed records

/// Fields ibnetdiscover cannot express, carried by "# ibnetsim-node:" comment lines written by the exporter.
struct Annotation {
  int port = 0;
  std::optional<NodeKind> kind;
  std::optional<std::string> name, description;
  std::optional<int> tier, host, plane, group;
  std::optional<std::uint64_t> guid;
  /// Switch model id ("quantum-2"; "" = none), from `switch_model=`: replaces the one read from the
  /// description.
  std::optional<std::string> switch_model;
  /// Cables of this device by the port number the port lines use: length in metres and medium, from
  /// `cables="P:LEN:MEDIUM ..."` (the exporter writes every cabled port).
  std::map<int, std::pair<double, Medium>> cables;
};

/// One physical device: a switch, router or channel adapter (all of its ports).
struct Device {
  char letter = 'S'; ///< 'S' switch, 'H' channel adapter, 'R' router
  std::string id;    ///< "S-f4521403001165a0", or as written when redacted ("S-9c05<redacted>")
  std::uint64_t guid = 0;
  std::string desc;
  int declared_ports = 0; ///< from the block header
  int max_port = 0;       ///< highest port number seen anywhere
  int lid = 0;            ///< switch/router LID (base LID of port 0)
  std::size_t block_seq = kNone;
  std::size_t block_line = 0;
  std::size_t first_seq = 0;
  std::map<int, Annotation> annotations; ///< by port (0 for switches and routers)
};

/// One side of a cable as a line reports it: a device port and the LID printed for it.
struct End {
  std::size_t dev = 0;
  int port = 0;
  int lid = 0;
};

struct Sighting {
  End a, b;
  LinkSpeed speed;
  std::size_t line = 0;
};

struct ParseResult {
  std::vector<Device> devices;
  std::vector<Sighting> sightings;
  std::vector<std::string> warnings;
  bool text_format = false; ///< saw Switch/Ca/Rt blocks
  bool ports_format = false;
};

inline bool is_ca(const Device& d) {
  return d.letter == 'H';
}

struct ParsedId {
  char letter = 'S';
  std::string id;
  std::uint64_t guid = 0;
  bool redacted = false;
};

/// Reads ibnetdiscover output (either format); InputError naming source:line on malformed input.
ParseResult parse(std::istream& in, const std::string& source);

} // namespace ibn::topo::ibnd
