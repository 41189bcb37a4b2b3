#include "dps/net/scheduler_link.hpp"

#include "dps/job_protocol.hpp"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

namespace dps::net {

namespace {

constexpr std::string_view kPeerRole = "dps-scheduler-peer", kDaemonRole = "dps-scheduler";

// A connected socket to HOST:PORT, or -1 with `why` set.
int dial(const std::string& address, std::string& why) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size())
    throw std::runtime_error("the scheduler's address must be HOST:PORT, got '" + address + "'");
  const std::string host = address.substr(0, colon), port = address.substr(colon + 1);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int e = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found); e != 0)
    throw std::runtime_error("the scheduler's address '" + address + "': " + ::gai_strerror(e));
  int fd = -1;
  for (addrinfo* a = found; a && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd >= 0 && ::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      why = std::strerror(errno);
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  return fd;
}

}  // namespace

int connect_to_scheduler(const std::string& address, const std::string& who, const Secret& secret, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  std::string why;
  int fd = dial(address, why);
  while (fd < 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    fd = dial(address, why);
  }
  if (fd < 0) throw std::runtime_error("cannot reach the scheduler at " + address + ": " + why);
  job_protocol::LineSocket link(fd);
  const auto fail = [&](const std::string& what) -> std::runtime_error {
    return std::runtime_error("the scheduler at " + address + " " + what);
  };
  const auto challenge = link.read_line();
  const auto w = challenge ? job_protocol::words_of(*challenge) : std::vector<std::string_view>{};
  Nonce theirs{}, mine = fresh_nonce();
  if (w.size() != 2 || w[0] != "challenge" || !from_hex(w[1], theirs)) throw fail("did not send its challenge");
  const std::string hello = who + " " + to_hex(mine) + " " + to_hex(secret.prove(kPeerRole, theirs, mine)) + "\n";
  if (!link.write_line(hello)) throw fail("closed the connection");
  const auto answer = link.read_line();
  const auto a = answer ? job_protocol::words_of(*answer) : std::vector<std::string_view>{};
  if (!a.empty() && a[0] == "refused")
    throw fail("refused " + who + ": " + (answer->size() > 8 ? answer->substr(8) : std::string("no reason given")));
  Digest proof{};
  if (a.size() != 2 || a[0] != "welcome" || !from_hex(a[1], proof)) throw fail("did not answer the handshake");
  if (!same(proof, secret.prove(kDaemonRole, mine, theirs))) throw fail("does not hold the secret: not our scheduler");
  return ::dup(link.fd());  // the LineSocket closes its own
}

std::string challenge_line(const Nonce& mine) { return "challenge " + to_hex(mine) + "\n"; }

std::optional<Hello> parse_hello(std::string_view line) {
  const auto w = job_protocol::words_of(line);
  Hello h;
  std::size_t at = 1;
  if (w.size() == 3 && w[0] == "client") {
    h.client = true;
  } else if (w.size() == 4 && w[0] == "job") {
    const auto [end, error] = std::from_chars(w[1].data(), w[1].data() + w[1].size(), h.job);
    if (error != std::errc{} || end != w[1].data() + w[1].size()) return std::nullopt;
    at = 2;
  } else {
    return std::nullopt;
  }
  if (!from_hex(w[at], h.nonce) || !from_hex(w[at + 1], h.proof)) return std::nullopt;
  return h;
}

bool proven(const Hello& hello, const Secret& secret, const Nonce& mine) {
  return same(hello.proof, secret.prove(kPeerRole, mine, hello.nonce));
}

std::string welcome_line(const Hello& hello, const Secret& secret, const Nonce& mine) {
  return "welcome " + to_hex(secret.prove(kDaemonRole, hello.nonce, mine)) + "\n";
}

}  // namespace dps::net
