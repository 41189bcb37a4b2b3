// The viewer's drawing, offscreen: the Gantt chart has drawn pixels in the rows of the threads that
// ran, when they ran, and none where they idled; a migrated thread has a row on each node; steps far
// narrower than a pixel still show; an operation has one color in every trace on screen; the CPU and
// traffic charts name their nodes' lines. The interactive view zooms around the pointer, pans by
// dragging, and two views keep one time axis. A trace without its end mark opens, titled partial;
// one that grows is read again and redrawn.
#include <dps/trace/reader.hpp>
#include <dps/trace/statistics.hpp>
#include <dps/trace/writer.hpp>
#include <dps/viewer/charts.hpp>
#include <dps/viewer/gantt.hpp>
#include <dps/viewer/headless.hpp>
#include <dps/viewer/live_trace.hpp>
#include <dps/viewer/palette.hpp>
#include <dps/viewer/render.hpp>
#include <gtest/gtest.h>

#include <dps/viewer/trace_view.hpp>

#include <QApplication>
#include <QDeadlineTimer>
#include <QImage>
#include <QMouseEvent>
#include <QWheelEvent>

#include <stdlib.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <string>

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

// The id of `name` in `t`.
trace::NameId id_of(const trace::Trace& t, const std::string& name) {
  return static_cast<trace::NameId>(std::find(t.names.begin(), t.names.end(), name) - t.names.begin());
}

// A real run and its simulation name their operations in other orders (the ids differ, and which
// step comes first): one palette gives each name one color in both, and different names different
// colors; the order of a trace's events does not change its colors.
TEST(ViewerPalette, AnOperationHasOneColorInEveryTrace) {
  const trace::Trace real = sample();
  trace::Trace simulated;
  simulated.names = {"workers", "merge", "extra", "leaf", "master", "split"};
  simulated.steps.push_back({0, 1, 4, 1, 1, 0, 1});  // merge first
  simulated.steps.push_back({1, 2, 0, 3, 1, 1, 2});
  simulated.steps.push_back({0, 1, 4, 2, 1, 2, 3});
  simulated.steps.push_back({0, 1, 4, 5, 1, 3, 4});
  Palette palette;
  palette.add(real);
  palette.add(simulated);
  const Gantt above(real, palette), below(simulated, palette);
  std::set<QRgb> colors;
  for (const char* name : {"split", "leaf", "merge"}) {
    EXPECT_EQ(above.color(id_of(real, name)), below.color(id_of(simulated, name))) << name;
    colors.insert(above.color(id_of(real, name)));
  }
  colors.insert(below.color(id_of(simulated, "extra")));
  EXPECT_EQ(colors.size(), 4u) << "four operations, four colors";
  EXPECT_NE(palette.color("extra"), Palette::kUnknown);

  trace::Trace reversed = real;  // the same operations, their steps the other way round
  std::reverse(reversed.steps.begin(), reversed.steps.end());
  Palette alone, backwards;
  alone.add(real);
  backwards.add(reversed);
  for (const char* name : {"split", "leaf", "merge"}) EXPECT_EQ(alone.color(name), backwards.color(name)) << name;
  EXPECT_EQ(palette.color("leaf"), alone.color("leaf")) << "a second trace leaves the first one's colors";
}

// A directory of its own for a test's files, removed at the end.
struct Scratch {
  std::filesystem::path dir;
  Scratch() {
    char pattern[] = "/tmp/dps-viewer-test-XXXXXX";
    dir = ::mkdtemp(pattern);
  }
  ~Scratch() { std::filesystem::remove_all(dir); }
  std::string file(const char* name) const { return (dir / name).string(); }
};

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, std::string_view bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A run that crashed before its end mark, or still runs: every event it wrote shows, the title says
// partial; the names of a trace written with namespaces read as users say them. A file that is not
// a trace is still refused.
TEST(LiveTrace, ATraceWithoutItsEndMarkOpensAsPartial) {
  Scratch scratch;
  const std::string sample = std::string(DPS_SOURCE_DIR) + "/traces/demo-real.dpstrace";
  const std::string cut = scratch.file("cut.dpstrace");
  const std::string whole = bytes_of(sample);
  write_bytes(cut, std::string_view(whole).substr(0, whole.size() - 16));  // without the end mark
  const LiveTrace complete(QString::fromStdString(sample));
  const LiveTrace partial(QString::fromStdString(cut));
  EXPECT_FALSE(complete.partial());
  EXPECT_EQ(complete.title(), QString::fromStdString(sample));
  EXPECT_TRUE(partial.partial());
  EXPECT_EQ(partial.title(), QString::fromStdString(cut) + " (partial)");
  EXPECT_EQ(partial.trace()->events(), complete.trace()->events());
  for (const trace::Step& s : partial.trace()->steps)
    EXPECT_EQ(partial.trace()->names[s.operation].find("::"), std::string::npos) << partial.trace()->names[s.operation];
  const Gantt gantt(*partial.trace());
  const QImage image = render(*partial.trace(), partial.title(), QSize(1000, 700));
  long ink = 0;
  for (std::size_t row = 0; row < gantt.rows().size(); ++row) ink += drawn(image, gantt, row, 0, 10);
  EXPECT_GT(ink, 100);
  EXPECT_THROW(LiveTrace(QString::fromStdString(std::string(DPS_SOURCE_DIR) + "/CMakeLists.txt")), trace::TraceError);
}

