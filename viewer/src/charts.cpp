// Charts: panels of series over time, a shared time ruler.
#include "dps/viewer/charts.hpp"

#include "dps/viewer/legend.hpp"

#include <QFontMetricsF>
#include <QPainterPath>

#include <algorithm>
#include <cmath>
#include <vector>

namespace dps::viewer {

namespace {

constexpr double kGap = 30, kRuler = 22;
constexpr double kHeadroom = 4;  // between a chart's top value and its frame: a full line stays visible

// A round step for about `count` ticks over `span`: 1, 2 or 5 times a power of ten.
double tick_step(double span, int count) {
  const double raw = span / std::max(1, count), power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (raw <= m * power) return m * power;
  return 10 * power;
}

QString seconds_label(double t, double step) {
  const int decimals = std::clamp(static_cast<int>(-std::floor(std::log10(step))), 0, 9);
  return QString::number(t, 'f', decimals) + " s";
}

struct Panel {
  QString title;
  double top_value;  // the value at the panel's top edge
  QString unit;
  bool per_node = false;  // a line per node, in node_color: a legend names them
};

// One series as a step line: bin i covers [start + i·bin, start + (i+1)·bin).
void draw_series(QPainter& p, const QRectF& r, const std::vector<double>& values, const trace::Summary& s, double from,
                 double to, double top, const QColor& color) {
  if (values.empty() || to <= from) return;
  QPainterPath path;
  const auto x = [&](double t) { return r.left() + (t - from) / (to - from) * r.width(); };
  const auto y = [&](double v) { return r.bottom() - std::clamp(v / top, 0.0, 1.0) * r.height(); };
  bool started = false;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double t0 = s.start + s.bin * static_cast<double>(i), t1 = t0 + s.bin;
    if (t1 < from || t0 > to) continue;
    const QPointF a(x(std::max(t0, from)), y(values[i])), b(x(std::min(t1, to)), y(values[i]));
    if (!started) {
      path.moveTo(a);
      started = true;
    } else {
      path.lineTo(a);
    }
    path.lineTo(b);
  }
  // A one-pixel pen without antialiasing: Qt draws it with its cosmetic line rasterizer; a wider
  // one is stroked into a polygon and filled, ten times slower on hundreds of bins. A step line is
  // horizontal and vertical segments: crisp without antialiasing.
  p.setRenderHint(QPainter::Antialiasing, false);
  p.setPen(QPen(color, 1.0));
  p.setBrush(Qt::NoBrush);
  p.drawPath(path);
}

void draw_frame(QPainter& p, const QRectF& r, const Panel& panel, const trace::Summary& s) {
  p.setPen(QPen(QColor(200, 200, 200), 1));
  p.setBrush(Qt::NoBrush);
  p.drawRect(r.adjusted(0, -kHeadroom, 0, 0));
  p.drawLine(QPointF(r.left(), r.center().y()), QPointF(r.right(), r.center().y()));
  p.setPen(Qt::black);
  const QFontMetricsF m(p.font());
  const double baseline = r.top() - kHeadroom - 5;
  p.drawText(QPointF(r.left(), baseline), panel.title);
  if (panel.per_node) {
    std::vector<LegendEntry> nodes;
    for (const auto& n : s.nodes) nodes.push_back({node_color(n.node), "node " + QString::number(n.node)});
    const double left = r.left() + m.horizontalAdvance(panel.title) + 24;
    draw_legend(p, QRectF(left, baseline - m.ascent() / 2 - m.height() / 2 + 1, r.right() - left, m.height()), nodes,
                Swatch::line, Qt::AlignLeft);
  }
  const QString top = QString::number(panel.top_value, 'g', 3) + panel.unit;
  p.drawText(QPointF(r.left() - 6 - m.horizontalAdvance(top), r.top() + m.ascent() / 2), top);
  p.drawText(QPointF(r.left() - 6 - m.horizontalAdvance("0"), r.bottom() + m.ascent() / 2 - 2), "0");
}

void draw_ruler(QPainter& p, const QRectF& r, double from, double to) {
  const double step = tick_step(to - from, static_cast<int>(r.width() / 90));
  p.setPen(Qt::black);
  const QFontMetricsF m(p.font());
  for (double t = std::ceil(from / step) * step; t <= to + step * 1e-9; t += step) {
    const double x = r.left() + (t - from) / (to - from) * r.width();
    p.drawLine(QPointF(x, r.bottom()), QPointF(x, r.bottom() + 4));
    const QString label = seconds_label(t, step);
    p.drawText(QPointF(x - m.horizontalAdvance(label) / 2, r.bottom() + 4 + m.ascent()), label);
  }
}

}  // namespace

