#pragma once
// Loads a fabric from a path given on the command line: JSON (first non-blank byte '{') or ibnetdiscover text.
#include "topology/fabric.hpp"

#include <string>
#include <vector>

namespace ibn::app {

struct LoadedFabric {
  topo::Fabric fabric;
  std::vector<std::string> warnings;
};

LoadedFabric load_fabric_any(const std::string& path);

} // namespace ibn::app
