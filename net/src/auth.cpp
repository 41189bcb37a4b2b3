// HMAC-SHA256 from OpenSSL; randomness from the kernel.
#include "dps/net/auth.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/random.h>

#include <stdexcept>
#include <vector>

namespace dps::net {

namespace {
void random_bytes(std::uint8_t* out, std::size_t n) {
  while (n) {
    const ssize_t got = ::getrandom(out, n, 0);
    if (got < 0) throw std::runtime_error("getrandom failed");
    out += got;
    n -= static_cast<std::size_t>(got);
  }
}
}  // namespace

Nonce fresh_nonce() {
  Nonce n;
  random_bytes(n.data(), n.size());
  return n;
}

bool same(const Digest& a, const Digest& b) noexcept { return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0; }

Secret Secret::generate() {
  Secret s;
  random_bytes(s.key_.data(), s.key_.size());
  return s;
}

std::string to_hex(std::span<const std::uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (std::uint8_t b : bytes) out += {kDigits[b >> 4], kDigits[b & 15]};
  return out;
}

bool from_hex(std::string_view hex, std::span<std::uint8_t> out) {
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  if (hex.size() != 2 * out.size()) return false;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const int high = digit(hex[2 * i]), low = digit(hex[2 * i + 1]);
    if (high < 0 || low < 0) return false;
    out[i] = static_cast<std::uint8_t>(high * 16 + low);
  }
  return true;
}

Secret Secret::from_hex(std::string_view hex) {
  Secret s;
  if (!net::from_hex(hex, s.key_))
    throw std::invalid_argument("DPS_SECRET must be " + std::to_string(2 * s.key_.size()) + " hex digits");
  return s;
}

std::string Secret::hex() const { return to_hex(key_); }

Digest Secret::prove(std::string_view role, const Nonce& first, const Nonce& second) const {
  std::vector<std::uint8_t> message(role.begin(), role.end());
  message.insert(message.end(), first.begin(), first.end());
  message.insert(message.end(), second.begin(), second.end());
  Digest d{};
  unsigned int len = 0;
  if (!HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()), message.data(), message.size(), d.data(), &len) ||
      len != d.size())
    throw std::runtime_error("HMAC-SHA256 failed");
  return d;
}

}  // namespace dps::net
