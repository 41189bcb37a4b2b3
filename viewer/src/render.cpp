// render(): the Gantt chart on top, the charts below, the run's figures in the title.
#include "dps/viewer/render.hpp"

#include "dps/viewer/charts.hpp"
#include "dps/viewer/gantt.hpp"

#include <dps/trace/statistics.hpp>

#include <QFontMetricsF>
#include <QPainter>

namespace dps::viewer {

namespace {
constexpr double kTitle = 24, kGanttShare = 0.6;
}

QRectF render_gantt_area(const Gantt& gantt, QSize size) {
  return {8, kTitle + 4, size.width() - 16.0, gantt.fitted_height((size.height() - kTitle) * kGanttShare - 8)};
}

QImage render(const trace::Trace& t, const QString& title, QSize size) {
  const trace::Summary s = trace::summarize(t, 1);
  return render(t, title, size, s.start, s.duration > 0 ? s.end : s.start + 1, Palette(t));
}

QImage render(const trace::Trace& t, const QString& title, QSize size, double from, double to, const Palette& palette) {
  const trace::Summary s = trace::summarize(t, 400);
  QImage image(size, QImage::Format_RGB32);
  image.fill(Qt::white);
  QPainter p(&image);
  p.setPen(Qt::black);
  const QString heading = title + QString::asprintf("   %.6g s, %zu events, dynamic efficiency %.3f", s.duration, t.events(), s.efficiency);
  p.drawText(QPointF(10, 18), heading);
  const Gantt chart(t, palette);
  const double legend_left = 10 + QFontMetricsF(p.font()).horizontalAdvance(heading) + 30;
  chart.draw_legend(p, QRectF(legend_left, 4, size.width() - 10 - legend_left, 18));
  const QRectF gantt = render_gantt_area(chart, size);
  chart.draw(p, gantt, from, to);
  // The charts' time axis under the Gantt chart's.
  const double left = gantt.left() + Gantt::kLabels - kChartLeft, right = gantt.right() + kChartRight;
  draw_charts(p, QRectF(left, gantt.bottom() + 4, right - left, size.height() - gantt.bottom() - 4), s, from, to);
  return image;
}

}  // namespace dps::viewer
