// TraceView: one trace on screen — its Gantt chart over the charts of efficiency, CPU use and
// traffic, on one time axis. Wheel zooms around the pointer, dragging pans, a double click fits the
// run; hovering a step shows its operation, thread, node, start, duration and the call's bytes; a
// click selects it and outlines the call's other steps. Views linked with `follow` share the axis.
// replace() shows a newer read of the same run (one still writing its trace, see LiveTrace).
//
//   auto* view = new dps::viewer::TraceView(dps::trace::read("run.dpstrace"), "run");
//   view->show();
#pragma once

#include "dps/viewer/gantt.hpp"
#include "dps/viewer/palette.hpp"

#include <dps/trace/records.hpp>
#include <dps/trace/statistics.hpp>

#include <QWidget>

#include <memory>
#include <optional>
#include <utility>

namespace dps::viewer {

class TraceView : public QWidget {
  Q_OBJECT

 public:
  TraceView(trace::Trace trace, QString title, QWidget* parent = nullptr);  // in colors of its own
  // Colored by `palette` (which holds the trace's operations), shared with the other views.
  TraceView(std::shared_ptr<const trace::Trace> trace, QString title, const Palette& palette,
            QWidget* parent = nullptr);

  // The run's trace read again, grown: the span on screen stays, unless it was the whole run, then
  // the whole new run is shown (as it is for a trace with fewer events: a new run). The selected
  // step stays selected (a trace grows at its end).
  void replace(std::shared_ptr<const trace::Trace> trace, QString title, const Palette& palette);

  const trace::Trace& trace() const noexcept { return *trace_; }
  const QString& title() const noexcept { return title_; }
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
  // `palette` null: the trace's own colors.
  TraceView(std::shared_ptr<const trace::Trace> trace, QString title, const Palette* palette, QWidget* parent);
  QRectF gantt_area() const;
  double time_at(double x) const;
  void draw_transfers(QPainter& p) const;
  void draw_selection(QPainter& p) const;

  std::pair<double, double> run() const;  // the span fit() shows

  std::shared_ptr<const trace::Trace> trace_;  // on the heap: the Gantt keeps a reference
  QString title_;
  trace::Summary summary_;
  std::optional<Gantt> gantt_;  // always set; optional to be made anew for a new trace
  double from_ = 0, to_ = 1;
  bool transfers_ = false;
  std::optional<std::size_t> selected_;
  std::optional<QPointF> dragging_;  // where the drag was last
};

}  // namespace dps::viewer
