// LiveTrace: the file's size and modification time say when to read it again.
#include "dps/viewer/live_trace.hpp"

#include <dps/trace/names.hpp>
#include <dps/trace/reader.hpp>

#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QTimer>

namespace dps::viewer {

trace::Trace read_for_viewing(const std::string& path) {
  trace::Trace t = trace::read(path, trace::Partial::accept);
  trace::shorten_operation_names(t);
  return t;
}

LiveTrace::LiveTrace(QString path, QObject* parent) : QObject(parent), path_(std::move(path)) {
  const QFileInfo file(path_);  // before reading: a write in between makes the next refresh read again
  size_ = file.size();
  modified_ = file.lastModified();
  trace_ = std::make_shared<const trace::Trace>(read_for_viewing(path_.toStdString()));
}

QString LiveTrace::title() const { return partial() ? path_ + " (partial)" : path_; }

bool LiveTrace::refresh() {
  const QFileInfo file(path_);
  if (!file.exists()) {
    error_ = "the file is gone: " + path_;
    return false;
  }
  if (file.size() == size_ && file.lastModified() == modified_) return false;
  size_ = file.size();  // even if the read fails: a damaged file is read again only once it changes
  modified_ = file.lastModified();
  try {
    trace_ = std::make_shared<const trace::Trace>(read_for_viewing(path_.toStdString()));
    error_.clear();
    return true;
  } catch (const std::exception& e) {
    error_ = QString::fromUtf8(e.what());
    return false;
  }
}

void LiveTrace::watch() {
  if (poll_) return;
  watcher_ = new QFileSystemWatcher(this);
  settle_ = new QTimer(this);
  poll_ = new QTimer(this);
  settle_->setSingleShot(true);
  connect(settle_, &QTimer::timeout, this, &LiveTrace::check);
  connect(poll_, &QTimer::timeout, this, &LiveTrace::check);
  connect(watcher_, &QFileSystemWatcher::fileChanged, this, [this] {
    if (!settle_->isActive()) settle_->start(kSettle);
  });
  watcher_->addPath(path_);
  poll_->start(kPollEvery);
}

void LiveTrace::check() {
  const bool read = refresh();
  // A file replaced (a new run, an editor's save) is a new one to watch: the watcher dropped the old.
  if (watcher_ && !watcher_->files().contains(path_) && QFileInfo::exists(path_)) watcher_->addPath(path_);
  if (read) emit changed();
}

}  // namespace dps::viewer
