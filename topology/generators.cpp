#include "topology/generators.hpp"
namespace ibn::topo {
Registry<GeneratorFactory> builtin_generators() { return Registry<GeneratorFactory>("topology generator"); }
}
