# Test-name check (cmake -P): no doctest test case name contains ';'. doctest_discover_tests reads the names
# into a CMake list, so a ';' splits a name in two and CTest runs a filter that matches no test case: the test
# "passes" without running (it hid a failing test until 2026-12-05). Run by CTest (label quick-layering) and by
# hand:
#   cmake -DBINARIES=build/tests/test_sim,build/tests/test_apps -P cmake/check_test_names.cmake
if(NOT BINARIES)
  message(FATAL_ERROR "check_test_names.cmake: pass -DBINARIES=<test binary,test binary,...>")
endif()
string(REPLACE "," ";" BINARIES "${BINARIES}")
set(bad "")
foreach(bin ${BINARIES})
  execute_process(COMMAND "${bin}" --list-test-cases --no-version OUTPUT_VARIABLE out RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "check_test_names.cmake: '${bin} --list-test-cases' failed (${rc})")
  endif()
  # Work on the text with ';' replaced, so that CMake's list handling does not split it.
  string(REPLACE ";" "<semicolon>" out "${out}")
  string(REPLACE "\n" ";" lines "${out}")
  foreach(line ${lines})
    if(line MATCHES "<semicolon>")
      get_filename_component(name "${bin}" NAME)
      string(REPLACE "<semicolon>" "';'" line "${line}")
      string(APPEND bad "  ${name}: ${line}\n")
    endif()
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "doctest test names with ';' (CTest cannot run them; use ',' instead):\n${bad}")
endif()
