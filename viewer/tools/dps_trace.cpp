// dps-trace: what a trace file says, and the trace in other tools' formats.
//
//   dps-trace summary run.dpstrace            # duration, per-node use, dynamic efficiency per phase
//   dps-trace compare real.dpstrace sim.dpstrace   # where the simulation's prediction differs most
//   dps-trace chrome run.dpstrace run.json    # open in https://ui.perfetto.dev
//   dps-trace paje run.dpstrace run.paje      # open with vite
//   dps-trace plot run.dpstrace run.png       # utilization and dynamic efficiency over time
#include <dps/trace/comparison.hpp>
#include <dps/trace/export.hpp>
#include <dps/trace/names.hpp>
#include <dps/trace/reader.hpp>
#include <dps/trace/statistics.hpp>
#include <dps/viewer/charts.hpp>
#include <dps/viewer/headless.hpp>
#include <dps/viewer/image_size.hpp>

#include <QGuiApplication>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string_view>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

constexpr const char* kUsage =
    "usage: dps-trace summary FILE [options]\n"
    "       dps-trace compare REAL SIM [options]\n"
    "       dps-trace chrome FILE OUT.json [options]\n"
    "       dps-trace paje FILE OUT.paje [options]\n"
    "       dps-trace plot FILE OUT.png [options]\n"
    "Reads a DPS trace (docs/trace-format.md), written by --trace in real and simulated runs.\n"
    "  summary             duration, each node's CPU use and bytes, dynamic efficiency over the run and\n"
    "                      per phase; the last line is JSON\n"
    "  compare             a real run's trace against its simulation's: the run's duration, and per\n"
    "                      operation, phase and node pair the difference (simulated - real), largest\n"
    "                      first; the last line is JSON, with every row\n"
    "  chrome              Chrome trace JSON: one process per node, a track per thread, transfers as flows\n"
    "                      (Perfetto, chrome://tracing)\n"
    "  paje                Paje: nodes and threads, operations as states, transfers as links (ViTE)\n"
    "  plot                PNG: dynamic efficiency, each node's CPU use and traffic over time\n"
    "  --partial           read a trace whose run did not finish, up to its last complete block\n"
    "  --bins N            points of the series over time (default 200)\n"
    "  --size WxH          the plot's size in pixels (default 1200x800)\n"
    "  --top N             compare's rows per table (default 20)\n"
    "  --help              this text\n";

struct Options {
  std::string command, file, out;
  std::string simulated;  // compare's second trace
  dps::trace::Partial partial = dps::trace::Partial::reject;
  std::size_t bins = 200, top = 20;
  int width = 1200, height = 800;
};

// A positive integer up to `most`, all of `text`.
template <class T>
bool whole(std::string_view text, T& value, T most) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size() && value > 0 && value <= most;
}

Options parse(int argc, char** argv) {
  Options o;
  std::vector<std::string> words;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--partial") {
      o.partial = dps::trace::Partial::accept;
    } else if (arg == "--bins") {
      if (i + 1 >= argc) throw std::invalid_argument("--bins expects a value");
      const std::string text = argv[++i];
      if (!whole(text, o.bins, std::size_t{1'000'000}))
        throw std::invalid_argument("--bins expects an integer from 1 to 1000000, got '" + text + "'");
    } else if (arg == "--top") {
      if (i + 1 >= argc) throw std::invalid_argument("--top expects a value");
      const std::string text = argv[++i];
      if (!whole(text, o.top, std::size_t{1'000'000}))
        throw std::invalid_argument("--top expects an integer from 1 to 1000000, got '" + text + "'");
    } else if (arg == "--size") {
      if (i + 1 >= argc) throw std::invalid_argument("--size expects a value");
      const QSize size = dps::viewer::image_size(argv[++i], QSize(200, 150));
      o.width = size.width();
      o.height = size.height();
    } else if (arg.starts_with("--")) {
      throw std::invalid_argument("unknown option '" + arg + "' (see --help)");
    } else {
      words.push_back(arg);
    }
  }
  if (words.empty()) throw std::invalid_argument("a command is missing (see --help)");
  o.command = words[0];
  const char* takes = o.command == "summary"   ? "a trace file"
                      : o.command == "compare" ? "a real and a simulated trace file"
                      : o.command == "chrome" || o.command == "paje" || o.command == "plot"
                          ? "a trace file and an output file"
                          : nullptr;
  if (!takes) throw std::invalid_argument("unknown command '" + o.command + "' (see --help)");
  const std::size_t needs = o.command == "summary" ? 2 : 3;
  if (words.size() != needs) throw std::invalid_argument(o.command + " takes " + takes);
  o.file = words[1];
  if (needs == 3) (o.command == "compare" ? o.simulated : o.out) = words[2];
  return o;
}

