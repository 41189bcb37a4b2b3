// StateBox: the user state of one DPS thread, type-erased, serializable with cereal when its type is,
// so that the kernel can migrate a thread without knowing what it holds.
#pragma once

#include "dps/type_registry.hpp"

#include "dps/wire_archive.hpp"

#include <cereal/cereal.hpp>

#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

namespace dps::detail {

class StateBox {
 public:
  virtual ~StateBox() = default;
  virtual void* get() noexcept = 0;
  // Its image, in the wire's encoding, into `into` (whose buffer it reuses when large enough).
  virtual void save(std::string& into) const = 0;
  std::string save() const {
    std::string image;
    save(image);
    return image;
  }
  virtual void load(const std::string& image) = 0;  // replaces the state by the image
};

// Builds the state of a collection's index-th thread (app.threads' `make`, or the default value).
using StateFactory = std::function<std::unique_ptr<StateBox>(std::size_t index)>;
// Receives a removed thread's final state, or (null state) the error that lost it.
using HandBack = std::function<void(StateBox* state, std::exception_ptr error)>;
// Receives a thread's state's image, taken between two of its operations, or (empty) the error that kept it.
using ImageBack = std::function<void(std::string image, std::exception_ptr error)>;

template <class State>
constexpr bool serializable_state = cereal::traits::is_output_serializable<State, WireWriter>::value&&
    cereal::traits::is_input_serializable<State, WireReader>::value;

template <class State>
class StateBoxOf final : public StateBox {
 public:
  explicit StateBoxOf(State state) : state_(std::move(state)) {}
  void* get() noexcept override { return &state_; }
  using StateBox::save;
  void save(std::string& into) const override {
    if constexpr (serializable_state<State>) {
      encode_into(state_, into);
    } else {
      (void)into;
      throw std::logic_error(std::string("thread state type ") + typeid(State).name() + " has no cereal serialize()");
    }
  }
  void load(const std::string& image) override {
    if constexpr (serializable_state<State>) {
      state_ = decoded<State>(image);
    } else {
      (void)image;
      throw std::logic_error(std::string("thread state type ") + typeid(State).name() + " has no cereal serialize()");
    }
  }

 private:
  State state_;
};

template <class State>
const StateType& state_type() {
  static const StateType& type = Registry<StateType>::add([] {
    StateType t{typeid(State).name(), &typeid(State), nullptr};
    if constexpr (std::is_default_constructible_v<State>)
      t.make_default = [] { return std::unique_ptr<StateBox>(new StateBoxOf<State>(State{})); };
    return t;
  }());
  return type;
}
template <class State>
inline const StateType& state_type_at_startup = state_type<State>();  // registers in every process

// A state built by a process that did not make it: the type's default value, then `image` if any.
inline std::unique_ptr<StateBox> make_state(const StateType& type, const std::string* image) {
  if (!type.make_default)
    throw std::logic_error("thread state type " + demangle(type.key.c_str()) +
                           " has no default constructor to receive a state into");
  auto box = type.make_default();
  if (image) box->load(*image);
  return box;
}

}  // namespace dps::detail
