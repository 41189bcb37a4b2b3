// The decoders of received frames under 100 000 random and mutated inputs (seeded, so a failure
// replays): header check, directives, envelopes, and a Connection reading the bytes as a stream.
// Every valid frame decodes to what was encoded; every other input decodes or is refused with
// WireError / NotYetKnown, never a crash, another exception, a leak or a hang.
#include "fuzz/decoder_input.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <random>
#include <typeinfo>
#include <variant>

namespace dps::fuzz {
namespace {

using net::FrameHeader;

DecoderTargets& targets() {
  static DecoderTargets t;
  return t;
}

// Corrupts valid frames the ways a broken link or a hostile peer would.
class Mutator {
 public:
  Mutator(std::uint64_t seed, const std::vector<Seed>& seeds) : rng_(seed), seeds_(seeds) {}

  std::vector<std::byte> next() {
    std::vector<std::byte> b;
    switch (below(20)) {
      case 0: b = random_bytes(below(97)); break;  // noise
      case 1: {                                    // a good header over noise
        const auto kind = below(2) ? net::FrameKind::Envelope : net::FrameKind::Directive;
        b = DecoderTargets::frame(kind, random_bytes(below(97)));
        break;
      }
      default:
        b = pick().frame;
        for (auto n = 1 + below(3); n > 0; --n) mutate(b);
        if (b.size() >= FrameHeader::kSize && below(2)) set_length(b, b.size() - FrameHeader::kSize);  // deliverable
    }
    return b;
  }

  std::uint64_t below(std::uint64_t n) { return n ? rng_() % n : 0; }

 private:
  const Seed& pick() { return seeds_[below(seeds_.size())]; }
  std::vector<std::byte> random_bytes(std::size_t n) {
    std::vector<std::byte> b(n);
    for (auto& x : b) x = std::byte(rng_());
    return b;
  }
  static void set_length(std::vector<std::byte>& b, std::uint64_t length) {
    const auto l = static_cast<std::uint32_t>(length);
    std::memcpy(b.data() + offsetof(FrameHeader, length), &l, sizeof l);
  }
  std::uint64_t interesting(std::size_t left) {
    const std::uint64_t values[] = {0,           1,
                                    2,           24,
                                    0x7f,        0xff,
                                    left,        left - 1,
                                    left + 1,    0x7fffffff,
                                    0x80000000,  0xffffffff,
                                    0x100000000, 0x7fffffffffffffff,
                                    UINT64_MAX,  UINT64_MAX - 1};
    return values[below(std::size(values))];
  }

  void mutate(std::vector<std::byte>& b) {
    const std::size_t at = below(b.size() + 1);
    switch (below(12)) {
      case 0:  // bit flips
        for (auto n = 1 + below(8); n > 0 && !b.empty(); --n) b[below(b.size())] ^= std::byte(1u << below(8));
        break;
      case 1:  // random bytes
        for (auto n = 1 + below(4); n > 0 && !b.empty(); --n) b[below(b.size())] = std::byte(rng_());
        break;
      case 2: b.resize(at); break;  // truncation
      case 3: {                     // insertion
        const auto more = random_bytes(1 + below(8));
        b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), more.begin(), more.end());
        break;
      }
      case 4:  // deletion
        b.erase(b.begin() + static_cast<std::ptrdiff_t>(at),
                b.begin() + static_cast<std::ptrdiff_t>(std::min(b.size(), at + 1 + below(8))));
        break;
      case 5:    // a length, count, id or index field set to a boundary value
      case 6: {  // (at the body's start, where the variant index and thread uid lie, half the time)
        const std::size_t width = below(2) ? 4 : 8;
        const std::size_t where = below(2) ? FrameHeader::kSize + 8 * below(3) : at;
        if (where + width > b.size()) break;
        const std::uint64_t v = interesting(b.size() - where - width);
        std::memcpy(b.data() + where, &v, width);
        break;
      }
      case 7: {  // the header's length: huge, zero, off by a little
        if (b.size() < FrameHeader::kSize) break;
        const std::uint64_t body = b.size() - FrameHeader::kSize;
        const std::uint64_t values[] = {
            0, 1, body - 1, body + 1, DecoderTargets::kMaxBody, DecoderTargets::kMaxBody + 1, 1u << 30, 0xffffffff};
        set_length(b, values[below(std::size(values))]);
        break;
      }
      case 8: {  // splice: this frame's start, another's end
        const auto& other = pick().frame;
        const std::size_t from = below(other.size() + 1);
        b.resize(at);
        b.insert(b.end(), other.begin() + static_cast<std::ptrdiff_t>(from), other.end());
        break;
      }
      case 9: {  // two frames back to back
        const auto& other = pick().frame;
        b.insert(b.end(), other.begin(), other.end());
        break;
      }
      case 10: {  // a range repeated
        if (b.empty()) break;
        const std::size_t from = below(b.size()), n = 1 + below(std::min<std::size_t>(16, b.size() - from));
        const std::vector<std::byte> copy(b.begin() + static_cast<std::ptrdiff_t>(from),
                                          b.begin() + static_cast<std::ptrdiff_t>(from + n));
        b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), copy.begin(), copy.end());
        break;
      }
      case 11:  // the frame kind or an enum byte
        if (b.size() > FrameHeader::kSize + 8) b[below(2) ? 6 : FrameHeader::kSize + 8] = std::byte(below(12));
        break;
    }
  }

  std::mt19937_64 rng_;
  const std::vector<Seed>& seeds_;
};

