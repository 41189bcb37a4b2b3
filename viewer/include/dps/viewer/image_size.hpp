// The --size WIDTHxHEIGHT option of the tools that draw images (dps-viewer, dps-trace plot,
// bench-viewer): read, bounded, or a one-line error.
//
//   const QSize size = dps::viewer::image_size("1400x900", QSize(200, 150));
#pragma once

#include <QSize>

#include <string_view>

namespace dps::viewer {

// `text` as WIDTHxHEIGHT, from `least` to 20000x20000; throws std::invalid_argument
// "--size expects WIDTHxHEIGHT from 200x150 to 20000x20000, got '10x10'" otherwise.
QSize image_size(std::string_view text, QSize least);

}  // namespace dps::viewer
