// A folder of its own for a test's files, removed at the end: tests that run side by side (ctest -j,
// several checkouts) do not share their files.
//
//   const Scratch scratch;
//   const auto hosts = scratch.write("hosts", "n1\nn2\n");
//   EXPECT_EQ(scratch.read("out.json"), "...");
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace dps::test {

struct Scratch {
  std::filesystem::path dir;
  Scratch() {
    char pattern[] = "/tmp/dps-test-XXXXXX";
    if (!::mkdtemp(pattern)) throw std::runtime_error("cannot make a folder under /tmp");
    dir = pattern;
  }
  ~Scratch() { std::filesystem::remove_all(dir); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  std::filesystem::path write(const std::string& name, const std::string& text, bool executable = false) const {
    const std::filesystem::path p = dir / name;
    std::ofstream(p) << text;
    if (executable) std::filesystem::permissions(p, std::filesystem::perms::owner_all, std::filesystem::perm_options::add);
    return p;
  }
  std::string read(const std::string& name) const {
    std::ifstream in(dir / name);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
};

// The last line that is not empty of a program's output: its JSON, by the project's convention.
inline std::string last_line(const std::string& text) {
  std::istringstream in(text);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

}  // namespace dps::test
