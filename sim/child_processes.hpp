#pragma once
// Child processes and SIGINT/SIGTERM: a command that runs work in forked children (the flow engine runs each
// simulation in one, flow::run_in_child_process) must not leave them running when it is interrupted.
// install_signal_forwarding() (called once by main) makes SIGINT and SIGTERM go to every child started with
// fork_tracked() that has not yet been untracked, waits for those children, then lets the signal end the
// process as it would have (exit status 128 + signal in a shell).
//
// The table of children is the one piece of process-wide mutable state in ibnetsim: a signal handler can
// only reach globals. It is a fixed array of lock-free atomics, safe to use from threads and from the handler.
#include <sys/types.h>

namespace ibn {

/// Installs the SIGINT/SIGTERM handlers (once per process; later calls do nothing).
void install_signal_forwarding();

/// fork() with SIGINT/SIGTERM blocked until the child is recorded, so a signal never misses it. Returns as
/// fork() does (-1 and errno on failure). Call untrack_child(pid) after waitpid() has reaped it.
pid_t fork_tracked();

/// Forgets a child recorded by fork_tracked() (after it was reaped).
void untrack_child(pid_t pid);

} // namespace ibn
