#pragma once
// Parsing JSON text from user files with errors that name the file, the line and column and, for a number
// too large for a double (1e309), the key it belongs to. Every reader of user JSON goes through here.
#include <nlohmann/json.hpp>

#include <string>

namespace ibn {

/// Parses `text` (the content of `source`). Malformed JSON and numbers that overflow a double throw
/// InputError "SOURCE:LINE:COL: LABEL: reason" (a number overflow also names the key path such as
/// $.links[3].length_m).
nlohmann::json parse_json_text(const std::string& text, const std::string& source,
                               const std::string& label = "invalid JSON");

/// Line and column (1-based) of the byte at `offset` (0-based) of `text`.
std::pair<std::size_t, std::size_t> json_line_col(const std::string& text, std::size_t offset);

} // namespace ibn
