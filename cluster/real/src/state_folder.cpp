#include "state_folder.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace dps::cluster {

namespace {

std::string first_line(const std::string& file, const std::string& what) {
  std::ifstream in(file);
  std::string line;
  if (!in || !std::getline(in, line) || line.empty())
    throw std::runtime_error("no " + what + " in " + file + ": is dps-scheduler running with this --state?");
  return line;
}

}  // namespace

StateFolder::StateFolder(std::string given) : path_(std::move(given)) {
  if (!path_.empty()) return;
  if (const char* told = std::getenv("DPS_SCHEDULER_STATE"); told && *told)
    path_ = told;
  else if (const char* home = std::getenv("HOME"); home && *home)
    path_ = std::string(home) + "/.dps/scheduler";
  else
    throw std::invalid_argument("no state folder: give --state, or set DPS_SCHEDULER_STATE or HOME");
}

net::Secret StateFolder::own_secret() const {
  std::filesystem::create_directories(path_);
  const std::string file = path_ + "/secret";
  if (std::filesystem::exists(file)) return net::Secret::from_hex(first_line(file, "secret"));
  const net::Secret secret = net::Secret::generate();
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  const std::string text = secret.hex() + "\n";
  if (fd < 0 || ::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size()))
    throw std::runtime_error("cannot write " + file);
  ::close(fd);
  return secret;
}

void StateFolder::publish(const std::string& address) const {
  const std::string file = path_ + "/address", next = file + ".new";
  std::ofstream(next) << address << "\n";
  std::filesystem::rename(next, file);  // a client reads the old address or the new, never half of one
}

std::string StateFolder::address() const { return first_line(path_ + "/address", "daemon's address"); }

net::Secret StateFolder::secret() const {
  try {
    return net::Secret::from_hex(first_line(path_ + "/secret", "cluster secret"));
  } catch (const std::invalid_argument&) {
    throw std::runtime_error(path_ + "/secret does not hold a secret (64 hex digits)");
  }
}

}  // namespace dps::cluster
