// The handshake that opens a connection to a cluster's scheduler daemon (dps-scheduler), before the
// job protocol's lines (dps/job_protocol.hpp) or a client's requests flow: the daemon sends a nonce,
// the peer names itself and proves it holds a secret (HMAC-SHA256 over both nonces), and the daemon
// proves it back. A job proves its own secret (the DPS_SECRET its node processes share), a client the
// cluster's. Nothing secret crosses the wire.
//   daemon -> peer:  "challenge NONCE"
//   peer -> daemon:  "job ID NONCE PROOF"  or  "client NONCE PROOF"
//   daemon -> peer:  "welcome PROOF"  or  "refused REASON" (and it closes)
//
//   int fd = dps::net::connect_to_scheduler("head:7700", "job 12", secret);   // a job's node 0
//   dps::job_protocol::LineSocket link(fd);
#pragma once

#include "dps/net/auth.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dps::net {

// The peer's side: connects to `address` (HOST:PORT), retrying for `timeout_s` while nothing listens
// (a daemon restarting), and proves it is `who` ("job ID" or "client") holding `secret`. Returns the
// socket, blocking. Throws std::runtime_error with a one-line reason (refused, or the daemon's proof
// wrong).
int connect_to_scheduler(const std::string& address, const std::string& who, const Secret& secret,
                         double timeout_s = 30);

// The daemon's side, a line at a time.
std::string challenge_line(const Nonce& mine);
struct Hello {
  bool client = false;
  std::uint64_t job = 0;  // a job's id
  Nonce nonce{};
  Digest proof{};
};
std::optional<Hello> parse_hello(std::string_view line);  // nullopt: not a hello
bool proven(const Hello& hello, const Secret& secret, const Nonce& mine);
std::string welcome_line(const Hello& hello, const Secret& secret, const Nonce& mine);

}  // namespace dps::net
