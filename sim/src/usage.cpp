// Timeline: exact integrals of a piecewise-constant level in bins that double in width.
#include "dps/sim/usage.hpp"

#include <algorithm>
#include <cmath>

namespace dps::sim {

void Timeline::set(double now, double level) {
  if (level == level_) return;
  flush(now);
  level_ = level;
}

void Timeline::spread(double from, double to, double amount) {
  if (amount == 0) return;
  total_ += amount;
  if (to > from) {
    add(from, to, amount / (to - from));
    return;
  }
  while (from >= width_ * kBins) widen();  // an instant: all of it in from's bin
  if (bins_.empty()) bins_.assign(kBins, 0.0);
  bins_[static_cast<std::size_t>(from / width_)] += amount;
}

void Timeline::flush(double now) {
  if (now <= since_) return;
  add(since_, now, level_);
  total_ += level_ * (now - since_);
  since_ = now;
}

void Timeline::add(double from, double to, double level) {
  if (level == 0) return;
  while (to > width_ * kBins) widen();
  if (bins_.empty()) bins_.assign(kBins, 0.0);
  auto i = static_cast<std::size_t>(from / width_);
  for (double start = static_cast<double>(i) * width_; start < to && i < kBins; ++i, start += width_) {
    const double overlap = std::min(to, start + width_) - std::max(from, start);
    if (overlap > 0) bins_[i] += level * overlap;
  }
}

void Timeline::widen() {
  if (!bins_.empty()) {
    for (std::size_t i = 0; i < kBins / 2; ++i) bins_[i] = bins_[2 * i] + bins_[2 * i + 1];
    std::fill(bins_.begin() + kBins / 2, bins_.end(), 0.0);
  }
  width_ *= 2;
}

std::vector<double> Timeline::bins(double now, double width) const {
  Timeline copy = *this;  // bring it up to now without changing this one
  copy.flush(now);
  while (copy.width_ < width) copy.widen();
  const auto used = static_cast<std::size_t>(std::ceil(now / width));
  std::vector<double> out(std::min(used, kBins), 0.0);
  if (!copy.bins_.empty()) std::copy_n(copy.bins_.begin(), out.size(), out.begin());
  return out;
}

}  // namespace dps::sim