template <class T>
bool same_payload(const Envelope& a, const Envelope& b) {
  return a.payload.get<T>() == b.payload.get<T>();
}

TEST(DecoderFuzz, ValidFramesDecodeToWhatWasEncoded) {
  const auto seeds = targets().seeds();
  std::vector<std::byte> all;
  for (const Seed& s : seeds) {
    SCOPED_TRACE(s.name);
    all.insert(all.end(), s.frame.begin(), s.frame.end());
    const Outcome o = targets().feed(s.frame);
    EXPECT_TRUE(o.header_ok);
    EXPECT_EQ(o.stream_frames, 1u);
    EXPECT_EQ(o.stream_reason, "closed by peer");
    FrameHeader h;
    std::memcpy(&h, s.frame.data(), sizeof h);
    if (h.kind == net::FrameKind::Directive) {
      EXPECT_EQ(o.directive, Result::Decoded);
    }
    if (h.kind != net::FrameKind::Envelope) continue;
    ASSERT_EQ(o.envelope, Result::Decoded);
    // Field by field, not only byte for byte.
    const auto d = net::decode(targets().runtime(), std::span(s.frame).subspan(FrameHeader::kSize));
    const std::unique_ptr<Envelope> got(d.envelope);
    const Envelope& want = *s.envelope;
    EXPECT_EQ(d.to, s.to);
    ASSERT_EQ(got->kind, want.kind);
    if (want.kind == Message::Data) {
      EXPECT_EQ(got->graph, want.graph);
      EXPECT_EQ(got->vertex, want.vertex);
      EXPECT_EQ(got->call, want.call);
      EXPECT_EQ(got->seq, want.seq);
      ASSERT_EQ(got->frames.size(), want.frames.size());
      for (std::uint32_t i = 0; i < want.frames.size(); ++i) {
        EXPECT_EQ(got->frames[i].id, want.frames[i].id);
        EXPECT_EQ(got->frames[i].home, want.frames[i].home);
        EXPECT_EQ(got->frames[i].parent_seq, want.frames[i].parent_seq);
      }
      EXPECT_EQ(got->stamp.from, want.stamp.from);
      EXPECT_EQ(got->stamp.link, want.stamp.link);
      EXPECT_EQ(got->stamp.epoch, want.stamp.epoch);
      EXPECT_EQ(got->stamp.committed, want.stamp.committed);
      EXPECT_EQ(got->stamp.base, want.stamp.base);
      EXPECT_EQ(got->stamp.time, want.stamp.time);
      EXPECT_EQ(got->stamp.earlier_life, want.stamp.earlier_life);
      ASSERT_EQ(got->determinants != nullptr, want.determinants != nullptr);
      if (want.determinants) {
        ASSERT_EQ(got->determinants->runs.size(), want.determinants->runs.size());
        for (std::size_t i = 0; i < want.determinants->runs.size(); ++i) {
          EXPECT_EQ(got->determinants->runs[i].owner, want.determinants->runs[i].owner);
          EXPECT_EQ(got->determinants->runs[i].first, want.determinants->runs[i].first);
          EXPECT_EQ(got->determinants->runs[i].entries, want.determinants->runs[i].entries);
        }
        EXPECT_EQ(got->determinants->stable, want.determinants->stable);
      }
      const bool same = want.vertex == 0   ? same_payload<Job>(*got, want)
                        : want.vertex == 1 ? same_payload<Piece>(*got, want)
                                           : same_payload<Sum>(*got, want);
      EXPECT_TRUE(same);
    } else {
      EXPECT_EQ(got->frame, want.frame);
      EXPECT_EQ(got->peer, want.peer);
      EXPECT_EQ(got->count, want.count);
      EXPECT_EQ(got->credit, want.credit);
    }
  }
  // All of them as one stream, written a few bytes at a time: every frame arrives, intact.
  const Outcome o = targets().feed(all, true, 5);
  EXPECT_EQ(o.stream_frames, seeds.size());
  EXPECT_EQ(o.stream_reason, "closed by peer");
}

