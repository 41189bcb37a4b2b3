// ApplicationProcess: an application job of the cluster simulation, a real DPS program built against
// dps::sim, run as a process of its own with its output in a log file. It simulates itself on the
// nodes it is given and tells the cluster, over a socket (job_protocol.hpp), when it reaches a resize
// point, gives back nodes or ends; the cluster answers its resize points.
#pragma once

#include "dps/job_protocol.hpp"
#include "dps/cluster/job.hpp"

#include <sys/types.h>

#include <memory>
#include <string>

namespace dps::cluster {

class ApplicationProcess {
 public:
  // Starts `job.command` on `nodes` nodes of the model in `model_path`; its output goes to `log`.
  // Throws std::runtime_error when it cannot be started.
  ApplicationProcess(const Job& job, std::size_t nodes, const std::string& model_path, std::string log);
  ~ApplicationProcess();  // kills it if it still runs
  ApplicationProcess(const ApplicationProcess&) = delete;
  ApplicationProcess& operator=(const ApplicationProcess&) = delete;

  // Its next message (blocks). Throws std::runtime_error naming the job when it ends without one,
  // or sends what the protocol does not know.
  job_protocol::Message next();
  void answer(std::size_t nodes);
  void kill();     // at its walltime
  void finish();   // after its end: throws when it exits with a failure

 private:
  [[noreturn]] void failed(const std::string& why);
  std::string last_log_line() const;

  const Job& job_;
  std::string log_;
  pid_t pid_ = -1;
  std::unique_ptr<job_protocol::LineSocket> socket_;
};

}  // namespace dps::cluster
