// Launcher: starts the instances of the other nodes of an application: the same executable with
// the same arguments, told by its environment which node it is and where node 0 listens.
//
//   LocalLauncher l;                                          // processes on this machine
//   l.start(2, {"/path/to/app", "--n", "64"}, {{"DPS_NODE", "2"}, ...});
//   l.reap(5.0);                                              // at the end: wait, then kill stragglers
#pragma once

#include <string>
#include <sys/types.h>
#include <utility>
#include <vector>

namespace dps::net {

using Environment = std::vector<std::pair<std::string, std::string>>;

class Launcher {
 public:
  virtual ~Launcher() = default;
  // Starts the instance of `node`; throws std::runtime_error when it cannot.
  virtual void start(unsigned node, const std::vector<std::string>& argv, const Environment& env) = 0;
  // Waits up to `timeout` seconds for the instances to exit, then kills what is left.
  virtual void reap(double timeout) = 0;
  virtual void kill(unsigned node) = 0;
};

// Child processes of this one. They die with it (PR_SET_PDEATHSIG), so none is orphaned.
class LocalLauncher final : public Launcher {
 public:
  ~LocalLauncher() override { reap(0); }
  void start(unsigned node, const std::vector<std::string>& argv, const Environment& env) override;
  void reap(double timeout) override;
  void kill(unsigned node) override;

 private:
  std::vector<std::pair<unsigned, pid_t>> children_;
};

// The path of the running executable (what the other instances run).
std::string self_executable();

}  // namespace dps::net
