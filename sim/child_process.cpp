#include "sim/child_process.hpp"

#include "sim/child_processes.hpp"
#include "sim/error.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>

namespace ibn {

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
