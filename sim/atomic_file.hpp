#pragma once
// Atomic result files: nothing the user wrote is lost and no reader sees half a file.
#include <string>

namespace ibn {

/// Writes `content` to `path` atomically: a temporary file in the same folder, flushed, then renamed over
/// the target. Creates missing parent folders. Throws InputError naming the path on failure.
void write_file_atomic(const std::string& path, const std::string& content);

/// Reads a whole file; throws InputError naming the path when it cannot be opened.
std::string read_file(const std::string& path);

} // namespace ibn
