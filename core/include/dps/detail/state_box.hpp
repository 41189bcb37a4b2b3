// StateBox: the user state of one DPS thread, type-erased, serializable with cereal when its type is,
// so that the kernel can migrate a thread without knowing what it holds.
#pragma once

#include "dps/detail/registry.hpp"

#include <cereal/archives/binary.hpp>
#include <cereal/cereal.hpp>

#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>

namespace dps::detail {

class StateBox {
 public:
  virtual ~StateBox() = default;
  virtual void* get() noexcept = 0;
  virtual std::string save() const = 0;             // cereal binary image
  virtual void load(const std::string& image) = 0;  // replaces the state by the image
};

template <class State>
constexpr bool serializable_state = cereal::traits::is_output_serializable<State, cereal::BinaryOutputArchive>::value&&
    cereal::traits::is_input_serializable<State, cereal::BinaryInputArchive>::value;

template <class State>
class StateBoxOf final : public StateBox {
 public:
  explicit StateBoxOf(State state) : state_(std::move(state)) {}
  void* get() noexcept override { return &state_; }
  std::string save() const override {
    if constexpr (serializable_state<State>) {
      std::ostringstream out;
      {
        cereal::BinaryOutputArchive ar(out);
        ar(state_);
      }
      return std::move(out).str();
    } else {
      throw std::logic_error(std::string("thread state type ") + typeid(State).name() + " has no cereal serialize()");
    }
  }
  void load(const std::string& image) override {
    if constexpr (serializable_state<State>) {
      std::istringstream in(image);
      cereal::BinaryInputArchive ar(in);
      State fresh{};
      ar(fresh);
      state_ = std::move(fresh);
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
    StateType t{typeid(State).name(), nullptr};
    if constexpr (std::is_default_constructible_v<State>)
      t.make_default = [] { return std::unique_ptr<StateBox>(new StateBoxOf<State>(State{})); };
    return t;
  }());
  return type;
}
template <class State>
inline const StateType& state_type_at_startup = state_type<State>();  // registers in every process

}  // namespace dps::detail
