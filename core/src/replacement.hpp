// --replace (docs/fault-tolerance.md): once the threads of a failed node are rebuilt on the nodes that
// held their checkpoints, and have handled again what they were sent, node 0 starts a node in the
// failed one's place (the launcher's next slot: a spare host of the hostfile, when it has one) and
// moves them there, so the survivors are not left crowded. It runs on a thread of its own: starting
// a process waits for it to join, and the failure was heard on the network thread.
//
//   detail::Replacement replacement(app);
//   runtime.on_recovered([&](NodeId failed, auto threads) { replacement.request(failed, threads); });
//   replacement.stop();  // before the runtime goes; later requests are dropped
#pragma once

#include "dps/ids.hpp"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace dps {

class Application;

namespace detail {

class Replacement {
 public:
  explicit Replacement(Application& app);
  ~Replacement() { stop(); }
  Replacement(const Replacement&) = delete;
  Replacement& operator=(const Replacement&) = delete;

  void request(NodeId failed, std::vector<std::uint64_t> threads);  // from any thread
  void stop();                                                      // waits for the replacement under way, if any

 private:
  void run();
  void replace(NodeId failed, const std::vector<std::uint64_t>& threads);

  Application& app_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::pair<NodeId, std::vector<std::uint64_t>>> requests_;
  bool stopping_ = false;
  std::thread worker_;  // last: it starts once the rest is ready
};

}  // namespace detail
}  // namespace dps