// Scalars with fewer valid values than bytes: a bool of 2, a variant index out of range.
TEST(DecoderFuzz, OutOfRangeBoolsAndVariantIndicesAreWireErrors) {
  std::vector<std::byte> added;
  {
    WireWriter out(added, SIZE_MAX);
    out(net::Directive(net::ThreadAdded{4, 99, 1, true, "x"}));
  }
  EXPECT_EQ(targets().feed(DecoderTargets::frame(net::FrameKind::Directive, added), false).directive, Result::Decoded);
  added[4 + 4 + 8 + 4] = std::byte{2};  // has_image, after the index, collection, uid and node
  EXPECT_EQ(targets().feed(DecoderTargets::frame(net::FrameKind::Directive, added), false).directive, Result::Refused);

  for (const auto index : {-1, static_cast<int>(std::variant_size_v<net::Directive>), 1 << 30}) {
    std::vector<std::byte> d(8, std::byte{0});
    std::memcpy(d.data(), &index, sizeof index);
    EXPECT_EQ(targets().feed(DecoderTargets::frame(net::FrameKind::Directive, d), false).directive, Result::Refused)
        << index;
  }
  // A payload's variant (Piece::tag) in an envelope.
  for (const Seed& s : targets().seeds()) {
    if (s.name != "data-piece-int") continue;
    auto frame = s.frame;
    const std::size_t tag = frame.size() - 2 /* alive */ - 4 /* int32 */ - 4 /* index */;
    ASSERT_EQ(std::to_integer<int>(frame[tag]), 0);
    frame[tag] = std::byte{7};
    EXPECT_EQ(targets().feed(frame, false).envelope, Result::Refused);
  }
}

TEST(DecoderFuzz, HundredThousandRandomAndMutatedFrames) {
  constexpr int kInputs = 100'000;
  constexpr int kStreamEvery = 4;  // a Connection per input costs a socket pair and a 256 KiB buffer
  const auto seeds = targets().seeds();
  Mutator mutator(0xD95F0221, seeds);
  int header_ok = 0, streamed = 0, frames = 0, failures = 0;
  int directives[3] = {}, envelopes[3] = {};
  for (int i = 0; i < kInputs && failures < 5; ++i) {
    const auto input = mutator.next();
    const std::size_t pieces[] = {1, 7, 16, 100, SIZE_MAX};
    const std::size_t piece = std::max(pieces[mutator.below(std::size(pieces))], input.size() / 32);  // few writes
    try {
      // Every other stream comes before authentication, where only small frames pass.
      const Outcome o = targets().feed(input, i % kStreamEvery == 0, piece, i / kStreamEvery % 2 == 0);
      header_ok += o.header_ok;
      ++directives[static_cast<int>(o.directive)];
      ++envelopes[static_cast<int>(o.envelope)];
      streamed += !o.stream_reason.empty();
      frames += static_cast<int>(o.stream_frames);
    } catch (const Mismatch& e) {
      ++failures;
      ADD_FAILURE() << "input " << i << ": " << e.what();
    } catch (const std::exception& e) {  // neither decoded nor refused with WireError / NotYetKnown
      ++failures;
      ADD_FAILURE() << "input " << i << " (" << hex(input) << "): " << typeid(e).name() << ": " << e.what();
    }
  }
  if (failures) return;
  // The inputs reached every outcome, so the checks above were not vacuous.
  std::printf(
      "%d inputs: %d good headers; directives %d decoded, %d refused; envelopes %d decoded, %d refused, "
      "%d not yet known; %d streams delivered %d frames\n",
      kInputs, header_ok, directives[0], directives[1], envelopes[0], envelopes[1], envelopes[2], streamed, frames);
  EXPECT_GT(header_ok, kInputs / 4);
  EXPECT_GT(directives[0], kInputs / 100);
  EXPECT_GT(directives[1], kInputs / 4);
  EXPECT_GT(envelopes[0], kInputs / 100);
  EXPECT_GT(envelopes[1], kInputs / 10);
  EXPECT_GT(envelopes[2], kInputs / 1000);
  EXPECT_EQ(streamed, kInputs / kStreamEvery);
  EXPECT_GT(frames, kInputs / kStreamEvery / 4);
}

}  // namespace
}  // namespace dps::fuzz
