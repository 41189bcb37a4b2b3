// Gantt: the Gantt chart of a trace as Schaeli, Gerlach & Hersch, "A simulator for adaptive parallel applications",
// Fig. 14, draws it — one row per DPS thread, grouped by node — at any zoom. Steps narrower than a pixel are merged
// into one mark per pixel column, found by a search forward from the column before, so a row draws in time proportional
// to its pixels, not its steps (10^6 steps in milliseconds); phases are shaded, thread changes marked.
//
//   const dps::trace::Trace t = dps::trace::read("run.dpstrace");
//   dps::viewer::Gantt gantt(t);
//   gantt.draw(painter, QRectF(0, 0, 1200, 600), 0.0, 2.5);   // the first 2.5 s
#pragma once

#include "dps/viewer/palette.hpp"

#include <dps/trace/records.hpp>

#include <QColor>
#include <QPainter>
#include <QRectF>
#include <QString>

#include <cstdint>
#include <optional>
#include <vector>

namespace dps::viewer {

class Gantt {
 public:
  static constexpr double kLabels = 150;  // the width of the row labels on the left
  static constexpr double kMaxRow = 24;   // the tallest a row gets

  struct Row {
    std::uint32_t node = 0;
    std::uint64_t thread = 0;
    QString label;                      // "workers #5"
    std::vector<std::uint32_t> steps;   // indices into the trace's steps, by start time
    // Of steps[i], side by side: read at every pixel column, where the trace's steps, scattered
    // among other threads', would cost a cache miss each.
    std::vector<double> starts, ends;
    std::vector<trace::NameId> operations;
    std::vector<double> busy;           // busy[i]: the seconds of steps[0, i), for merging
  };

  // Keeps a reference: the trace outlives it. Colored by `palette` (which holds the trace's
  // operations: added before), shared with the other traces on screen; or by one of its own.
  Gantt(const trace::Trace& trace, const Palette& palette);
  explicit Gantt(const trace::Trace& trace);

  const std::vector<Row>& rows() const noexcept { return rows_; }
  QRgb color(trace::NameId operation) const { return colors_[operation]; }  // one per operation name

  // The height the chart wants out of `available`: no taller than its rows at their tallest, so
  // the charts below get the rest.
  double fitted_height(double available) const;

  void draw(QPainter& painter, const QRectF& area, double from, double to) const;
  // What the colors mean, right-aligned in `line`: markers (operations of zero-length steps, as a
  // cluster trace's "grow" and "shrink") first, then operations by their time over the whole run,
  // as many as fit, then "+N more".
  void draw_legend(QPainter& painter, const QRectF& line) const;
  // The operations the legend lists, in its order, with their seconds over the run.
  const std::vector<std::pair<trace::NameId, double>>& legend() const noexcept { return legend_; }
  QRectF row_rect(const QRectF& area, std::size_t row) const;  // where row `row`'s steps go
  // The step under `point` (index into the trace's steps), if any: for hover and selection.
  std::optional<std::size_t> step_at(const QRectF& area, double from, double to, QPointF point) const;

 private:
  double row_height(const QRectF& area) const;
  void draw_row(QPainter& p, const Row& row, const QRectF& r, double from, double to) const;

  const trace::Trace& trace_;
  std::vector<Row> rows_;
  std::vector<QRgb> colors_;  // by name id: the palette's, looked up once
  std::vector<std::pair<trace::NameId, double>> legend_;
};

}  // namespace dps::viewer
