#include "dps/resize_policy.hpp"

#include <stdexcept>

namespace dps {

std::size_t next_size(ProcessorTopology topology, std::size_t size, std::size_t step) {
  switch (topology) {
    case ProcessorTopology::Arbitrary: return size + step;
    case ProcessorTopology::PowerOfTwo: return size * 2;
    case ProcessorTopology::NearlySquare: {
      std::size_t cols = 1;  // size as rows × cols, cols the largest divisor not above √size
      for (std::size_t c = 1; c * c <= size; ++c)
        if (size % c == 0) cols = c;
      const std::size_t rows = size / cols;
      return rows > cols ? rows * (cols + 1) : (rows + 1) * cols;
    }
  }
  return size;
}

std::size_t ReshapePolicy::decide(const ResizePoint& point) {
  if (point.size == 0) throw std::invalid_argument("dps::ReshapePolicy: a job of no threads");
  seen_[point.size] = point.iteration_seconds;
  if (sweet_spot_ != 0) return sweet_spot_;
  if (previous_ != 0) {
    const double before = seen_.at(previous_);
    if (!(point.iteration_seconds < before * (1 - threshold_))) {  // the growth did not pay: back, and stay
      sweet_spot_ = previous_;
      return sweet_spot_;
    }
  }
  const std::size_t next = next_size(point.size);
  if (next > max_size_) {
    sweet_spot_ = point.size;  // as large as it may grow
    return point.size;
  }
  previous_ = point.size;
  return next;
}

std::unique_ptr<ReshapePolicy> policy_named(const std::string& name, ProcessorTopology topology, std::size_t start,
                                            long max_size, double threshold) {
  if (name.empty()) return nullptr;
  if (name != "reshape") throw std::invalid_argument("--policy expects reshape, got '" + name + "'");
  if (max_size < 0) throw std::invalid_argument("--max-threads must be 1 or more, got " + std::to_string(max_size));
  if (!(threshold >= 0 && threshold < 1)) throw std::invalid_argument("--threshold must be in [0, 1)");
  const std::size_t most = max_size > 0 ? static_cast<std::size_t>(max_size) : 4 * start;
  return std::make_unique<ReshapePolicy>(topology, most, 1, threshold);
}

}  // namespace dps
