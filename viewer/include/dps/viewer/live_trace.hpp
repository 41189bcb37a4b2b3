// LiveTrace: a trace file as the viewer shows it, finished or not: a run that crashed, or one still
// writing it (Partial::accept, the blocks written so far). refresh() rereads the file when it has
// changed; watch() has that done by itself, on the file system's notice or, where none comes (a
// network file system), every kPollEvery, and emits changed() after each reread.
//
//   dps::viewer::LiveTrace live("run.dpstrace");      // throws on a file that is not a trace
//   auto* view = new dps::viewer::TraceView(live.trace(), live.title(), palette);
//   QObject::connect(&live, &dps::viewer::LiveTrace::changed,
//                    [&] { view->replace(live.trace(), live.title(), palette); });
//   live.watch();
#pragma once

#include <dps/trace/records.hpp>

#include <QDateTime>
#include <QObject>
#include <QString>

#include <chrono>
#include <memory>
#include <string>

class QFileSystemWatcher;
class QTimer;

namespace dps::viewer {

// The trace in `path`, up to its last complete block, its operations named as users say them
// (trace::shorten_operation_names). Throws trace::TraceError for a corrupted or foreign file.
trace::Trace read_for_viewing(const std::string& path);

class LiveTrace : public QObject {
  Q_OBJECT

 public:
  static constexpr std::chrono::milliseconds kPollEvery{1000};
  static constexpr std::chrono::milliseconds kSettle{200};  // after a notice: a burst of writes is one reread

  explicit LiveTrace(QString path, QObject* parent = nullptr);  // reads it now

  const QString& path() const noexcept { return path_; }
  std::shared_ptr<const trace::Trace> trace() const noexcept { return trace_; }
  bool partial() const noexcept { return !trace_->damage.empty(); }  // no end mark (yet)
  QString title() const;                                    // the path, then " (partial)" if it is
  const QString& error() const noexcept { return error_; }  // why the last reread failed, or ""

  // Rereads the file if its size or modification time changed since the last read; true when that
  // gave a new trace. A file that cannot be read now (removed, damaged) leaves the trace as it was
  // and says why in error().
  bool refresh();
  void watch();

 signals:
  void changed();

 private:
  void check();  // refresh(), then changed() if it read a new trace

  QString path_;
  std::shared_ptr<const trace::Trace> trace_;
  qint64 size_ = -1;  // of the file when last read
  QDateTime modified_;
  QString error_;
  QFileSystemWatcher* watcher_ = nullptr;  // children of this object
  QTimer* settle_ = nullptr;
  QTimer* poll_ = nullptr;
};

}  // namespace dps::viewer