void summary(const dps::trace::Trace& t, const Options& o) {
  const dps::trace::Summary s = dps::trace::summarize(t, o.bins);
  std::printf("%s: %.6f s, %llu steps, %llu transfers (%.3f MB), dynamic efficiency %.3f\n", o.file.c_str(),
              s.duration, static_cast<unsigned long long>(s.steps), static_cast<unsigned long long>(s.transfers),
              static_cast<double>(s.bytes) / 1e6, s.efficiency);
  if (!t.damage.empty()) std::printf("partial: %s\n", t.damage.c_str());
  std::printf("%6s %6s %7s %12s %12s %12s %12s\n", "node", "cores", "cpu", "busy_s", "allocated_s", "sent_MB",
              "received_MB");
  for (const auto& n : s.nodes)
    std::printf("%6u %5u%c %7.3f %12.6f %12.6f %12.3f %12.3f\n", n.node, n.cores, n.cores_known ? ' ' : '?', n.cpu,
                n.busy, n.allocated, static_cast<double>(n.bytes_out) / 1e6, static_cast<double>(n.bytes_in) / 1e6);
  if (!s.phases.empty()) {
    std::printf("%-24s %12s %12s %10s\n", "phase", "begin_s", "end_s", "efficiency");
    for (const auto& p : s.phases) std::printf("%-24s %12.6f %12.6f %10.3f\n", p.name.c_str(), p.begin, p.end, p.efficiency);
  }
  if (std::any_of(s.nodes.begin(), s.nodes.end(), [](const auto& n) { return !n.cores_known; }))
    std::printf("?: cores not in the trace, taken as the most steps the node ran at once\n");
  std::printf("%s\n", dps::trace::to_json(s).c_str());
}

// "+12.5%", or "-" without a real value to be relative to.
std::string percent(double relative) {
  if (std::isnan(relative)) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%+.1f%%", 100 * relative);
  return text;
}

// The first `top` rows through `print(row, width)`, `width` fitting the longest of their `name(row)`
// and `title`, under the header `print_header(width)`; then how many rows are left out.
template <class Row, class Name, class Header, class Print>
void table(const std::vector<Row>& rows, std::size_t top, const char* title, Name name, Header print_header,
           Print print) {
  if (rows.empty()) return;
  const std::size_t shown = std::min(rows.size(), top);
  int width = static_cast<int>(std::string_view(title).size());
  for (std::size_t i = 0; i < shown; ++i) width = std::max(width, static_cast<int>(name(rows[i]).size()));
  print_header(width);
  for (std::size_t i = 0; i < shown; ++i) print(rows[i], width);
  if (rows.size() > shown) std::printf("(%zu more rows: --top N)\n", rows.size() - shown);
}

