#include "apps/catalog_path.hpp"

#include "topology/bom.hpp"

#include <filesystem>
#include <system_error>

namespace ibn::app {

std::string catalog_path(const std::string& flag) {
  if (!flag.empty()) return flag;
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return topo::default_catalog_path(ec ? std::string() : exe.string(), IBNETSIM_SOURCE_DIR);
}

} // namespace ibn::app
