// WireWriter and WireReader: the cereal binary archives of objects crossing processes.
//
//   std::vector<std::byte> head;
//   dps::WireWriter out(head);
//   out(block);                                   // small fields appended to `head` ...
//   for (const auto& s : out.segments()) ...      // ... large arrays kept by reference, sent in place
//
//   dps::WireReader in(bytes);                    // throws dps::WireError past the end of `bytes`
//   in(block);
//
// The writer copies fields into one buffer but keeps binary blocks of kReferenceAbove bytes or more
// (the data of a LargeArray, a std::vector of numbers) by reference, so a sender writes them to the
// socket from the object itself (scatter-gather) instead of copying them first. The reader checks
// every length against what is left, so a malformed or hostile message cannot make it read out of
// bounds or allocate more than the message holds, and every bool and variant index against the
// values it may take; whatever does not decode is a WireError. A message received into a WireBuffer
// of its own lends it to the reader: one large array of it takes the buffer over instead of copying.
#pragma once

#include "dps/large_memory.hpp"

#include <cereal/cereal.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace dps {

// A message that does not decode: truncated, oversized or not what its header announced.
struct WireError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class WireWriter : public cereal::OutputArchive<WireWriter, cereal::AllowEmptyClassElision> {
 public:
  static constexpr std::size_t kReferenceAbove = 16 * 1024;

  // A piece of the encoded message: bytes of the head buffer, or a block still inside its object.
  struct Segment {
    const std::byte* external;  // null: the next `size` bytes of the head buffer
    std::size_t size;
  };

  // reference_above: SIZE_MAX copies everything into head (for images kept after the objects go).
  explicit WireWriter(std::vector<std::byte>& head, std::size_t reference_above = kReferenceAbove)
      : cereal::OutputArchive<WireWriter, cereal::AllowEmptyClassElision>(this),
        head_(head),
        reference_above_(reference_above) {}

  void write(const void* data, std::size_t size) {
    if (size >= reference_above_) {
      close_inline();
      segments_.push_back({static_cast<const std::byte*>(data), size});
      return;
    }
    const auto* bytes = static_cast<const std::byte*>(data);
    head_.insert(head_.end(), bytes, bytes + size);
    inline_bytes_ += size;
  }
  template <class T>
  void put(T value) requires std::is_arithmetic_v<T> || std::is_enum_v<T> {
    write(&value, sizeof value);
  }

  // The message in order; valid while the written objects and the head buffer are.
  const std::vector<Segment>& segments() {
    close_inline();
    return segments_;
  }
  std::size_t size() {
    std::size_t total = 0;
    for (const Segment& s : segments()) total += s.size;
    return total;
  }

 private:
  void close_inline() {
    if (inline_bytes_) segments_.push_back({nullptr, inline_bytes_});
    inline_bytes_ = 0;
  }

  std::vector<std::byte>& head_;
  const std::size_t reference_above_;
  std::size_t inline_bytes_ = 0;
  std::vector<Segment> segments_;
};

// What `write(WireWriter&)` encodes, whole in `into`, its large blocks copied once into a buffer sized
// once (with huge pages when large), or into `into`'s own when it has the room: a thread's state, its
// checkpoint image, the copy of a sent object a thread keeps. A buffer written again has its pages.
template <class Write>
void encode_with(Write&& write, std::string& into) {
  std::vector<std::byte> head;
  head.reserve(256);  // the fields of most objects, in one allocation
  WireWriter out(head);
  write(out);
  detail::reserve_large(into, out.size());
  const std::byte* inline_bytes = head.data();
  for (const WireWriter::Segment& s : out.segments()) {
    const std::byte* from = s.external ? s.external : std::exchange(inline_bytes, inline_bytes + s.size);
    into.append(reinterpret_cast<const char*>(from), s.size);
  }
}
template <class T>
void encode_into(const T& value, std::string& into) {
  // cereal's serialize() takes it non-const; writing only reads it
  encode_with([&](WireWriter& out) { out(const_cast<T&>(value)); }, into);
}
template <class T>
std::string encoded(const T& value) {
  std::string whole;
  encode_into(value, whole);
  return whole;
}

