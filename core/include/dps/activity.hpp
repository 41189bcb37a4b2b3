// Activity: one running execution of a split, merge or stream, i.e. an operation instance whose
// coroutine may suspend. Leaves are atomic and need none. The kernel creates an activity when the
// operation's first input arrives, resumes it step by step on its thread, and destroys it when the
// coroutine ends (or when its call fails).
#pragma once

#include "dps/detail/frames.hpp"
#include "dps/detail/graph_core.hpp"
#include "dps/envelope.hpp"

#include <coroutine>
#include <cstdint>
#include <deque>
#include <exception>

namespace dps {

class Activity {
 public:
  enum class State : std::uint8_t { Created, Ready, Running, WaitInput, WaitCredit, Yielded, Finished };

  Activity() = default;
  Activity(const Activity&) = delete;
  Activity& operator=(const Activity&) = delete;
  virtual ~Activity();

  // Builds the coroutine from the first input; it runs when the thread resumes it.
  virtual void start(Payload&& first) = 0;
  virtual std::exception_ptr error() const noexcept = 0;

  const VertexSpec& spec() const noexcept { return (*graph)[vertex]; }
  OpKind kind() const noexcept { return spec().kind(); }

  Thread* thread = nullptr;
  const GraphCore* graph = nullptr;
  std::uint32_t vertex = 0;
  CallId call = 0;
  std::coroutine_handle<> handle;
  State state = State::Created;

  // Output side. Split and stream: the frame it opened, pushed on out_frames. Merge: out_frames is
  // its input's stack without the closed frame, and out_seq the position of its single output.
  FrameStack out_frames;
  FrameId out_frame = 0;
  std::uint64_t posted = 0;
  std::uint64_t out_seq = 0;
  Payload held;                       // a post waiting for flow-control credit; a merge's output until it ends
  detail::FrameHome* home = nullptr;  // split and stream: the record of the frame it opened

  // Input side (merge and stream).
  FrameId in_frame = 0;
  detail::FrameSlot* slot = nullptr;
  std::deque<Envelope*> inputs;
};

namespace detail {

// What the awaiters of operation.hpp ask the kernel; all run on the activity's own thread.
bool post_now(Activity& a, Payload& value);    // posts unless it must wait: true when posted
void post_later(Activity& a, Payload& value);  // suspends; the post happens before it resumes
bool input_ready(Activity& a);                 // next() can return without suspending
void wait_input(Activity& a);                  // suspends until input or end of frame
Envelope* take_input(Activity& a);             // the next input, or nullptr at end of frame
bool nothing_waiting(Activity& a);             // yield() can go on at once: no message waits for the thread
void yield_to_waiting(Activity& a);            // suspends until the messages waiting now are handled

}  // namespace detail
}  // namespace dps
