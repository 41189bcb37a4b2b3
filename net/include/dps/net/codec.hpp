// The body of an Envelope frame: an envelope with its kernel pointers turned into the ids every
// process shares (thread uids, graph ids) and its payload encoded by the type its vertex expects.
//
//   WireWriter out(head);  encode(*e, to, out);                 // sender
//   Decoded d = decode(runtime, body);  runtime.enqueue(*d.to, d.envelope);   // receiver (d.to: see below)
#pragma once

#include "dps/kernel/envelope.hpp"
#include "dps/kernel/runtime.hpp"
#include "dps/wire_archive.hpp"

#include <cstdint>
#include <span>
#include <stdexcept>

namespace dps::net {

// The envelope names a thread or graph this process has not heard of yet (the directive creating it
// is still on its way from node 0): keep the frame until it arrives.
struct NotYetKnown : std::runtime_error {
  explicit NotYetKnown(std::uint64_t key) : std::runtime_error("not yet known"), key(key) {}
  std::uint64_t key;  // thread uid, or graph id | kGraphKey
};
inline constexpr std::uint64_t kGraphKey = std::uint64_t{1} << 63;

void encode(const Envelope& e, const Thread& to, WireWriter& out);

struct Decoded {
  Thread* to;  // null: the thread is gone (Runtime::redirect). Valid while the caller holds an EpochGuard.
  Envelope* envelope;
};
// Throws WireError on a malformed body, NotYetKnown as above. `buffer`: the body's own, when it was
// read apart (a large array of the payload may take it over).
Decoded decode(const Runtime& runtime, std::span<const std::byte> body, WireBuffer* buffer = nullptr);

}  // namespace dps::net
