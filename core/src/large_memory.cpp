#include "dps/large_memory.hpp"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <new>

namespace dps::detail {

namespace {
constexpr std::size_t kHugePage = std::size_t{2} << 20;  // x86-64's and arm64's transparent huge page
constexpr std::size_t kCacheLine = 64;
}  // namespace

void* allocate_large(std::size_t bytes) {
  const std::size_t alignment = bytes >= kHugePage ? kHugePage : kCacheLine;
  void* p = std::aligned_alloc(alignment, (bytes + alignment - 1) / alignment * alignment);
  if (!p && bytes) throw std::bad_alloc();
  advise_huge_pages(p, bytes);
  return p;
}

void advise_huge_pages(void* data, std::size_t bytes) noexcept {
  const auto from = (reinterpret_cast<std::uintptr_t>(data) + kHugePage - 1) & ~(kHugePage - 1);
  const auto to = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(kHugePage - 1);
  if (to > from) ::madvise(reinterpret_cast<void*>(from), to - from, MADV_HUGEPAGE);  // a hint: failure is fine
}

}  // namespace dps::detail
