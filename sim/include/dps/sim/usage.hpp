// Timeline and Usage: how busy resources were over simulated time. A Timeline integrates a
// piecewise-constant level (cores busy, fraction of a link used) exactly, into a fixed number of
// time bins whose width doubles whenever the run outgrows them, so memory does not grow with the
// run's length. Usage holds four timelines per virtual node.
//
//   sim::Timeline busy;
//   busy.set(0.0, 1.0);                  // one core busy from t = 0
//   busy.set(2.0, 0.0);                  // idle from t = 2
//   busy.total(3.0);                     // 2.0 core-seconds
//   busy.bins(3.0, busy.width());        // the same, per bin
#pragma once

#include <array>
#include <cstddef>
#include <vector>

namespace dps::sim {

class Timeline {
 public:
  static constexpr std::size_t kBins = 256;
  static constexpr double kFirstWidth = 1.0 / 1024;  // seconds; a power of two, so merged widths stay exact

  void set(double now, double level);  // the level from `now` on (now never goes back)
  void spread(double from, double to, double amount);  // `amount` more, evenly over [from, to]
  double level() const noexcept { return level_; }
  double total(double now) const noexcept { return total_ + level_ * (now - since_); }
  double width() const noexcept { return width_; }
  // The width a timeline takes to hold [0, span]: kFirstWidth doubled as often as needed.
  static double width_for(double span) noexcept {
    double width = kFirstWidth;
    while (span > width * kBins) width *= 2;
    return width;
  }
  // Integrals per bin of `width` (this timeline's width times a power of two) from 0 to `now`.
  std::vector<double> bins(double now, double width) const;

 private:
  void flush(double now);
  void add(double from, double to, double level);
  void widen();

  double level_ = 0, since_ = 0, total_ = 0;
  double width_ = kFirstWidth;
  std::vector<double> bins_;  // allocated on the first busy moment
};

class Usage {
 public:
  enum Series : std::size_t {
    StepCores,  // cores running atomic steps
    CommCores,  // cores taken by transfers (cpu_per_send, cpu_per_receive)
    LinkOut,    // fraction of the outgoing bandwidth in use
    LinkIn,     // fraction of the incoming bandwidth in use
    kSeries
  };

  void resize(std::size_t nodes) { nodes_.resize(nodes); }
  std::size_t nodes() const noexcept { return nodes_.size(); }
  void set(std::size_t node, Series s, double now, double level) { nodes_[node][s].set(now, level); }
  void spread(std::size_t node, Series s, double from, double to, double amount) {
    nodes_[node][s].spread(from, to, amount);
  }
  const Timeline& at(std::size_t node, Series s) const { return nodes_[node][s]; }

 private:
  std::vector<std::array<Timeline, kSeries>> nodes_;
};

}  // namespace dps::sim
