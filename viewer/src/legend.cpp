// draw_legend: measure what fits (keeping room for "+N more" when not all do), then paint it.
#include "dps/viewer/legend.hpp"

#include <QFontMetricsF>

namespace dps::viewer {

void draw_legend(QPainter& p, const QRectF& line, const std::vector<LegendEntry>& entries, Swatch swatch,
                 Qt::Alignment align) {
  const QFontMetricsF metrics(p.font());
  const double mark = swatch == Swatch::box ? 10 : 16;
  constexpr double kGap = 4, kSpace = 14;
  const auto more = [&](std::size_t left) { return QString("+%1 more").arg(left); };
  const auto width_of = [&](const LegendEntry& e) { return mark + kGap + metrics.horizontalAdvance(e.name) + kSpace; };
  std::size_t shown = 0;
  double width = 0;
  for (; shown < entries.size(); ++shown) {
    const double item = width_of(entries[shown]);
    const std::size_t left = entries.size() - shown - 1;
    if (width + item + (left ? metrics.horizontalAdvance(more(left)) : 0) > line.width()) break;
    width += item;
  }
  const QString rest = shown < entries.size() ? more(entries.size() - shown) : QString();
  const double total = width + (rest.isEmpty() ? 0 : metrics.horizontalAdvance(rest));
  double x = align & Qt::AlignRight ? line.right() - total : line.left();
  const double middle = line.center().y(), baseline = middle + metrics.ascent() / 2 - 1;
  p.save();
  for (std::size_t k = 0; k < shown; ++k) {
    if (swatch == Swatch::box) {
      p.fillRect(QRectF(x, middle - mark / 2, mark, mark), entries[k].color);
    } else {
      p.setPen(QPen(entries[k].color, 2));
      p.drawLine(QPointF(x, middle), QPointF(x + mark, middle));
    }
    p.setPen(Qt::black);
    p.drawText(QPointF(x + mark + kGap, baseline), entries[k].name);
    x += width_of(entries[k]);
  }
  if (!rest.isEmpty()) {
    p.setPen(QColor(90, 90, 90));
    p.drawText(QPointF(x, baseline), rest);
  }
  p.restore();
}

}  // namespace dps::viewer
