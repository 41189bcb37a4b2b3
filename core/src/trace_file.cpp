// TraceFile: the kernel's events, serialized, into the trace writer.
#include "dps/trace_file.hpp"

namespace dps {

static_assert(static_cast<int>(Lifecycle::ThreadReplayed) == static_cast<int>(trace::Change::ThreadReplayed),
              "the file's lifecycle changes are the kernel's");

TraceFile::TraceFile(const std::string& path) : out_(path) {}

void TraceFile::step(const StepEvent& e) {
  std::lock_guard lock(mu_);
  out_.write(trace::Step{e.node, e.thread, out_.name(e.collection), out_.name(e.operation), e.call, e.start, e.end});
}

void TraceFile::transfer(const TransferEvent& e) {
  std::lock_guard lock(mu_);
  out_.write(trace::Transfer{e.from, e.to, e.bytes, e.start, e.end});
}

void TraceFile::lifecycle(const LifecycleEvent& e) {
  std::lock_guard lock(mu_);
  out_.write(trace::Lifecycle{static_cast<trace::Change>(e.kind), e.thread, out_.name(e.collection), e.node, e.to, e.time});
}

void TraceFile::phase(const PhaseEvent& e) {
  std::lock_guard lock(mu_);
  out_.write(trace::Phase{out_.name(e.name), e.begin, e.time});
}

void TraceFile::info(std::string_view key, std::string_view value) {
  std::lock_guard lock(mu_);
  out_.info(key, value);
}

void TraceFile::close() {
  std::lock_guard lock(mu_);
  out_.close();
}

std::uint64_t TraceFile::events() const {
  std::lock_guard lock(mu_);
  return out_.events();
}

}  // namespace dps
