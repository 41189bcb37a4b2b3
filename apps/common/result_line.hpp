// What an application shows of itself: its program's name, and its last line, one JSON object of its
// figures that tests and benchmarks parse. The run's seconds go under "time_s", or "predicted_s" when
// the application is simulated. dps_application() builds each application twice, NAME and its
// simulated twin NAME-sim, and tells each its name (DPS_PROGRAM) and whether it simulates (DPS_SIM).
//
//   apps::ResultLine line;
//   line.add("n", 2592).add("variant", "owner").seconds(1.5).add("gflops", 12.3456, "%.3f");
//   std::printf("%s\n", line.json().c_str());  // {"n": 2592, "variant": "owner", "time_s": 1.500000, "gflops": 12.346}
#pragma once

#include <dps/trace/json.hpp>

#include <concepts>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#ifndef DPS_PROGRAM
#error "DPS_PROGRAM names the program: dps_application() defines it"
#endif

namespace apps {

inline constexpr const char* kProgram = DPS_PROGRAM;
#ifdef DPS_SIM
inline constexpr const char* kTimeKey = "predicted_s";
#else
inline constexpr const char* kTimeKey = "time_s";
#endif

class ResultLine {
 public:
  template <std::integral T>
    requires(!std::same_as<T, bool>)
  ResultLine& add(std::string_view key, T value) {
    return raw(key, std::to_string(value));
  }
  template <std::same_as<bool> B>
  ResultLine& add(std::string_view key, B value) {
    return raw(key, value ? "true" : "false");
  }
  // A number as `format` (printf's, for one double) writes it.
  ResultLine& add(std::string_view key, double value, const char* format) { return raw(key, formatted(value, format)); }
  ResultLine& add(std::string_view key, std::string_view text) { return raw(key, dps::trace::json::quoted(text)); }
  ResultLine& add(std::string_view key, const char* text) { return add(key, std::string_view(text)); }
  // null when there is none.
  template <class T, class... Format>
  ResultLine& add(std::string_view key, const std::optional<T>& value, Format... format) {
    return value ? add(key, *value, format...) : raw(key, "null");
  }
  ResultLine& add(std::string_view key, const std::vector<ResultLine>& objects) {
    std::string list;
    for (const ResultLine& o : objects) list += (list.empty() ? "" : ", ") + o.json();
    return raw(key, "[" + list + "]");
  }
  template <std::integral T>
  ResultLine& add(std::string_view key, const std::vector<T>& values) {
    std::string list;
    for (const T v : values) list += (list.empty() ? "" : ", ") + std::to_string(v);
    return raw(key, "[" + list + "]");
  }
  ResultLine& add(std::string_view key, const std::vector<double>& values, const char* format) {
    std::string list;
    for (const double v : values) list += (list.empty() ? "" : ", ") + formatted(v, format);
    return raw(key, "[" + list + "]");
  }
  // The run's seconds, real or predicted.
  ResultLine& seconds(double value) { return add(kTimeKey, value, "%.6f"); }

  std::string json() const { return "{" + fields_ + "}"; }

 private:
  ResultLine& raw(std::string_view key, const std::string& value) {
    fields_ += (fields_.empty() ? "" : ", ") + dps::trace::json::quoted(key) + ": " + value;
    return *this;
  }
  static std::string formatted(double value, const char* format) {
    char text[64];
    std::snprintf(text, sizeof text, format, value);
    return text;
  }

  std::string fields_;
};

}  // namespace apps
