// Activity: one running execution of a split, merge or stream, i.e. an operation instance whose
// coroutine may suspend. Leaves are atomic and need none. The kernel creates an activity when the
// operation's first input arrives, resumes it step by step on its thread, and destroys it when the
// coroutine ends (or when its call fails). One allocation holds the record and the operation's body.
#pragma once

#include "dps/kernel/envelope.hpp"
#include "dps/kernel/frames.hpp"
#include "dps/kernel/graph_core.hpp"
#include "dps/operation.hpp"

#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <new>

namespace dps {

class Activity {
 public:
  enum class State : std::uint8_t { Created, Ready, Running, WaitInput, WaitCredit, Yielded, Finished };

  // An activity of the operation `type` (a split, merge or stream), with its body; free() ends it.
  static Activity* make(const detail::OpType& type);
  static void free(Activity* a) noexcept;
  Activity(const Activity&) = delete;
  Activity& operator=(const Activity&) = delete;

  // Builds the coroutine from the first input; it runs when the thread resumes it.
  void start(Payload&& first) { handle = body_->start(*thread, *this, std::move(first)); }
  std::exception_ptr error() const noexcept { return body_->error(); }

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

 private:
  explicit Activity(std::align_val_t align) noexcept : align_(align) {}
  ~Activity() = default;

  detail::Body* body_ = nullptr;  // in the same block, after the record
  std::align_val_t align_;        // the block's
};

}  // namespace dps
