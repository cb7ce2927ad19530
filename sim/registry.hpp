#pragma once
// Registry<Factory>: named, described factories (routing algorithms, AR policies, CC algorithms,
// collectives, topology generators). Built explicitly by register_*() functions so tests can make a
// fresh one; there is no static-initialiser magic and no global instance.
#include "sim/error.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace ibn {

template <typename Factory> class Registry {
public:
  struct Entry {
    std::string name;
    std::string description;
    Factory factory;
  };

  explicit Registry(std::string kind) : kind_(std::move(kind)) {}

  void add(std::string name, std::string description, Factory factory) {
    if (contains(name)) throw std::logic_error(kind_ + " '" + name + "' registered twice");
    entries_.push_back(Entry{std::move(name), std::move(description), std::move(factory)});
  }
  bool contains(const std::string& name) const {
    return std::any_of(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.name == name; });
  }
  /// Finds `name` or throws InputError listing every registered name.
  const Entry& get(const std::string& name) const {
    for (const auto& e : entries_)
      if (e.name == name) return e;
    std::string known;
    for (const auto& e : entries_) known += (known.empty() ? "" : ", ") + e.name;
    throw InputError("unknown " + kind_ + " '" + name + "' (known: " + known + ")");
  }
  const std::vector<Entry>& entries() const { return entries_; }
  const std::string& kind() const { return kind_; }

private:
  std::string kind_;
  std::vector<Entry> entries_;
};

} // namespace ibn
