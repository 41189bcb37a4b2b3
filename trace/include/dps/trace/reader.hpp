// Reading a trace file (docs/trace-format.md). Anything that is not a whole, intact trace throws
// TraceError, whose message names the byte offset where the file goes wrong; nothing else escapes.
//
//   dps::trace::Trace t = dps::trace::read("run.dpstrace");
//   // a run that crashed: the blocks it flushed, and where and why it stops
//   dps::trace::Trace partial = dps::trace::read("crashed.dpstrace", dps::trace::Partial::accept);
//   if (!partial.damage.empty()) std::cerr << partial.damage << "\n";
#pragma once

#include "dps/trace/records.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>

namespace dps::trace {

// "FILE: byte N: reason" (without "FILE: " when parsing bytes).
class TraceError : public std::runtime_error {
 public:
  TraceError(std::uint64_t offset, const std::string& reason, const std::string& file = "");
  std::uint64_t offset;  // where in the file the problem is
  std::string reason;
};

// What to do with a file that ends early (a run that crashed or is still going): reject it, or
// return the records of its complete blocks with Trace::damage saying where it ends. A corrupted
// or foreign file is rejected either way.
enum class Partial { reject, accept };

Trace read(const std::string& path, Partial partial = Partial::reject);
Trace parse(const std::string& bytes, Partial partial = Partial::reject);  // a file's contents

}  // namespace dps::trace
