// bench-viewer: how fast the viewer opens and draws a trace of 10^6 events — the stages done once
// per file (read, statistics, Gantt rows) and the frames a user waits for while looking at it (the
// whole run fitted, panning at 10x zoom, a 1 % window), each the median of its repetitions.
//
//   bench-viewer                          # a synthetic 10^6-event trace: 64 threads on 8 nodes
//   bench-viewer --trace run.dpstrace --repeat 20 --size 1600x1000
//
// Prints a line per figure, then one line of JSON.
#include "median.hpp"

#include <dps/cli.hpp>
#include <dps/trace/reader.hpp>
#include <dps/trace/statistics.hpp>
#include <dps/trace/writer.hpp>
#include <dps/viewer/headless.hpp>
#include <dps/viewer/image_size.hpp>
#include <dps/viewer/trace_view.hpp>

#include <QApplication>
#include <QImage>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// A trace like a busy run's: 64 threads on 8 nodes doing three operations of exponential durations,
// a transfer to the next node after every tenth step, a phase per tenth of the run.
void write_synthetic(const std::string& path, std::size_t events) {
  dps::trace::TraceWriter out(path);
  std::mt19937_64 random(1);
  std::exponential_distribution<double> duration(1 / 6e-4), gap(1 / 2e-4);
  const dps::trace::NameId workers = out.name("workers");
  const dps::trace::NameId operations[] = {out.name("split"), out.name("multiply"), out.name("merge")};
  const dps::trace::NameId phase = out.name("iteration");
  constexpr std::uint32_t kThreads = 64, kNodes = 8;
  for (std::uint32_t node = 0; node < kNodes; ++node) out.info("cores." + std::to_string(node), "8");
  std::vector<double> clock(kThreads, 0);
  for (std::size_t i = 0; out.events() < events; ++i) {
    const auto thread = static_cast<std::uint32_t>(i % kThreads), node = thread / (kThreads / kNodes);
    const double start = clock[thread] + gap(random), end = start + duration(random);
    clock[thread] = end;
    if (thread == 0 && i % (events / 10) == 0) {
      if (i > 0) out.write(dps::trace::Phase{phase, false, start});
      out.write(dps::trace::Phase{phase, true, start});
    }
    out.write(dps::trace::Step{node, thread + 1ull, workers, operations[random() % 3], 1 + i / 1000, start, end});
    if (i % 10 == 9) out.write(dps::trace::Transfer{node, (node + 1) % kNodes, 4096, end, end});
  }
}


}  // namespace

int main(int argc, char** argv) try {
  std::string path, size_text = "1400x900";
  long repeat = 15, events = 1'000'000;
  dps::Cli cli("bench-viewer",
               "The viewer's load and frame times on a trace: what is done once per file, and the median frame of the whole "
               "run, of panning at 10x zoom and of a 1 % window.");
  cli.option("--trace", path, "FILE  the trace to draw (default: a synthetic one, 64 threads on 8 nodes)")
      .option("--events", events, "events of the synthetic trace (default 1000000)")
      .option("--repeat", repeat, "frames of each kind; medians are reported (default 15)")
      .option("--size", size_text, "WxH  the frames' size (default 1400x900)");
  if (!cli.parse(argc, argv)) return 0;
  const QSize size = dps::viewer::image_size(size_text, QSize(100, 100));
  dps::viewer::headless();
  QApplication app(argc, argv);

  const bool synthetic = path.empty();
  if (synthetic) {
    path = (std::filesystem::temp_directory_path() / ("bench-viewer-" + std::to_string(::getpid()) + ".dpstrace")).string();
    write_synthetic(path, static_cast<std::size_t>(events));
  }
  const auto bytes = std::filesystem::file_size(path);

  auto t = Clock::now();
  dps::trace::Trace trace = dps::trace::read(path);
  const double read_s = seconds_since(t);
  if (synthetic) std::filesystem::remove(path);
  t = Clock::now();
  const dps::trace::Summary summary = dps::trace::summarize(trace, 400);
  const double summary_s = seconds_since(t);
  t = Clock::now();
  const dps::viewer::Gantt rows(trace);
  const double rows_s = seconds_since(t);
  const std::size_t count = trace.events();

  // The widget as the viewer shows it (its constructor summarizes and builds the rows again: that
  // is the open time), painted into an image as a window would be.
  t = Clock::now();
  dps::viewer::TraceView view(std::move(trace), "bench");
  view.resize(size);
  const double open_s = seconds_since(t);
  QImage frame(size, QImage::Format_ARGB32_Premultiplied);
  const auto paint = [&](double from, double to) {
    view.set_window(from, to);
    const auto start = Clock::now();
    view.render(&frame);
    return seconds_since(start);
  };
  const double begin = summary.start, span = summary.duration;
  std::vector<double> fit, pan, zoom;
  for (int k = 0; k < repeat; ++k) {
    fit.push_back(paint(begin, begin + span * (1 + 1e-9 * (k % 2))));  // a new window each time
    const double at = begin + span * 0.3 + span * 0.01 * k;
    pan.push_back(paint(at, at + span / 10));
    zoom.push_back(paint(at, at + span / 100));
  }
  const double fit_ms = median(fit) * 1e3, pan_ms = median(pan) * 1e3, zoom_ms = median(zoom) * 1e3;

  std::printf("trace: %zu events, %.1f MB, %.2f bytes per event%s\n", count, static_cast<double>(bytes) / 1e6,
              static_cast<double>(bytes) / static_cast<double>(count), synthetic ? " (synthetic)" : "");
  std::printf("once per file: read %.3f s, statistics %.3f s, Gantt rows %.3f s; the viewer's window opens in %.3f s\n",
              read_s, summary_s, rows_s, open_s);
  std::printf("frame at %dx%d, median of %ld: whole run %.1f ms, panning at 10x zoom %.1f ms, 1%% window %.1f ms\n",
              size.width(), size.height(), repeat, fit_ms, pan_ms, zoom_ms);
  std::printf("{\"events\": %zu, \"bytes_per_event\": %.2f, \"read_s\": %.4f, \"statistics_s\": %.4f, \"rows_s\": %.4f, "
              "\"open_s\": %.4f, \"frame_fit_ms\": %.2f, \"frame_pan_ms\": %.2f, \"frame_zoom_ms\": %.2f}\n",
              count, static_cast<double>(bytes) / static_cast<double>(count), read_s, summary_s, rows_s, open_s, fit_ms,
              pan_ms, zoom_ms);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "bench-viewer: %s\n", e.what());
  return 2;
}
