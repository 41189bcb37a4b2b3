// LargeArray<T>: a payload array that knows its size without necessarily holding its data.
//
//   struct Block { dps::LargeArray<double> a;  template <class A> void serialize(A& ar) { ar(a); } };
//   Block b{dps::LargeArray<double>(r * r)};          // r*r doubles, or none at all under NOALLOC
//   if (b.a.allocated()) kernel(b.a.data());          // real runs always allocate
//
// A simulation in NOALLOC mode (Schaeli, Gerlach & Hersch, "A simulator for adaptive parallel applications", §4, §7)
// constructs these without memory; transfers are still sized by size() * sizeof(T), through dps::wire_size. Copies are
// deep; moves are free. Received in a large frame, the array takes the frame's buffer over instead of copying its
// elements out of it.
#pragma once

#include "dps/large_memory.hpp"
#include "dps/wire_archive.hpp"
#include "dps/wire_size.hpp"

#include <cereal/cereal.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace dps {

namespace detail {
bool payload_allocation_enabled() noexcept;  // false in NOALLOC simulations
}  // namespace detail

template <class T>
class LargeArray {
  static_assert(std::is_trivially_copyable_v<T>, "LargeArray holds trivially copyable elements");
  static_assert(alignof(T) <= 64, "LargeArray holds elements aligned to a cache line at most");

 public:
  LargeArray() = default;
  // Allocates (zero-initialized) unless the running simulation suppresses payload allocation.
  explicit LargeArray(std::size_t count) : size_(count) {
    if (detail::payload_allocation_enabled()) std::uninitialized_value_construct_n(allocate(), count);
  }
  // For an array the caller fills at once: no zeroing pass over memory it is about to write.
  static LargeArray uninitialized(std::size_t count) {
    LargeArray a;
    a.size_ = count;
    if (detail::payload_allocation_enabled()) a.allocate();
    return a;
  }
  LargeArray(const LargeArray& other) : size_(other.size_) {
    if (other.data_) std::copy_n(other.data_.get(), size_, allocate());
  }
  LargeArray& operator=(const LargeArray& other) {
    if (this != &other) *this = LargeArray(other);
    return *this;
  }
  LargeArray(LargeArray&&) noexcept = default;
  LargeArray& operator=(LargeArray&&) noexcept = default;

  std::size_t size() const noexcept { return size_; }
  std::size_t bytes() const noexcept { return size_ * sizeof(T); }
  bool allocated() const noexcept { return data_ != nullptr; }
  T* data() noexcept { return data_.get(); }
  const T* data() const noexcept { return data_.get(); }
  std::span<T> span() noexcept { return {data_.get(), data_ ? size_ : 0}; }
  std::span<const T> span() const noexcept { return {data_.get(), data_ ? size_ : 0}; }
  T& operator[](std::size_t i) noexcept { return data_[i]; }
  const T& operator[](std::size_t i) const noexcept { return data_[i]; }

  std::size_t wire_size() const noexcept { return sizeof(cereal::size_type) + bytes(); }

  template <class Archive>
  void save(Archive& ar) const {
    ar(cereal::make_size_tag(static_cast<cereal::size_type>(size_)));
    if constexpr (std::is_same_v<Archive, SizeArchive>) {
      ar.add(bytes());
    } else {
      if (size_ && !data_) throw std::logic_error("dps::LargeArray: cannot serialize an unallocated array");
      ar(cereal::binary_data(data_.get(), bytes()));
    }
  }
  template <class Archive>
  void load(Archive& ar) {
    cereal::size_type count = 0;
    ar(cereal::make_size_tag(count));
    if constexpr (std::is_same_v<Archive, WireReader>) {  // checked, then taken over where it lies
      if (count > ar.remaining() / sizeof(T))
        throw WireError("an array of " + std::to_string(count) + " elements with " + std::to_string(ar.remaining()) +
                        " bytes left");
      size_ = static_cast<std::size_t>(count);
      void* base = nullptr;
      if (T* in_place = ar.template adopt<T>(bytes(), base)) {
        data_ = Data(in_place, Free{base});
        return;
      }
    }
    size_ = static_cast<std::size_t>(count);
    ar(cereal::binary_data(allocate(), bytes()));
  }

 private:
  // Frees the elements: an allocation of the array's own, or the received buffer it took over.
  struct Free {
    void* base = nullptr;
    void operator()(T* p) const noexcept { std::free(base ? base : p); }
  };
  using Data = std::unique_ptr<T[], Free>;

  // Room for size_ elements, not constructed (trivially copyable: they are once written).
  T* allocate() {
    data_ = Data(static_cast<T*>(detail::allocate_large(bytes())));
    return data_.get();
  }

  std::size_t size_ = 0;
  Data data_;
};

}  // namespace dps