// Steps [k, k + 1) of thread 1, k from `first` to `last` - 1, then a flush: a block in the file.
void steps(trace::TraceWriter& out, int first, int last) {
  const trace::NameId workers = out.name("workers"), work = out.name("work");
  for (int k = first; k < last; ++k) out.write(trace::Step{0, 1, workers, work, 1, 1.0 * k, k + 1.0});
  out.flush();
}

// A run writes its trace while the viewer shows it: refresh() reads the blocks written since, and
// nothing when none were; the end mark ends "partial". A file damaged meanwhile leaves the trace.
TEST(LiveTrace, AGrowingTraceIsReadAgain) {
  Scratch scratch;
  const std::string path = scratch.file("run.dpstrace");
  trace::TraceWriter out(path);
  steps(out, 0, 10);
  LiveTrace live(QString::fromStdString(path));
  EXPECT_TRUE(live.partial());
  EXPECT_EQ(live.trace()->events(), 10u);
  EXPECT_FALSE(live.refresh()) << "nothing new";
  steps(out, 10, 25);
  EXPECT_TRUE(live.refresh());
  EXPECT_EQ(live.trace()->events(), 25u);
  EXPECT_TRUE(live.partial());
  out.close();
  EXPECT_TRUE(live.refresh());
  EXPECT_EQ(live.trace()->events(), 25u);
  EXPECT_FALSE(live.partial()) << "the end mark is there";
  EXPECT_TRUE(live.error().isEmpty());
  write_bytes(path, "not a trace any more");
  EXPECT_FALSE(live.refresh());
  EXPECT_EQ(live.trace()->events(), 25u) << "the last trace read stays";
  EXPECT_TRUE(live.error().contains("not a DPS trace")) << live.error().toStdString();
}

// watch(): the file's growth is noticed without being asked (the file system's notice, or the poll).
TEST(LiveTrace, AWatchedTraceSaysWhenItGrew) {
  Scratch scratch;
  const std::string path = scratch.file("run.dpstrace");
  trace::TraceWriter out(path);
  steps(out, 0, 10);
  LiveTrace live(QString::fromStdString(path));
  int changes = 0;
  QObject::connect(&live, &LiveTrace::changed, [&] { ++changes; });
  live.watch();
  steps(out, 10, 20);
  // Generous: the poll alone reads it within a second; a loaded machine may take longer.
  for (QDeadlineTimer deadline(30'000); changes == 0 && !deadline.hasExpired();)
    QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
  EXPECT_GE(changes, 1);
  EXPECT_EQ(live.trace()->events(), 20u);
}

// A view given its grown trace: showing the whole run, it shows the whole new run; zoomed in, it
// stays where the user looks.
TEST(ViewerRender, AViewFollowsItsGrowingTraceUnlessZoomedIn) {
  trace::Trace first = sample(), grown = sample();
  grown.steps.push_back({0, 1, 0, 2, 2, 10, 14});
  Palette palette;
  palette.add(grown);
  TraceView view(std::make_shared<const trace::Trace>(first), "run (partial)", palette);
  EXPECT_DOUBLE_EQ(view.to(), 10);
  view.replace(std::make_shared<const trace::Trace>(grown), "run", palette);
  EXPECT_DOUBLE_EQ(view.from(), 0);
  EXPECT_DOUBLE_EQ(view.to(), 14) << "the whole run, grown";
  EXPECT_EQ(view.title(), "run");
  EXPECT_EQ(view.trace().events(), grown.events());
  view.set_window(2, 3);
  grown.steps.push_back({0, 1, 0, 2, 3, 14, 20});
  view.replace(std::make_shared<const trace::Trace>(grown), "run", palette);
  EXPECT_DOUBLE_EQ(view.from(), 2);
  EXPECT_DOUBLE_EQ(view.to(), 3) << "zoomed in: the user's span stays";
}

// The CPU and traffic charts name each node's line: beside their titles, a stroke of the node's
// color. The efficiency chart, one black line, has no legend.
TEST(ViewerCharts, TheCpuAndTrafficChartsNameTheirNodesLines) {
  const trace::Summary s = trace::summarize(sample(), 100);
  ASSERT_EQ(s.nodes.size(), 3u);
  const QImage image = plot(s, "sample", QSize(1000, 600));
  const QRectF area = plot_charts_area(image.size());
  // Pixels of `node`'s color on the title line of `chart` (above its frame).
  const auto strokes = [&](Chart chart, std::uint32_t node) {
    const QRectF r = chart_rect(area, chart);
    const QColor color = node_color(node);
    int count = 0;
    for (int y = static_cast<int>(r.top()) - 26; y < static_cast<int>(r.top()) - 5; ++y)
      for (int x = static_cast<int>(r.left()); x < static_cast<int>(r.right()); ++x) {
        const QColor c = image.pixelColor(x, y);
        count += std::abs(c.red() - color.red()) + std::abs(c.green() - color.green()) +
                     std::abs(c.blue() - color.blue()) <
                 60;
      }
    return count;
  };
  for (std::uint32_t node = 0; node < 3; ++node) {
    EXPECT_GE(strokes(Chart::cpu, node), 12) << "node " << node;
    EXPECT_GE(strokes(Chart::traffic, node), 12) << "node " << node;
    EXPECT_EQ(strokes(Chart::efficiency, node), 0) << "node " << node;
  }
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
