#!/usr/bin/env bash
# Test-name check (CTest, label quick-layering): doctest_discover_tests registers one CTest test per doctest
# TEST_CASE and runs it by name, but CMake splits a name at ';', so such a test case never ran (CTest
# reported it passed with zero test cases). No TEST_CASE name may hold a ';'.
# Usage: cmake/check_test_names.sh SOURCE_DIR
set -euo pipefail
root="${1:?usage: check_test_names.sh SOURCE_DIR}"
names="$(grep -rPzo 'TEST_CASE\(\s*"[^"]*"(\s*"[^"]*")*' "$root/tests" --include='*.cpp' | tr '\0' '\n')"
if [ "$(grep -c 'TEST_CASE' <<<"$names")" -eq 0 ]; then
  echo "check_test_names: no TEST_CASE found under $root/tests" >&2
  exit 1
fi
if bad="$(grep ';' <<<"$names")"; then
  echo "TEST_CASE names with ';' (CTest would never run them; use ','):" >&2
  echo "$bad" >&2
  exit 1
fi
