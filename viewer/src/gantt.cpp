// Gantt: rows from the trace's steps and thread changes; drawing with merged sub-pixel steps.
#include "dps/viewer/gantt.hpp"

#include "dps/viewer/legend.hpp"

#include <dps/trace/statistics.hpp>

#include <QFontMetricsF>
#include <QImage>

#include <algorithm>
#include <cmath>
#include <map>

namespace dps::viewer {

Gantt::Gantt(const trace::Trace& trace) : Gantt(trace, Palette(trace)) {}

Gantt::Gantt(const trace::Trace& trace, const Palette& palette) : trace_(trace) {
  std::map<std::pair<std::uint32_t, std::uint64_t>, Row> rows;
  auto row = [&](std::uint32_t node, std::uint64_t thread, trace::NameId collection) -> Row& {
    Row& r = rows[{node, thread}];
    if (r.label.isEmpty()) {
      r.node = node;
      r.thread = thread;
      r.label = QString::fromStdString(trace.names[collection]) + " #" + QString::number(thread);
    }
    return r;
  };
  for (std::size_t i = 0; i < trace.steps.size(); ++i) {
    const trace::Step& s = trace.steps[i];
    row(s.node, s.thread, s.collection).steps.push_back(static_cast<std::uint32_t>(i));
  }
  for (const trace::Lifecycle& c : trace.changes) {
    if (c.thread == 0) continue;  // a node change
    row(c.node, c.thread, c.collection);
    if (trace::moves(c.kind)) row(c.to, c.thread, c.collection);
  }
  for (auto& [key, r] : rows) {
    std::sort(r.steps.begin(), r.steps.end(),
              [&](std::uint32_t a, std::uint32_t b) { return trace.steps[a].start < trace.steps[b].start; });
    r.busy.reserve(r.steps.size() + 1);
    r.busy.push_back(0);
    for (std::uint32_t s : r.steps) {
      r.starts.push_back(trace.steps[s].start);
      r.operations.push_back(trace.steps[s].operation);
      r.ends.push_back(trace.steps[s].end);
      r.busy.push_back(r.busy.back() + (r.ends.back() - r.starts.back()));
    }
    rows_.push_back(std::move(r));
  }
  std::map<trace::NameId, double> seconds;
  for (const trace::Step& s : trace.steps) seconds[s.operation] += s.end - s.start;
  legend_.assign(seconds.begin(), seconds.end());
  std::stable_sort(legend_.begin(), legend_.end(), [](const auto& a, const auto& b) {
    return (a.second == 0) != (b.second == 0) ? a.second == 0 : a.second > b.second;
  });
  colors_.reserve(trace.names.size());
  for (const std::string& name : trace.names) colors_.push_back(palette.color(name));
}

namespace {

// The first index in [from, values.size()) whose value is >= v. A pixel column holds a few steps:
// a short linear scan finds them with one mispredicted branch, where a binary search over the row
// would mispredict at every halving; a zoomed-out column of thousands gallops (doubling steps).
std::size_t next_at_least(const std::vector<double>& values, std::size_t from, double v) {
  const std::size_t n = values.size(), scan_end = std::min(n, from + 32);
  std::size_t i = from;
  while (i < scan_end && values[i] < v) ++i;
  if (i < scan_end || i == n) return i;
  std::size_t step = 32, low = i, high = i;
  while (high < n && values[high] < v) {
    low = high + 1;
    high += step;
    step *= 2;
  }
  const auto begin = values.begin();
  return std::lower_bound(begin + static_cast<std::ptrdiff_t>(low), begin + static_cast<std::ptrdiff_t>(std::min(high, n)), v) - begin;
}

}  // namespace

double Gantt::row_height(const QRectF& area) const {
  return rows_.empty() ? area.height() : std::clamp(area.height() / static_cast<double>(rows_.size()), 1.0, kMaxRow);
}

double Gantt::fitted_height(double available) const {
  return rows_.empty() ? available : std::min(available, kMaxRow * static_cast<double>(rows_.size()) + 1);
}

QRectF Gantt::row_rect(const QRectF& area, std::size_t row) const {
  const double h = row_height(area);
  return {area.left() + kLabels, area.top() + h * static_cast<double>(row), area.width() - kLabels, h};
}

void Gantt::draw(QPainter& p, const QRectF& area, double from, double to) const {
  if (!(to > from)) return;
  p.save();
  p.setClipRect(area);
  const double scale = (area.width() - kLabels) / (to - from);
  const auto x = [&](double t) { return area.left() + kLabels + (t - from) * scale; };
  const double bottom = rows_.empty() ? area.top() : row_rect(area, rows_.size() - 1).bottom();

  // Phases behind the rows, shaded in turn, named at the top.
  int shade = 0;
  for (const trace::PhaseSpan& span : trace::phase_spans(trace_, to)) {
    const QRectF band(QPointF(std::max(x(span.begin), area.left() + kLabels), area.top()),
                      QPointF(std::min(x(span.end), area.right()), bottom));
    if (band.width() <= 0) continue;
    p.fillRect(band, (shade++ % 2) ? QColor(235, 240, 250) : QColor(245, 248, 253));
    p.setPen(QColor(90, 100, 130));
    p.drawText(band.adjusted(3, 1, 0, 0), Qt::AlignLeft | Qt::AlignTop, QString::fromStdString(trace_.names[span.name]));
  }

  const QFontMetricsF metrics(p.font());
  std::uint32_t node = UINT32_MAX;
  double labelled = -1e300;  // where the last node name went: names of thin rows would overlap
  for (std::size_t i = 0; i < rows_.size(); ++i) {
    const Row& row = rows_[i];
    const QRectF r = row_rect(area, i);
    if (row.node != node) {  // a new node: a rule above its rows (unless they are too thin), its name on the left
      node = row.node;
      if (r.height() >= 3) {
        p.setPen(QColor(150, 150, 150));
        p.drawLine(QPointF(area.left(), r.top()), QPointF(area.right(), r.top()));
      }
      if (r.top() >= labelled + metrics.height()) {
        p.setPen(Qt::black);
        p.drawText(QPointF(area.left() + 2, r.top() + metrics.ascent()), "node " + QString::number(node));
        labelled = r.top();
      }
    }
    if (r.height() >= metrics.height() * 0.9) {
      p.setPen(QColor(60, 60, 60));
      p.drawText(QRectF(area.left() + 52, r.top(), kLabels - 56, r.height()), Qt::AlignVCenter | Qt::AlignLeft,
                 metrics.elidedText(row.label, Qt::ElideRight, kLabels - 56));
    }
    draw_row(p, row, r, from, to);
  }

  // Thread changes: a mark on the thread's row (green added, red removed, orange migrated away or
  // restored after a failure, blue replayed: its recovery ended).
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::size_t> index;
  for (std::size_t i = 0; i < rows_.size(); ++i) index[{rows_[i].node, rows_[i].thread}] = i;
  for (const trace::Lifecycle& c : trace_.changes) {
    const auto it = index.find({c.node, c.thread});
    if (c.thread == 0 || it == index.end() || c.time < from || c.time > to) continue;
    const QRectF r = row_rect(area, it->second);
    const QColor mark = c.kind == trace::Change::ThreadAdded      ? QColor(30, 150, 60)
                        : c.kind == trace::Change::ThreadRemoved  ? QColor(200, 40, 40)
                        : c.kind == trace::Change::ThreadReplayed ? QColor(40, 90, 200)
                                                                  : QColor(230, 130, 20);
    const double h = std::max(3.0, r.height() * 0.8), cx = x(c.time);
    const QPointF triangle[] = {{cx, r.center().y() - h / 2}, {cx + h / 2, r.center().y() + h / 2}, {cx - h / 2, r.center().y() + h / 2}};
    p.setPen(Qt::NoPen);
    p.setBrush(mark);
    p.drawPolygon(triangle, 3);
  }
  p.restore();
}

void Gantt::draw_legend(QPainter& p, const QRectF& line) const {
  std::vector<LegendEntry> entries;
  entries.reserve(legend_.size());
  for (const auto& [operation, seconds] : legend_)
    entries.push_back({QColor::fromRgba(color(operation)), QString::fromStdString(trace_.names[operation])});
  viewer::draw_legend(p, line, entries, Swatch::box, Qt::AlignRight);
}

void Gantt::draw_row(QPainter& p, const Row& row, const QRectF& r, double from, double to) const {
  const double scale = r.width() / (to - from);
  const auto x = [&](double t) { return (t - from) * scale; };  // from the row's left edge
  // The row is painted as one line of pixels, then stretched to its height: one painter call per
  // row, whatever the zoom.
  const int width = static_cast<int>(std::ceil(r.width()));
  if (width <= 0) return;
  QImage line(width, 1, QImage::Format_ARGB32_Premultiplied);  // blended without conversion
  line.fill(Qt::transparent);
  auto* pixels = reinterpret_cast<QRgb*>(line.scanLine(0));
  const auto paint = [&](double x0, double x1, QRgb rgba) {
    const int a = std::clamp(static_cast<int>(std::floor(x0)), 0, width - 1);
    const int b = std::clamp(static_cast<int>(std::ceil(x1)), a + 1, width);
    std::fill(pixels + a, pixels + b, rgba);
  };
  // A thread's steps never overlap: sorted by start, they are sorted by end too.
  const std::size_t n = row.starts.size();
  std::size_t i = std::lower_bound(row.ends.begin(), row.ends.end(), from) - row.ends.begin();
  while (i < n && row.starts[i] <= to) {
    const double x0 = x(row.starts[i]), x1 = x(row.ends[i]);
    const QRgb c = color(row.operations[i]);
    if (x1 - x0 >= 1) {
      paint(x0, x1, c);
      ++i;
      continue;
    }
    // Narrower than a pixel: every step starting in this pixel column becomes one mark, colored as
    // its first, denser the busier the column (at least step i: rounding may put its start on the
    // next column's edge).
    const double column = std::floor(x0), next = from + (column + 1) / scale;
    const std::size_t j = next_at_least(row.starts, i + 1, next);
    const double busy = (row.busy[j] - row.busy[i]) * scale;
    i = j;
    paint(column, column + 1, qPremultiply(qRgba(qRed(c), qGreen(c), qBlue(c), static_cast<int>(255 * std::clamp(0.35 + busy, 0.35, 1.0)))));
  }
  const double top = r.top() + (r.height() >= 4 ? 1 : 0), height = r.height() >= 4 ? r.height() - 2 : r.height();
  p.drawImage(QRectF(r.left(), top, width, height), line);
}

std::optional<std::size_t> Gantt::step_at(const QRectF& area, double from, double to, QPointF point) const {
  if (rows_.empty() || point.x() < area.left() + kLabels || !(to > from)) return std::nullopt;
  const auto row = static_cast<std::size_t>((point.y() - area.top()) / row_height(area));
  if (point.y() < area.top() || row >= rows_.size()) return std::nullopt;
  const double per_pixel = (to - from) / (area.width() - kLabels);
  const double t = from + (point.x() - area.left() - kLabels) * per_pixel;
  const auto& steps = trace_.steps;
  const auto& list = rows_[row].steps;
  auto i = std::lower_bound(list.begin(), list.end(), t - per_pixel,
                            [&](std::uint32_t s, double v) { return steps[s].end < v; });
  if (i == list.end() || steps[*i].start > t + per_pixel) return std::nullopt;
  return *i;
}

}  // namespace dps::viewer