QColor node_color(std::uint32_t node) {
  return QColor::fromHslF(std::fmod(0.61 * node + 0.58, 1.0), 0.65, 0.45);
}

void draw_charts(QPainter& p, const QRectF& area, const trace::Summary& s, double from, double to) {
  p.save();
  p.setRenderHint(QPainter::Antialiasing);
  double traffic = 0;
  for (const auto& n : s.nodes)
    for (std::size_t i = 0; i < n.out_over_time.size(); ++i)
      traffic = std::max({traffic, n.out_over_time[i], n.in_over_time[i]});
  const double mb = traffic > 0 ? traffic / 1e6 * 1.05 : 1.0;
  std::vector<Panel> panels{{"dynamic efficiency", 1.0, ""},
                            {"CPU use per node (1: all its cores)", 1.0, "", true},
                            {"traffic per node (sent)", mb, " MB/s", true}};
  for (const trace::CounterSummary& c : s.counters)
    panels.push_back({QString::fromStdString(c.name), c.max > 0 ? c.max * 1.05 : 1.0, ""});
  const std::size_t count = panels.size();
  for (std::size_t k = 0; k < count; ++k) {
    const QRectF r = chart_rect(area, k, count);
    draw_frame(p, r, panels[k], s);
    if (k >= 3) draw_series(p, r, s.counters[k - 3].over_time, s, from, to, panels[k].top_value, QColor(20, 20, 20));
    if (k == 0) draw_series(p, r, s.efficiency_over_time, s, from, to, 1.0, QColor(20, 20, 20));
    for (const auto& n : s.nodes) {
      if (k == 1) draw_series(p, r, n.cpu_over_time, s, from, to, 1.0, node_color(n.node));
      if (k == 2) {
        std::vector<double> megabytes(n.out_over_time);
        for (double& v : megabytes) v /= 1e6;
        draw_series(p, r, megabytes, s, from, to, mb, node_color(n.node));
      }
    }
    if (k + 1 == count) draw_ruler(p, r, from, to);
  }
  p.restore();
}

QRectF chart_rect(const QRectF& area, Chart chart, std::size_t charts) {
  return chart_rect(area, static_cast<std::size_t>(chart), charts);
}

QRectF chart_rect(const QRectF& area, std::size_t chart, std::size_t charts) {
  const double n = static_cast<double>(charts), height = (area.height() - kRuler - n * kGap) / n;
  const double k = static_cast<double>(chart);
  return {area.left() + kChartLeft, area.top() + kGap + k * (height + kGap), area.width() - kChartLeft - kChartRight, height};
}

QRectF plot_charts_area(QSize size) { return {0, 24, static_cast<double>(size.width()), size.height() - 24.0}; }

QImage plot(const trace::Summary& s, const QString& title, QSize size) {
  QImage image(size, QImage::Format_RGB32);
  image.fill(Qt::white);
  QPainter p(&image);
  p.setPen(Qt::black);
  p.drawText(QPointF(10, 18), title + QString::asprintf("   %.6g s, dynamic efficiency %.3f", s.duration, s.efficiency));
  const double to = s.duration > 0 ? s.end : s.start + 1;
  draw_charts(p, plot_charts_area(size), s, s.start, to);
  return image;
}

}  // namespace dps::viewer
