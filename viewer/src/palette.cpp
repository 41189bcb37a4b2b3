// Palette: the k-th name added takes the k-th color of a golden-ratio walk around the hue circle, in
// three shades, so that names added one after the other differ in hue and close hues differ in shade.
#include "dps/viewer/palette.hpp"

#include <QColor>

#include <algorithm>
#include <cmath>
#include <vector>

namespace dps::viewer {

namespace {

QRgb nth_color(std::size_t k) {
  struct Shade {
    double saturation, value;
  };
  static constexpr Shade kShades[] = {{0.55, 0.88}, {0.75, 0.68}, {0.35, 0.95}};
  const double hue = std::fmod(0.13 + 0.618033988749895 * static_cast<double>(k), 1.0);
  const Shade shade = kShades[k % 3];
  const auto f = [](double v) { return static_cast<float>(v); };
  return QColor::fromHsvF(f(hue), f(shade.saturation), f(shade.value)).rgba();
}

}  // namespace

void Palette::add(const trace::Trace& trace) {
  std::vector<bool> used(trace.names.size(), false);
  for (const trace::Step& s : trace.steps) used[s.operation] = true;
  std::vector<std::string_view> fresh;
  for (std::size_t id = 0; id < used.size(); ++id)
    if (used[id] && !colors_.contains(std::string_view(trace.names[id]))) fresh.push_back(trace.names[id]);
  std::sort(fresh.begin(), fresh.end());
  fresh.erase(std::unique(fresh.begin(), fresh.end()), fresh.end());
  for (std::string_view name : fresh) colors_.emplace(std::string(name), nth_color(colors_.size()));
}

QRgb Palette::color(std::string_view operation) const {
  const auto it = colors_.find(operation);
  return it == colors_.end() ? kUnknown : it->second;
}

}  // namespace dps::viewer
