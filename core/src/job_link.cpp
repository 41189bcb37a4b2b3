#include "dps/kernel/job_link.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace dps {

std::size_t JobLink::decide(const ResizePoint& point) {
  const std::size_t nodes = backend_.nodes().size();
  if (point.size != nodes)
    throw std::logic_error("a job of the cluster runs one thread per node: it reports " + std::to_string(point.size) +
                           " threads on " + std::to_string(nodes) + " nodes");
  const auto asked = std::chrono::steady_clock::now();
  const auto line = exchange({.kind = job_protocol::Message::Kind::Point,
                              .iteration = point.iteration,
                              .nodes = nodes,
                              .iteration_s = point.iteration_seconds,
                              .redistribution_s = point.redistribution_seconds,
                              .time = backend_.now(),
                              .hosts = backend_.held_hosts()},
                             true);
  if (!backend_.simulation())
    answer_s_.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - asked).count());
  const auto answer = line ? job_protocol::decode(*line) : std::nullopt;
  if (!answer || answer->kind != job_protocol::Message::Kind::Size || answer->nodes == 0)
    throw std::runtime_error("the scheduler did not answer the resize point");
  if (!answer->hosts.empty()) {
    if (answer->nodes != nodes + answer->hosts.size())
      throw std::runtime_error("the scheduler grew the job from " + std::to_string(nodes) + " to " +
                               std::to_string(answer->nodes) + " nodes on " + std::to_string(answer->hosts.size()) +
                               " hosts");
    backend_.grant_hosts(answer->hosts);
  }
  granted_ = std::max(answer->nodes, nodes);  // shrinking: the nodes are given back as they are removed
  return answer->nodes;
}

void JobLink::released(std::string host) {
  job_protocol::Message m{.kind = job_protocol::Message::Kind::Release, .nodes = 1, .time = backend_.now()};
  if (!host.empty()) m.hosts.push_back(std::move(host));
  exchange(m, false);
  granted_ = std::max(backend_.nodes().size(), granted_ - 1);
}

void JobLink::ended() {
  try {
    exchange({.kind = job_protocol::Message::Kind::End, .time = backend_.now()}, false);
    if (!answer_s_.empty()) {  // its last words: the waits are sorted in place
      std::sort(answer_s_.begin(), answer_s_.end());
      std::fprintf(stderr, "dps: the scheduler answered %zu resize points in %.3f ms (median), %.3f ms at most\n",
                   answer_s_.size(), 1e3 * answer_s_[answer_s_.size() / 2], 1e3 * answer_s_.back());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "job: %s\n", e.what());
  }
}

std::optional<std::string> JobLink::exchange(const job_protocol::Message& m, bool answered) {
  const std::string line = job_protocol::encode(m);
  for (int attempt = 0;; ++attempt) {
    if (socket_->write_line(line)) {
      if (!answered) return std::nullopt;
      if (auto answer = socket_->read_line()) return answer;
    }
    const int fd = attempt == 0 ? backend_.scheduler_socket() : -1;
    if (fd < 0) throw std::runtime_error("the scheduler is gone");
    socket_ = std::make_unique<job_protocol::LineSocket>(fd);
  }
}

}  // namespace dps
