// The four operation types of a flow graph (Schaeli, Gerlach & Hersch, "A simulator for adaptive parallel
// applications", §2). Derive from one, give it an `execute`.
//
//   struct Cut : dps::Split<Range, Range, Master> {            // one input, any number of outputs
//     dps::Step execute(Range r) {
//       for (int i = r.first; i < r.last; i += 100) co_await post(Range{i, std::min(i + 100, r.last)});
//     }
//   };
//   struct Add : dps::Leaf<Range, Partial, Worker> {           // one input, one output, atomic
//     Partial execute(const Range& r) { return {sum(thread().data, r)}; }
//   };
//   struct Gather : dps::Merge<Partial, Partial, Master> {     // every output of the matching split
//     dps::Step execute(Partial p) {
//       while (auto q = co_await next()) p.sum += q->sum;
//       co_await post(p);
//     }
//   };
//
// A Stream is a merge that may post any number of outputs whenever it likes; they form a new frame,
// closed by a later merge. Every co_await is an atomic-step boundary: the operation may be suspended
// there (flow control, waiting for input) while other operations of its thread run. A leaf never is.
// A long computation in a split, merge or stream can `co_await yield()` between pieces: the messages
// waiting for its thread (a better bound, a cancellation) are handled there before it goes on.
// `thread()` is the state of the DPS thread the operation runs on; one operation object per execution.
//
// Two GCC 12 coroutine bugs to steer around (both fixed in later compilers):
// - `while (co_await next())` miscompiles: bind the result, `while (auto x = co_await next())`.
// - a braced aggregate temporary built inside a co_await expression is destroyed twice. Harmless for
//   plain values like Range{a, b}; for an aggregate that owns memory, build it first:
//   `Block b{LargeArray<double>(n), k}; co_await post(std::move(b));`
#pragma once

#include "dps/ids.hpp"
#include "dps/payload.hpp"
#include "dps/type_registry.hpp"

#include <coroutine>
#include <cstddef>
#include <exception>
#include <optional>
#include <string_view>
#include <utility>

namespace dps {

class Activity;  // the kernel's record of one execution of a split, merge or stream
struct Envelope;

// The coroutine type of split, merge and stream `execute`.
class Step {
 public:
  struct promise_type {
    Step get_return_object() noexcept { return Step(std::coroutine_handle<promise_type>::from_promise(*this)); }
    std::suspend_always initial_suspend() noexcept { return {}; }
    std::suspend_always final_suspend() noexcept { return {}; }
    void return_void() noexcept {}
    void unhandled_exception() noexcept { error = std::current_exception(); }
    static void* operator new(std::size_t bytes);
    static void operator delete(void* p) noexcept;
    std::exception_ptr error;
  };

  Step() = default;
  Step(Step&& other) noexcept : handle_(std::exchange(other.handle_, {})) {}
  Step& operator=(Step&& other) noexcept {
    if (this != &other) {
      if (handle_) handle_.destroy();
      handle_ = std::exchange(other.handle_, {});
    }
    return *this;
  }
  ~Step() {
    if (handle_) handle_.destroy();
  }
  std::coroutine_handle<> handle() const noexcept { return handle_; }
  std::exception_ptr error() const noexcept { return handle_ ? handle_.promise().error : nullptr; }

 private:
  explicit Step(std::coroutine_handle<promise_type> h) noexcept : handle_(h) {}
  std::coroutine_handle<promise_type> handle_;
};

// A thread state for operations that need none.
struct Stateless {
  template <class Archive>
  void serialize(Archive&) {}
};

namespace detail {

// What the awaiters below ask the kernel; all run on the activity's own thread.
bool post_now(Activity& a, Payload& value);    // posts unless it must wait: true when posted
void post_later(Activity& a, Payload& value);  // suspends; the post happens before it resumes
bool input_ready(Activity& a);                 // next() can return without suspending
void wait_input(Activity& a);                  // suspends until input or end of frame
Envelope* take_input(Activity& a);             // the next input, or nullptr at end of frame
Payload& payload_of(Envelope& e) noexcept;
void free_envelope(Envelope* e) noexcept;
bool nothing_waiting(Activity& a);             // yield() can go on at once: no message waits for the thread
void yield_to_waiting(Activity& a);            // suspends until the messages waiting now are handled

// What an operation asks the kernel about the DPS thread it runs on.
void* thread_state(Thread& t) noexcept;
NodeId thread_node(const Thread& t) noexcept;
std::ptrdiff_t thread_index(const Thread& t) noexcept;  // in its collection; -1 once removed
std::size_t collection_size(const Thread& t) noexcept;  // the threads its collection has now
void mark_phase(Thread& t, std::string_view name, bool begin);  // into the trace, if any

class [[nodiscard]] PostAwaiter {
 public:
  PostAwaiter(Activity& a, Payload value) : a_(&a), value_(std::move(value)) {}
  bool await_ready() { return post_now(*a_, value_); }
  void await_suspend(std::coroutine_handle<>) { post_later(*a_, value_); }
  void await_resume() const noexcept {}

