// JobProcess: a job's node 0 on the first host it was granted, started through the remote shell (as a
// hostfile's instances are) in a session of its own, so that it outlives a daemon that restarts; its
// standard output and error go to the files the user named. The daemon watches it through a pidfd
// while it is its child, and by its pid once it is not (after a restart).
#pragma once

#include <dps/net/launcher.hpp>

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace dps::cluster {

struct JobLaunch {
  std::vector<std::string> rsh;   // the remote shell's words
  std::string host, folder;       // where node 0 runs, and in which folder
  std::vector<std::string> argv;  // the program (resolved here) and its arguments
  net::Environment env;           // DPS_SECRET among them goes through the shell's standard input
  std::string output, error;      // files, truncated
};

class JobProcess {
 public:
  // Throws std::runtime_error with a one-line reason when it cannot start.
  explicit JobProcess(const JobLaunch& launch);
  // One the daemon started before it restarted: not its child, watched by its pid.
  explicit JobProcess(pid_t pid);
  ~JobProcess();
  JobProcess(const JobProcess&) = delete;
  JobProcess& operator=(const JobProcess&) = delete;

  pid_t pid() const noexcept { return pid_; }
  int watch_fd() const noexcept { return pidfd_; }  // readable once it exited (-1: poll exited())
  // How it ended ("exited with status 1"; "" for a clean exit, or one not the daemon's child), or
  // nullopt while it runs.
  std::optional<std::string> exited();
  void kill();  // its session: node 0 and what it started

 private:
  pid_t pid_ = -1;
  int pidfd_ = -1;
  bool child_ = true;
  std::optional<std::string> ended_;
};

}  // namespace dps::cluster
