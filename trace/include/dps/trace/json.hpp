// Writing JSON by hand where the trace tools emit it (the summary, Chrome traces) and where the
// applications print their last line: a string escaped and quoted, and a number that JSON accepts.
//
//   std::string line = "{" + dps::trace::json::quoted("instance") + ": " + dps::trace::json::quoted(name) + "}";
#pragma once

#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>

namespace dps::trace::json {

inline std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char u[8];
          std::snprintf(u, sizeof u, "\\u%04x", c);
          out += u;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// Shortest round-tripping form; JSON has no NaN or infinity: those become null.
inline std::string number(double v) {
  if (!std::isfinite(v)) return "null";
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", v);
  return text;
}

}  // namespace dps::trace::json
