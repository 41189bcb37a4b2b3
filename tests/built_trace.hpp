// A trace built by hand in the trace library's tests: records appended directly, names interned as
// the writer interns them. Each test's builder adds the records it needs.
#pragma once

#include <dps/trace/records.hpp>

#include <string>

namespace dps::trace::test {

struct BuiltTrace {
  Trace t;
  NameId name(const std::string& s) {
    for (std::size_t i = 0; i < t.names.size(); ++i)
      if (t.names[i] == s) return static_cast<NameId>(i);
    t.names.push_back(s);
    return static_cast<NameId>(t.names.size() - 1);
  }
};

}  // namespace dps::trace::test
