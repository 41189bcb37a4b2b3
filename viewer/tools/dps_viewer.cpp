// dps-viewer: traces on screen, one or two (real against simulated) on a shared time axis, finished
// or not (a run that crashed, or one still writing its trace: the view follows it as it grows).
//
//   dps-viewer run.dpstrace                      # a window
//   dps-viewer real.dpstrace sim.dpstrace        # side by side: totals and the difference
//   dps-viewer run.dpstrace --render run.png     # no window: the view as a PNG (for docs and tests)
#include <dps/trace/statistics.hpp>
#include <dps/viewer/headless.hpp>
#include <dps/viewer/image_size.hpp>
#include <dps/viewer/live_trace.hpp>
#include <dps/viewer/palette.hpp>
#include <dps/viewer/render.hpp>
#include <dps/viewer/trace_view.hpp>

#include <QAction>
#include <QApplication>
#include <QFileDialog>
#include <QKeySequence>
#include <QLabel>
#include <QMainWindow>
#include <QMenuBar>
#include <QMessageBox>
#include <QPainter>
#include <QSplitter>
#include <QVBoxLayout>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace {

using dps::viewer::LiveTrace;
using dps::viewer::TraceView;

constexpr const char* kUsage =
    "usage: dps-viewer [FILE [FILE2]] [--render OUT.png [--size WxH]]\n"
    "Shows DPS traces (docs/trace-format.md): a Gantt chart of every thread by node, and dynamic\n"
    "efficiency, CPU use and traffic over time. Two files are shown one above the other on the same\n"
    "time axis, with their totals and the difference. Wheel: zoom; drag: pan; double click: fit;\n"
    "hover: a step's details; click: select it and outline its call. A trace without its end mark\n"
    "(a run that crashed, or is still running) shows what it holds, titled \"(partial)\"; the window\n"
    "rereads a trace that grows.\n"
    "  --render OUT.png    draw without a window into a PNG and exit\n"
    "  --size WxH          the rendered image's size (default 1600x1000)\n"
    "  --help              this text\n";

struct Options {
  std::vector<std::string> files;
  std::string render;
  int width = 1600, height = 1000;
};

Options parse(const QStringList& args) {
  Options o;
  for (int i = 1; i < args.size(); ++i) {
    const std::string arg = args[i].toStdString();
    if (arg == "--render" || arg == "--size") {
      if (i + 1 >= args.size()) throw std::invalid_argument(arg + " expects a value");
      const std::string value = args[++i].toStdString();
      if (arg == "--render") {
        o.render = value;
        continue;
      }
      const QSize size = dps::viewer::image_size(value, QSize(100, 100));
      o.width = size.width();
      o.height = size.height();
    } else if (arg.starts_with("--")) {
      throw std::invalid_argument("unknown option '" + arg + "' (see --help)");
    } else {
      o.files.push_back(arg);
    }
  }
  if (o.files.size() > 2) throw std::invalid_argument("at most two traces, to compare");
  if (!o.render.empty() && o.files.empty()) throw std::invalid_argument("--render needs a trace file");
  return o;
}

// "real 1.23 s, simulated 1.19 s: -0.04 s (-3.3 %)"
QString comparison(const TraceView& a, const TraceView& b) {
  const double ta = a.summary().duration, tb = b.summary().duration;
  return QString::asprintf("%.6g s against %.6g s: difference %+.6g s (%+.1f %%); efficiency %.3f against %.3f", ta, tb,
                           tb - ta, ta > 0 ? 100 * (tb - ta) / ta : 0.0, a.summary().efficiency, b.summary().efficiency);
}

class Window : public QMainWindow {
 public:
  Window() {
    resize(1400, 900);
    QMenu* file = menuBar()->addMenu("&File");
    file->addAction("&Open…", QKeySequence::Open, [this] { pick(false); });
    file->addAction("Open a second trace to &compare…", [this] { pick(true); });
    file->addAction("&Quit", QKeySequence::Quit, [this] { close(); });
    QMenu* view = menuBar()->addMenu("&View");
    view->addAction("&Fit the run", QKeySequence(Qt::Key_F), [this] {
      if (!shown_.empty()) shown_[0].view->fit();
    });
    QAction* transfers = view->addAction("Show &transfers", QKeySequence(Qt::Key_T), [this](bool on) {
      transfers_ = on;
      for (const Shown& s : shown_) s.view->show_transfers(on);
    });
    transfers->setCheckable(true);
    show_views();
  }

