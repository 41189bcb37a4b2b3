#include "dps/kernel/job_link.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace dps {

std::size_t JobLink::decide(const ResizePoint& point) {
  const std::size_t nodes = held_();
  if (point.size != nodes)
    throw std::logic_error("a job of the cluster runs one thread per node: it reports " + std::to_string(point.size) +
                           " threads on " + std::to_string(nodes) + " nodes");
  tell({.kind = job_protocol::Message::Kind::Point, .iteration = point.iteration, .nodes = nodes,
        .iteration_s = point.iteration_seconds, .redistribution_s = point.redistribution_seconds, .time = clock_()});
  const auto line = socket_.read_line();
  const auto answer = line ? job_protocol::decode(*line) : std::nullopt;
  if (!answer || answer->kind != job_protocol::Message::Kind::Size || answer->nodes == 0)
    throw std::runtime_error("the scheduler did not answer the resize point");
  if (!answer->hosts.empty()) {
    if (answer->nodes != nodes + answer->hosts.size())
      throw std::runtime_error("the scheduler grew the job from " + std::to_string(nodes) + " to " +
                               std::to_string(answer->nodes) + " nodes on " + std::to_string(answer->hosts.size()) +
                               " hosts");
    grant_(answer->hosts);
  }
  granted_ = std::max(answer->nodes, nodes);  // shrinking: the nodes are given back as they are removed
  return answer->nodes;
}

void JobLink::released(std::string host) {
  job_protocol::Message m{.kind = job_protocol::Message::Kind::Release, .nodes = 1, .time = clock_()};
  if (!host.empty()) m.hosts.push_back(std::move(host));
  tell(m);
  granted_ = std::max(held_(), granted_ - 1);
}

void JobLink::ended() {
  try {
    tell({.kind = job_protocol::Message::Kind::End, .time = clock_()});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "job: %s\n", e.what());
  }
}

void JobLink::tell(const job_protocol::Message& m) {
  if (!socket_.write_line(job_protocol::encode(m))) throw std::runtime_error("the scheduler is gone");
}

}  // namespace dps
