#include "run_image.hpp"

#include "dps/large_memory.hpp"
#include "dps/wire_archive.hpp"

#include <cereal/types/string.hpp>
#include <cereal/types/vector.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace dps::detail {

namespace {

constexpr std::string_view kMagic = "DPS-CHECKPOINT-1";  // the format's name and version
constexpr const char* kFile = "/checkpoint.dps";

// FNV-1a: a file cut short or altered after its rename is refused, not loaded.
std::uint64_t digest(std::string_view bytes) {
  std::uint64_t h = 14695981039346656037ull;
  for (const char c : bytes) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

std::string le64(std::uint64_t v) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<char>(v >> (8 * i));
  return out;
}
std::uint64_t read_le64(std::string_view bytes) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)]);
  return v;
}

[[noreturn]] void failed(const std::string& what, const std::string& path) {
  throw std::runtime_error("disk checkpoint: cannot " + what + " " + path + ": " + std::strerror(errno));
}

void write_all(int fd, std::string_view bytes, const std::string& path) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) failed("write", path);
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace

std::optional<CollectionImage> RunImage::take(std::string_view name) {
  const auto found = std::find_if(collections.begin(), collections.end(), [&](auto& c) { return c.name == name; });
  if (found == collections.end()) return std::nullopt;
  CollectionImage taken = std::move(*found);
  collections.erase(found);
  return taken;
}

void write_run_image(const std::string& dir, const RunImage& image) {
  if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST) failed("create the directory", dir);
  const std::string path = dir + kFile, temporary = path + ".tmp";
  const std::string body = encoded(image);
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) failed("create", temporary);
  try {
    write_all(fd, kMagic, temporary);
    write_all(fd, le64(body.size()), temporary);
    write_all(fd, body, temporary);
    write_all(fd, le64(digest(body)), temporary);
    if (::fsync(fd) != 0) failed("sync", temporary);
  } catch (...) {
    ::close(fd);
    ::unlink(temporary.c_str());
    throw;
  }
  if (::close(fd) != 0) failed("close", temporary);
  if (::rename(temporary.c_str(), path.c_str()) != 0) failed("rename " + temporary + " to", path);
  // The rename itself is durable once the directory is synced.
  if (const int d = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); d >= 0) {
    ::fsync(d);
    ::close(d);
  }
}

RunImage read_run_image(const std::string& dir, std::string_view application) {
  const std::string path = dir + kFile;
  const auto refused = [&](const std::string& why) { return std::invalid_argument("--restart " + dir + ": " + why); };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw refused("no checkpoint there (" + path + ")");
  struct stat info {};
  std::string file;
  if (::fstat(fd, &info) == 0) {
    reserve_large(file, static_cast<std::size_t>(info.st_size));  // one read, pages faulted in by the kernel
    file.resize(static_cast<std::size_t>(info.st_size));
  }
  std::size_t got = 0;
  while (got < file.size()) {
    const ssize_t n = ::read(fd, file.data() + got, file.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  if (got != file.size()) throw refused("cannot read " + path + ": " + std::strerror(errno));
  const std::size_t head = kMagic.size() + 8;
  if (file.size() < head + 8 || std::string_view(file).substr(0, kMagic.size()) != kMagic)
    throw refused(path + " is not a DPS checkpoint");
  const std::uint64_t size = read_le64(std::string_view(file).substr(kMagic.size(), 8));
  if (size != file.size() - head - 8) throw refused(path + " is damaged: it is cut short or has bytes added");
  const std::string_view body = std::string_view(file).substr(head, size);
  if (digest(body) != read_le64(std::string_view(file).substr(head + size)))
    throw refused(path + " is damaged: its checksum differs");
  RunImage image;
  try {
    image = decoded<RunImage>(body);
  } catch (const std::exception& e) {
    throw refused(path + " is damaged: " + e.what());
  }
  if (image.application != application)
    throw refused("the checkpoint there is " + image.application + "'s, not " + std::string(application) + "'s");
  return image;
}

}  // namespace dps::detail
