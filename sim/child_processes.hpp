#pragma once
// Child processes. SimGrid keeps its engine in process globals that cannot be reset (one flow engine per
// process, ever), so every layer that runs several flow simulations in one process (sweeps, what-if studies,
// validate, tests, benchmarks) runs each in a forked child through run_in_child_process().
//
// SIGINT/SIGTERM: a command that runs work in forked children must not leave them running when it is
// interrupted. install_signal_forwarding() (called once by main) makes SIGINT and SIGTERM go to every child
// started with fork_tracked() that has not yet been untracked, waits for those children, then lets the signal
// end the process as it would have (exit status 128 + signal in a shell).
//
// The table of children is the one piece of process-wide mutable state in ibnetsim: a signal handler can
// only reach globals. It is a fixed array of lock-free atomics, safe to use from threads and from the
// handler.
#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace ibn {

/// Installs the SIGINT/SIGTERM handlers (once per process; later calls do nothing).
void install_signal_forwarding();

/// fork() with SIGINT/SIGTERM blocked until the child is recorded, so a signal never misses it. The child
/// starts with an empty table and forwards signals to its own children (nested child processes). Returns as
/// fork() does (-1 and errno on failure). Call untrack_child(pid) after waitpid() has reaped it.
pid_t fork_tracked();

/// Forgets a child recorded by fork_tracked() (after it was reaped).
void untrack_child(pid_t pid);

/// Runs the program argv[0] (a path) with arguments argv[1..] in a forked (tracked) child, its standard
/// output and error written to `output_path` (created or truncated), and waits for it. Returns the waitpid()
/// status (WIFEXITED / WEXITSTATUS); an interrupt (SIGINT/SIGTERM) reaches the child and ends this process as
/// install_signal_forwarding() describes. Safe to call from several threads at once (unlike std::system,
/// which ignores SIGINT in the caller and leaves its child out of the table). std::runtime_error when the
/// child cannot be started; a program that cannot be executed exits 127 with the reason in `output_path`.
int run_command_tracked(const std::vector<std::string>& argv, const std::string& output_path);

/// Runs `fn` in a forked (tracked) child process and returns the string it returns (e.g. a JSON result). An
/// InputError thrown in the child is thrown again here as an InputError (bad input stays exit 2); any other
/// exception, or a child that dies without a result, as std::runtime_error with the child's message. Call it
/// from a single-threaded process (fork copies only the calling thread).
/// `on_wait` (if any) is called about every 200 ms while the child runs (e.g. to print progress).
std::string run_in_child_process(const std::function<std::string()>& fn,
                                 const std::function<void()>& on_wait = {});

/// Runs fn(0) .. fn(n - 1), each in its own forked (tracked) child, at most `parallel` at a time, and hands
/// each one's text to on_result(i, text) in this process as it finishes (completion order). `on_wait` is
/// called about every 200 ms. The first failure (thrown as run_in_child_process() would) stops starting new
/// children; the running ones are waited for, then it is rethrown. Call it from a single-threaded process.
void run_in_child_processes(std::size_t n, const std::function<std::string(std::size_t)>& fn,
                            unsigned parallel, const std::function<void(std::size_t, std::string)>& on_result,
                            const std::function<void()>& on_wait = {});

} // namespace ibn
