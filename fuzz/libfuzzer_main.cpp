// libFuzzer entry for one target, chosen at build time (IBNETSIM_FUZZ_TARGET, see fuzz/CMakeLists.txt).
// A finding aborts (libFuzzer saves the input); InputError is the parser refusing bad input: fine.
#include "fuzz/targets.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const ibn::fuzz::Target* target = ibn::fuzz::find_target(IBNETSIM_FUZZ_TARGET);
  if (!target) {
    std::fprintf(stderr, "no fuzz target named %s\n", IBNETSIM_FUZZ_TARGET);
    std::abort();
  }
  try {
    target->run(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz target %s: exception other than InputError (exit 1 in the CLI): %s\n",
                 target->name, e.what());
    std::abort();
  }
  return 0;
}
