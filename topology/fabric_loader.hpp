#pragma once
// Loads a fabric from a path: fabric JSON (first non-blank byte '{') or ibnetdiscover text.
#include "topology/fabric.hpp"

#include <string>
#include <vector>

namespace ibn::topo {

struct LoadedFabric {
  Fabric fabric;
  std::vector<std::string> warnings; ///< import warnings (ibnetdiscover), each naming the file and line
};

/// Throws InputError naming the file when it cannot be opened or parsed.
LoadedFabric load_fabric_any(const std::string& path);

} // namespace ibn::topo
