// JobLink: an application run by a cluster's scheduler as one of its jobs (dps-cluster simulates one),
// its side of the socket (job_protocol.hpp). The scheduler answers its resize points in nodes and grants
// the nodes it may hold; the job tells it when it gives nodes back and when it ends.
//
//   dps::JobLink link(fd, 4, [&] { return app.now(); }, [&] { return app.nodes(); });
//   std::size_t size = link.decide(point);   // blocks until the scheduler answers
#pragma once

#include "dps/job_protocol.hpp"

#include "dps/resize_policy.hpp"

#include <cstddef>
#include <functional>

namespace dps {

class JobLink final : public ResizePolicy {
 public:
  // `nodes`: granted at the start; `clock` and `held` read the job's time and node count.
  JobLink(int fd, std::size_t nodes, std::function<double()> clock, std::function<std::size_t()> held)
      : socket_(fd), granted_(nodes), clock_(std::move(clock)), held_(std::move(held)) {}

  std::size_t decide(const ResizePoint& point) override;  // the scheduler's answer
  std::size_t granted() const noexcept { return granted_; }
  void released();  // a node given back, now
  void ended();     // the job is done, now; errors are reported, not thrown (called from a destructor)

 private:
  void tell(const job_protocol::Message& m);
  job_protocol::LineSocket socket_;
  std::size_t granted_;  // nodes the job may hold
  std::function<double()> clock_;
  std::function<std::size_t()> held_;
};

}  // namespace dps
