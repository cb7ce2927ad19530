#pragma once
// Schema: every scenario key declared once — path, type, unit, default, description, allowed values — and
// the checks that go with it (DESIGN.md §3 "every knob declared once"). A scenario document is validated
// against it (unknown keys and wrong types are InputErrors naming the file and the key's path), completed
// with defaults (the result is the effective configuration written into every manifest), and modified by
// `--set path=value` overrides typed by the declaration.
//
// Paths: dotted object keys; "[]" marks the elements of an array of objects, e.g. "jobs[].workload.op".
// Concrete paths in messages and in --set use indices: "jobs[0].workload.op" (also "jobs.0.workload.op").
// A key of type Object whose children are declared (e.g. "packet" and "packet.mtu_bytes") is checked key by
// key; one without declared children is passed through (its consumer validates it, e.g. "fabric.params" by
// the generator's own key list). A key declared with fill_default = false shows its default in the table
// but is left out of the effective configuration unless given (so a calibration profile can set it).
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace ibn::scen {

enum class KeyType {
  Int,    ///< integer (JSON number without fraction); min/max apply
  Double, ///< number; min/max apply
  Bool,
  String,     ///< free text (paths, names); choices apply when given
  Size,       ///< bytes: a non-negative integer or a string "64K", "1MiB", ... (stored as integer bytes)
  SizeList,   ///< list of sizes: JSON array or "1M,4M,16M" (stored as an array of integers)
  StringList, ///< JSON array of strings or "a,b,c"
  Object,     ///< passed through (validated by its consumer)
  ObjectArray ///< array of objects whose keys are declared under "<path>[]"
};

struct KeyDecl {
  std::string path;
  KeyType type = KeyType::String;
  std::string unit;             ///< "bytes", "us", "Gb/s", "" ...
  nlohmann::json default_value; ///< null: optional, absent unless given
  std::string description;
  std::vector<std::string> choices; ///< String: allowed values
  double min = -1e300, max = 1e300;
  bool fill_default = true; ///< false: the default is documented, not written into the effective document
};

class Schema {
 public:
  void add(KeyDecl d);
  const std::vector<KeyDecl>& keys() const { return keys_; }
  const KeyDecl* find(const std::string& generic_path) const;
  /// True when some key is declared below `generic_path` ("packet" -> "packet.mtu_bytes").
  bool has_children(const std::string& generic_path) const;

  /// Validates `doc` (from `where`, e.g. a file name) and returns it completed with defaults, values
  /// normalised (sizes as integers, lists as arrays). Throws InputError "WHERE: key 'PATH': ...".
  nlohmann::json complete(const nlohmann::json& doc, const std::string& where) const;

  /// Applies "path=value" to `doc` (before complete()). The value is parsed by the key's type; an array
  /// index equal to the array's length appends an element. Throws InputError naming the override.
  void set(nlohmann::json& doc, const std::string& assignment) const;

  /// A Markdown table of every key (path, type, unit, default, description).
  std::string markdown() const;

 private:
  nlohmann::json complete_object(const nlohmann::json& obj, const std::string& generic,
                                 const std::string& concrete, const std::string& where) const;
  nlohmann::json check_value(const KeyDecl& d, const nlohmann::json& v, const std::string& concrete,
                             const std::string& where) const;
  std::vector<KeyDecl> keys_;
};

/// "jobs[0].workload.op" or "jobs.0.workload.op" -> {"jobs", "0", "workload", "op"}-style tokens, with a flag
/// per token telling whether it is an index.
struct PathToken {
  std::string key;
  bool is_index = false;
  std::size_t index = 0;
};
std::vector<PathToken> parse_key_path(const std::string& path, const std::string& what);

} // namespace ibn::scen
