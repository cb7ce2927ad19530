#include "sim/atomic_file.hpp"

#include "sim/error.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <utility>

namespace ibn {
namespace {

namespace fs = std::filesystem;

/// Writes all of `content` to an already existing non-regular file (FIFO, device) without replacing it.
void write_in_place(const std::string& path, const std::string& content) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(path + ": cannot open for writing: " + std::strerror(errno));
  const char* p = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    const ssize_t w = ::write(fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      const std::string why = w < 0 ? std::strerror(errno) : "nothing written";
      ::close(fd);
      throw InputError(path + ": write failed: " + why);
    }
    p += w;
    left -= static_cast<std::size_t>(w);
  }
  if (::close(fd) != 0 && errno != EINTR) throw InputError(path + ": write failed: " + std::strerror(errno));
}

/// Temporary file in the target's folder, then rename over the target.
void replace_atomically(const std::string& shown, const fs::path& target, const std::string& content) {
  std::error_code ec;
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  if (ec) throw InputError(shown + ": cannot create folder " + target.parent_path().string() + ": " + ec.message());
  // A unique temporary name per writer, so concurrent writers of different files never collide.
  const fs::path tmp = target.string() + ".tmp-" + std::to_string(std::random_device{}());
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out) throw InputError(shown + ": cannot open for writing");
    out << content;
    out.flush();
    if (!out) {
      out.close();
      fs::remove(tmp, ec);
      throw InputError(shown + ": write failed");
    }
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    const std::string why = ec.message();
    fs::remove(tmp, ec);
    throw InputError(shown + ": cannot rename the temporary file into place: " + why);
  }
}

} // namespace

void make_output_folder(const std::string& path, const std::string& flag) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) throw InputError(flag + " " + path + ": cannot create folder: " + ec.message());
  if (!std::filesystem::is_directory(path, ec))
    throw InputError(flag + " " + path + ": exists and is not a folder");
}

bool names_stdout(const std::string& path) {
  return path == "-" || path == "/dev/stdout" || path == "/dev/fd/1" || path == "/proc/self/fd/1";
}

void write_file_atomic(const std::string& path, const std::string& content) {
  if (path.empty()) throw InputError("output path is empty");
  if (names_stdout(path)) {
    std::cout << content << std::flush;
    if (!std::cout) throw InputError(path + ": write failed");
    return;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) { // exists (symbolic links followed)
    if (S_ISDIR(st.st_mode))
      throw InputError(path + ": is a folder; give a file name (for example " +
                       (fs::path(path) / "out.json").string() + ")");
    if (!S_ISREG(st.st_mode)) return write_in_place(path, content); // FIFO, device, socket
    struct stat lst {};
    if (::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
      std::error_code ec;
      const fs::path real = fs::canonical(path, ec);
      if (ec) throw InputError(path + ": cannot resolve the symbolic link: " + ec.message());
      return replace_atomically(path, real, content);
    }
    return replace_atomically(path, fs::path(path), content);
  }
  // A dangling symbolic link: create its target (the link stays).
  std::error_code ec;
  if (fs::is_symlink(fs::symlink_status(path, ec))) {
    fs::path target = fs::read_symlink(path, ec);
    if (ec) throw InputError(path + ": cannot read the symbolic link: " + ec.message());
    if (target.is_relative()) target = fs::path(path).parent_path() / target;
    return replace_atomically(path, target, content);
  }
  replace_atomically(path, fs::path(path), content);
}

void refuse_folder(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw InputError(path + ": is a folder, not " + what);
}

std::string read_file(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw InputError(path + ": is a folder, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void refuse_output_equal_to_input(const std::string& out, const std::vector<std::string>& inputs,
                                  const std::string& flag) {
  if (out.empty() || out == "-") return;
  struct stat so {};
  if (::stat(out.c_str(), &so) != 0 || !S_ISREG(so.st_mode)) return; // new path, FIFO, device: nothing to lose
  for (const auto& in : inputs) {
    struct stat si {};
    if (::stat(in.c_str(), &si) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino)
      throw InputError(flag + " " + out + ": is the input file " + in +
                       "; writing there would overwrite it (choose another output path)");
  }
}

void refuse_same_file_twice(const std::vector<std::string>& inputs, const std::string& why) {
  std::vector<std::pair<struct stat, const std::string*>> seen;
  for (const auto& in : inputs) {
    struct stat si {};
    if (::stat(in.c_str(), &si) != 0) continue;
    for (const auto& [st, name] : seen)
      if (st.st_dev == si.st_dev && st.st_ino == si.st_ino)
        throw InputError(in + ": given twice (as " + *name + " too); " + why);
    seen.emplace_back(si, &in);
  }
}

} // namespace ibn
