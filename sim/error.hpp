#pragma once
// Error types shared by every layer.
//
// InputError: the user's input is wrong (file, flag, key, value). The CLI prints its message and exits 2.
// Anything else that escapes to main() is an internal error: exit 1.
#include <stdexcept>
#include <string>

namespace ibn {

class InputError : public std::runtime_error {
public:
  explicit InputError(const std::string& what) : std::runtime_error(what) {}
};

/// "FILE:LINE: message" — the form every parser uses for errors and warnings.
inline std::string at_line(const std::string& file, std::size_t line, const std::string& msg) {
  return file + ":" + std::to_string(line) + ": " + msg;
}

} // namespace ibn
