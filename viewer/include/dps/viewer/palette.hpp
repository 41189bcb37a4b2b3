// Palette: one color per operation name, shared by every trace on screen, so that an operation is
// painted alike in a real run and in its simulation. Names take colors in the order they are added,
// each batch in name order: a trace's colors do not depend on the order of its events, and names
// added later (by a second trace, or a trace that grows) leave the colors given before as they were.
//
//   dps::viewer::Palette palette;
//   palette.add(real);
//   palette.add(simulated);             // "gather" keeps the color it has in `real`
//   QRgb c = palette.color("gather");
#pragma once

#include <dps/trace/records.hpp>

#include <QRgb>

#include <string>
#include <string_view>
#include <unordered_map>

namespace dps::viewer {

class Palette {
 public:
  static constexpr QRgb kUnknown = 0xFFA0A0A0;  // a name never added: gray

  Palette() = default;
  explicit Palette(const trace::Trace& trace) { add(trace); }  // one trace's colors

  void add(const trace::Trace& trace);  // the names of its steps' operations
  QRgb color(std::string_view operation) const;
  std::size_t size() const noexcept { return colors_.size(); }

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, QRgb, Hash, std::equal_to<>> colors_;
};

}  // namespace dps::viewer
