// Operations as a user says them: the class name without its namespaces. The runtime names an
// operation so when it records it; the tools shorten the names of traces written before it did.
//
//   dps::trace::short_name("lu::(anonymous namespace)::AssembleStripes");   // "AssembleStripes"
//   dps::trace::short_name("ns::Foo<std::vector<ns::Bar>>");                // "Foo<vector<Bar>>"
//   dps::trace::Trace t = dps::trace::read("old.dpstrace");
//   dps::trace::shorten_operation_names(t);
#pragma once

#include "dps/trace/records.hpp"

#include <string>
#include <string_view>

namespace dps::trace {

// `name` with every qualifier dropped ("a::b::" before a name, "(anonymous namespace)::" too),
// template arguments' included; a name without "::" is returned as it is.
std::string short_name(std::string_view name);

// Each step's operation renamed to its short_name (collections, phases and info keep theirs).
void shorten_operation_names(Trace& trace);

}  // namespace dps::trace