// The buffer of one received message (a large frame, read apart from the others), from
// detail::allocate_large, and given away whole to the large array that takes it over (released, the
// caller frees it with std::free).
class WireBuffer {
 public:
  explicit WireBuffer(std::size_t size) : data_(static_cast<std::byte*>(detail::allocate_large(size))), size_(size) {}
  WireBuffer(const WireBuffer&) = delete;
  WireBuffer& operator=(const WireBuffer&) = delete;
  ~WireBuffer() { std::free(data_); }

  std::byte* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  bool released() const noexcept { return data_ == nullptr; }
  std::byte* release() noexcept {
    std::byte* p = data_;
    data_ = nullptr;
    return p;
  }

 private:
  std::byte* data_;
  std::size_t size_;
};

class WireReader : public cereal::InputArchive<WireReader, cereal::AllowEmptyClassElision> {
 public:
  // Blocks of at least this many bytes are taken over from a lent buffer rather than copied.
  static constexpr std::size_t kAdoptAbove = 16 * 1024;

  // `buffer`, when the bytes lie in one of their own, may be given away to one large array.
  explicit WireReader(std::span<const std::byte> bytes, WireBuffer* buffer = nullptr)
      : cereal::InputArchive<WireReader, cereal::AllowEmptyClassElision>(this), bytes_(bytes), buffer_(buffer) {}

  // The next `size` bytes as elements of T where they lie, and in `base` the allocation to free once
  // done (std::free); null when they cannot be taken over (no buffer lent, given away already, too
  // small to be worth it, short, or misaligned for T): read() copies them then.
  template <class T>
  T* adopt(std::size_t size, void*& base) noexcept {
    if (!buffer_ || buffer_->released() || size < kAdoptAbove || size > remaining()) return nullptr;
    std::byte* at = const_cast<std::byte*>(bytes_.data()) + offset_;  // inside the lent buffer
    if (reinterpret_cast<std::uintptr_t>(at) % alignof(T) != 0) return nullptr;
    base = buffer_->release();
    offset_ += size;
    return reinterpret_cast<T*>(at);
  }

  void read(void* data, std::size_t size) {
    if (size > remaining())
      throw WireError("message truncated: " + std::to_string(size) + " bytes wanted at offset " +
                      std::to_string(offset_) + ", " + std::to_string(remaining()) + " left");
    if (size) std::memcpy(data, bytes_.data() + offset_, size);
    offset_ += size;
  }
  template <class T>
  T get() requires std::is_arithmetic_v<T> || std::is_enum_v<T> {
    T value;
    read(&value, sizeof value);
    return value;
  }
  // A count of elements still to come: each takes at least one byte, so a count beyond the rest of
  // the message is a lie (and would make a container allocate it).
  std::uint64_t count() {
    const auto n = get<std::uint64_t>();
    if (n > remaining())
      throw WireError("message announces " + std::to_string(n) + " elements at offset " + std::to_string(offset_) +
                      " with only " + std::to_string(remaining()) + " bytes left");
    return n;
  }
  // A std::string as cereal writes one (its size, its bytes), copied once into a buffer sized once:
  // a large one (a thread's image) costs a copy, not a zeroing pass and small pages faulted in.
  std::string get_string() {
    const std::string_view bytes = get_string_view();
    std::string s;
    detail::reserve_large(s, bytes.size());
    s.append(bytes);
    return s;
  }
  // The same bytes where they lie: valid as long as the message is.
  std::string_view get_string_view() {
    const std::uint64_t size = count();
    const std::string_view bytes(reinterpret_cast<const char*>(bytes_.data() + offset_), size);
    offset_ += size;
    return bytes;
  }
  std::size_t offset() const noexcept { return offset_; }
  std::size_t remaining() const noexcept { return bytes_.size() - offset_; }
  bool done() const noexcept { return offset_ == bytes_.size(); }

