#pragma once
// Running a function in a forked child process. SimGrid keeps its engine in process globals that cannot be
// reset (one flow engine per process, ever), so every layer that runs several flow simulations in one
// process (sweeps, what-if studies, tests, benchmarks) runs each in a child through this helper.
#include <functional>
#include <string>

namespace ibn {

/// Runs `fn` in a forked child process and returns the string it returns (e.g. a JSON result). Throws
/// std::runtime_error with the child's message when `fn` throws or the child dies without a result. Call it
/// from a single-threaded process (fork copies only the calling thread).
std::string run_in_child_process(const std::function<std::string()>& fn);

} // namespace ibn
