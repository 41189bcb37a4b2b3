// The daemon's state folder, shared with its clients: `address` (HOST:PORT where it listens) and
// `secret` (the cluster's, hex, readable by its owner only). A client holding the folder may submit,
// list and cancel; nobody else can.
#pragma once

#include <dps/net/auth.hpp>

#include <string>

namespace dps::cluster {

class StateFolder {
 public:
  // `given` (--state), else $DPS_SCHEDULER_STATE, else ~/.dps/scheduler.
  explicit StateFolder(std::string given);
  const std::string& path() const noexcept { return path_; }

  // The daemon's side: the folder made, its secret read or made (mode 0600), its address written.
  net::Secret own_secret() const;
  void publish(const std::string& address) const;
  // A client's side; throws std::runtime_error naming the file when there is no daemon's state there.
  std::string address() const;
  net::Secret secret() const;

 private:
  std::string path_;
};

}  // namespace dps::cluster
