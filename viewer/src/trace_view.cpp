// TraceView: painting with Gantt and draw_charts, zoom and pan, hover and selection.
#include "dps/viewer/trace_view.hpp"

#include "dps/viewer/charts.hpp"

#include <QMouseEvent>
#include <QFontMetricsF>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <map>

namespace dps::viewer {

namespace {
constexpr double kTitle = 20, kGanttShare = 0.62;
}

TraceView::TraceView(trace::Trace t, QString title, QWidget* parent)
    : TraceView(std::make_shared<const trace::Trace>(std::move(t)), std::move(title), nullptr, parent) {}

TraceView::TraceView(std::shared_ptr<const trace::Trace> t, QString title, const Palette& palette, QWidget* parent)
    : TraceView(std::move(t), std::move(title), &palette, parent) {}

TraceView::TraceView(std::shared_ptr<const trace::Trace> t, QString title, const Palette* palette, QWidget* parent)
    : QWidget(parent), trace_(std::move(t)), title_(std::move(title)), summary_(trace::summarize(*trace_, 400)) {
  if (palette)
    gantt_.emplace(*trace_, *palette);
  else
    gantt_.emplace(*trace_);
  setMouseTracking(true);
  setAttribute(Qt::WA_OpaquePaintEvent);  // paintEvent fills the whole widget: Qt need not clear it first
  setMinimumSize(500, 300);
  fit();
}

void TraceView::replace(std::shared_ptr<const trace::Trace> t, QString title, const Palette& palette) {
  // Fewer events: not the same run grown but a new one (its file written anew): fit it too.
  const bool whole = std::pair(from_, to_) == run() || t->events() < trace_->events();
  gantt_.emplace(*t, palette);  // the old one, which refers to the old trace, goes first
  trace_ = std::move(t);
  title_ = std::move(title);
  summary_ = trace::summarize(*trace_, 400);
  if (selected_ && *selected_ >= trace_->steps.size()) selected_.reset();
  if (whole) fit();
  update();
}

std::pair<double, double> TraceView::run() const {
  return {summary_.start, summary_.duration > 0 ? summary_.end : summary_.start + 1};
}

QRectF TraceView::gantt_area() const {
  return {6, kTitle + 2, width() - 12.0, gantt_->fitted_height((height() - kTitle) * kGanttShare - 6)};
}

double TraceView::time_at(double x) const {
  const QRectF g = gantt_area();
  return from_ + (x - g.left() - Gantt::kLabels) / (g.width() - Gantt::kLabels) * (to_ - from_);
}

void TraceView::set_window(double from, double to) {
  if (!(to > from) || (from == from_ && to == to_)) return;
  from_ = from;
  to_ = to;
  update();
  emit window_changed(from, to);
}

void TraceView::fit() {
  const auto [from, to] = run();
  set_window(from, to);
}

void TraceView::show_transfers(bool on) {
  transfers_ = on;
  update();
}

void TraceView::follow(TraceView& other) {
  connect(this, &TraceView::window_changed, &other, &TraceView::set_window);
  connect(&other, &TraceView::window_changed, this, &TraceView::set_window);
}

void TraceView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), Qt::white);
  p.setPen(Qt::black);
  const QString heading = title_ + QString::asprintf("   %.6g s, %zu events, dynamic efficiency %.3f", summary_.duration,
                                                      trace_->events(), summary_.efficiency);
  p.drawText(QPointF(8, 15), heading);
  const double legend_left = 8 + QFontMetricsF(p.font()).horizontalAdvance(heading) + 30;
  gantt_->draw_legend(p, QRectF(legend_left, 2, width() - 8 - legend_left, 16));
  const QRectF g = gantt_area();
  gantt_->draw(p, g, from_, to_);
  if (transfers_) draw_transfers(p);
  draw_selection(p);
  const double left = g.left() + Gantt::kLabels - kChartLeft, right = g.right() + kChartRight;
  draw_charts(p, QRectF(left, g.bottom() + 2, right - left, height() - g.bottom() - 2), summary_, from_, to_);
}

