#include "sim/atomic_file.hpp"

#include "sim/error.hpp"

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

namespace ibn {

void write_file_atomic(const std::string& path, const std::string& content) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  if (ec) throw InputError(path + ": cannot create folder: " + ec.message());
  // A unique temporary name per writer, so concurrent writers of different files never collide.
  const fs::path tmp = target.string() + ".tmp-" + std::to_string(std::random_device{}());
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out) throw InputError(path + ": cannot open for writing");
    out << content;
    out.flush();
    if (!out) {
      fs::remove(tmp, ec);
      throw InputError(path + ": write failed");
    }
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw InputError(path + ": cannot rename the temporary file into place");
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

} // namespace ibn
