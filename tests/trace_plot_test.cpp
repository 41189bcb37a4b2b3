// dps-trace plot, end to end: a trace whose dynamic efficiency is known bin by bin becomes a PNG in
// which the efficiency line stands at those heights, and each node's CPU line in its own color.
#include "processes.hpp"

#include <dps/trace/writer.hpp>
#include <dps/viewer/charts.hpp>
#include <gtest/gtest.h>

#include <QImage>

#include <cmath>
#include <optional>

namespace dps::test {
namespace {

// Node 0 busy for 10 s; node 1 busy 2.5 s, its thread removed at 5 s: the efficiency over ten bins
// is 1, 1, 0.75, 0.5, 0.5, then 1 (trace_statistics_test works it out).
void write_trace(const std::string& path) {
  trace::TraceWriter out(path);
  out.info("cores.0", "1");
  out.info("cores.1", "1");
  const trace::NameId workers = out.name("workers"), op = out.name("op");
  out.write(trace::Lifecycle{trace::Change::ThreadAdded, 1, workers, 0, 0, 0});
  out.write(trace::Lifecycle{trace::Change::ThreadAdded, 2, workers, 1, 0, 0});
  out.write(trace::Step{0, 1, workers, op, 1, 0, 10});
  out.write(trace::Step{1, 2, workers, op, 1, 0, 2.5});
  out.write(trace::Lifecycle{trace::Change::ThreadRemoved, 2, workers, 1, 0, 5});
}

// The row of column x within [top, bottom] nearest in color to `color` (an antialiased line covers
// two rows partly), if near enough to be that line.
std::optional<int> line_at(const QImage& image, int x, double top, double bottom, QColor color) {
  int best = -1, best_distance = 1 << 30;
  for (int y = static_cast<int>(top) - 2; y <= static_cast<int>(bottom) + 2; ++y) {
    const QColor c = image.pixelColor(x, y);
    const int d = std::abs(c.red() - color.red()) + std::abs(c.green() - color.green()) + std::abs(c.blue() - color.blue());
    if (d < best_distance) best = y, best_distance = d;
  }
  if (best_distance > 250) return std::nullopt;
  return best;
}

TEST(TracePlot, TheEfficiencyLineStandsAtEachBinsValue) {
  Scratch dir;
  const std::string trace = (dir.dir / "t.dpstrace").string(), png = (dir.dir / "t.png").string();
  write_trace(trace);
  std::string output;
  ASSERT_EQ(shell(std::string(DPS_TRACE) + " plot " + trace + " " + png + " --bins 10 --size 1000x600", output), 0) << output;
  QImage image(QString::fromStdString(png));
  ASSERT_FALSE(image.isNull()) << output;
  ASSERT_EQ(image.size(), QSize(1000, 600));
  const QRectF area = viewer::plot_charts_area(image.size());
  const QRectF chart = viewer::chart_rect(area, viewer::Chart::efficiency);
  auto column = [&](double bin) { return static_cast<int>(chart.left() + (bin + 0.5) / 10 * chart.width()); };
  auto height_of = [&](double bin, const QRectF& r, QColor color) -> double {
    const auto y = line_at(image, column(bin), r.top(), r.bottom(), color);
    if (!y) return -1;
    return (r.bottom() - *y) / r.height();
  };
  const QColor black(20, 20, 20);
  for (auto [bin, value] : {std::pair{0, 1.0}, {2, 0.75}, {3, 0.5}, {4, 0.5}, {7, 1.0}})
    EXPECT_NEAR(height_of(bin, chart, black), value, 0.02) << "bin " << bin;
  const QRectF cpu = viewer::chart_rect(area, viewer::Chart::cpu);
  EXPECT_NEAR(height_of(1, cpu, viewer::node_color(1)), 1.0, 0.02) << "node 1 busy in the second bin";
  EXPECT_NEAR(height_of(7, cpu, viewer::node_color(1)), 0.0, 0.02) << "and idle later";
}

// A counter gets a chart of its own under the others, its line at its values (top: 1.05 × its max).
TEST(TracePlot, ACounterIsChartedUnderTheOthers) {
  Scratch dir;
  const std::string trace = (dir.dir / "c.dpstrace").string(), png = (dir.dir / "c.png").string();
  write_trace(trace);
  {
    trace::TraceWriter out(trace + ".2");
    const trace::NameId workers = out.name("workers"), op = out.name("op"), queued = out.name("queued jobs");
    out.write(trace::Step{0, 1, workers, op, 1, 0, 10});
    out.write(trace::Counter{queued, 8, 0});
    out.write(trace::Counter{queued, 2, 5});
  }
  std::string output;
  ASSERT_EQ(shell(std::string(DPS_TRACE) + " plot " + trace + ".2 " + png + " --bins 10 --size 1000x800", output), 0) << output;
  QImage image(QString::fromStdString(png));
  ASSERT_FALSE(image.isNull()) << output;
  const QRectF chart = viewer::chart_rect(viewer::plot_charts_area(image.size()), 3, 4);
  auto height_of = [&](double bin) -> double {
    const auto y = line_at(image, static_cast<int>(chart.left() + (bin + 0.5) / 10 * chart.width()), chart.top(), chart.bottom(),
                           QColor(20, 20, 20));
    return y ? (chart.bottom() - *y) / chart.height() : -1;
  };
  EXPECT_NEAR(height_of(2), 8 / 8.4, 0.02);
  EXPECT_NEAR(height_of(7), 2 / 8.4, 0.02);
}

TEST(TracePlot, ABadSizeIsOneLineAndNoFile) {
  Scratch dir;
  const std::string trace = (dir.dir / "t.dpstrace").string(), png = (dir.dir / "t.png").string();
  write_trace(trace);
  std::string output;
  EXPECT_EQ(shell(std::string(DPS_TRACE) + " plot " + trace + " " + png + " --size 10x10", output), 2);
  EXPECT_EQ(output, "dps-trace: --size expects WIDTHxHEIGHT from 200x150 to 20000x20000, got '10x10'\n");
  EXPECT_FALSE(std::filesystem::exists(png));
}

}  // namespace
}  // namespace dps::test
