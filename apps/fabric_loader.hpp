#pragma once
// Loads a fabric from a path given on the command line (see topology/fabric_loader.hpp).
#include "topology/fabric_loader.hpp"

namespace ibn::app {
using topo::load_fabric_any;
using topo::LoadedFabric;
} // namespace ibn::app
