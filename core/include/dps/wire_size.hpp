// wire_size: the number of bytes an object occupies on the wire, computed without serializing it.
//
//   struct Block { dps::LargeArray<double> a; int k;
//                  template <class A> void serialize(A& ar) { ar(a, k); } };
//   std::size_t bytes = dps::wire_size(Block{dps::LargeArray<double>(1 << 20), 3});   // 8 MiB + a few
//
// SizeArchive is a cereal output archive that only counts: the simulator sizes transfers with it, and
// LargeArray reports its nominal size through it even when its data was never allocated (NOALLOC).
#pragma once

#include <cereal/cereal.hpp>

#include <cstddef>
#include <type_traits>

namespace dps {

class SizeArchive : public cereal::OutputArchive<SizeArchive, cereal::AllowEmptyClassElision> {
 public:
  SizeArchive() : cereal::OutputArchive<SizeArchive, cereal::AllowEmptyClassElision>(this) {}
  void add(std::size_t bytes) { bytes_ += bytes; }
  std::size_t bytes() const { return bytes_; }

 private:
  std::size_t bytes_ = 0;
};

template <class T>
std::enable_if_t<std::is_arithmetic_v<T>> CEREAL_SAVE_FUNCTION_NAME(SizeArchive& ar, const T&) {
  ar.add(sizeof(T));
}
template <class T>
void CEREAL_SAVE_FUNCTION_NAME(SizeArchive& ar, const cereal::BinaryData<T>& data) {
  ar.add(static_cast<std::size_t>(data.size));
}
template <class T>
void CEREAL_SAVE_FUNCTION_NAME(SizeArchive& ar, const cereal::NameValuePair<T>& nvp) {
  ar(nvp.value);
}
template <class T>
void CEREAL_SAVE_FUNCTION_NAME(SizeArchive& ar, const cereal::SizeTag<T>&) {
  ar.add(sizeof(cereal::size_type));
}

// Objects may define `std::size_t wire_size() const` themselves; otherwise their serialize() is counted.
template <class T>
std::size_t wire_size(const T& object) {
  if constexpr (requires {
                  { object.wire_size() } -> std::convertible_to<std::size_t>;
                }) {
    return object.wire_size();
  } else {
    SizeArchive ar;
    ar(object);
    return ar.bytes();
  }
}

}  // namespace dps

CEREAL_REGISTER_ARCHIVE(dps::SizeArchive)
