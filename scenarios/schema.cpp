#include "scenarios/schema.hpp"

#include "sim/error.hpp"
#include "sim/units.hpp"

#include <cmath>
#include <sstream>

namespace ibn::scen {

namespace {

std::string type_name(KeyType t) {
  switch (t) {
  case KeyType::Int:
    return "integer";
  case KeyType::Double:
    return "number";
  case KeyType::Bool:
    return "boolean";
  case KeyType::String:
    return "string";
  case KeyType::Size:
    return "size";
  case KeyType::SizeList:
    return "list of sizes";
  case KeyType::StringList:
    return "list of strings";
  case KeyType::Object:
    return "object";
  case KeyType::ObjectArray:
    return "array of objects";
  }
  return "?";
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == ',') {
      out.push_back(cur);
      cur.clear();
    } else if (c != ' ') {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

[[noreturn]] void fail(const std::string& where, const std::string& path, const std::string& msg) {
  throw InputError(where + ": key '" + path + "': " + msg);
}

} // namespace

std::vector<PathToken> parse_key_path(const std::string& path, const std::string& what) {
  std::vector<PathToken> out;
  std::size_t i = 0;
  auto bad = [&](const std::string& why) {
    throw InputError(what + ": bad key path '" + path + "': " + why);
  };
  if (path.empty()) bad("empty");
  while (i < path.size()) {
    if (path[i] == '[') {
      const auto close = path.find(']', i);
      if (close == std::string::npos) bad("missing ']'");
      const auto num = path.substr(i + 1, close - i - 1);
      if (num.empty() || num.find_first_not_of("0123456789") != std::string::npos)
        bad("index must be a number");
      if (num.size() > 9) bad("index " + num + " is too large");
      out.push_back({num, true, std::stoul(num)});
      i = close + 1;
      if (i < path.size() && path[i] == '.') ++i;
      continue;
    }
    auto end = path.find_first_of(".[", i);
    if (end == std::string::npos) end = path.size();
    const auto tok = path.substr(i, end - i);
    if (tok.empty()) bad("empty component");
    const bool digits = tok.find_first_not_of("0123456789") == std::string::npos && tok.size() <= 9;
    out.push_back({tok, digits, digits ? std::stoul(tok) : 0});
    i = end;
    if (i < path.size() && path[i] == '.') ++i;
  }
  return out;
}

void Schema::add(KeyDecl d) {
  keys_.push_back(std::move(d));
}

const KeyDecl* Schema::find(const std::string& generic_path) const {
  for (const auto& k : keys_)
    if (k.path == generic_path) return &k;
  return nullptr;
}

bool Schema::has_children(const std::string& generic_path) const {
  for (const auto& k : keys_)
    if (k.path.rfind(generic_path + ".", 0) == 0) return true;
  return false;
}

nlohmann::json Schema::check_value(const KeyDecl& d, const nlohmann::json& v, const std::string& concrete,
                                   const std::string& where) const {
  const std::string want = "expected " + type_name(d.type) + (d.unit.empty() ? "" : " (" + d.unit + ")");
  auto range = [&](double x) {
    if (x < d.min || x > d.max) {
      std::ostringstream s;
      s << "value " << x << " out of range [" << d.min << ", " << d.max << "]";
      fail(where, concrete, s.str());
    }
  };
  switch (d.type) {
  case KeyType::Int:
    if (!v.is_number_integer()) fail(where, concrete, want + ", got " + v.dump());
    range(static_cast<double>(v.get<std::int64_t>()));
    return v;
  case KeyType::Double:
    if (!v.is_number()) fail(where, concrete, want + ", got " + v.dump());
    if (!std::isfinite(v.get<double>())) fail(where, concrete, "not a finite number");
    range(v.get<double>());
    return v;
  case KeyType::Bool:
    if (!v.is_boolean()) fail(where, concrete, want + ", got " + v.dump());
    return v;
  case KeyType::String:
    if (!v.is_string()) fail(where, concrete, want + ", got " + v.dump());
    if (!d.choices.empty()) {
      bool ok = false;
      for (const auto& c : d.choices) ok |= c == v.get<std::string>();
      if (!ok)
        fail(where, concrete, "'" + v.get<std::string>() + "' is not one of: " + join(d.choices, ", "));
    }
    return v;
  case KeyType::Size: {
    std::uint64_t b = 0;
    if (v.is_number_integer() && v.get<std::int64_t>() >= 0)
      b = v.get<std::uint64_t>();
    else if (v.is_number_integer())
      fail(where, concrete, "a size cannot be negative, got " + v.dump());
    else if (v.is_string())
      b = parse_size_bytes(v.get<std::string>(), where + ": key '" + concrete + "'");
    else
      fail(where, concrete, want + " like 65536 or \"64K\", got " + v.dump());
    range(static_cast<double>(b));
    return b;
  }
  case KeyType::SizeList: {
    nlohmann::json out = nlohmann::json::array();
    std::vector<nlohmann::json> items;
    if (v.is_string()) {
      for (const auto& s : split_commas(v.get<std::string>())) items.emplace_back(s);
    } else if (v.is_array()) {
      for (const auto& x : v) items.push_back(x);
    } else {
      fail(where, concrete, want + " like [\"1M\", \"4M\"] or \"1M,4M\", got " + v.dump());
    }
    if (items.empty()) fail(where, concrete, "empty list");
    KeyDecl one = d;
    one.type = KeyType::Size;
    for (std::size_t i = 0; i < items.size(); ++i)
      out.push_back(check_value(one, items[i], concrete + "[" + std::to_string(i) + "]", where));
    return out;
  }
  case KeyType::StringList: {
    nlohmann::json out = nlohmann::json::array();
    if (v.is_string()) {
      for (const auto& s : split_commas(v.get<std::string>())) out.push_back(s);
    } else if (v.is_array()) {
      for (const auto& x : v) {
        if (!x.is_string() && !x.is_number_integer()) fail(where, concrete, want + ", got " + v.dump());
        out.push_back(x.is_string() ? x.get<std::string>() : std::to_string(x.get<std::int64_t>()));
      }
    } else {
      fail(where, concrete, want + ", got " + v.dump());
    }
    return out;
  }
  case KeyType::Object:
    if (!v.is_object()) fail(where, concrete, want + ", got " + v.dump());
    return has_children(d.path) ? complete_object(v, d.path, concrete, where) : v;
  case KeyType::ObjectArray: {
    if (!v.is_array()) fail(where, concrete, want + ", got " + v.dump());
    nlohmann::json out = nlohmann::json::array();
    for (std::size_t i = 0; i < v.size(); ++i) {
      const auto c = concrete + "[" + std::to_string(i) + "]";
      if (!v[i].is_object()) fail(where, c, "expected an object, got " + v[i].dump());
      out.push_back(complete_object(v[i], d.path + "[]", c, where));
    }
    return out;
  }
  }
  return v;
}

nlohmann::json Schema::complete_object(const nlohmann::json& obj, const std::string& generic,
                                       const std::string& concrete, const std::string& where) const {
  const std::string gprefix = generic.empty() ? "" : generic + ".";
  const std::string cprefix = concrete.empty() ? "" : concrete + ".";
  nlohmann::json out = nlohmann::json::object();
  // Given keys: declared leaves, or intermediate objects that have declared children.
  for (const auto& [k, v] : obj.items()) {
    const auto gp = gprefix + k;
    const auto cp = cprefix + k;
    if (const auto* d = find(gp)) {
      out[k] = check_value(*d, v, cp, where);
      continue;
    }
    bool has_children = false;
    std::vector<std::string> siblings;
    for (const auto& d : keys_) {
      if (d.path.rfind(gp + ".", 0) == 0) has_children = true;
      if (d.path.rfind(gprefix, 0) == 0) {
        const auto rest = d.path.substr(gprefix.size());
        const auto name = rest.substr(0, rest.find_first_of(".["));
        if (std::find(siblings.begin(), siblings.end(), name) == siblings.end()) siblings.push_back(name);
      }
    }
    if (!has_children) fail(where, cp, "unknown key (known here: " + join(siblings, ", ") + ")");
    if (!v.is_object()) fail(where, cp, "expected an object, got " + v.dump());
    out[k] = complete_object(v, gp, cp, where);
  }
  // Defaults for declared direct children (and intermediate objects) that are missing.
  for (const auto& d : keys_) {
    if (d.path.rfind(gprefix, 0) != 0) continue;
    const auto rest = d.path.substr(gprefix.size());
    if (rest.find("[]") != std::string::npos && rest.find("[]") < rest.find('.')) continue; // inside an array
    const auto dot = rest.find('.');
    const auto name = rest.substr(0, dot);
    if (name.find('[') != std::string::npos || out.contains(name)) continue;
    if (dot == std::string::npos) {
      if (!d.default_value.is_null() && d.fill_default) out[name] = check_value(d, d.default_value, cprefix + name, "default");
    } else {
      // An object declared with fill_default = false (e.g. "faults") stays absent unless given.
      if (const auto* pd = find(gprefix + name); pd && !pd->fill_default) continue;
      auto sub = complete_object(nlohmann::json::object(), gprefix + name, cprefix + name, where);
      if (!sub.empty()) out[name] = std::move(sub);
    }
  }
  return out;
}

nlohmann::json Schema::complete(const nlohmann::json& doc, const std::string& where) const {
  if (!doc.is_object()) throw InputError(where + ": a scenario must be a JSON object");
  return complete_object(doc, "", "", where);
}

void Schema::set(nlohmann::json& doc, const std::string& assignment) const {
  const auto what = "--set " + assignment;
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) throw InputError(what + ": expected key=value");
  const auto path = assignment.substr(0, eq);
  const auto value = assignment.substr(eq + 1);
  const auto toks = parse_key_path(path, "--set");
  std::string generic;
  nlohmann::json* node = &doc;
  for (std::size_t i = 0; i < toks.size(); ++i) {
    const auto& t = toks[i];
    const bool last = i + 1 == toks.size();
    if (t.is_index) {
      const auto* d = find(generic);
      if (!d || d->type != KeyType::ObjectArray)
        throw InputError(what + ": '" + generic + "' is not a list of objects");
      // A list not given yet starts from its declared default (so jobs[1] appends to the default job).
      if (!node->is_array()) *node = d->default_value.is_array() ? d->default_value : nlohmann::json::array();
      if (t.index > node->size())
        throw InputError(what + ": index " + std::to_string(t.index) + " beyond the " +
                         std::to_string(node->size()) + " elements of '" + generic + "' (use index " +
                         std::to_string(node->size()) + " to append)");
      if (t.index == node->size()) node->push_back(nlohmann::json::object());
      node = &(*node)[t.index];
      generic += "[]";
      if (last) throw InputError(what + ": cannot set a whole list element");
      continue;
    }
    generic += (generic.empty() ? "" : ".") + t.key;
    if (!node->is_object()) *node = nlohmann::json::object();
    if (const auto* d = last ? nullptr : find(generic); d && d->type == KeyType::Object && !has_children(generic)) {
      // A free-form object (fabric.params; not `packet`, whose keys are declared): the rest of the path names
      // its keys, the value stays text
      // (generator parameters are read as text), so sweep can vary fabric.params.oversubscription.
      nlohmann::json* obj = &(*node)[t.key];
      if (!obj->is_object())
        *obj = d->default_value.is_object() ? d->default_value : nlohmann::json::object();
      for (std::size_t k = i + 1; k < toks.size(); ++k) {
        if (toks[k].is_index) throw InputError(what + ": '" + generic + "' holds no lists");
        obj = &(*obj)[toks[k].key];
        if (k + 1 < toks.size() && !obj->is_object()) *obj = nlohmann::json::object();
      }
      *obj = value;
      return;
    }
    if (last) {
      const auto* d = find(generic);
      if (!d) throw InputError(what + ": unknown key '" + generic + "'");
      nlohmann::json v;
      switch (d->type) {
      case KeyType::Int:
        try {
          std::size_t used = 0;
          const long long x = std::stoll(value, &used);
          if (used != value.size()) throw std::invalid_argument("trailing");
          v = x;
        } catch (const std::exception&) {
          throw InputError(what + ": '" + value + "' is not an integer");
        }
        break;
      case KeyType::Double:
        try {
          std::size_t used = 0;
          const double x = std::stod(value, &used);
          if (used != value.size()) throw std::invalid_argument("trailing");
          v = x;
        } catch (const std::exception&) {
          throw InputError(what + ": '" + value + "' is not a number");
        }
        break;
      case KeyType::Bool:
        if (value == "true" || value == "1")
          v = true;
        else if (value == "false" || value == "0")
          v = false;
        else
          throw InputError(what + ": '" + value + "' is not true or false");
        break;
      case KeyType::Object:
      case KeyType::ObjectArray:
        try {
          v = nlohmann::json::parse(value);
        } catch (const nlohmann::json::exception& e) {
          throw InputError(what + ": value is not JSON: " + e.what());
        }
        break;
      default:
        v = value;
        break;
      }
      (*node)[t.key] = check_value(*d, v, path, "--set");
      return;
    }
    node = &(*node)[t.key];
  }
}

std::string Schema::markdown() const {
  std::ostringstream s;
  s << "| key | type | unit | default | description |\n|---|---|---|---|---|\n";
  for (const auto& k : keys_) {
    std::string desc = k.description;
    if (!k.choices.empty()) desc += " One of: " + join(k.choices, ", ") + ".";
    s << "| `" << k.path << "` | " << type_name(k.type) << " | " << k.unit << " | "
      << (k.default_value.is_null() ? "(none)" : "`" + k.default_value.dump() + "`") << " | " << desc
      << " |\n";
  }
  return s.str();
}

} // namespace ibn::scen
