#include "sim/child_processes.hpp"

#include "sim/error.hpp"

#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>

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

std::string run_in_child_process(const std::function<std::string()>& fn) {
  std::fflush(nullptr); // else the child may write the parent's buffered output a second time
  int fds[2];
  if (pipe(fds) != 0)
    throw std::runtime_error(std::string("run_in_child_process: pipe: ") + std::strerror(errno));
  const pid_t pid = fork_tracked(); // SIGINT/SIGTERM reach the child too (sim/child_processes.hpp)
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    throw std::runtime_error(std::string("run_in_child_process: fork: ") + std::strerror(errno));
  }
  if (pid == 0) { // child: first byte 'o' (ok), 'i' (bad input) or 'e' (error), then the text
    close(fds[0]);
    std::string out;
    char tag = 'o';
    try {
      out = fn();
    } catch (const InputError& e) {
      tag = 'i';
      out = e.what();
    } catch (const std::exception& e) {
      tag = 'e';
      out = e.what();
    } catch (...) {
      tag = 'e';
      out = "unknown exception";
    }
    std::string msg = tag + out;
    const char* p = msg.data();
    std::size_t left = msg.size();
    while (left > 0) {
      const ssize_t w = write(fds[1], p, left);
      if (w <= 0) break;
      p += w;
      left -= static_cast<std::size_t>(w);
    }
    close(fds[1]);
    _exit(0); // no atexit handlers or static destructors of the parent's copy
  }
  close(fds[1]);
  std::string msg;
  char buf[65536];
  for (;;) {
    const ssize_t r = read(fds[0], buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    msg.append(buf, static_cast<std::size_t>(r));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  untrack_child(pid);
  if (msg.empty()) {
    const std::string why = WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                                : "exit status " + std::to_string(WEXITSTATUS(status));
    throw std::runtime_error("run_in_child_process: the child produced no result (" + why + ")");
  }
  if (msg[0] == 'i') throw InputError(msg.substr(1));
  if (msg[0] == 'e') throw std::runtime_error(msg.substr(1));
  return msg.substr(1);
}

} // namespace ibn
