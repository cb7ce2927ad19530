#pragma once
// Running a function in a forked child process. SimGrid keeps its engine in process globals that cannot be
// reset (one flow engine per process, ever), so every layer that runs several flow simulations in one
// process (sweeps, what-if studies, tests, benchmarks) runs each in a child through this helper.
#include <functional>
#include <string>

namespace ibn {

/// Runs `fn` in a forked child process and returns the string it returns (e.g. a JSON result). An InputError
/// thrown in the child is thrown again here as an InputError (bad input stays exit 2); any other exception,
/// or a child that dies without a result, as std::runtime_error with the child's message. Call it
/// from a single-threaded process (fork copies only the calling thread).
std::string run_in_child_process(const std::function<std::string()>& fn);

} // namespace ibn
