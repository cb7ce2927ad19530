#pragma once
// Fuzz targets: one function per input parser, shared by the libFuzzer programs (fuzz/libfuzzer_main.cpp,
// CMake option IBNETSIM_FUZZ with clang) and the in-suite mutation driver (tests/fuzz/). docs/robustness.md.
//
// A target feeds its bytes to the parser the way the command line does. Rejecting the input with
// ibn::InputError is the expected outcome for bad input (exit 2); any other exception is a finding (it would
// be exit 1, "internal error"), and so is a crash, a sanitizer report or a hang.
#include <string>
#include <string_view>
#include <vector>

namespace ibn::fuzz {

struct Target {
  const char* name;        ///< "ibnetdiscover", "perftest", ...
  const char* description; ///< what it exercises
  /// Seed corpus: folders (relative to the source tree) whose files are seeds, and inline seeds.
  std::vector<std::string> seed_dirs;
  std::vector<std::string> inline_seeds;
  /// Runs the parser on `data`. Returns normally when the input was accepted or refused with InputError;
  /// lets any other exception escape.
  void (*run)(std::string_view data);
};

/// Every target, in a fixed order.
const std::vector<Target>& targets();
/// The target called `name`, or nullptr.
const Target* find_target(std::string_view name);

} // namespace ibn::fuzz
