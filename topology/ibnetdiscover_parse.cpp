#include "topology/ibnetdiscover_parse.hpp"

#include "topology/generators.hpp"
#include "topology/switch_models.hpp"

#include <algorithm>
#include <charconv>
#include <unordered_map>
#include <utility>

namespace ibn::topo::ibnd {
namespace {

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
    } else if (k == "switch_model") {
      if (!v.empty() && !find_switch_model(v))
        bad("unknown switch model '" + v + "' (known: " + switch_model_ids() + ")");
      a.switch_model = v.empty() ? v : std::string(find_switch_model(v)->id);
    } else if (k == "cables") {
      // "P:LEN:MEDIUM P:LEN:MEDIUM ...": port as in the port lines, metres, dac or fiber.
      std::vector<std::string_view> items;
      for (std::string_view rest = v; !(rest = trim(rest)).empty();) {
        const auto sp = std::min(rest.find(' '), rest.size());
        items.push_back(rest.substr(0, sp));
        rest.remove_prefix(sp);
      }
      for (std::string_view item : items) {
        const auto c1 = item.find(':'), c2 = item.rfind(':');
        if (c1 == std::string_view::npos || c2 == c1)
          bad("cable '" + std::string(item) + "': expected PORT:METRES:MEDIUM");
        const auto port = parse_small_int(item.substr(0, c1));
        double len = -1;
        const std::string_view lt = item.substr(c1 + 1, c2 - c1 - 1);
        const auto [end, ec] = std::from_chars(lt.data(), lt.data() + lt.size(), len);
        if (!port || ec != std::errc() || end != lt.data() + lt.size() || !(len >= 0) ||
            len > kMaxCableLengthM)
          bad("cable '" + std::string(item) + "': expected PORT:METRES:MEDIUM with 0 <= METRES <= " +
              std::to_string(static_cast<int>(kMaxCableLengthM)));
        try {
          a.cables[*port] = {len, parse_medium(std::string(item.substr(c2 + 1)), "medium")};
        } catch (const InputError& e) {
          bad("cable '" + std::string(item) + "': " + e.what());
        }
      }
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

} // namespace

ParseResult parse(std::istream& in, const std::string& source) {
  return Parser(source).run(in);
}

} // namespace ibn::topo::ibnd
