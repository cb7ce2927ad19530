#include "apps/catalog_path.hpp"

#include "sim/error.hpp"
#include "topology/bom.hpp"

#include <cstdlib>

#include <filesystem>
#include <system_error>

namespace ibn::app {

std::string catalog_path(const std::string& flag) {
  if (!flag.empty()) return flag;
  // The environment's catalog is named as such when it cannot be read (it said "--catalog: cannot open").
  if (const char* env = std::getenv("IBNETSIM_CATALOG"); env && *env) {
    std::error_code e;
    if (!std::filesystem::is_regular_file(env, e))
      throw InputError(std::string("IBNETSIM_CATALOG=") + env +
                       ": no such parts catalog file (unset it, or " + "name a catalog with --catalog)");
    return env;
  }
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return topo::default_catalog_path(ec ? std::string() : exe.string(), IBNETSIM_SOURCE_DIR);
}

} // namespace ibn::app
