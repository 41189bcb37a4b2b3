// A legend on one line: what each color means, as many entries as fit, then "+N more". The Gantt
// chart's (operations, as filled squares) and the charts' (nodes, as strokes of their lines).
//
//   dps::viewer::draw_legend(painter, QRectF(400, 4, 800, 18), {{Qt::blue, "node 0"}, {Qt::red, "node 1"}},
//                            dps::viewer::Swatch::line, Qt::AlignLeft);
#pragma once

#include <QColor>
#include <QPainter>
#include <QRectF>
#include <QString>

#include <vector>

namespace dps::viewer {

struct LegendEntry {
  QColor color;
  QString name;
};

enum class Swatch { box, line };  // a filled square (a Gantt step), a short stroke (a chart's line)

// Entries in their order from `line`'s left or right edge (`align`: Qt::AlignLeft or AlignRight).
void draw_legend(QPainter& painter, const QRectF& line, const std::vector<LegendEntry>& entries, Swatch swatch,
                 Qt::Alignment align);

}  // namespace dps::viewer
