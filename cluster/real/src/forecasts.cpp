#include "forecasts.hpp"

#include <dps/cluster/schedulers.hpp>
#include <dps/cluster/simulation.hpp>

#include <cstdio>
#include <exception>

namespace dps::cluster {

Forecasts::Forecasts(std::string model) : model_(std::move(model)), worker_([this] { work(); }) {}

Forecasts::~Forecasts() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  worker_.join();
}

void Forecasts::ask(const Job& job, std::size_t nodes) {
  const Key key{job.id, nodes};
  if (known_.contains(key)) return;
  known_[key] = std::nullopt;
  std::vector<std::string> command = job.command;
  command.front() += "-sim";  // every application builds PROGRAM and PROGRAM-sim
  command.emplace_back("--pdexec");
  requests_.push_back({key, std::move(command)});
  wake_.notify_all();
}

std::optional<double> Forecasts::at(const Job& job, std::size_t nodes) {
  std::lock_guard lock(mu_);
  ask(job, nodes);
  return known_[{job.id, nodes}];
}

void Forecasts::prepare(const Job& job, std::size_t from, std::size_t to) {
  std::lock_guard lock(mu_);
  for (std::size_t n = from; n <= to; ++n) ask(job, n);
}

void Forecasts::work() {
  for (;;) {
    Request r;
    {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [&] { return stopping_ || !requests_.empty(); });
      if (stopping_) return;
      r = std::move(requests_.front());
      requests_.pop_front();
    }
    std::optional<double> time;
    try {  // the job alone on a simulated cluster of its size, kept at it: its own resize points answered
      Workload alone{.jobs = {Job{.id = r.key.first,
                                  .kind = JobKind::Application,
                                  .size = r.key.second,
                                  .walltime = 1e9,
                                  .resizable = false,
                                  .command = r.command}},
                     .nodes = r.key.second,
                     .classes = {{"normal", 0}}};
      const auto keep = scheduler_named("fcfs");
      time = Simulation(alone, *keep, {.model = model_}).run().jobs.front().execution();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "dps-scheduler: what-if: job %llu: %s\n", static_cast<unsigned long long>(r.key.first),
                   e.what());
    }
    std::lock_guard lock(mu_);
    known_[r.key] = time;
  }
}

}  // namespace dps::cluster