void compare(const dps::trace::Trace& real, const dps::trace::Trace& sim, const Options& o) {
  using dps::trace::DurationRow, dps::trace::PairRow;
  const dps::trace::Comparison c = dps::trace::compare(real, sim);
  std::printf("real %s (%zu events) against simulated %s (%zu events): diff = simulated - real\n", o.file.c_str(),
              real.events(), o.simulated.c_str(), sim.events());
  if (!real.damage.empty()) std::printf("partial real: %s\n", real.damage.c_str());
  if (!sim.damage.empty()) std::printf("partial simulated: %s\n", sim.damage.c_str());
  std::printf("%-8s %12s %12s %12s %9s\n", "run", "real_s", "sim_s", "diff_s", "relative");
  std::printf("%-8s %12.6f %12.6f %+12.6f %9s\n", "duration", c.duration.real, c.duration.simulated,
              c.duration.difference(), percent(c.duration.relative()).c_str());
  const auto durations = [&](const std::vector<DurationRow>& rows, const char* title, const char* count) {
    table(
        rows, o.top, title, [](const DurationRow& r) { return r.name; },
        [&](int width) {
          std::printf("%-*s %10s %10s %12s %12s %12s %9s %12s %12s\n", width, title,
                      ("real_" + std::string(count)).c_str(), ("sim_" + std::string(count)).c_str(), "real_s", "sim_s",
                      "diff_s", "relative", "real_mean_s", "sim_mean_s");
        },
        [](const DurationRow& r, int width) {
          std::printf("%-*s %10.0f %10.0f %12.6f %12.6f %+12.6f %9s %12.6f %12.6f\n", width, r.name.c_str(),
                      r.count.real, r.count.simulated, r.total.real, r.total.simulated, r.total.difference(),
                      percent(r.total.relative()).c_str(), r.mean.real, r.mean.simulated);
        });
  };
  durations(c.operations, "operation", "steps");
  durations(c.phases, "phase", "spans");
  const auto pair = [](const PairRow& p) { return std::to_string(p.from) + "->" + std::to_string(p.to); };
  table(
      c.pairs, o.top, "from->to", pair,
      [](int width) {
        std::printf("%-*s %14s %13s %12s %12s %12s %9s %10s %10s %11s\n", width, "from->to", "real_transfers",
                    "sim_transfers", "real_bytes", "sim_bytes", "diff_bytes", "relative", "real_s", "sim_s", "diff_s");
      },
      [&](const PairRow& p, int width) {
        std::printf("%-*s %14.0f %13.0f %12.0f %12.0f %+12.0f %9s %10.6f %10.6f %+11.6f\n", width, pair(p).c_str(),
                    p.count.real, p.count.simulated, p.bytes.real, p.bytes.simulated, p.bytes.difference(),
                    percent(p.bytes.relative()).c_str(), p.total.real, p.total.simulated, p.total.difference());
      });
  std::printf("%s\n", dps::trace::to_json(c).c_str());
}

// Writes through `write(temporary)`, then renames: no half-written file under the final name.
template <class Write>
void write_atomically(const std::string& path, Write write) {
  const std::string temporary = path + ".tmp";
  if (!write(temporary) || std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    throw std::runtime_error("cannot write '" + path + "'");
  }
}

template <class Export>
void export_to(const dps::trace::Trace& t, const Options& o, Export format) {
  write_atomically(o.out, [&](const std::string& temporary) {
    std::ofstream out(temporary, std::ios::binary);
    format(t, out, o.bins);
    return static_cast<bool>(out.flush());
  });
  std::printf("{\"events\": %zu, \"out\": \"%s\"}\n", t.events(), o.out.c_str());
}

void plot(const dps::trace::Trace& t, const Options& o, int argc, char** argv) {
  dps::viewer::headless();
  QGuiApplication fonts(argc, argv);  // text needs one
  const QImage image = dps::viewer::plot(dps::trace::summarize(t, o.bins), QString::fromStdString(o.file),
                                         QSize(o.width, o.height));
  write_atomically(o.out, [&](const std::string& temporary) { return image.save(QString::fromStdString(temporary), "PNG"); });
  std::printf("{\"events\": %zu, \"out\": \"%s\", \"width\": %d, \"height\": %d}\n", t.events(), o.out.c_str(),
              o.width, o.height);
}

// The trace in `path`, its operations named as users say them (older traces carry namespaces).
dps::trace::Trace read_trace(const std::string& path, dps::trace::Partial partial) {
  dps::trace::Trace t = dps::trace::read(path, partial);
  dps::trace::shorten_operation_names(t);
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") return std::fputs(kUsage, stdout), 0;
  try {
    const Options o = parse(argc, argv);
    const dps::trace::Trace t = read_trace(o.file, o.partial);
    if (o.command == "summary") summary(t, o);
    if (o.command == "compare") compare(t, read_trace(o.simulated, o.partial), o);
    if (o.command == "chrome") export_to(t, o, dps::trace::write_chrome);
    if (o.command == "paje") export_to(t, o, dps::trace::write_paje);
    if (o.command == "plot") plot(t, o, argc, argv);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dps-trace: %s\n", e.what());
    return 2;
  }
}
