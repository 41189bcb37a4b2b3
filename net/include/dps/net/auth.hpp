// The shared secret of an application and the challenge-response that proves it (HMAC-SHA256).
// The launcher generates the secret and hands it to the instances it starts (or takes DPS_SECRET);
// both ends of every connection prove they know it, over fresh nonces, without sending it.
//
//   Secret s = Secret::generate();                 // or Secret::from_hex(getenv("DPS_SECRET"))
//   Digest mine = s.prove("acceptor", their_nonce, my_nonce);
//   bool ok = same(mine, received);                // constant time
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace dps::net {

using Nonce = std::array<std::uint8_t, 16>;
using Digest = std::array<std::uint8_t, 32>;

Nonce fresh_nonce();
bool same(const Digest& a, const Digest& b) noexcept;  // constant time
std::string to_hex(std::span<const std::uint8_t> bytes);
bool from_hex(std::string_view hex, std::span<std::uint8_t> out);  // false unless exactly 2 digits a byte

class Secret {
 public:
  static Secret generate();
  static Secret from_hex(std::string_view hex);  // throws std::invalid_argument
  std::string hex() const;

  // HMAC-SHA256(secret, role | first | second): what one side of a handshake shows the other.
  Digest prove(std::string_view role, const Nonce& first, const Nonce& second) const;

 private:
  std::array<std::uint8_t, 32> key_{};
};

}  // namespace dps::net
