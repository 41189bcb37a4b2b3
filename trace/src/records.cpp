// What the records say in words.
#include "dps/trace/records.hpp"

namespace dps::trace {

const char* describe(Change c) {
  switch (c) {
    case Change::ThreadAdded: return "thread added";
    case Change::ThreadRemoved: return "thread removed";
    case Change::ThreadMigrated: return "thread migrated";
    case Change::NodeAdded: return "node added";
    case Change::NodeRemoved: return "node removed";
    case Change::NodeFailed: return "node failed";
    case Change::ThreadRestored: return "thread restored";
    case Change::ThreadReplayed: return "thread replayed";
  }
  return "unknown change";
}

std::string Trace::info_value(const std::string& key) const {
  std::string value;
  for (const Info& i : info)
    if (names[i.key] == key) value = names[i.value];  // the last one written
  return value;
}

}  // namespace dps::trace
