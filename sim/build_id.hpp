#pragma once
// The identity of the running binary: the GNU build-id the linker writes into the executable (a hash of
// its contents), as hex; "" when the executable has none. kVersion names a release; the build-id tells
// two builds of it apart, so that results checkpointed by one build are not reused by another whose
// models may differ (analysis/points.cpp, analysis/segments.cpp).
#include <string>

namespace ibn {

const std::string& build_id();

} // namespace ibn
