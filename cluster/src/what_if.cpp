#include "dps/cluster/what_if.hpp"

namespace dps::cluster {

std::size_t WhatIf::resize(Cluster& cluster, const Running& job, const ResizePoint& point) {
  const std::size_t target = inner_.resize(cluster, job, point);
  if (target <= point.size) return target;
  const auto now = forecast_(*job.job, point.size), grown = forecast_(*job.job, target);
  if (now && grown && *grown < (1 - threshold_) * *now) return target;
  ++refused_;  // it would not pay, or nobody knows yet
  return point.size;
}

}  // namespace dps::cluster