// A transfer as an arrow from the sender's first row to the receiver's, at its start and end.
void TraceView::draw_transfers(QPainter& p) const {
  const QRectF g = gantt_area();
  std::map<std::uint32_t, double> node_y;
  for (std::size_t i = gantt_->rows().size(); i-- > 0;)
    node_y[gantt_->rows()[i].node] = gantt_->row_rect(g, i).center().y();
  const auto x = [&](double t) { return g.left() + Gantt::kLabels + (t - from_) / (to_ - from_) * (g.width() - Gantt::kLabels); };
  p.save();
  p.setClipRect(g.adjusted(Gantt::kLabels, 0, 0, 0));
  p.setPen(QPen(QColor(40, 40, 160, 110), 1));
  for (const trace::Transfer& t : trace_->transfers) {
    if (t.end < from_ || t.start > to_ || !node_y.contains(t.from) || !node_y.contains(t.to)) continue;
    const QPointF a(x(t.start), node_y[t.from]), b(x(t.end), node_y[t.to]);
    p.drawLine(a, b);
    const double angle = std::atan2(b.y() - a.y(), b.x() - a.x());
    p.drawLine(b, b - QPointF(6 * std::cos(angle - 0.4), 6 * std::sin(angle - 0.4)));
    p.drawLine(b, b - QPointF(6 * std::cos(angle + 0.4), 6 * std::sin(angle + 0.4)));
  }
  p.restore();
}

// The selected step, and the other steps of its call, outlined.
void TraceView::draw_selection(QPainter& p) const {
  if (!selected_) return;
  const QRectF g = gantt_area();
  const trace::Step& chosen = trace_->steps[*selected_];
  const auto x = [&](double t) { return g.left() + Gantt::kLabels + (t - from_) / (to_ - from_) * (g.width() - Gantt::kLabels); };
  p.save();
  p.setClipRect(g.adjusted(Gantt::kLabels, 0, 0, 0));
  p.setBrush(Qt::NoBrush);
  for (std::size_t row = 0; row < gantt_->rows().size(); ++row) {
    const QRectF r = gantt_->row_rect(g, row);
    for (std::uint32_t i : gantt_->rows()[row].steps) {
      const trace::Step& s = trace_->steps[i];
      if (s.call != chosen.call || s.end < from_ || s.start > to_) continue;
      p.setPen(QPen(i == *selected_ ? QColor(0, 0, 0) : QColor(0, 0, 0, 120), i == *selected_ ? 2 : 1));
      p.drawRect(QRectF(QPointF(x(s.start), r.top()), QPointF(std::max(x(s.end), x(s.start) + 2), r.bottom())));
    }
  }
  p.restore();
}

void TraceView::wheelEvent(QWheelEvent* e) {
  const double at = std::clamp(time_at(e->position().x()), from_, to_);
  const double factor = std::pow(0.85, e->angleDelta().y() / 120.0);
  set_window(at - (at - from_) * factor, at + (to_ - at) * factor);
}

void TraceView::mousePressEvent(QMouseEvent* e) {
  dragging_ = e->position();
  selected_ = gantt_->step_at(gantt_area(), from_, to_, e->position());
  update();
}

void TraceView::mouseMoveEvent(QMouseEvent* e) {
  if (dragging_ && (e->buttons() & Qt::LeftButton)) {
    const double shift = time_at(dragging_->x()) - time_at(e->position().x());
    dragging_ = e->position();
    set_window(from_ + shift, to_ + shift);
    return;
  }
  const auto step = gantt_->step_at(gantt_area(), from_, to_, e->position());
  if (!step) return QToolTip::hideText();
  const trace::Step& s = trace_->steps[*step];
  std::uint64_t bytes = 0;  // what the step's node sent while it ran
  for (const trace::Transfer& t : trace_->transfers)
    if (t.from == s.node && t.start >= s.start && t.start <= s.end) bytes += t.bytes;
  QToolTip::showText(e->globalPosition().toPoint(),
                     QString("%1\n%2 on node %3\ncall %4\nstart %5 s\nduration %6 s\nsent meanwhile %7 bytes")
                         .arg(QString::fromStdString(trace_->names[s.operation]),
                              QString::fromStdString(trace_->names[s.collection]) + " #" + QString::number(s.thread))
                         .arg(s.node)
                         .arg(s.call)
                         .arg(s.start, 0, 'f', 9)
                         .arg(s.end - s.start, 0, 'g', 6)
                         .arg(bytes),
                     this);
}

void TraceView::mouseReleaseEvent(QMouseEvent*) { dragging_.reset(); }

void TraceView::mouseDoubleClickEvent(QMouseEvent*) { fit(); }

}  // namespace dps::viewer