 private:
  Activity* a_;
  Payload value_;
};

template <class In>
class [[nodiscard]] NextAwaiter {
 public:
  explicit NextAwaiter(Activity& a) : a_(&a) {}
  bool await_ready() { return input_ready(*a_); }
  void await_suspend(std::coroutine_handle<>) { wait_input(*a_); }
  std::optional<In> await_resume() {
    Envelope* e = take_input(*a_);
    if (!e) return std::nullopt;
    std::optional<In> value(payload_of(*e).take<In>());
    free_envelope(e);
    return value;
  }

 private:
  Activity* a_;
};

class [[nodiscard]] YieldAwaiter {
 public:
  explicit YieldAwaiter(Activity& a) : a_(&a) {}
  bool await_ready() { return nothing_waiting(*a_); }
  void await_suspend(std::coroutine_handle<>) { yield_to_waiting(*a_); }
  void await_resume() const noexcept {}

 private:
  Activity* a_;
};

struct OpAccess;

}  // namespace detail

template <class In, class Out, class State>
class Operation {
 public:
  using input_type = In;
  using output_type = Out;
  using state_type = State;

 protected:
  State& thread() noexcept { return *static_cast<State*>(detail::thread_state(*thread_)); }
  // A user phase of the trace (e.g. an LU iteration) begun or ended now, on whichever node this runs:
  // phases whose bounds only operations know, and which may overlap.
  void begin_phase(std::string_view name) const { detail::mark_phase(*thread_, name, true); }
  void end_phase(std::string_view name) const { detail::mark_phase(*thread_, name, false); }
  NodeId node() const noexcept { return detail::thread_node(*thread_); }
  // The position of the thread this runs on in its collection (-1 once it was removed), and the
  // collection's size now: what an operation that splits work among its collection's threads needs.
  std::ptrdiff_t thread_index() const noexcept { return detail::thread_index(*thread_); }
  std::size_t collection_size() const noexcept { return detail::collection_size(*thread_); }

  Activity* activity_ = nullptr;  // null for leaves

 private:
  friend struct detail::OpAccess;
  Thread* thread_ = nullptr;
};

namespace detail {
// What split, merge and stream share: posting outputs, and letting the thread's messages in.
template <class In, class Out, class State>
class Posting : public Operation<In, Out, State> {
 protected:
  PostAwaiter post(Out value) { return {*this->activity_, Payload::of(std::move(value))}; }
  // An atomic-step boundary where the messages waiting for this thread are handled, and the
  // operations they start run, before this one goes on. Free when none waits (a simulator always
  // ends the step here, so that what arrived while it ran is handled).
  YieldAwaiter yield() { return YieldAwaiter(*this->activity_); }
};
// What merge and stream share: taking the other inputs of their frame.
template <class In, class Out, class State>
class Collecting : public Posting<In, Out, State> {
 protected:
  NextAwaiter<In> next() { return NextAwaiter<In>(*this->activity_); }
};
}  // namespace detail

template <class In, class Out, class State = Stateless>
class Split : public detail::Posting<In, Out, State> {
 public:
  static constexpr OpKind kind = OpKind::Split;
};

template <class In, class Out, class State = Stateless>
class Leaf : public Operation<In, Out, State> {
 public:
  static constexpr OpKind kind = OpKind::Leaf;
};

template <class In, class Out, class State = Stateless>
class Merge : public detail::Collecting<In, Out, State> {
 public:
  static constexpr OpKind kind = OpKind::Merge;
};

template <class In, class Out, class State = Stateless>
class Stream : public detail::Collecting<In, Out, State> {
 public:
  static constexpr OpKind kind = OpKind::Stream;
};

namespace detail {

struct OpAccess {
  template <class Op>
  static void bind(Op& op, Thread& t, Activity* a) noexcept {
    op.thread_ = &t;
    op.activity_ = a;
  }
};

// The coroutine of one execution of a split, merge or stream, as the kernel drives it.
class Body {
 public:
  virtual ~Body() = default;
  // Builds the coroutine from the first input; it runs when the kernel resumes the handle.
  virtual std::coroutine_handle<> start(Thread& thread, Activity& activity, Payload&& first) = 0;
  virtual std::exception_ptr error() const noexcept = 0;
};

template <class Op>
class BodyOf final : public Body {
 public:
  std::coroutine_handle<> start(Thread& thread, Activity& activity, Payload&& first) override {
    OpAccess::bind(op_, thread, &activity);
    step_ = op_.execute(first.take<typename Op::input_type>());
    return step_.handle();
  }
  std::exception_ptr error() const noexcept override { return step_.error(); }

 private:
  Op op_;
  Step step_;  // destroyed before op_, whose `this` the coroutine holds
};

}  // namespace detail
}  // namespace dps
