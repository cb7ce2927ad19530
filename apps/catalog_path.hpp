#pragma once
// The parts catalog a command uses: --catalog FILE when given, else the default (topology/bom.hpp).
#include <string>

namespace ibn::app {

std::string catalog_path(const std::string& flag);

} // namespace ibn::app
