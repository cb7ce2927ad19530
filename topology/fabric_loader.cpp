#include "topology/fabric_loader.hpp"

#include "sim/error.hpp"
#include "topology/fabric_io.hpp"
#include "topology/ibnetdiscover.hpp"

#include <cctype>
#include <fstream>

namespace ibn::topo {

LoadedFabric load_fabric_any(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open fabric file");
  char first = 0;
  while (in.get(first) && std::isspace(static_cast<unsigned char>(first))) {
  }
  in.close();
  if (first == '{') return {load_fabric_json(path), {}};
  auto r = import_ibnetdiscover_file(path);
  return {std::move(r.fabric), std::move(r.warnings)};
}

} // namespace ibn::topo
