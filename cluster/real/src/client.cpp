#include "client.hpp"

#include <dps/job_protocol.hpp>
#include <dps/net/scheduler_link.hpp>

#include <unistd.h>

#include <stdexcept>

namespace dps::cluster {

Client::Client(const StateFolder& state) {
  const std::string address = state.address();  // first: no address says no daemon is there
  fd_ = net::connect_to_scheduler(address, "client", state.secret(), 2);
}

Client::~Client() { ::close(fd_); }

std::vector<std::string> Client::ask(const std::string& request) {
  job_protocol::LineSocket link(::dup(fd_));
  if (!link.write_line(request + "\n")) throw std::runtime_error("the daemon closed the connection");
  std::vector<std::string> lines;
  for (auto line = link.read_line(); line; line = link.read_line()) {
    if (*line == "ok") return lines;
    if (line->starts_with("ok ")) return lines.push_back(line->substr(3)), lines;
    if (line->starts_with("error ")) throw std::runtime_error(line->substr(6));
    lines.push_back(*line);
  }
  throw std::runtime_error("the daemon closed the connection before answering");
}

}  // namespace dps::cluster
