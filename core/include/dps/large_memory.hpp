// Memory for large arrays and images. Faulting a fresh page in can cost far more than copying it (on
// a virtual machine, 23 µs per 4 KiB page: 40 times a warm copy), so buffers of megabytes ask the
// kernel for transparent huge pages, one fault per 2 MiB.
//
//   void* p = dps::detail::allocate_large(bytes);    // released with std::free
//   dps::detail::reserve_large(image, bytes);         // image: a std::string, emptied, with room
//   image.append(bytes_from_the_wire);
#pragma once

#include <cstddef>
#include <string>

namespace dps::detail {

// `bytes` of memory aligned to a cache line, released with std::free; a block of a huge page or more
// is aligned to one and advised to use them. Throws std::bad_alloc.
void* allocate_large(std::size_t bytes);

// Asks for huge pages in the whole huge pages of [data, data + bytes), a buffer not yet written (the
// pages already faulted in stay small). Does nothing where the system has none to give.
void advise_huge_pages(void* data, std::size_t bytes) noexcept;

// Empties `s` and gives it room for `bytes`: its own buffer when large enough (its pages are in),
// else a fresh one advised to use huge pages.
inline void reserve_large(std::string& s, std::size_t bytes) {
  s.clear();
  if (s.capacity() >= bytes) return;
  std::string fresh;
  fresh.reserve(bytes);
  advise_huge_pages(fresh.data(), bytes);
  s.swap(fresh);
}

}  // namespace dps::detail
