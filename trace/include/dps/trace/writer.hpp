// TraceWriter: appends records to a trace file (docs/trace-format.md) while the run goes on, in
// blocks of about 64 KiB, each written whole with its checksum, at least every half second: after a
// crash a reader gets every block written before it. close() writes the end mark.
//
//   dps::trace::TraceWriter out("run.dpstrace");
//   out.info("clock", "real");
//   out.write(dps::trace::Step{.node = 0, .thread = 1, .collection = out.name("master"),
//                              .operation = out.name("split"), .call = 1, .start = 0, .end = 1e-3});
//   out.close();
//
// One thread at a time: dps::TraceFile serializes the runtime's.
#pragma once

#include "dps/trace/records.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace dps::trace {

class TraceWriter {
 public:
  static constexpr std::size_t kBlockBytes = 64 * 1024;
  static constexpr std::chrono::milliseconds kFlushEvery{500};

  // Creates (or replaces) the file; throws std::runtime_error naming it when it cannot.
  explicit TraceWriter(const std::string& path);
  ~TraceWriter();  // close(), errors swallowed: a destructor during unwinding still ends the file
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // The id of `text`, written to the file the first time it is seen.
  NameId name(std::string_view text);

  void write(const Step& s);
  void write(const Transfer& t);
  void write(const Lifecycle& c);
  void write(const Phase& p);
  void write(const Counter& c);
  void info(std::string_view key, std::string_view value);

  void flush();  // the records so far become a block in the file
  void close();  // flush, then the end mark: the run is complete. Idempotent.

  std::uint64_t events() const noexcept { return events_; }
  std::uint64_t bytes() const noexcept { return bytes_; }  // in the file so far

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  void begin(std::uint8_t kind);
  void time(double t);          // delta from the previous time in this block
  void duration(double start, double end);
  void written();               // a record is complete: flush when the block is full or old
  void put(const void* data, std::size_t n);

  std::string path_;
  std::FILE* file_ = nullptr;
  std::vector<std::uint8_t> block_;
  std::uint32_t records_ = 0;       // in block_
  std::int64_t clock_ = 0;          // ns, the time the next delta is from
  std::uint64_t events_ = 0, bytes_ = 0;
  std::unordered_map<std::string, NameId, Hash, std::equal_to<>> names_;
  std::chrono::steady_clock::time_point flushed_ = std::chrono::steady_clock::now();
};

}  // namespace dps::trace
