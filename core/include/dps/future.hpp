// Future<T>: the result of a graph call (or of a thread removal or migration), ready when the last
// operation of the graph has posted. A simulated backend advances virtual time while you wait.
//
//   dps::Future<Partial> f = graph.call(Range{0, 100});
//   Partial p = f.get();                      // rethrows the call's OperationError, if any
#pragma once

#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <type_traits>
#include <variant>

namespace dps {

class Backend;

namespace detail {

class FutureStateBase {
 public:
  explicit FutureStateBase(Backend* driver) : driver_(driver) {}
  bool ready() const {
    std::lock_guard lock(mu_);
    return ready_;
  }
  void fail(std::exception_ptr error) {
    {
      std::lock_guard lock(mu_);
      if (ready_) return;
      error_ = std::move(error);
      ready_ = true;
    }
    cv_.notify_all();
  }
  void wait();
  bool wait_for(std::chrono::nanoseconds timeout);

 protected:
  Backend* driver_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool ready_ = false;
  std::exception_ptr error_;
};

template <class T>
class FutureState : public FutureStateBase {
 public:
  using FutureStateBase::FutureStateBase;
  using Value = std::conditional_t<std::is_void_v<T>, std::monostate, T>;
  void set(Value value) {
    {
      std::lock_guard lock(mu_);
      if (ready_) return;
      value_.emplace(std::move(value));
      ready_ = true;
    }
    cv_.notify_all();
  }
  Value take() {
    wait();
    std::lock_guard lock(mu_);
    if (error_) std::rethrow_exception(error_);
    return std::move(*value_);
  }

 private:
  std::optional<Value> value_;
};

}  // namespace detail

template <class T>
class Future {
 public:
  Future() = default;
  explicit Future(std::shared_ptr<detail::FutureState<T>> state) : state_(std::move(state)) {}

  bool valid() const noexcept { return state_ != nullptr; }
  bool ready() const { return state_->ready(); }
  void wait() const { state_->wait(); }
  template <class Rep, class Period>
  bool wait_for(std::chrono::duration<Rep, Period> timeout) const {
    return state_->wait_for(std::chrono::duration_cast<std::chrono::nanoseconds>(timeout));
  }
  // Waits, then returns the value or rethrows the failure. Call once.
  T get() {
    if constexpr (std::is_void_v<T>)
      state_->take();
    else
      return state_->take();
  }

 private:
  std::shared_ptr<detail::FutureState<T>> state_;
};

template <class T>
class Promise {
 public:
  explicit Promise(Backend* driver) : state_(std::make_shared<detail::FutureState<T>>(driver)) {}
  Future<T> future() const { return Future<T>(state_); }
  void set(typename detail::FutureState<T>::Value value) { state_->set(std::move(value)); }
  void set() requires std::is_void_v<T> { state_->set({}); }
  void fail(std::exception_ptr error) { state_->fail(std::move(error)); }
  bool ready() const { return state_->ready(); }

 private:
  std::shared_ptr<detail::FutureState<T>> state_;
};

}  // namespace dps
