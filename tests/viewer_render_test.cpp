// The viewer's drawing, offscreen: the Gantt chart has drawn pixels in the rows of the threads that
// ran, when they ran, and none where they idled; a migrated thread has a row on each node; steps far
// narrower than a pixel still show. The interactive view zooms around the pointer, pans by dragging,
// and two views keep one time axis.
#include <dps/trace/reader.hpp>
#include <dps/viewer/gantt.hpp>
#include <dps/viewer/headless.hpp>
#include <dps/viewer/render.hpp>
#include <gtest/gtest.h>

#include <dps/viewer/trace_view.hpp>

#include <QApplication>
#include <QImage>
#include <QMouseEvent>
#include <QWheelEvent>

#include <memory>

namespace dps::viewer {
namespace {

// Text and widgets need a QApplication: one for the whole run, made before the first test and
// destroyed after the last (a static one would outlive Qt's own statics at exit).
class QtApplication : public ::testing::Environment {
 public:
  void SetUp() override {
    headless();
    app_ = std::make_unique<QApplication>(argc_, argv_);
  }
  void TearDown() override { app_.reset(); }

 private:
  int argc_ = 1;
  char name_[20] = "viewer_render_test";
  char* argv_[2] = {name_, nullptr};
  std::unique_ptr<QApplication> app_;
};
[[maybe_unused]] const auto* const qt_application = ::testing::AddGlobalTestEnvironment(new QtApplication);

// Node 0: master (thread 1) busy [0, 1) and [9, 10); node 1: worker 2 busy [1, 4), then migrated
// to node 2 where it runs [5, 8) as 3000 steps of 1 ms each (sub-pixel at this zoom).
trace::Trace sample() {
  trace::Trace t;
  t.names = {"master", "workers", "split", "leaf", "merge"};
  t.steps.push_back({0, 1, 0, 2, 1, 0, 1});
  t.steps.push_back({1, 2, 1, 3, 1, 1, 4});
  for (int i = 0; i < 3000; ++i) t.steps.push_back({2, 2, 1, 3, 1, 5 + i * 1e-3, 5 + (i + 0.9) * 1e-3});
  t.steps.push_back({0, 1, 0, 4, 1, 9, 10});
  t.changes.push_back({trace::Change::ThreadMigrated, 2, 1, 1, 2, 4.5});
  return t;
}

// How many of row `row`'s pixels between times a and b are not white.
int drawn(const QImage& image, const Gantt& gantt, std::size_t row, double a, double b) {
  const QRectF r = gantt.row_rect(render_gantt_area(gantt, image.size()), row);
  const auto x = [&](double t) { return static_cast<int>(r.left() + t / 10 * r.width()); };
  int count = 0;
  for (int px = x(a) + 2; px < x(b) - 2; ++px)
    if (image.pixelColor(px, static_cast<int>(r.center().y())) != QColor(Qt::white)) ++count;
  return count;
}

TEST(ViewerRender, RowsHaveDrawnPixelsWhereTheirThreadsRan) {
  const trace::Trace t = sample();
  const Gantt gantt(t);
  ASSERT_EQ(gantt.rows().size(), 3u) << "master on node 0, the worker on node 1 and on node 2";
  EXPECT_EQ(gantt.rows()[1].node, 1u);
  EXPECT_EQ(gantt.rows()[2].node, 2u);
  EXPECT_EQ(gantt.rows()[2].label, "workers #2");
  const QImage image = render(t, "sample", QSize(1200, 800));
  const auto width = [&](double a, double b) {
    return static_cast<int>((b - a) / 10 * gantt.row_rect(render_gantt_area(gantt, image.size()), 0).width()) - 4;
  };
  EXPECT_GE(drawn(image, gantt, 0, 0, 1), width(0, 1) - 1) << "master's split";
  EXPECT_EQ(drawn(image, gantt, 0, 1.2, 8.8), 0) << "master idle";
  EXPECT_GE(drawn(image, gantt, 1, 1, 4), width(1, 4) - 1);
  EXPECT_EQ(drawn(image, gantt, 1, 4.6, 10), 0) << "gone from node 1 (its migration mark is at 4.5)";
  EXPECT_GE(drawn(image, gantt, 2, 5, 8), width(5, 8) - 1) << "3000 sub-pixel steps, one mark per pixel";
  EXPECT_EQ(drawn(image, gantt, 2, 0, 4.4), 0);
  EXPECT_DOUBLE_EQ(render_gantt_area(gantt, image.size()).height(), 3 * Gantt::kMaxRow + 1)
      << "three rows take their tallest height and leave the rest to the charts";
}

// The legend: what each color means, the operations by their time (leaf 5.7 s, then split and merge),
// drawn on the title line in their colors.
TEST(ViewerRender, TheLegendNamesTheColorsOnTheTitleLine) {
  const trace::Trace t = sample();
  const Gantt gantt(t);
  ASSERT_EQ(gantt.legend().size(), 3u);
  EXPECT_EQ(t.names[gantt.legend()[0].first], "leaf");
  EXPECT_NEAR(gantt.legend()[0].second, 3 + 3000 * 0.9e-3, 1e-9);
  const QImage image = render(t, "sample", QSize(1200, 700));
  for (const auto& [operation, seconds] : gantt.legend()) {
    int found = 0;
    for (int y = 0; y < 24; ++y)
      for (int x = 300; x < image.width(); ++x) found += image.pixelColor(x, y).rgb() == QColor::fromRgba(gantt.color(operation)).rgb();
    EXPECT_GE(found, 50) << t.names[operation] << ": its swatch";
  }
  trace::Trace many = t;
  for (int k = 0; k < 200; ++k) {
    many.names.push_back("operation " + std::to_string(k));
    many.steps.push_back({0, 1, 0, static_cast<trace::NameId>(many.names.size() - 1), 1, 10.0 + k, 10.5 + k});
  }
  EXPECT_EQ(Gantt(many).legend().size(), 203u);
  EXPECT_NO_THROW(render(many, "many", QSize(1200, 700))) << "a legend too long ends in +N more";
}

TEST(ViewerRender, AStepIsFoundUnderThePointer) {
  const trace::Trace t = sample();
  const Gantt gantt(t);
  const QRectF area(0, 0, 1150, 300);
  const QRectF row1 = gantt.row_rect(area, 1);
  const double x = row1.left() + 2.5 / 10 * row1.width();
  EXPECT_EQ(gantt.step_at(area, 0, 10, QPointF(x, row1.center().y())), std::optional<std::size_t>(1));
  const QRectF row0 = gantt.row_rect(area, 0);
  EXPECT_EQ(gantt.step_at(area, 0, 10, QPointF(x, row0.center().y())), std::nullopt) << "master idles at 2.5 s";
  EXPECT_EQ(gantt.step_at(area, 0, 10, QPointF(10, row0.center().y())), std::nullopt) << "on the labels";
}

TEST(ViewerRender, TheSampleTracesRender) {
  for (const char* name : {"demo-real.dpstrace", "demo-sim.dpstrace"}) {
    const trace::Trace t = trace::read(std::string(DPS_SOURCE_DIR) + "/traces/" + name);
    const Gantt gantt(t);
    ASSERT_GE(gantt.rows().size(), 5u) << name << ": a master and a worker per node";
    const QImage image = render(t, name, QSize(1000, 700));
    long ink = 0;
    for (std::size_t row = 0; row < gantt.rows().size(); ++row) ink += drawn(image, gantt, row, 0, 10);
    EXPECT_GT(ink, 100) << name;
  }
}

TEST(ViewerRender, TheViewZoomsAroundThePointerAndPansByDragging) {
  TraceView view(sample(), "sample");
  view.resize(1150 + 12, 500);
  EXPECT_DOUBLE_EQ(view.from(), 0);
  EXPECT_DOUBLE_EQ(view.to(), 10);
  // The pointer over t = 2.5 s: after one notch in, 2.5 s stays under it and the span is 0.85 as wide.
  const double left = 6 + Gantt::kLabels, width = view.width() - 12 - Gantt::kLabels;
  const QPointF at(left + 0.25 * width, 100);
  QWheelEvent wheel(at, view.mapToGlobal(at), QPoint(), QPoint(0, 120), Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
  QApplication::sendEvent(&view, &wheel);
  EXPECT_NEAR(view.to() - view.from(), 8.5, 1e-9);
  EXPECT_NEAR(view.from() + 0.25 * (view.to() - view.from()), 2.5, 1e-9);
  // Dragging 10 % of the width to the right shows 10 % of the span earlier.
  const double from = view.from(), span = view.to() - view.from();
  QMouseEvent press(QEvent::MouseButtonPress, at, view.mapToGlobal(at), Qt::LeftButton, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(&view, &press);
  const QPointF there = at + QPointF(0.1 * width, 0);
  QMouseEvent move(QEvent::MouseMove, there, view.mapToGlobal(there), Qt::NoButton, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(&view, &move);
  EXPECT_NEAR(view.from(), from - 0.1 * span, 1e-9);
  TraceView other(sample(), "other");
  view.follow(other);
  view.fit();
  EXPECT_DOUBLE_EQ(other.from(), 0);
  EXPECT_DOUBLE_EQ(other.to(), 10);
  const QImage shot = view.grab().toImage();
  EXPECT_NE(shot.pixelColor(static_cast<int>(left + 0.05 * width), 20 + 2 + 12), QColor(Qt::white)) << "master's split";
}

}  // namespace
}  // namespace dps::viewer