  // Opens `path` (as the second trace when `second`) and follows it as it grows; a bad file is a
  // dialog, and nothing changes.
  void open(const QString& path, bool second) {
    std::unique_ptr<LiveTrace> file;
    try {
      file = std::make_unique<LiveTrace>(path, this);
    } catch (const std::exception& e) {
      QMessageBox::critical(this, "Cannot open the trace", QString::fromUtf8(e.what()));
      return;
    }
    const std::size_t keep = second ? std::min<std::size_t>(shown_.size(), 1) : 0;
    while (shown_.size() > keep) {
      shown_.back().view->deleteLater();
      shown_.back().file->deleteLater();
      shown_.pop_back();
    }
    if (shown_.empty()) palette_ = dps::viewer::Palette();  // colors start again with a new first trace
    palette_.add(*file->trace());
    auto* view = new TraceView(file->trace(), file->title(), palette_);
    view->show_transfers(transfers_);
    LiveTrace* live = file.release();
    connect(live, &LiveTrace::changed, view, [this, live, view] {
      palette_.add(*live->trace());  // names new to the palette take new colors; the others keep theirs
      view->replace(live->trace(), live->title(), palette_);
      retitle();
    });
    live->watch();
    shown_.push_back({live, view});
    show_views();
  }

 private:
  struct Shown {
    LiveTrace* file;  // children of the window
    TraceView* view;
  };

  void pick(bool second) {
    const QString path = QFileDialog::getOpenFileName(this, second ? "Trace to compare" : "Open a trace", QString(),
                                                      "DPS traces (*.dpstrace);;All files (*)");
    if (!path.isEmpty()) open(path, second);
  }

  void show_views() {
    auto* central = new QWidget;
    auto* layout = new QVBoxLayout(central);
    comparison_ = nullptr;
    if (shown_.empty()) layout->addWidget(new QLabel("File > Open a trace (written by --trace)"), 0, Qt::AlignCenter);
    if (shown_.size() == 2) {
      shown_[0].view->follow(*shown_[1].view);
      shown_[1].view->set_window(shown_[0].view->from(), shown_[0].view->to());
      comparison_ = new QLabel;
      layout->addWidget(comparison_);
    }
    auto* splitter = new QSplitter(Qt::Vertical);
    for (const Shown& s : shown_) splitter->addWidget(s.view);
    if (!shown_.empty()) layout->addWidget(splitter, 1);
    setCentralWidget(central);  // the previous one and its layout go; the views move to the new one
    retitle();
  }

  // The window's title and the comparison line, from the views' traces as they are now.
  void retitle() {
    QStringList titles;
    for (const Shown& s : shown_) titles << s.view->title();
    setWindowTitle(titles.isEmpty() ? "DPS trace viewer" : "DPS trace viewer: " + titles.join(" above "));
    if (comparison_) comparison_->setText(comparison(*shown_[0].view, *shown_[1].view));
  }

  std::vector<Shown> shown_;
  dps::viewer::Palette palette_;  // shared by the views: one color per operation name
  QLabel* comparison_ = nullptr;  // with two views
  bool transfers_ = false;
};

// The view(s) as one image: each trace in its share of the height, on one time axis, in one palette.
// The last line says which traces were partial.
int render(const Options& o) {
  std::vector<std::unique_ptr<LiveTrace>> traces;
  dps::viewer::Palette palette;
  double from = 1e300, to = -1e300;
  for (const std::string& f : o.files) {
    traces.push_back(std::make_unique<LiveTrace>(QString::fromStdString(f)));
    palette.add(*traces.back()->trace());
    const dps::trace::Summary s = dps::trace::summarize(*traces.back()->trace(), 1);
    from = std::min(from, s.start);
    to = std::max(to, s.duration > 0 ? s.end : s.start + 1);
  }
  QImage image(o.width, o.height, QImage::Format_RGB32);
  image.fill(Qt::white);
  QPainter p(&image);
  const int share = o.height / static_cast<int>(traces.size());
  for (std::size_t i = 0; i < traces.size(); ++i)
    p.drawImage(0, static_cast<int>(i) * share,
                dps::viewer::render(*traces[i]->trace(), traces[i]->title(), QSize(o.width, share), from, to, palette));
  p.end();
  if (!image.save(QString::fromStdString(o.render), "PNG")) throw std::runtime_error("cannot write '" + o.render + "'");
  std::string partial, events;
  for (const auto& t : traces) {
    partial += std::string(partial.empty() ? "" : ", ") + (t->partial() ? "true" : "false");
    events += (events.empty() ? "" : ", ") + std::to_string(t->trace()->events());
  }
  std::printf(
      "{\"out\": \"%s\", \"traces\": %zu, \"width\": %d, \"height\": %d, \"partial\": [%s], \"events\": [%s]}\n",
      o.render.c_str(), traces.size(), o.width, o.height, partial.c_str(), events.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") return std::fputs(kUsage, stdout), 0;
  const bool headless = [&] {
    for (int i = 1; i < argc; ++i)
      if (std::string(argv[i]) == "--render") return true;
    return false;
  }();
  if (headless) dps::viewer::headless();
  QApplication app(argc, argv);
  try {
    const Options o = parse(app.arguments());
    if (!o.render.empty()) return render(o);
    Window window;
    for (std::size_t i = 0; i < o.files.size(); ++i) window.open(QString::fromStdString(o.files[i]), i == 1);
    window.show();
    return app.exec();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dps-viewer: %s\n", e.what());
    return 2;
  }
}
