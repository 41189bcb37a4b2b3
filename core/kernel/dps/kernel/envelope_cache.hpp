// EnvelopeCache: freed envelope blocks kept by one DPS thread for its next allocations. Most envelopes
// are allocated and freed by the same strand (a split posts, its merge consumes), so this keeps them
// off the allocator. Only the strand that owns it touches it: no synchronization.
#pragma once

#include <cstdint>
#include <new>

namespace dps::detail {

class EnvelopeCache {
 public:
  static constexpr std::uint32_t kCapacity = 1024;

  EnvelopeCache() = default;
  EnvelopeCache(const EnvelopeCache&) = delete;
  EnvelopeCache& operator=(const EnvelopeCache&) = delete;

  void* pop() noexcept {
    Block* b = head_;
    if (b) {
      head_ = b->next;
      --size_;
    }
    return b;
  }
  bool push(void* p) noexcept {  // false when full: the caller frees the block
    if (size_ == kCapacity) return false;
    head_ = new (p) Block{head_};
    ++size_;
    return true;
  }

 private:
  struct Block {
    Block* next;
  };
  Block* head_ = nullptr;
  std::uint32_t size_ = 0;
};

}  // namespace dps::detail
