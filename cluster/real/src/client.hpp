// Client: a request to the daemon (submit, queue, cancel) over its socket, after proving the cluster's
// secret (scheduler_link.hpp); the answer's lines up to its "ok", or std::runtime_error with the
// daemon's "error" reason.
//
//   dps::cluster::Client daemon(dps::cluster::StateFolder(""));
//   for (const std::string& line : daemon.ask("queue")) std::puts(line.c_str());
#pragma once

#include "state_folder.hpp"

#include <string>
#include <vector>

namespace dps::cluster {

class Client {
 public:
  explicit Client(const StateFolder& state);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // The lines before "ok", and what follows "ok " on its line last (when something does).
  std::vector<std::string> ask(const std::string& request);

 private:
  int fd_ = -1;
  std::string buffer_;
};

}  // namespace dps::cluster
