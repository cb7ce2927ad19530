#pragma once
// Escaping text for HTML and SVG/XML (the HTML reports, the experiment's SVG charts): & < > " ' as entities,
// valid in element content and in quoted attribute values of both.
#include <string>
#include <string_view>

namespace ibn {

inline std::string markup_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&#39;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

} // namespace ibn
