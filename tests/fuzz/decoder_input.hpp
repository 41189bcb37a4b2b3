// Everything a received frame passes through, fed one input at a time: the frame header check, the
// directive decoder, the envelope decoder, and a real Connection reading the input as a byte stream.
// Shared by the seeded gtest (decoder_fuzz_test.cpp) and the libFuzzer target (decoder_fuzzer.cpp).
//
//   DecoderTargets targets;                          // a small graph on an in-process runtime
//   for (const Seed& s : targets.seeds()) ...        // valid frames, made by the real encoders
//   Outcome o = targets.feed(bytes);                 // throws Mismatch when a decoder misbehaves
//
// A decoder may accept an input or refuse it with WireError (or NotYetKnown for an envelope); any
// other exception escapes feed() as it is, and a broken promise (a decoded message that does not
// re-encode to the bytes it came from, a leaked payload object, a stream that neither delivers its
// frames nor closes with a reason) throws Mismatch.
#pragma once

#include <dps/dps.hpp>
#include <dps/net/codec.hpp>
#include <dps/net/frame.hpp>
#include <dps/net/protocol.hpp>

#include <asio.hpp>
#include <cereal/types/optional.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/variant.hpp>
#include <cereal/types/vector.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace dps::fuzz {

// A decoder broke its contract (not a refused input: those are WireError).
struct Mismatch : std::logic_error {
  using std::logic_error::logic_error;
};

// Counts the objects alive, so a payload a decoder drops on the floor is seen at once.
struct Alive {
  static inline std::atomic<long> count{0};
  std::uint16_t mark = 0;
  Alive() noexcept { ++count; }
  Alive(const Alive& o) noexcept : mark(o.mark) { ++count; }
  Alive& operator=(const Alive&) = default;
  ~Alive() { --count; }
  template <class A>
  void serialize(A& a) {
    a(mark);
  }
  bool operator==(const Alive& o) const { return mark == o.mark; }
};

// The data objects of the graph: strings, vectors, a bool, a variant and an optional, so the
// payload decoders walk cereal's container and sum-type loaders too.
struct Job {
  std::string name;
  std::vector<double> xs;
  bool exact = false;
  Alive alive;
  template <class A>
  void serialize(A& a) {
    a(name, xs, exact, alive);
  }
  bool operator==(const Job&) const = default;
};
struct Piece {
  std::int64_t first = 0, last = 0;
  std::variant<std::int32_t, std::string> tag;
  Alive alive;
  template <class A>
  void serialize(A& a) {
    a(first, last, tag, alive);
  }
  bool operator==(const Piece&) const = default;
};
struct Sum {
  double total = 0;
  std::vector<std::int32_t> parts;
  std::optional<std::string> note;
  Alive alive;
  template <class A>
  void serialize(A& a) {
    a(total, parts, note, alive);
  }
  bool operator==(const Sum&) const = default;
};

// A valid frame (header and body), and what it was made from.
struct Seed {
  std::string name;
  std::vector<std::byte> frame;
  std::shared_ptr<const Envelope> envelope;  // Envelope frames: the encoded envelope ...
  const Thread* to = nullptr;                // ... and its destination
};

// What each decoder made of one input.
enum class Result { Decoded, Refused, NotYetKnown };
struct Outcome {
  bool header_ok = false;  // the first FrameHeader::kSize bytes pass FrameHeader::check
  Result directive = Result::Refused;
  Result envelope = Result::Refused;
  std::size_t stream_frames = 0;  // frames the Connection delivered
  std::string stream_reason;      // why it closed ("" when the stream was not run)
};

// The first bytes of `bytes` in hex, for messages.
std::string hex(std::span<const std::byte> bytes, std::size_t at_most = 48);

class DecoderTargets {
 public:
  static constexpr std::size_t kMaxBody = 1 << 20;  // the Connection's limit (small: no huge buffers)

  DecoderTargets();
  ~DecoderTargets();

  const Runtime& runtime() const { return *runtime_; }
  std::vector<Seed> seeds() const;
  void write_corpus(const std::filesystem::path& dir) const;  // one file per seed

  // `body` is the input after its header's bytes (all of it when shorter). With `stream`, the whole
  // input also goes through a Connection, written in pieces of at most `piece` bytes; before
  // authentication unless `authenticated` (then only handshake-sized frames pass).
  Outcome feed(std::span<const std::byte> input, bool stream = true, std::size_t piece = SIZE_MAX,
               bool authenticated = true);

  static std::vector<std::byte> frame(net::FrameKind kind, std::span<const std::byte> body);

 private:
  Result directive(std::span<const std::byte> body) const;
  Result envelope(std::span<const std::byte> body) const;
  void stream(std::span<const std::byte> input, std::size_t piece, bool authenticated, Outcome& out);

  Application app_;
  const Runtime* runtime_;
  Threads<Stateless> master_, workers_;
  const GraphCore* graph_ = nullptr;
  asio::io_context io_;
};

}  // namespace dps::fuzz
