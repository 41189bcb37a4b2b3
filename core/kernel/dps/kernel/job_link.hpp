// JobLink: an application run by a cluster's scheduler as one of its jobs (dps-cluster simulates one,
// dps-scheduler runs real ones), its side of the socket (job_protocol.hpp). The scheduler answers its
// resize points in nodes and grants the nodes it may hold (on a real cluster, the hosts of a growth,
// which the backend starts the next nodes on); the job tells it when it gives nodes back and when it
// ends. On a real cluster each resize point names the hosts the job holds, so that a scheduler that
// restarted (the link opened again by the backend) and missed a message knows where it stands. At
// its end a real job says how long its points waited for their answers (its standard error).
//
//   dps::JobLink link(fd, 4, backend);
//   std::size_t size = link.decide(point);   // blocks until the scheduler answers
#pragma once

#include "dps/backend.hpp"
#include "dps/job_protocol.hpp"
#include "dps/resize_policy.hpp"

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dps {

class JobLink final : public ResizePolicy {
 public:
  // `nodes`: granted at the start.
  JobLink(int fd, std::size_t nodes, Backend& backend)
      : socket_(std::make_unique<job_protocol::LineSocket>(fd)), granted_(nodes), backend_(backend) {}

  std::size_t decide(const ResizePoint& point) override;  // the scheduler's answer
  std::size_t granted() const noexcept { return granted_; }
  void released(std::string host);  // a node given back, now (its host on a real cluster, else empty)
  void ended();                     // the job is done, now; errors are reported, not thrown (called from a destructor)

 private:
  // Sends `m`, and reads the answer when one follows; once more on a new link if the scheduler went away.
  std::optional<std::string> exchange(const job_protocol::Message& m, bool answered);
  std::unique_ptr<job_protocol::LineSocket> socket_;
  std::size_t granted_;  // nodes the job may hold
  Backend& backend_;
  std::vector<double> answer_s_;  // on a real cluster, each resize point's wait for the answer
};

}  // namespace dps
