// Running another program from a benchmark (a peer, or one of ours in its own processes) and reading
// a figure off its last line: "name=1.5" (the peers' style) or "\"name\": 1.5" (JSON).
//
//   const std::string line = run_peer("OPENBLAS_NUM_THREADS=2 ./lapack_lu 4096");
//   double gflops = field(line, "gflops");
#pragma once

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

// The non-empty lines the command printed; throws when it fails.
inline std::vector<std::string> run_lines(const std::string& command) {
  FILE* p = popen(command.c_str(), "r");
  if (!p) throw std::runtime_error("cannot run " + command);
  std::vector<std::string> lines;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p))
    if (std::string line = buf; line.find_first_not_of(" \n") != std::string::npos) lines.push_back(line);
  if (pclose(p) != 0) throw std::runtime_error(command + " failed");
  return lines;
}

// The last non-empty line the command printed.
inline std::string run_peer(const std::string& command) {
  const std::vector<std::string> lines = run_lines(command);
  return lines.empty() ? std::string() : lines.back();
}

inline double field(const std::string& text, const std::string& name) {
  const auto at = text.find(name);
  if (at == std::string::npos) throw std::runtime_error("no " + name + " in '" + text + "'");
  return std::stod(text.substr(text.find_first_of("=:", at) + 1));
}
