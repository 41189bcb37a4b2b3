// Rewrites the golden files of trace_export_test with what the exporters write now. A step taken by
// hand, never by the build or CI (tests/golden/README.md): review the difference before committing it.
#include "golden_exports.hpp"

#include <cstdio>
#include <fstream>
#include <string>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "golden_writer: expects one argument, the folder of the golden files (tests/golden)\n");
    return 2;
  }
  for (const auto& file : dps::trace::golden::kFiles) {
    const std::string path = std::string(argv[1]) + "/" + file.name;
    std::ofstream out(path, std::ios::binary);
    if (!(out << file.produce()).flush()) {
      std::fprintf(stderr, "golden_writer: cannot write %s\n", path.c_str());
      return 1;
    }
    std::printf("wrote %s\n", path.c_str());
  }
  return 0;
}
