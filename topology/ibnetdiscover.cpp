#include "topology/ibnetdiscover.hpp"

#include "sim/error.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <istream>
#include <limits>
#include <map>
#include <optional>
#include <ostream>
#include <queue>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ibn::topo {
namespace {

constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
/// The format carries no cable lengths: HCA cables are taken as 3 m DAC, switch-to-switch as 30 m fibre.
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

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_hex(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
char to_lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = to_lower(c);
  return r;
}

bool starts_with(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

bool contains_ci(std::string_view hay, std::string_view needle) {
  return lower(hay).find(lower(needle)) != std::string::npos;
}

std::string hex16(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string hex_short(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(v));
  return buf;
}

/// "1f" -> 0x1f when the whole text is 1..16 hex digits.
std::optional<std::uint64_t> parse_hex(std::string_view s) {
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

std::optional<int> parse_small_int(std::string_view s) {
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

std::string escape(std::string_view s) {
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
std::string sanitize_desc(std::string_view s) {
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

bool is_ca(const Device& d) {
  return d.letter == 'H';
}

struct ParsedId {
  char letter = 'S';
  std::string id;
  std::uint64_t guid = 0;
  bool redacted = false;
};

// ---------------------------------------------------------------------------------------------------------
// Line parser

class Parser {
 public:
  explicit Parser(std::string source) : src_(std::move(source)) {}

  ParseResult run(std::istream& in);

 private:
  std::string src_;
  ParseResult r_;
  std::unordered_map<std::string, std::size_t> dev_index_;
  std::size_t seq_ = 0;
  std::size_t block_seq_ = 0;
  // current block
  std::size_t cur_dev_ = kNone;
  std::size_t cur_line_ = 0;
  int cur_ports_ = 0;
  std::string cur_word_;
  std::vector<Annotation> pending_annotations_; ///< read before the next block header
  std::size_t orphan_first_ = 0, orphan_count_ = 0;

  std::string where(std::size_t line) const { return src_ + ":" + std::to_string(line); }
  /// LIDs in a fabric are unicast LIDs, 0x0001..0xBFFF (49151); 0 means unknown. Anything larger is a
  /// multicast LID or a misread and is refused with the line.
  int lid_value(int lid, std::size_t line) const {
    if (lid > kMaxUnicastLid)
      fail(line, "lid " + std::to_string(lid) + " is outside the unicast LID range 1.." +
                     std::to_string(kMaxUnicastLid) + " (0xBFFF)");
    return lid;
  }
  [[noreturn]] void fail(std::size_t line, const std::string& msg) const {
    throw InputError(at_line(src_, line, msg));
  }
  void warn(std::size_t line, const std::string& msg) { r_.warnings.push_back(at_line(src_, line, msg)); }

  void end_block();
  std::size_t device(const ParsedId& pid, std::string_view desc);
  ParsedId parse_id(std::string_view text, std::size_t line) const;
  LinkSpeed parse_speed(std::string_view text, std::size_t line) const;
  void parse_header(std::string_view t, std::size_t line);
  void parse_port_line(std::string_view t, std::size_t line);
  void parse_ports_format(std::string_view t, std::size_t line);
  void parse_annotation(std::string_view t, std::size_t line);
  void sighting(const End& a, const End& b, const LinkSpeed& s, std::size_t line);
};

void Parser::end_block() {
  if (cur_dev_ != kNone && cur_ports_ == 0)
    warn(cur_line_, cur_word_ + " block '" + r_.devices[cur_dev_].desc +
                        "' has no port lines (output cut short?); the node is kept without cables");
  cur_dev_ = kNone;
}

ParsedId Parser::parse_id(std::string_view text, std::size_t line) const {
  ParsedId p;
  if (text.size() < 3 || text[1] != '-') fail(line, "cannot parse node id '" + std::string(text) + "'");
  const char l = static_cast<char>(text[0] & ~0x20);
  if (l != 'S' && l != 'H' && l != 'R')
    fail(line, "cannot parse node id '" + std::string(text) + "' (expected S-, H- or R- and a GUID)");
  p.letter = l;
  const std::string_view body = text.substr(2);
  if (auto g = parse_hex(body)) {
    p.guid = *g;
    p.id = std::string(1, l) + "-" + hex16(*g);
  } else { // redacted or otherwise mangled GUID: keep the text, GUID unknown
    p.redacted = true;
    p.id = std::string(1, l) + "-" + std::string(body);
  }
  return p;
}

std::size_t Parser::device(const ParsedId& pid, std::string_view desc_in) {
  const std::string desc(trim(desc_in));
  // Redacted GUIDs are shared by unrelated nodes: tell them apart by their description.
  const std::string key = pid.redacted ? pid.id + '\x1f' + desc : pid.id;
  auto [it, inserted] = dev_index_.emplace(key, r_.devices.size());
  if (inserted) {
    Device d;
    d.letter = pid.letter;
    d.id = pid.id;
    d.guid = pid.guid;
    d.desc = desc;
    d.first_seq = seq_++;
    r_.devices.push_back(std::move(d));
  } else if (r_.devices[it->second].desc.empty()) {
    r_.devices[it->second].desc = desc;
  }
  return it->second;
}

LinkSpeed Parser::parse_speed(std::string_view text, std::size_t line) const {
  std::string_view t = trim(text);
  if (auto paren = t.find('('); paren != std::string_view::npos) t = trim(t.substr(0, paren));
  std::string compact;
  for (char c : t)
    if (!is_space(c)) compact += c;
  std::size_t i = 0;
  while (i < compact.size() && is_digit(compact[i])) ++i;
  if (compact.empty() || i == 0 || i > 2 || i >= compact.size() || to_lower(compact[i]) != 'x' ||
      i + 1 >= compact.size())
    fail(line, "cannot parse link speed '" + std::string(text) + "' (expected e.g. 4xEDR)");
  return parse_link_speed(compact, where(line));
}

void Parser::sighting(const End& a, const End& b, const LinkSpeed& s, std::size_t line) {
  Device& da = r_.devices[a.dev];
  Device& db = r_.devices[b.dev];
  da.max_port = std::max(da.max_port, a.port);
  db.max_port = std::max(db.max_port, b.port);
  if (!is_ca(db) && db.lid == 0) db.lid = b.lid;
  if (!is_ca(da) && da.lid == 0) da.lid = a.lid;
  r_.sightings.push_back(Sighting{a, b, s, line});
}

void Parser::parse_header(std::string_view t, std::size_t line) {
  Cursor c(t);
  const std::string word(c.token());
  const std::string bad = "cannot parse " + word + " header '" + std::string(t) + "'";
  c.ws();
  const auto nports = c.integer();
  c.ws();
  const auto id = c.quoted();
  c.ws();
  if (!nports || !id || !c.eat('#')) fail(line, bad);
  c.ws();
  const auto desc = c.quoted();
  if (!desc) fail(line, bad);
  ParsedId pid = parse_id(*id, line);
  pid.letter = word == "Switch" ? 'S' : (word == "Ca" ? 'H' : 'R');
  const std::size_t d = device(pid, *desc);
  Device& dev = r_.devices[d];
  if (dev.block_seq != kNone)
    warn(line, word + " '" + dev.desc + "' already has a block at line " + std::to_string(dev.block_line) +
                   "; merging the two");
  else {
    dev.block_seq = block_seq_++;
    dev.block_line = line;
  }
  dev.letter = pid.letter;
  dev.desc = std::string(trim(*desc));
  dev.declared_ports = std::max(dev.declared_ports, *nports);
  // "enhanced port 0 lid 128 lmc 0": the switch's own LID.
  while (!c.at_end()) {
    if (c.eat_word("lid")) {
      c.ws();
      if (auto lid = c.integer()) dev.lid = lid_value(*lid, line);
      break;
    }
    c.token();
  }
  for (const Annotation& a : pending_annotations_) dev.annotations[a.port] = a;
  pending_annotations_.clear();
  cur_dev_ = d;
  cur_line_ = line;
  cur_ports_ = 0;
  cur_word_ = word;
  r_.text_format = true;
}

// Switch style: [1] "H-24be05ffff980030"[1](24be05ffff980031) # "stage114 mlx4_0" lid 105 4xQDR
// CA style:     [1](24be05ffff985d91) "S-f4521403001165a0"[32] # lid 121 lmc 0 "MF0;ib5" lid 128 4xQDR
void Parser::parse_port_line(std::string_view t, std::size_t line) {
  const std::string bad = "cannot parse port line '" + std::string(t) + "'";
  Cursor c(t);
  auto skip_ext_and_guid = [&] {
    if (c.peek('[')) { // "[ext 1]"
      if (!c.until(']')) fail(line, bad);
      c.eat(']');
    }
    if (c.peek('(')) { // port GUID
      if (!c.until(')')) fail(line, bad);
      c.eat(')');
    }
  };
  if (!c.eat('[')) fail(line, bad);
  const auto port = c.integer();
  if (!port || !c.eat(']')) fail(line, bad);
  skip_ext_and_guid();
  c.ws();
  const auto peer_id = c.quoted();
  if (!peer_id || !c.eat('[')) fail(line, bad);
  const auto peer_port = c.integer();
  if (!peer_port || !c.eat(']')) fail(line, bad);
  skip_ext_and_guid();
  c.ws();
  if (!c.eat('#')) fail(line, bad);
  int own_lid = 0;
  if (c.eat_word("lid")) { // CA/router style: own LID first
    c.ws();
    const auto l = c.integer();
    if (!l) fail(line, bad);
    own_lid = lid_value(*l, line);
    if (c.eat_word("lmc")) {
      c.ws();
      if (!c.integer()) fail(line, bad);
    }
  }
  c.ws();
  const auto peer_desc = c.quoted();
  if (!peer_desc || !c.eat_word("lid")) fail(line, bad);
  c.ws();
  const auto peer_lid = c.integer();
  if (!peer_lid) fail(line, bad);
  lid_value(*peer_lid, line);
  const std::string_view speed_text = c.rest();
  if (speed_text.empty()) fail(line, bad + ": no link speed");
  const LinkSpeed speed = parse_speed(speed_text, line);
  if (*port < 1 || *peer_port < 1) fail(line, "port numbers start at 1 in '" + std::string(t) + "'");

  const ParsedId pid = parse_id(*peer_id, line);
  const std::size_t peer = device(pid, *peer_desc);
  ++cur_ports_;
  Device& self = r_.devices[cur_dev_];
  if (self.lid == 0 && own_lid != 0 && !is_ca(self)) self.lid = own_lid;
  sighting(End{cur_dev_, *port, own_lid}, End{peer, *peer_port, *peer_lid}, speed, line);
}

// CA   134  1 0x7cfe9003003b4bde 4x EDR - SW  1719 10 0x7cfe9003009ce5b0 ( 'o0001 HCA-1' - 'ib-i1l1s01' )
// SW  2052 37 0x506b4b03005c2740 4x ???                                    'ib-i4l1s01'
void Parser::parse_ports_format(std::string_view t, std::size_t line) {
  const std::string bad = "cannot parse ports-format line '" + std::string(t) + "'";
  Cursor c(t);
  struct Side {
    char letter;
    int lid;
    int port;
    std::string_view guid;
  };
  auto side = [&]() {
    const std::string_view type = c.token();
    Side s{};
    s.letter = type == "SW" ? 'S' : (type == "CA" ? 'H' : (type == "RT" ? 'R' : '\0'));
    const auto lid = parse_small_int(c.token());
    const auto port = parse_small_int(c.token());
    s.guid = c.token();
    if (!s.letter || !lid || !port || !parse_hex(s.guid)) fail(line, bad);
    s.lid = lid_value(*lid, line);
    s.port = *port;
    return s;
  };
  const Side a = side();
  std::string speed_text(c.token());
  if (!speed_text.empty() && is_digit(speed_text[0]) && speed_text.back() == 'x' && speed_text.size() <= 3)
    speed_text += std::string(c.token()); // "4x" "EDR"
  c.ws();
  auto make_id = [&](const Side& s) {
    ParsedId p;
    p.letter = s.letter;
    p.guid = *parse_hex(s.guid);
    p.id = std::string(1, s.letter) + "-" + hex16(p.guid);
    return p;
  };
  r_.ports_format = true;
  if (c.eat('-')) {
    const Side b = side();
    c.ws();
    const std::string_view descs = c.rest(); // ( 'desc a' - 'desc b' )
    if (descs.size() < 2 || descs.front() != '(' || descs.back() != ')') fail(line, bad);
    const std::string_view inner = trim(descs.substr(1, descs.size() - 2));
    const std::size_t isep = inner.find("' - '");
    if (inner.size() < 2 || inner.front() != '\'' || inner.back() != '\'' || isep == std::string_view::npos)
      fail(line, bad);
    const std::string_view desc_a = inner.substr(1, isep - 1);
    const std::string_view desc_b = inner.substr(isep + 5, inner.size() - isep - 6);
    if (a.port < 1 || b.port < 1) fail(line, "port numbers start at 1 in '" + std::string(t) + "'");
    const LinkSpeed speed = parse_speed(speed_text, line);
    const std::size_t da = device(make_id(a), desc_a);
    const std::size_t db = device(make_id(b), desc_b);
    sighting(End{da, a.port, a.lid}, End{db, b.port, b.lid}, speed, line);
    return;
  }
  // Unconnected (or down) port: the device exists, the port is no cable.
  const std::string_view q = c.rest();
  if (q.size() < 2 || q.front() != '\'' || q.back() != '\'') fail(line, bad);
  const std::size_t d = device(make_id(a), q.substr(1, q.size() - 2));
  Device& dev = r_.devices[d];
  dev.max_port = std::max(dev.max_port, a.port);
  if (!is_ca(dev) && dev.lid == 0) dev.lid = a.lid;
}

void Parser::parse_annotation(std::string_view t, std::size_t line) {
  Cursor c(t.substr(kAnnotationTag.size()));
  Annotation a;
  auto bad = [&](const std::string& why) { fail(line, "cannot parse ibnetsim annotation: " + why); };
  while (!c.at_end()) {
    const auto key = c.until('=');
    if (!key || key->empty()) bad("expected key=value");
    c.eat('=');
    const std::string k(trim(*key));
    std::string v;
    if (c.peek('"')) {
      auto q = c.escaped_quoted();
      if (!q) bad("unterminated string for '" + k + "'");
      v = *q;
    } else {
      v = std::string(c.token());
    }
    auto num = [&]() {
      const bool neg = !v.empty() && v[0] == '-';
      auto n = parse_small_int(neg ? std::string_view(v).substr(1) : std::string_view(v));
      if (!n) bad("'" + k + "' must be an integer, got '" + v + "'");
      return neg ? -*n : *n;
    };
    if (k == "port")
      a.port = num();
    else if (k == "name")
      a.name = v;
    else if (k == "description")
      a.description = v;
    else if (k == "tier")
      a.tier = num();
    else if (k == "host")
      a.host = num();
    else if (k == "plane")
      a.plane = num();
    else if (k == "group")
      a.group = num();
    else if (k == "guid") {
      auto g = parse_hex(v);
      if (!g) bad("'guid' must be hexadecimal, got '" + v + "'");
      a.guid = *g;
    } else if (k == "kind") {
      if (v == "hca")
        a.kind = NodeKind::Hca;
      else if (v == "switch")
        a.kind = NodeKind::Switch;
      else if (v == "router")
        a.kind = NodeKind::Router;
      else if (v == "aggregator")
        a.kind = NodeKind::Aggregator;
      else
        bad("unknown kind '" + v + "'");
    } // unknown keys: ignored (written by a newer version)
  }
  pending_annotations_.push_back(std::move(a));
}

bool is_preamble(std::string_view t) {
  for (std::string_view k :
       {"vendid=", "devid=", "sysimgguid=", "switchguid=", "caguid=", "rtguid=", "guid="})
    if (starts_with(t, k)) return true;
  return false;
}

bool is_header(std::string_view t) {
  for (std::string_view w : {"Switch", "Ca", "Rt"}) {
    if (!starts_with(t, w) || t.size() <= w.size() || !is_space(t[w.size()])) continue;
    const std::string_view rest = trim(t.substr(w.size()));
    if (!rest.empty() && is_digit(rest[0])) return true;
  }
  return false;
}

bool is_ports_format(std::string_view t) {
  Cursor c(t);
  const std::string_view type = c.token();
  if (type != "CA" && type != "SW" && type != "RT") return false;
  const std::string_view lid = c.token();
  return !lid.empty() && std::all_of(lid.begin(), lid.end(), is_digit);
}

bool is_truncation_marker(std::string_view t) {
  return starts_with(t, "...") || starts_with(t, "\xE2\x80\xA6") /* … */ || t == "[...]" ||
         contains_ci(t, "<snip") || contains_ci(t, "[truncated]");
}

/// Shell prompts and markdown fences that end a pasted block ("root@node:/# ibnetdiscover", "```").
bool is_prose_boundary(std::string_view t) {
  if (starts_with(t, "```") || starts_with(t, "~~~") || starts_with(t, "$ ") || t == "$") return true;
  Cursor c(t);
  const std::string_view first = c.token();
  return first.find('@') != std::string_view::npos && t.find_first_of("$#>%") != std::string_view::npos;
}

ParseResult Parser::run(std::istream& in) {
  std::string raw;
  std::size_t line = 0;
  bool any_text = false;
  while (std::getline(in, raw)) {
    ++line;
    const bool last_unterminated = in.eof(); // no '\n' after this line: maybe cut off mid-line
    std::string_view t = raw;
    if (line == 1 && starts_with(t, "\xEF\xBB\xBF")) t.remove_prefix(3); // UTF-8 BOM
    t = trim(t);                                                         // also drops CR of CRLF
    if (t.empty()) {
      end_block();
      continue;
    }
    any_text = true;
    try {
      if (starts_with(t, kAnnotationTag)) {
        parse_annotation(t, line);
      } else if (t[0] == '#') {
        // comment
      } else if (is_truncation_marker(t)) {
        warn(line, "output truncated here ('" + std::string(t) + "'); the topology is incomplete");
        end_block();
      } else if (is_preamble(t)) {
        end_block();
      } else if (is_header(t)) {
        end_block();
        parse_header(t, line);
      } else if (is_ports_format(t)) {
        end_block();
        parse_ports_format(t, line);
      } else if (t[0] == '[' && t.size() > 1 && is_digit(t[1])) {
        if (cur_dev_ != kNone)
          parse_port_line(t, line);
        else if (orphan_count_++ == 0)
          orphan_first_ = line;
      } else if (cur_dev_ != kNone) {
        if (is_prose_boundary(t))
          end_block();
        else
          fail(line, "cannot parse '" + std::string(t) + "' inside the " + cur_word_ + " block of line " +
                         std::to_string(cur_line_) + " (expected a port line '[N] \"S-...\"[M] ...')");
      }
      // anything else outside a block is prose around the output (prompts, notes): ignored
    } catch (const InputError& e) {
      if (!last_unterminated) throw;
      warn(line, "last line is cut off, ignored (" + std::string(e.what()) + ")");
    }
  }
  if (cur_dev_ != kNone && cur_ports_ == 0)
    warn(cur_line_,
         cur_word_ + " block '" + r_.devices[cur_dev_].desc +
             "' has no port lines (input ends here; output cut short?); the node is kept without cables");
  cur_dev_ = kNone;
  if (orphan_count_ > 0)
    warn(orphan_first_, std::to_string(orphan_count_) +
                            " port line(s) outside any Switch/Ca/Rt block ignored (block header missing?)");
  if (!any_text) throw InputError(src_ + ": empty input (expected ibnetdiscover output)");
  if (r_.devices.empty())
    throw InputError(src_ + ": no ibnetdiscover topology found (expected 'Switch'/'Ca' blocks or " +
                     "'ibnetdiscover -p' port lines)");
  return std::move(r_);
}

// ---------------------------------------------------------------------------------------------------------
// Building the fabric

/// A node to be: a switch/router device, or one port of a channel adapter. `variant` > 0 when the file
/// cables the same port twice to different peers and the importer keeps the extra cable on a copy.
struct Rec {
  std::size_t dev = 0;
  int ca_port = 0; ///< CA port number as in the file; 0 for switches and routers
  int variant = 0;
  int lid = 0;
};

class Builder {
 public:
  Builder(ParseResult& p, std::string source) : p_(p), src_(std::move(source)) {}
  ImportResult run();

 private:
  ParseResult& p_;
  std::string src_;
  std::vector<Rec> recs_;
  std::map<std::pair<std::size_t, int>, std::vector<std::size_t>> variants_; // (dev, ca_port) -> recs
  struct Slot {
    std::size_t rec; ///< the peer
    int port;        ///< the peer's node port
    std::size_t cable;
  };
  std::map<std::pair<std::size_t, int>, Slot> occupied_; // (rec, node port) -> peer
  struct Cable {
    std::size_t ra, rb;
    int pa, pb;
    std::size_t sighting;
  };
  std::vector<Cable> cables_;

  void warn(std::size_t line, const std::string& msg) { p_.warnings.push_back(at_line(src_, line, msg)); }
  void warn(const std::string& msg) { p_.warnings.push_back(src_ + ": " + msg); }

  std::size_t new_rec(std::size_t dev, int ca_port) {
    auto& v = variants_[{dev, ca_port}];
    recs_.push_back(Rec{dev, ca_port, static_cast<int>(v.size()), 0});
    v.push_back(recs_.size() - 1);
    return recs_.size() - 1;
  }
  int node_port(const End& e) const { return is_ca(p_.devices[e.dev]) ? 1 : e.port; }
  int ca_port(const End& e) const { return is_ca(p_.devices[e.dev]) ? e.port : 0; }

  struct Resolved {
    std::size_t rec = kNone;
    bool matched = false; ///< this port already carries the same cable
    std::optional<Slot> conflict;
  };
  Resolved resolve(const End& e, const End& peer);
  void resolve_cables();
  std::string label(std::size_t rec) const;
};

Builder::Resolved Builder::resolve(const End& e, const End& peer) {
  auto& list = variants_[{e.dev, ca_port(e)}];
  const int np = node_port(e);
  Resolved r;
  std::optional<Slot> first_conflict;
  for (std::size_t rec : list) {
    auto it = occupied_.find({rec, np});
    if (it == occupied_.end()) {
      if (r.rec == kNone) r.rec = rec;
      continue;
    }
    const Rec& other = recs_[it->second.rec];
    if (other.dev == peer.dev && other.ca_port == ca_port(peer) && it->second.port == node_port(peer)) {
      r.rec = rec;
      r.matched = true;
      r.conflict.reset();
      return r;
    }
    if (!first_conflict) first_conflict = it->second;
  }
  if (r.rec == kNone) r.conflict = first_conflict; // every copy of this port is busy (or none exists yet)
  return r;
}

std::string Builder::label(std::size_t rec) const {
  const Rec& r = recs_[rec];
  const Device& d = p_.devices[r.dev];
  return "'" + (d.desc.empty() ? d.id : d.desc) + "' (" + d.id + ")";
}

void Builder::resolve_cables() {
  for (std::size_t si = 0; si < p_.sightings.size(); ++si) {
    const Sighting& s = p_.sightings[si];
    if (s.a.dev == s.b.dev && ca_port(s.a) == ca_port(s.b)) {
      warn(s.line, "cable from " + p_.devices[s.a.dev].id + " port " + std::to_string(s.a.port) +
                       " to itself (port " + std::to_string(s.b.port) + ") ignored");
      continue;
    }
    Resolved ra = resolve(s.a, s.b);
    if (ra.matched) {
      // Seen before from the other side (or twice): the same cable.
      const Slot& slot = occupied_.at({ra.rec, node_port(s.a)});
      const Cable& c = cables_[slot.cable];
      const Sighting& first = p_.sightings[c.sighting];
      if (!(first.speed == s.speed))
        warn(s.line, "cable " + p_.devices[s.a.dev].id + "[" + std::to_string(s.a.port) + "] - " +
                         p_.devices[s.b.dev].id + "[" + std::to_string(s.b.port) + "] is " +
                         s.speed.to_string() + " here but " + first.speed.to_string() + " on line " +
                         std::to_string(first.line) + "; keeping " + first.speed.to_string());
      continue;
    }
    Resolved rb = resolve(s.b, s.a);
    if (rb.matched) continue; // cannot happen (occupancy is symmetric); never cable a port twice
    auto place = [&](const End& e, Resolved& r) {
      if (r.rec != kNone) return;
      r.rec = new_rec(e.dev, ca_port(e));
      if (r.conflict) {
        const Cable& c = cables_[r.conflict->cable];
        const Sighting& prev = p_.sightings[c.sighting];
        const Rec& other = recs_[r.conflict->rec];
        warn(s.line, "port " + std::to_string(e.port) + " of " + label(r.rec) + " is already cabled to " +
                         label(r.conflict->rec) + " port " +
                         std::to_string(other.ca_port ? other.ca_port : r.conflict->port) + " (line " +
                         std::to_string(prev.line) + "); keeping this cable on a second node for it");
      }
    };
    place(s.a, ra);
    place(s.b, rb);
    const std::size_t cable = cables_.size();
    cables_.push_back(Cable{ra.rec, rb.rec, node_port(s.a), node_port(s.b), si});
    occupied_[{ra.rec, node_port(s.a)}] = Slot{rb.rec, node_port(s.b), cable};
    occupied_[{rb.rec, node_port(s.b)}] = Slot{ra.rec, node_port(s.a), cable};
    Rec& a = recs_[ra.rec];
    Rec& b = recs_[rb.rec];
    if (a.lid == 0) a.lid = s.a.lid;
    if (b.lid == 0) b.lid = s.b.lid;
  }
}

/// Switch-like nodes forward traffic; HCAs and aggregation nodes are endpoints.
bool forwards(NodeKind k) {
  return k == NodeKind::Switch || k == NodeKind::Router;
}

/// Tiers from the graph: endpoints 0, switches with HCAs 1 (unless they act as a spine), others one more
/// than their switch-hop distance to the nearest leaf.
void infer_tiers(Fabric& f, const std::vector<bool>& tier_fixed, const std::string& src,
                 std::vector<std::string>& warnings) {
  const std::size_t n = f.num_nodes();
  std::vector<int> hca_cables(n, 0), switch_cables(n, 0);
  for (const Link& l : f.links()) {
    const NodeKind ka = f.node(l.a.node).kind, kb = f.node(l.b.node).kind;
    auto count = [&](NodeId self, NodeKind self_kind, NodeKind peer_kind) {
      if (!forwards(self_kind)) return;
      if (peer_kind == NodeKind::Hca)
        ++hca_cables[self];
      else if (forwards(peer_kind))
        ++switch_cables[self];
    };
    count(l.a.node, ka, kb);
    count(l.b.node, kb, ka);
  }
  std::vector<bool> candidate(n, false), spine_like(n, false), leaf(n, false);
  bool any_real_leaf = false;
  for (NodeId i = 0; i < n; ++i)
    if (forwards(f.node(i).kind) && hca_cables[i] > 0) {
      candidate[i] = true;
      spine_like[i] = switch_cables[i] > hca_cables[i];
    }
  for (NodeId i = 0; i < n; ++i) {
    if (!candidate[i]) continue;
    bool next_to_leaf = false;
    for (LinkId l : f.links_of(i)) {
      const NodeId m = f.link(l).other(i);
      if (candidate[m] && !spine_like[m]) next_to_leaf = true;
    }
    leaf[i] = !(spine_like[i] && next_to_leaf);
    any_real_leaf = any_real_leaf || leaf[i];
  }
  if (!any_real_leaf) leaf = candidate;

  // Multi-source BFS over switch-to-switch cables from the leaves.
  std::vector<int> dist(n, -1);
  std::queue<NodeId> q;
  for (NodeId i = 0; i < n; ++i)
    if (leaf[i]) {
      dist[i] = 0;
      q.push(i);
    }
  while (!q.empty()) {
    const NodeId u = q.front();
    q.pop();
    for (LinkId l : f.links_of(u)) {
      const NodeId v = f.link(l).other(u);
      if (forwards(f.node(v).kind) && dist[v] < 0) {
        dist[v] = dist[u] + 1;
        q.push(v);
      }
    }
  }
  std::size_t unreachable = 0;
  std::string first_unreachable;
  for (NodeId i = 0; i < n; ++i) {
    Node& node = f.mutable_node(i);
    if (tier_fixed[i]) continue;
    if (!forwards(node.kind)) {
      node.tier = 0;
      continue;
    }
    if (dist[i] < 0) {
      node.tier = 1;
      if (unreachable++ == 0) first_unreachable = node.name;
      continue;
    }
    node.tier = 1 + dist[i];
    if (candidate[i] && !leaf[i])
      warnings.push_back(src + ": switch '" + node.name + "' has " + std::to_string(hca_cables[i]) +
                         " HCA cable(s) but " + std::to_string(switch_cables[i]) +
                         " cables to other switches and is cabled to leaves: treated as a spine (tier " +
                         std::to_string(node.tier) + ")");
  }
  if (unreachable > 0)
    warnings.push_back(src + ": " + std::to_string(unreachable) +
                       " switch(es) have no path to an HCA (e.g. '" + first_unreachable +
                       "'); placed at tier 1");
}

std::size_t count_components(const Fabric& f, std::size_t& largest) {
  const std::size_t n = f.num_nodes();
  std::vector<char> seen(n, 0);
  std::size_t comps = 0;
  largest = 0;
  for (NodeId s = 0; s < n; ++s) {
    if (seen[s]) continue;
    ++comps;
    std::size_t size = 0;
    std::queue<NodeId> q;
    q.push(s);
    seen[s] = 1;
    while (!q.empty()) {
      const NodeId u = q.front();
      q.pop();
      ++size;
      for (LinkId l : f.links_of(u)) {
        const NodeId v = f.link(l).other(u);
        if (!seen[v]) {
          seen[v] = 1;
          q.push(v);
        }
      }
    }
    largest = std::max(largest, size);
  }
  return comps;
}

/// Default NodeDescriptions of unconfigured adapters ("MT25408 ConnectX Mellanox Technologies") say nothing
/// about the server.
bool default_ca_description(std::string_view desc) {
  return desc.empty() || contains_ci(desc, "Mellanox Technologies") ||
         (desc.size() > 2 && desc[0] == 'M' && desc[1] == 'T' && is_digit(desc[2]));
}

ImportResult Builder::run() {
  resolve_cables();
  // Every device becomes at least one node, cabled or not.
  for (std::size_t d = 0; d < p_.devices.size(); ++d) {
    bool has = false;
    for (auto it = variants_.lower_bound({d, 0}); it != variants_.end() && it->first.first == d; ++it)
      has = has || !it->second.empty();
    if (!has) new_rec(d, is_ca(p_.devices[d]) ? 1 : 0);
  }
  // Node order: devices in block order (then first mention), CA ports ascending, variants last.
  std::vector<std::size_t> order(recs_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto key = [&](std::size_t i) {
    const Rec& r = recs_[i];
    const Device& d = p_.devices[r.dev];
    return std::make_tuple(d.block_seq, d.first_seq, r.ca_port, r.variant);
  };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return key(x) < key(y); });
  std::vector<NodeId> node_of(recs_.size());
  for (std::size_t i = 0; i < order.size(); ++i) node_of[order[i]] = static_cast<NodeId>(i);

  // Node fields.
  const std::size_t n = order.size();
  std::vector<Node> nodes(n);
  std::vector<const Annotation*> ann(n, nullptr);
  std::vector<std::string> base(n), guid_text(n);
  std::set<std::size_t> radix_warned;
  for (std::size_t i = 0; i < n; ++i) {
    const Rec& r = recs_[order[i]];
    const Device& d = p_.devices[r.dev];
    Node& node = nodes[i];
    if (r.variant == 0)
      if (auto it = d.annotations.find(r.ca_port); it != d.annotations.end()) ann[i] = &it->second;
    node.kind = d.letter == 'S' ? NodeKind::Switch : (d.letter == 'R' ? NodeKind::Router : NodeKind::Hca);
    if (node.kind == NodeKind::Hca && contains_ci(d.desc, "Aggregation Node"))
      node.kind = NodeKind::Aggregator;
    node.guid = d.guid;
    node.description = d.desc;
    node.lid = r.lid != 0 ? r.lid : d.lid;
    if (is_ca(d)) {
      node.radix = 1;
    } else {
      node.radix = std::max({d.declared_ports, d.max_port, 1});
      if (d.declared_ports > 0 && d.max_port > d.declared_ports && radix_warned.insert(r.dev).second)
        warn(d.block_line, "'" + d.desc + "' declares " + std::to_string(d.declared_ports) +
                               " ports but port " + std::to_string(d.max_port) + " is cabled; radix " +
                               std::to_string(d.max_port) + " used");
    }
    base[i] = d.desc.empty() ? d.id : d.desc;
    guid_text[i] = d.guid != 0 ? "0x" + hex16(d.guid) : d.id.substr(2);
    if (const Annotation* a = ann[i]) {
      if (a->kind) node.kind = *a->kind;
      if (a->description) node.description = *a->description;
      if (a->guid) node.guid = *a->guid;
      if (a->plane) node.plane = *a->plane;
      if (a->group) node.group = *a->group;
    }
  }

  // Names: the description when unique; otherwise add the GUID, then the CA port, then "#k".
  std::vector<std::string> names(n);
  std::vector<bool> fixed(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    names[i] = base[i];
    if (ann[i] && ann[i]->name) {
      names[i] = *ann[i]->name;
      fixed[i] = true;
    }
  }
  auto colliding = [&]() {
    std::map<std::string, std::vector<std::size_t>> by;
    for (std::size_t i = 0; i < n; ++i) by[names[i]].push_back(i);
    std::vector<std::vector<std::size_t>> groups;
    for (auto& [nm, g] : by) {
      (void)nm;
      if (g.size() > 1) groups.push_back(g);
    }
    return groups;
  };
  for (const auto& g : colliding())
    for (std::size_t i : g)
      if (!fixed[i]) names[i] += " (" + guid_text[i] + ")";
  for (const auto& g : colliding()) {
    std::set<int> ports;
    for (std::size_t i : g) ports.insert(recs_[order[i]].ca_port);
    if (ports.size() > 1)
      for (std::size_t i : g)
        if (!fixed[i] && recs_[order[i]].ca_port > 0)
          names[i] += " port " + std::to_string(recs_[order[i]].ca_port);
  }
  {
    std::set<std::string> used;
    for (std::size_t i = 0; i < n; ++i)
      if (fixed[i]) used.insert(names[i]);
    for (std::size_t i = 0; i < n; ++i) {
      if (fixed[i]) continue;
      if (used.insert(names[i]).second) continue;
      for (int k = 2;; ++k) {
        const std::string cand = names[i] + " #" + std::to_string(k);
        if (used.insert(cand).second) {
          names[i] = cand;
          break;
        }
      }
    }
    // Annotated names that collide among themselves (hand-edited files).
    std::set<std::string> seen;
    for (std::size_t i = 0; i < n; ++i) {
      if (seen.insert(names[i]).second) continue;
      for (int k = 2;; ++k) {
        const std::string cand = names[i] + " #" + std::to_string(k);
        if (!used.count(cand) && seen.insert(cand).second) {
          names[i] = cand;
          used.insert(cand);
          break;
        }
      }
    }
  }
  for (std::size_t i = 0; i < n; ++i) nodes[i].name = names[i];

  // Hosts: HCA ports of the same server (first word of the description) share a host index.
  int next_host = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (ann[i] && ann[i]->host) next_host = std::max(next_host, *ann[i]->host + 1);
  std::map<std::string, int> host_of;
  for (std::size_t i = 0; i < n; ++i) {
    Node& node = nodes[i];
    if (ann[i] && ann[i]->host) {
      node.host = *ann[i]->host;
      continue;
    }
    if (node.kind != NodeKind::Hca) continue;
    const Rec& r = recs_[order[i]];
    const Device& d = p_.devices[r.dev];
    std::string hk;
    if (default_ca_description(d.desc))
      hk = "\x1f" + d.id + "\x1f" + d.desc;
    else {
      Cursor c(d.desc);
      hk = std::string(c.token());
    }
    auto [it, inserted] = host_of.emplace(hk, next_host);
    if (inserted) ++next_host;
    node.host = it->second;
  }

  ImportResult out;
  Fabric& f = out.fabric;
  for (Node& node : nodes) f.add_node(std::move(node));
  for (const Cable& c : cables_) {
    const NodeId a = node_of[c.ra], b = node_of[c.rb];
    const bool hca_cable = !forwards(f.node(a).kind) || !forwards(f.node(b).kind);
    f.add_link(make_link(PortRef{a, c.pa}, PortRef{b, c.pb}, p_.sightings[c.sighting].speed,
                         hca_cable ? kHcaCableM : kSwitchCableM, hca_cable ? Medium::Dac : Medium::Fiber));
  }

  std::vector<bool> tier_fixed(n, false);
  for (std::size_t i = 0; i < n; ++i)
    if (ann[i] && ann[i]->tier) {
      f.mutable_node(static_cast<NodeId>(i)).tier = *ann[i]->tier;
      tier_fixed[i] = true;
    }
  infer_tiers(f, tier_fixed, src_, p_.warnings);

  if (p_.text_format) {
    std::size_t blockless = 0;
    for (const Device& d : p_.devices) blockless += d.block_seq == kNone;
    if (blockless > 0)
      warn(std::to_string(blockless) +
           " node(s) have no block of their own (seen only in port lines of their " +
           "peers); created from those lines");
  }
  std::size_t largest = 0;
  const std::size_t comps = count_components(f, largest);
  if (comps > 1)
    warn("fabric is not connected: " + std::to_string(comps) + " connected components (largest has " +
         std::to_string(largest) + " of " + std::to_string(f.num_nodes()) + " nodes)");

  f.name = src_;
  f.origin = nlohmann::json{{"importer", "ibnetdiscover"},
                            {"source", src_},
                            {"format", p_.text_format ? (p_.ports_format ? "mixed" : "text") : "ports"}};
  out.warnings = std::move(p_.warnings);
  return out;
}

} // namespace

// -------------------------------------------------------------------------------------------------------------
// Public API

ImportResult import_ibnetdiscover(std::istream& in, const std::string& source) {
  ParseResult parsed = Parser(source).run(in);
  return Builder(parsed, source).run();
}

ImportResult import_ibnetdiscover_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("cannot open ibnetdiscover file '" + path + "'");
  return import_ibnetdiscover(in, path);
}

void export_ibnetdiscover(const Fabric& f, std::ostream& out) {
  const std::size_t n = f.num_nodes();
  // Group the nodes into devices: each switch/router is one; HCA/aggregator nodes that share a GUID and a
  // description are the ports of one channel adapter.
  struct ExDev {
    char letter;
    std::vector<NodeId> nodes;
    std::uint64_t guid;
    std::string desc;
  };
  std::vector<ExDev> devs;
  std::vector<std::size_t> dev_of(n);
  std::vector<int> port_base(n, 0);              // CA port of node port p = port_base + p
  std::map<std::uint64_t, std::size_t> ca_index; // GUID -> channel adapter device
  auto display = [&](NodeId i) {
    const Node& nd = f.node(i);
    return sanitize_desc(nd.description.empty() ? nd.name : nd.description);
  };
  for (NodeId i = 0; i < n; ++i) {
    const Node& nd = f.node(i);
    const bool ca = !forwards(nd.kind);
    if (ca && nd.guid != 0) {
      if (auto it = ca_index.find(nd.guid); it != ca_index.end()) {
        ExDev& d = devs[it->second];
        int used = 0;
        for (NodeId m : d.nodes) used += f.node(m).radix;
        d.nodes.push_back(i);
        dev_of[i] = it->second;
        port_base[i] = used;
        continue;
      }
      ca_index.emplace(nd.guid, devs.size());
    }
    dev_of[i] = devs.size();
    devs.push_back(ExDev{ca ? 'H' : (nd.kind == NodeKind::Router ? 'R' : 'S'), {i}, nd.guid, display(i)});
  }
  // Synthetic GUIDs for devices without one (or whose GUID an earlier device already uses), avoiding every
  // real GUID of the fabric; the annotations keep the true value.
  std::set<std::uint64_t> used, taken;
  for (const ExDev& d : devs)
    if (d.guid != 0) used.insert(d.guid);
  std::uint64_t next = kSyntheticGuidBase;
  for (ExDev& d : devs) {
    if (d.guid != 0 && taken.insert(d.guid).second) continue;
    while (used.count(next)) ++next;
    d.guid = next++;
    used.insert(d.guid);
  }
  auto id_of = [&](NodeId i) {
    const ExDev& d = devs[dev_of[i]];
    return std::string(1, d.letter) + "-" + hex16(d.guid);
  };
  auto file_port = [&](NodeId i, int p) { return port_base[i] + p; };
  auto port_guid = [&](NodeId i, int p) {
    return hex_short(devs[dev_of[i]].guid + static_cast<std::uint64_t>(file_port(i, p)));
  };

  out << "#\n# Topology file: generated by ibnetsim from fabric '" << sanitize_desc(f.name) << "'\n"
      << "# " << n << " nodes, " << f.num_links() << " links. '" << kAnnotationTag
      << "' lines carry what the format cannot\n"
      << "# (names, tiers, hosts, planes, groups, GUID 0 for nodes that had none); other readers ignore "
         "them.\n"
      << "#\n";
  for (const ExDev& d : devs) {
    out << "\n";
    for (NodeId i : d.nodes) {
      const Node& nd = f.node(i);
      out << kAnnotationTag << " port=" << (d.letter == 'H' ? file_port(i, 1) : 0)
          << " kind=" << to_string(nd.kind) << " name=\"" << escape(nd.name) << "\" description=\""
          << escape(nd.description) << "\" tier=" << nd.tier << " host=" << nd.host << " plane=" << nd.plane
          << " group=" << nd.group << " guid=0x" << hex16(nd.guid) << "\n";
    }
    const std::string id = std::string(1, d.letter) + "-" + hex16(d.guid);
    const NodeId first = d.nodes.front();
    if (d.letter == 'S') {
      out << "sysimgguid=0x" << hex16(d.guid) << "\n"
          << "switchguid=0x" << hex16(d.guid) << "(" << hex_short(d.guid) << ")\n"
          << "Switch\t" << f.node(first).radix << " \"" << id << "\"\t\t# \"" << d.desc
          << "\" enhanced port 0 lid " << f.node(first).lid << " lmc 0\n";
    } else {
      int ports = 0;
      for (NodeId i : d.nodes) ports += f.node(i).radix;
      out << "sysimgguid=0x" << hex16(d.guid) << "\n"
          << (d.letter == 'H' ? "caguid=0x" : "rtguid=0x") << hex16(d.guid) << "\n"
          << (d.letter == 'H' ? "Ca" : "Rt") << "\t" << ports << " \"" << id << "\"\t\t# \"" << d.desc
          << "\"\n";
    }
    for (NodeId i : d.nodes) {
      const Node& nd = f.node(i);
      for (int p = 1; p <= nd.radix; ++p) {
        const auto l = f.link_at(i, p);
        if (!l) continue;
        const Link& link = f.link(*l);
        const PortRef peer = link.a.node == i && link.a.port == p ? link.b : link.a;
        const Node& pn = f.node(peer.node);
        const bool peer_ca = !forwards(pn.kind);
        std::string remote =
            "\"" + id_of(peer.node) + "\"[" + std::to_string(file_port(peer.node, peer.port)) + "]";
        if (peer_ca) remote += "(" + port_guid(peer.node, peer.port) + ")";
        if (d.letter == 'S')
          out << "[" << p << "]\t" << remote << " \t\t# \"" << display(peer.node) << "\" lid " << pn.lid
              << " " << link.speed.to_string() << "\n";
        else
          out << "[" << file_port(i, p) << "](" << port_guid(i, p) << ") \t" << remote << "\t\t# lid "
              << nd.lid << " lmc 0 \"" << display(peer.node) << "\" lid " << pn.lid << " "
              << link.speed.to_string() << "\n";
      }
    }
  }
}

} // namespace ibn::topo
