// Charts of a trace over time, drawn with QPainter: dynamic efficiency, each node's CPU use, each
// node's traffic, then each of the trace's counters (a cluster's utilization and queue length). The
// viewer draws them under its Gantt chart; `dps-trace plot` into a PNG.
//
//   const auto summary = dps::trace::summarize(dps::trace::read("run.dpstrace"), 400);
//   QImage image = dps::viewer::plot(summary, "run.dpstrace", QSize(1200, 800));
//   image.save("run.png");
#pragma once

#include <dps/trace/statistics.hpp>

#include <QColor>
#include <QImage>
#include <QPainter>
#include <QRectF>
#include <QSize>
#include <QString>

namespace dps::viewer {

QColor node_color(std::uint32_t node);  // one color per node, the same in every chart

enum class Chart { efficiency, cpu, traffic };  // then the counters, in the summary's order
// Margins of the charts inside draw_charts' area: scales on the left, a little room on the right.
inline constexpr double kChartLeft = 70, kChartRight = 12;

// The time span [from, to] of the summary's series across `area`: the three charts stacked with
// their titles and scales (the CPU and traffic charts' titles followed by a legend of the nodes'
// lines), and a time ruler under the last.
void draw_charts(QPainter& painter, const QRectF& area, const trace::Summary& summary, double from, double to);
// Where draw_charts puts chart number `chart` of `charts` (3 + the summary's counters): 0 on the
// bottom edge, the chart's top value on the top edge.
QRectF chart_rect(const QRectF& area, Chart chart, std::size_t charts = 3);
QRectF chart_rect(const QRectF& area, std::size_t chart, std::size_t charts);

// The whole run on a white image, under a title line.
QImage plot(const trace::Summary& summary, const QString& title, QSize size);
QRectF plot_charts_area(QSize size);  // what plot() gives draw_charts

}  // namespace dps::viewer
