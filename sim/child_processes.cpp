#include "sim/child_processes.hpp"

#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>

namespace ibn {
namespace {

constexpr std::size_t kSlots = 256; // more children at once than any thread pool here runs

// Process-wide by necessity (see the header): the handler has no other way to find the children.
std::array<std::atomic<pid_t>, kSlots> g_children{};
std::atomic<pid_t> g_owner{0}; // the process whose children the table lists (a forked child inherits a copy)

extern "C" void forward_signal(int sig) {
  const int saved_errno = errno;
  if (::getpid() == g_owner.load()) {
    for (auto& c : g_children)
      if (const pid_t p = c.load(); p > 0) ::kill(p, sig);
    for (auto& c : g_children)
      if (const pid_t p = c.load(); p > 0) {
        int status = 0;
        while (::waitpid(p, &status, 0) < 0 && errno == EINTR) {
        }
      }
  }
  errno = saved_errno;
  // End the way the signal would have ended us (delivered when the handler returns: it is blocked now).
  std::signal(sig, SIG_DFL);
  ::raise(sig);
}

} // namespace

void install_signal_forwarding() {
  pid_t expected = 0;
  if (!g_owner.compare_exchange_strong(expected, ::getpid())) return;
  struct sigaction sa {};
  sa.sa_handler = forward_signal;
  sigemptyset(&sa.sa_mask);
  sigaddset(&sa.sa_mask, SIGINT);
  sigaddset(&sa.sa_mask, SIGTERM);
  sa.sa_flags = 0;
  for (int sig : {SIGINT, SIGTERM}) {
    struct sigaction old {};
    // A signal the caller's environment ignores (nohup, background jobs) stays ignored.
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    ::sigaction(sig, &sa, nullptr);
  }
}

pid_t fork_tracked() {
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  ::pthread_sigmask(SIG_BLOCK, &block, &old);
  const pid_t pid = ::fork();
  if (pid > 0)
    for (auto& c : g_children) {
      pid_t empty = 0;
      if (c.compare_exchange_strong(empty, pid)) break;
    }
  const int saved_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  errno = saved_errno;
  return pid;
}

void untrack_child(pid_t pid) {
  if (pid <= 0) return;
  for (auto& c : g_children) {
    pid_t p = pid;
    if (c.compare_exchange_strong(p, 0)) return;
  }
}

} // namespace ibn
