// Distributions and layouts: their runs, and who holds what.
#include "dps/layout.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace dps {

Distribution Distribution::blocks(std::vector<std::size_t> counts) {
  if (counts.empty()) throw std::invalid_argument("dps::Distribution: no parts");
  Distribution d;
  for (std::size_t part = 0; part < counts.size(); ++part) {
    if (counts[part] > 0) d.runs_.push_back({d.extent_, counts[part], static_cast<std::uint32_t>(part), 0});
    d.extent_ += counts[part];
  }
  d.counts_ = std::move(counts);
  return d;
}

Distribution Distribution::even(std::size_t extent, std::size_t parts) {
  if (parts == 0) throw std::invalid_argument("dps::Distribution: no parts");
  std::vector<std::size_t> counts(parts);
  for (std::size_t i = 0; i < parts; ++i) counts[i] = extent * (i + 1) / parts - extent * i / parts;
  return blocks(std::move(counts));
}

Distribution Distribution::cyclic(std::size_t extent, std::size_t block, std::size_t parts) {
  if (parts == 0) throw std::invalid_argument("dps::Distribution: no parts");
  if (block == 0) throw std::invalid_argument("dps::Distribution: a cyclic distribution needs a block of 1 or more");
  Distribution d;
  d.extent_ = extent;
  d.block_ = block;
  d.counts_.assign(parts, 0);
  for (std::size_t at = 0, k = 0; at < extent; at += block, ++k) {
    const auto part = static_cast<std::uint32_t>(k % parts);
    const std::size_t length = std::min(block, extent - at);
    d.runs_.push_back({at, length, part, d.counts_[part]});
    d.counts_[part] += length;
  }
  return d;
}

std::size_t Distribution::first(std::size_t part) const {
  if (block_ > 0) throw std::logic_error("dps::Distribution::first: a cyclic part holds several blocks");
  if (part >= counts_.size()) throw std::out_of_range("dps::Distribution::first: no part " + std::to_string(part));
  return std::accumulate(counts_.begin(), counts_.begin() + static_cast<std::ptrdiff_t>(part), std::size_t{0});
}

const Distribution::Run& Distribution::run_at(std::size_t global) const {
  if (global >= extent_) throw std::out_of_range("dps::Distribution: index " + std::to_string(global) + " past " + std::to_string(extent_));
  const auto after = std::upper_bound(runs_.begin(), runs_.end(), global,
                                      [](std::size_t g, const Run& r) { return g < r.global; });
  return *(after - 1);
}

std::string Distribution::describe() const {
  if (block_ > 0)
    return "cyclic " + std::to_string(extent_) + " by " + std::to_string(block_) + " over " + std::to_string(counts_.size());
  std::string text = "blocks ";
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    if (i > 0) text += '/';
    text += std::to_string(counts_[i]);
  }
  return text;
}

Layout::Place Layout::locate(std::size_t row, std::size_t col) const {
  const Distribution::Run& r = rows_.run_at(row);
  const Distribution::Run& c = cols_.run_at(col);
  return {static_cast<std::uint32_t>(r.part * cols_.parts() + c.part), r.local + (row - r.global), c.local + (col - c.global)};
}

std::string Layout::describe() const {
  return "rows " + rows_.describe() + " x cols " + cols_.describe() + (margin_ ? ", margin " + std::to_string(margin_) : "");
}

}  // namespace dps