 private:
  std::span<const std::byte> bytes_;
  WireBuffer* buffer_;
  std::size_t offset_ = 0;
};

template <class T>
std::enable_if_t<std::is_arithmetic_v<T>> CEREAL_SAVE_FUNCTION_NAME(WireWriter& ar, const T& value) {
  ar.write(&value, sizeof value);
}
template <class T>
std::enable_if_t<std::is_arithmetic_v<T>> CEREAL_LOAD_FUNCTION_NAME(WireReader& ar, T& value) {
  ar.read(&value, sizeof value);
}
// Types with fewer valid values than their bytes can hold are checked like lengths: a bool byte
// other than 0 and 1 is undefined behaviour once read as a bool, and cereal's own variant loader
// throws cereal::Exception (not WireError) on an index that names no alternative.
inline void CEREAL_LOAD_FUNCTION_NAME(WireReader& ar, bool& value) {
  const auto byte = ar.get<std::uint8_t>();
  if (byte > 1)
    throw WireError("bool of value " + std::to_string(byte) + " at offset " + std::to_string(ar.offset() - 1));
  value = byte != 0;
}
namespace detail {
template <std::size_t I = 0, class... T>
void load_alternative(WireReader& ar, std::size_t index, std::variant<T...>& v) {
  if constexpr (I < sizeof...(T)) {
    if (index != I) return load_alternative<I + 1>(ar, index, v);
    ar(v.template emplace<I>());
  }
}
}  // namespace detail
template <class... T>
void CEREAL_LOAD_FUNCTION_NAME(WireReader& ar, std::variant<T...>& v) {
  const auto index = ar.get<std::int32_t>();  // as cereal's variant saver writes it
  if (index < 0 || static_cast<std::size_t>(index) >= sizeof...(T))
    throw WireError("variant index " + std::to_string(index) + " of " + std::to_string(sizeof...(T)) +
                    " alternatives at offset " + std::to_string(ar.offset() - 4));
  detail::load_alternative(ar, static_cast<std::size_t>(index), v);
}
template <class T>
void CEREAL_SAVE_FUNCTION_NAME(WireWriter& ar, const cereal::BinaryData<T>& data) {
  ar.write(data.data, static_cast<std::size_t>(data.size));
}
template <class T>
void CEREAL_LOAD_FUNCTION_NAME(WireReader& ar, cereal::BinaryData<T>& data) {
  ar.read(data.data, static_cast<std::size_t>(data.size));
}
template <class T>
void CEREAL_SAVE_FUNCTION_NAME(WireWriter& ar, const cereal::NameValuePair<T>& nvp) {
  ar(nvp.value);
}
template <class T>
void CEREAL_LOAD_FUNCTION_NAME(WireReader& ar, cereal::NameValuePair<T>& nvp) {
  ar(nvp.value);
}
template <class T>
void CEREAL_SAVE_FUNCTION_NAME(WireWriter& ar, const cereal::SizeTag<T>& tag) {
  ar.put(static_cast<std::uint64_t>(tag.size));
}
template <class T>
void CEREAL_LOAD_FUNCTION_NAME(WireReader& ar, cereal::SizeTag<T>& tag) {
  tag.size = static_cast<std::remove_reference_t<T>>(ar.count());
}

// The value `image` encodes (what encoded() wrote). Throws WireError on a malformed one.
template <class T>
T decoded(std::string_view image) {
  WireReader in(std::as_bytes(std::span(image.data(), image.size())));
  T value{};
  in(value);
  return value;
}

}  // namespace dps

CEREAL_REGISTER_ARCHIVE(dps::WireWriter)
CEREAL_REGISTER_ARCHIVE(dps::WireReader)
CEREAL_SETUP_ARCHIVE_TRAITS(dps::WireReader, dps::WireWriter)
