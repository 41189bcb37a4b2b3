// short_name: one pass over the demangled text, dropping each qualifier when its "::" is read.
#include "dps/trace/names.hpp"

#include <cctype>
#include <optional>
#include <unordered_map>
#include <vector>

namespace dps::trace {

namespace {

// The index of the bracket closing the one at `open` ('(' or '{'), or npos.
std::size_t closing(std::string_view text, std::size_t open) {
  const char opener = text[open], closer = opener == '(' ? ')' : '}';
  int depth = 0;
  for (std::size_t i = open; i < text.size(); ++i) {
    if (text[i] == opener) ++depth;
    if (text[i] == closer && --depth == 0) return i;
  }
  return std::string_view::npos;
}

bool in_identifier(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

std::string short_name(std::string_view name) {
  if (name.find("::") == std::string_view::npos) return std::string(name);
  std::string out;
  out.reserve(name.size());
  std::size_t qualified = 0;        // where in `out` the (possibly qualified) name being read begins
  std::vector<std::size_t> opened;  // `qualified` of each template whose arguments are being read
  for (std::size_t i = 0; i < name.size();) {
    if (name.substr(i, 2) == "::") {  // what came since `qualified` was a qualifier
      out.resize(qualified);
      i += 2;
      continue;
    }
    if (name[i] == '(' || name[i] == '{') {  // "(anonymous namespace)::", "{lambda()#1}::": one qualifier
      const std::size_t close = closing(name, i);
      if (close != std::string_view::npos && name.substr(close + 1, 2) == "::") {
        out.resize(qualified);
        i = close + 3;
        continue;
      }
    }
    const char c = name[i++];
    out += c;
    if (c == '<') {
      opened.push_back(qualified);
      qualified = out.size();
    } else if (c == '>' && !opened.empty()) {  // "Outer<int>::" is one qualifier
      qualified = opened.back();
      opened.pop_back();
    } else if (!in_identifier(c)) {
      qualified = out.size();
    }
  }
  return out.empty() ? std::string(name) : out;
}

void shorten_operation_names(Trace& trace) {
  std::vector<std::optional<NameId>> renamed(trace.names.size());
  std::unordered_map<std::string, NameId> ids;  // of the names, filled the first time a name changes
  const auto shortened = [&](NameId id) {
    if (renamed[id]) return *renamed[id];
    std::string name = short_name(trace.names[id]);
    if (name == trace.names[id]) return *(renamed[id] = id);
    if (ids.empty())
      for (std::size_t k = 0; k < trace.names.size(); ++k) ids.emplace(trace.names[k], static_cast<NameId>(k));
    // The name may be another id's already (two namespaces' Foo): both become that one.
    const auto [it, fresh] = ids.emplace(std::move(name), static_cast<NameId>(trace.names.size()));
    if (fresh) trace.names.push_back(it->first);
    return *(renamed[id] = it->second);
  };
  for (Step& s : trace.steps) s.operation = shortened(s.operation);
}

}  // namespace dps::trace
