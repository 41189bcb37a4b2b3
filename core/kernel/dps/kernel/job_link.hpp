// JobLink: an application run by a cluster's scheduler as one of its jobs (dps-cluster simulates one,
// dps-scheduler runs real ones), its side of the socket (job_protocol.hpp). The scheduler answers its
// resize points in nodes and grants the nodes it may hold (on a real cluster, the hosts of a growth);
// the job tells it when it gives nodes back and when it ends.
//
//   dps::JobLink link(fd, 4, [&] { return app.now(); }, [&] { return app.nodes(); }, [&](auto hosts) { ... });
//   std::size_t size = link.decide(point);   // blocks until the scheduler answers
#pragma once

#include "dps/job_protocol.hpp"

#include "dps/resize_policy.hpp"

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace dps {

class JobLink final : public ResizePolicy {
 public:
  using Hosts = std::vector<std::string>;
  // `nodes`: granted at the start; `clock` and `held` read the job's time and node count; `grant`
  // takes the hosts a growth was granted on (a real cluster's).
  JobLink(int fd, std::size_t nodes, std::function<double()> clock, std::function<std::size_t()> held,
          std::function<void(Hosts)> grant)
      : socket_(fd), granted_(nodes), clock_(std::move(clock)), held_(std::move(held)), grant_(std::move(grant)) {}

  std::size_t decide(const ResizePoint& point) override;  // the scheduler's answer
  std::size_t granted() const noexcept { return granted_; }
  void released(std::string host);  // a node given back, now (its host on a real cluster, else empty)
  void ended();     // the job is done, now; errors are reported, not thrown (called from a destructor)

 private:
  void tell(const job_protocol::Message& m);
  job_protocol::LineSocket socket_;
  std::size_t granted_;  // nodes the job may hold
  std::function<double()> clock_;
  std::function<std::size_t()> held_;
  std::function<void(Hosts)> grant_;
};

}  // namespace dps
