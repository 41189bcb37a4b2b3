// The frames a TCP connection between two node processes carries: a fixed 24-byte header, then
// `length` bytes of body. Little-endian (the only byte order of the clusters we target; a big-endian
// peer fails the magic check, it does not misread).
//
//   FrameHeader h{.kind = FrameKind::Envelope, .length = n, .sender = me};
//   if (auto reason = h.check(limits)) close_connection(*reason);
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace dps::net {

enum class FrameKind : std::uint16_t {
  Hello = 1,    // connector -> acceptor: who I am, my nonce
  Challenge,    // acceptor -> connector: the acceptor's nonce and its proof
  Proof,        // connector -> acceptor: the connector's proof
  Envelope,     // an envelope for a thread of the receiving node
  Directive,    // the kernel's replication and coordination messages (protocol.hpp)
  Heartbeat,    // "still alive", sent when a link is otherwise idle
};
inline constexpr std::uint16_t kLastFrameKind = static_cast<std::uint16_t>(FrameKind::Heartbeat);

struct FrameHeader {
  static constexpr std::uint32_t kMagic = 0x31535044;  // "DPS1"
  static constexpr std::uint16_t kVersion = 2;         // 2: `sent` added
  static constexpr std::size_t kSize = 24;

  std::uint32_t magic = kMagic;
  std::uint16_t version = kVersion;
  FrameKind kind = FrameKind::Envelope;
  std::uint32_t length = 0;  // body bytes
  std::uint32_t sender = 0;  // node id of the sending process
  // When the frame's first byte was handed to the socket, on the sender's Connection::Handler::now()
  // (node 0's clock): where a traced transfer starts. Stamped by Connection, not checked.
  double sent = 0;

  // Why a received header is unacceptable, or nothing.
  std::optional<std::string> check(std::size_t max_body) const {
    if (magic != kMagic) return "bad magic (not a DPS peer)";
    if (version != kVersion) return "protocol version " + std::to_string(version) + ", expected " + std::to_string(kVersion);
    const auto k = static_cast<std::uint16_t>(kind);
    if (k == 0 || k > kLastFrameKind) return "unknown frame kind " + std::to_string(k);
    if (length > max_body)
      return "oversized frame: " + std::to_string(length) + " bytes, limit " + std::to_string(max_body);
    return std::nullopt;
  }
};
static_assert(sizeof(FrameHeader) == FrameHeader::kSize);

}  // namespace dps::net
