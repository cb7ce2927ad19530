#pragma once
// Choice<E>: the names of an enum's values, declared once next to the enum. A table drives parsing (an
// InputError naming the flag or key and listing the names), printing, and the `choices` of a scenario key
// or a flag, so the accepted spellings and the documented ones cannot drift apart.
#include "sim/error.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace ibn {

template <typename E> struct Choice {
  E value;
  const char* name;
};

/// The name of `v` in `table` ("?" if it has none).
template <typename E, std::size_t N> const char* choice_name(const Choice<E> (&table)[N], E v) {
  for (const auto& c : table)
    if (c.value == v) return c.name;
  return "?";
}

/// Every name of `table`, in declaration order.
template <typename E, std::size_t N> std::vector<std::string> choice_names(const Choice<E> (&table)[N]) {
  std::vector<std::string> out;
  for (const auto& c : table) out.emplace_back(c.name);
  return out;
}

/// The value named `text`; otherwise an InputError "WHAT: unknown KIND 'text' (expected a, b or c)".
template <typename E, std::size_t N>
E parse_choice(const Choice<E> (&table)[N], const std::string& text, const std::string& what,
               const std::string& kind) {
  for (const auto& c : table)
    if (text == c.name) return c.value;
  std::string known;
  for (std::size_t i = 0; i < N; ++i) known += std::string(i == 0 ? "" : i + 1 == N ? " or " : ", ") + table[i].name;
  throw InputError(what + ": unknown " + kind + " '" + text + "' (expected " + known + ")");
}

} // namespace ibn
