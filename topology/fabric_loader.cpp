#include "topology/fabric_loader.hpp"

#include "sim/error.hpp"
#include "topology/fabric_io.hpp"
#include "topology/ibnetdiscover.hpp"

#include <cctype>
#include <filesystem>
#include <fstream>

namespace ibn::topo {

LoadedFabric load_fabric_any(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(path + ": is a folder, not a fabric file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open fabric file");
  char first = 0;
  while (in.get(first) && std::isspace(static_cast<unsigned char>(first))) {
  }
  in.close();
  if (first == '[')
    throw InputError(path + ": a JSON array; a fabric file is a JSON object ({\"nodes\": [...], \"links\": [...]}, "
                            "docs/topology.md) or an ibnetdiscover output");
  if (first == '{') {
    LoadedFabric out;
    out.fabric = load_fabric_json(path, &out.warnings);
    return out;
  }
  auto r = import_ibnetdiscover_file(path);
  return {std::move(r.fabric), std::move(r.warnings)};
}

} // namespace ibn::topo
