// TraceView: one trace on screen — its Gantt chart over the charts of efficiency, CPU use and
// traffic, on one time axis. Wheel zooms around the pointer, dragging pans, a double click fits the
// run; hovering a step shows its operation, thread, node, start, duration and the call's bytes; a
// click selects it and outlines the call's other steps. Views linked with `follow` share the axis.
//
//   auto* view = new dps::viewer::TraceView(dps::trace::read("run.dpstrace"), "run");
//   view->show();
#pragma once

#include "dps/viewer/gantt.hpp"

#include <dps/trace/records.hpp>
#include <dps/trace/statistics.hpp>

#include <QWidget>

#include <map>

#include <memory>
#include <optional>

namespace dps::viewer {

class TraceView : public QWidget {
  Q_OBJECT

 public:
  TraceView(trace::Trace trace, QString title, QWidget* parent = nullptr);

  const trace::Trace& trace() const noexcept { return *trace_; }
  const trace::Summary& summary() const noexcept { return summary_; }
  double from() const noexcept { return from_; }
  double to() const noexcept { return to_; }

  void set_window(double from, double to);  // the time span shown
  void fit();                               // the whole run
  void show_transfers(bool on);
  void follow(TraceView& other);            // both show the same span from now on

 signals:
  void window_changed(double from, double to);

 protected:
  void paintEvent(QPaintEvent*) override;
  void wheelEvent(QWheelEvent*) override;
  void mousePressEvent(QMouseEvent*) override;
  void mouseMoveEvent(QMouseEvent*) override;
  void mouseReleaseEvent(QMouseEvent*) override;
  void mouseDoubleClickEvent(QMouseEvent*) override;

 private:
  QRectF gantt_area() const;
  double time_at(double x) const;
  void draw_transfers(QPainter& p) const;
  void draw_selection(QPainter& p) const;

  std::unique_ptr<trace::Trace> trace_;  // on the heap: the Gantt keeps a reference
  QString title_;
  trace::Summary summary_;
  Gantt gantt_;
  double from_ = 0, to_ = 1;
  bool transfers_ = false;
  std::optional<std::size_t> selected_;
  std::optional<QPointF> dragging_;  // where the drag was last
};

}  // namespace dps::viewer
