// TraceFile: the sink that writes the trace file (docs/trace-format.md) while the run goes on, for
// real and simulated runs alike. `--trace FILE` on an application's command line attaches one.
//
//   dps::TraceFile file("run.dpstrace");
//   app.trace_to(&file);
//   graph.call(x).get();
//   app.trace_to(nullptr);  // every node's events are in the file
//   file.close();           // the end mark: the trace is complete
#pragma once

#include "dps/trace.hpp"

#include <dps/trace/writer.hpp>

#include <mutex>
#include <string>
#include <string_view>

namespace dps {

class TraceFile final : public TraceSink {
 public:
  explicit TraceFile(const std::string& path);  // throws std::runtime_error naming the path

  void step(const StepEvent& e) override;
  void transfer(const TransferEvent& e) override;
  void lifecycle(const LifecycleEvent& e) override;
  void phase(const PhaseEvent& e) override;

  void info(std::string_view key, std::string_view value);  // e.g. ("clock", "simulated")
  void close();
  std::uint64_t events() const;

 private:
  mutable std::mutex mu_;
  trace::TraceWriter out_;
};

}  // namespace dps
