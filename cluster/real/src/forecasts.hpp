// Forecasts: each job's predicted run time by node count, for dps-scheduler --what-if. A worker
// thread, off the daemon's loop, runs the job's -sim program (partial direct execution) alone in a
// simulated cluster of the model, a size at a time, kept at that size; the loop reads what is known.
#pragma once

#include <dps/cluster/job.hpp>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace dps::cluster {

class Forecasts {
 public:
  explicit Forecasts(std::string model);
  ~Forecasts();  // the run in progress ends first
  Forecasts(const Forecasts&) = delete;
  Forecasts& operator=(const Forecasts&) = delete;

  // The job's predicted time on `nodes`; nullopt while not known (it is asked for then) or when its
  // prediction failed (said once on standard error).
  std::optional<double> at(const Job& job, std::size_t nodes);
  void prepare(const Job& job, std::size_t from, std::size_t to);  // asks for these sizes ahead

 private:
  using Key = std::pair<std::uint64_t, std::size_t>;  // job id, nodes
  struct Request {
    Key key;
    std::vector<std::string> command;
  };
  void ask(const Job& job, std::size_t nodes);  // with mu_ held
  void work();

  std::string model_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<Request> requests_;
  std::map<Key, std::optional<double>> known_;  // asked: nullopt until known, or failed
  bool stopping_ = false;
  std::thread worker_;  // last: it starts once the rest is there
};

}  // namespace dps::cluster
