// image_size: two whole numbers around an 'x'.
#include "dps/viewer/image_size.hpp"

#include <charconv>
#include <stdexcept>
#include <string>

namespace dps::viewer {

QSize image_size(std::string_view text, QSize least) {
  constexpr int kMost = 20000;
  const auto whole = [](std::string_view s, int& value, int low) {
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    return ec == std::errc() && end == s.data() + s.size() && value >= low && value <= kMost;
  };
  const auto x = text.find('x');
  int width = 0, height = 0;
  if (x == std::string_view::npos || !whole(text.substr(0, x), width, least.width()) ||
      !whole(text.substr(x + 1), height, least.height()))
    throw std::invalid_argument("--size expects WIDTHxHEIGHT from " + std::to_string(least.width()) + "x" +
                                std::to_string(least.height()) + " to 20000x20000, got '" + std::string(text) + "'");
  return {width, height};
}

}  // namespace dps::viewer
