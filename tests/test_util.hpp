#pragma once
// Small helpers shared by the test programs.
#include "sim/error.hpp"

#include <string>

namespace ibn::test {

/// Runs `fn` and returns the message of the InputError it throws, or "" when it throws none.
template <typename F> std::string error_of(F&& fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

} // namespace ibn::test
