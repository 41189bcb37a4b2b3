// Types by name, so that processes can name them to each other. Every process of a distributed
// application runs the same executable, and the templates that `main` instantiates (dps::op<Op>,
// app.threads<State>, routes) register their types during static initialization in every process,
// before main runs. A graph built on node 0 then travels as the names of its operation, state and
// route types, and the other processes find the code by name.
//
//   const OpType& t = detail::op_type<Cut>();         // registered at start-up in every process
//   const OpType* same = Registry<OpType>::find(t.key);
//
// Two different types with one name would run each other's code: types in anonymous namespaces
// of different files share their mangled name. Registering the second stops the program, naming it.
#pragma once

#include "dps/payload.hpp"

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <typeinfo>

namespace dps {

class Thread;
enum class OpKind : std::uint8_t { Split, Leaf, Merge, Stream };

namespace detail {

class Body;
class StateBox;
struct RouteFn;

std::string demangle(const char* mangled);  // a type's readable name, for messages

template <class Entry>
class Registry {
 public:
  static const Entry& add(Entry entry) {
    Registry& r = instance();
    std::lock_guard lock(r.mu_);
    auto [it, fresh] = r.entries_.try_emplace(entry.key, nullptr);
    if (fresh) {
      it->second = std::make_unique<Entry>(std::move(entry));
    } else if (*it->second->type != *entry.type) {  // during static initialization: nothing to throw to
      std::fprintf(stderr, "dps: two different types are named %s (anonymous namespaces in two files?); rename one\n",
                   demangle(entry.type->name()).c_str());
      std::abort();
    }
    return *it->second;
  }
  static const Entry* find(std::string_view key) {
    Registry& r = instance();
    std::lock_guard lock(r.mu_);
    auto it = r.entries_.find(key);
    return it == r.entries_.end() ? nullptr : it->second.get();
  }

 private:
  static Registry& instance() {
    static Registry registry;
    return registry;
  }
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<Entry>, std::less<>> entries_;
};

// An operation type: how to run it and how to decode its input and output.
struct OpType {
  std::string key;  // the mangled type name
  const std::type_info* type;
  OpKind kind;
  void (*run_leaf)(Thread&, Payload&);  // leaf: replaces the input by the output
  // Split, merge, stream: builds the body of one execution (the operation and its coroutine) at
  // `at`, body_size bytes aligned to body_align that the kernel allocates with its own record.
  Body* (*make_body)(void* at);
  std::size_t body_size, body_align;
  Payload (*load_input)(WireReader&);
  Payload (*load_output)(WireReader&);
};

// A thread state type: its default value, where a thread starts that was sent no state.
struct StateType {
  std::string key;
  const std::type_info* type;
  std::unique_ptr<StateBox> (*make_default)();  // null when the type has no default constructor
};

// A user route type: rebuilt in another process from its serialized image.
struct RouteType {
  std::string key;
  const std::type_info* type;  // the route's
  void (*load)(RouteFn& route, WireReader& image);
};

}  // namespace detail
}  // namespace dps
