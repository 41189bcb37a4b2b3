// The whole view of a trace as an image, without a display: its Gantt chart over the charts of
// dynamic efficiency, CPU use and traffic, on one time axis. What `dps-viewer --render` writes.
//
//   const auto t = dps::trace::read("run.dpstrace");
//   dps::viewer::render(t, "run.dpstrace", QSize(1600, 1000)).save("run.png");
#pragma once

#include "dps/viewer/gantt.hpp"
#include "dps/viewer/palette.hpp"

#include <dps/trace/records.hpp>

#include <QImage>
#include <QRectF>
#include <QSize>
#include <QString>

namespace dps::viewer {

QImage render(const trace::Trace& trace, const QString& title, QSize size);  // the whole run, in colors of its own
// [from, to], colored by `palette` (which holds the trace's operations), shared with other traces.
QImage render(const trace::Trace& trace, const QString& title, QSize size, double from, double to,
              const Palette& palette);
QRectF render_gantt_area(const Gantt& gantt, QSize size);  // where render() draws the Gantt chart

}  // namespace dps::viewer
