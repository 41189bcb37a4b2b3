#include "program_path.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string_view>
#include <system_error>
#include <vector>

namespace dps::cluster {

std::string program_path(const std::string& name) {
  namespace fs = std::filesystem;
  if (name.find('/') != std::string::npos) return name;
  std::error_code error;
  std::vector<fs::path> folders{fs::read_symlink("/proc/self/exe", error).parent_path()};
#ifdef DPS_PROGRAM_DIRS
  std::string_view built = DPS_PROGRAM_DIRS;  // colon-separated
  while (!built.empty()) {
    const std::size_t end = std::min(built.find(':'), built.size());
    folders.emplace_back(built.substr(0, end));
    built.remove_prefix(std::min(end + 1, built.size()));
  }
#endif
  for (const fs::path& folder : folders)
    if (!folder.empty() && ::access((folder / name).c_str(), X_OK) == 0) return folder / name;
  return name;
}

}  // namespace dps::cluster
