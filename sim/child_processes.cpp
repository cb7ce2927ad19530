#include "sim/child_processes.hpp"

#include "sim/error.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <utility>
#include <vector>

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
  if (pid == 0 && g_owner.load() != 0) {
    // The child forwards signals to its own children (a point that runs segments in children), not to its
    // parent's: it starts with an empty table of its own.
    for (auto& c : g_children) c.store(0);
    g_owner.store(::getpid());
  }
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

int run_command_tracked(const std::vector<std::string>& argv, const std::string& output_path) {
  if (argv.empty()) throw std::logic_error("run_command_tracked: no program");
  // Everything the child needs is made before fork(): between fork and exec a child of a threaded process
  // may only make async-signal-safe calls.
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::string exec_failed = "ibnetsim: cannot execute " + argv[0] + "\n";
  std::fflush(nullptr);
  const pid_t pid = fork_tracked();
  if (pid < 0)
    throw std::runtime_error(std::string("cannot start ") + argv[0] + ": fork: " + std::strerror(errno));
  if (pid == 0) {
    const int fd = ::open(output_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ::dup2(fd, STDOUT_FILENO);
      ::dup2(fd, STDERR_FILENO);
    }
    ::execv(args[0], args.data());
    if (::write(STDERR_FILENO, exec_failed.data(), exec_failed.size()) < 0) {
    }
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno == EINTR) continue;
    // Reaped by the signal handler while it forwarded an interrupt (the process is ending), or lost.
    untrack_child(pid);
    throw std::runtime_error(std::string("waiting for ") + argv[0] + ": " + std::strerror(errno));
  }
  untrack_child(pid);
  return status;
}

namespace {

struct Child {
  pid_t pid = -1;
  int fd = -1;
  std::string msg;
};

Child start_child(const std::function<std::string()>& fn) {
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
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) break;
      p += w;
      left -= static_cast<std::size_t>(w);
    }
    close(fds[1]);
    _exit(0); // no atexit handlers or static destructors of the parent's copy
  }
  close(fds[1]);
  return {pid, fds[0], {}};
}

/// Reads what the child has written; true when it closed its end.
bool read_child(Child& c) {
  char buf[65536];
  for (;;) {
    const ssize_t r = read(c.fd, buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;
    if (r <= 0) return true;
    c.msg.append(buf, static_cast<std::size_t>(r));
    if (static_cast<std::size_t>(r) < sizeof buf) return false;
  }
}

/// Reaps the child and decodes its message (throws as run_in_child_process documents).
std::string finish_child(Child& c) {
  close(c.fd);
  int status = 0;
  while (waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
  }
  untrack_child(c.pid);
  if (c.msg.empty()) {
    const std::string why = WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                                : "exit status " + std::to_string(WEXITSTATUS(status));
    throw std::runtime_error("run_in_child_process: the child produced no result (" + why + ")");
  }
  if (c.msg[0] == 'i') throw InputError(c.msg.substr(1));
  if (c.msg[0] == 'e') throw std::runtime_error(c.msg.substr(1));
  return c.msg.substr(1);
}

} // namespace

std::string run_in_child_process(const std::function<std::string()>& fn,
                                 const std::function<void()>& on_wait) {
  std::string out;
  run_in_child_processes(
      1, [&](std::size_t) { return fn(); }, 1, [&](std::size_t, std::string text) { out = std::move(text); },
      on_wait);
  return out;
}

void run_in_child_processes(std::size_t n, const std::function<std::string(std::size_t)>& fn,
                            unsigned parallel, const std::function<void(std::size_t, std::string)>& on_result,
                            const std::function<void()>& on_wait) {
  parallel = std::max(1u, parallel);
  std::vector<std::pair<std::size_t, Child>> running;
  std::size_t next = 0;
  std::exception_ptr error;
  while (running.size() > 0 || (next < n && !error)) {
    while (!error && next < n && running.size() < parallel) {
      try {
        auto c = start_child([&, i = next] { return fn(i); });
        fcntl(c.fd, F_SETFL, fcntl(c.fd, F_GETFL) | O_NONBLOCK);
        running.emplace_back(next, std::move(c));
      } catch (...) {
        error = std::current_exception();
      }
      ++next;
    }
    if (running.empty()) break;
    std::vector<pollfd> fds;
    for (const auto& r : running) fds.push_back({r.second.fd, POLLIN, 0});
    const int k = poll(fds.data(), fds.size(), 200);
    if (k < 0 && errno != EINTR) {
      error =
          error ? error : std::make_exception_ptr(std::runtime_error("run_in_child_processes: poll failed"));
    }
    if (on_wait) on_wait();
    for (std::size_t j = 0; j < running.size();) {
      auto& [i, c] = running[j];
      if (k > 0 && (fds[j].revents & (POLLIN | POLLHUP | POLLERR)) && read_child(c)) {
        try {
          auto text = finish_child(c);
          if (!error) on_result(i, std::move(text));
        } catch (...) {
          if (!error) error = std::current_exception();
        }
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(j));
        fds.erase(fds.begin() + static_cast<std::ptrdiff_t>(j));
        continue;
      }
      ++j;
    }
  }
  if (error) std::rethrow_exception(error);
}

} // namespace ibn
