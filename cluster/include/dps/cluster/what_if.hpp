// WhatIf: a scheduler that asks the simulator before it lets a job grow. It wraps another (FCFS,
// backfilling, a ReSHAPE scenario) and, when that one answers a resize point with a growth, compares
// the job's predicted run time at its size and at the new one (a forecast: dps-plan's predictions by
// job and size) and keeps the job where it is unless the growth cuts the time by more than the
// threshold. ReSHAPE finds a sweet spot by growing past it and shrinking back; this does not go past it.
//
//   dps::cluster::WhatIf guided(*dps::cluster::scheduler_named("pba-pr"), forecast, 0.05);
//   dps::cluster::Simulation(workload, guided).run();
#pragma once

#include "dps/cluster/scheduler.hpp"

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

namespace dps::cluster {

class WhatIf final : public Scheduler {
 public:
  // The job's predicted run time on `nodes`, or nullopt while it is not known: a growth waits for it.
  using Forecast = std::function<std::optional<double>(const Job& job, std::size_t nodes)>;
  WhatIf(Scheduler& inner, Forecast forecast, double threshold = 0.05)
      : inner_(inner), forecast_(std::move(forecast)), threshold_(threshold) {}

  std::string name() const override { return inner_.name(); }
  void schedule(Cluster& cluster) override { inner_.schedule(cluster); }
  std::size_t resize(Cluster& cluster, const Running& job, const ResizePoint& point) override;
  void ended(Cluster& cluster, const Running& job) override { inner_.ended(cluster, job); }

  std::size_t refused() const noexcept { return refused_; }  // growths kept back

 private:
  Scheduler& inner_;
  Forecast forecast_;
  double threshold_;
  std::size_t refused_ = 0;
};

}  // namespace dps::cluster
