#pragma once
// Test helper: runs the built ibnetsim binary with a shell command line and captures output and exit code.
#include "tests/test_util.hpp"

#include <sys/wait.h>

#include <doctest/doctest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>

namespace ibn::test {

struct CliResult {
  int code = -1;
  std::string out; ///< stdout and stderr together
};

inline CliResult run_cli(const std::string& args) {
  const std::string cmd = std::string(IBNETSIM_BINARY) + " " + args + " 2>&1";
  CliResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

/// Runs `args` and checks that the command is refused as bad input: exit 2 with `says` in its output (the
/// command and the output are logged with a failure). Returns the result for further checks.
inline CliResult refused(const std::string& args, const std::string& says) {
  auto r = run_cli(args);
  INFO(args);
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(has(r.out, says));
  return r;
}

/// A fresh, empty folder under the system temp dir for one test.
inline std::filesystem::path scratch_dir(const std::string& name) {
  const auto d = std::filesystem::temp_directory_path() / ("ibnetsim-test-" + name);
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

/// busbw (out-of-place, column 8) of the first row of an `ibnetsim nccl-tests` table; -1 without a row.
inline double busbw_of(const std::string& table) {
  std::istringstream in(table);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream row(line);
    std::string f[8];
    for (auto& x : f) row >> x;
    return std::stod(f[7]);
  }
  return -1;
}

} // namespace ibn::test
