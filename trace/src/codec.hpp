// The trace file's building blocks, shared by the writer and the reader (docs/trace-format.md):
// its magic numbers, record kinds, LEB128 varints, zigzag for signed deltas, nanosecond times and
// the CRC-32 of each block.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace dps::trace::codec {

inline constexpr std::string_view kFileMagic = "DPSTRACE";
inline constexpr std::uint32_t kVersion = 2;   // written; version 1 (no counters) is read too
inline constexpr std::uint32_t kOldestVersion = 1;
inline constexpr std::size_t kFileHeader = 16;   // magic, version, reserved
inline constexpr std::string_view kBlockTag = "DPSB";
inline constexpr std::string_view kEndTag = "DPSE";
inline constexpr std::size_t kBlockHeader = 16;  // tag, payload bytes, records, CRC-32 of the payload

enum Kind : std::uint8_t { kName = 1, kStep, kTransfer, kLifecycle, kPhase, kInfo, kCounter };

inline std::int64_t nanoseconds(double seconds) { return std::llround(seconds * 1e9); }
inline double seconds(std::int64_t ns) { return static_cast<double>(ns) * 1e-9; }

inline std::uint64_t zigzag(std::int64_t v) {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
inline std::int64_t unzigzag(std::uint64_t v) {
  return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
}

template <class Bytes>
void put_varint(Bytes& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<std::uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<std::uint8_t>(v));
}

inline void put_u32(std::uint8_t* at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) at[i] = static_cast<std::uint8_t>(v >> (8 * i));
}
inline std::uint32_t get_u32(const std::uint8_t* at) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<std::uint32_t>(at[i]) << (8 * i);
  return v;
}

// CRC-32 (IEEE 802.3, as zlib and PNG compute it).
inline std::uint32_t crc32(const std::uint8_t* data, std::size_t n) {
  static constexpr auto table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  std::uint32_t c = 0xFFFFFFFFu;
  for (std::size_t i = 0; i < n; ++i) c = table[(c ^ data[i]) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

}  // namespace dps::trace::codec
