#pragma once
// Golden-file comparison for tests: IBNETSIM_UPDATE_GOLDEN=1 rewrites the file instead of comparing.
#include "tests/test_util.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace ibn::test {

/// Compares `actual` with tests/data/golden/<name>.
inline void check_golden(const std::string& name, const std::string& actual) {
  const std::filesystem::path p = std::filesystem::path(IBNETSIM_TEST_DATA) / "golden" / name;
  const char* update = std::getenv("IBNETSIM_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << actual;
    MESSAGE("updated golden file " << p.string());
    return;
  }
  REQUIRE_MESSAGE(std::filesystem::exists(p),
                  "missing golden file " << p.string() << " (run with IBNETSIM_UPDATE_GOLDEN=1)");
  CHECK(read_text_file(p.string()) == actual);
}

} // namespace ibn::test
