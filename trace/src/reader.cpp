// Reading a trace: the header, then block after block, each checked whole before its records are
// decoded; every failure names its byte offset.
#include "dps/trace/reader.hpp"

#include "codec.hpp"

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

namespace dps::trace {

using namespace codec;

TraceError::TraceError(std::uint64_t offset, const std::string& reason, const std::string& file)
    : std::runtime_error((file.empty() ? "" : file + ": ") + "byte " + std::to_string(offset) + ": " + reason),
      offset(offset),
      reason(reason) {}

namespace {

// The records of one block; `base` is the block payload's offset in the file, for errors.
class BlockReader {
 public:
  BlockReader(const std::uint8_t* data, std::size_t size, std::uint64_t base, Trace& trace)
      : data_(data), size_(size), base_(base), trace_(trace) {}

  void records(std::uint32_t count) {
    for (std::uint32_t i = 0; i < count; ++i) record();
    if (at_ != size_) fail("the block holds " + std::to_string(size_ - at_) + " bytes after its last record");
  }

 private:
  void record() {
    record_at_ = at_;
    switch (const std::uint8_t kind = byte()) {
      case kName: {
        const std::uint64_t n = varint();
        if (n > size_ - at_) fail("a name longer than its block");
        trace_.names.emplace_back(reinterpret_cast<const char*>(data_ + at_), n);
        at_ += n;
        return;
      }
      case kStep: {
        Step s;
        s.node = small(varint());
        s.thread = varint();
        s.collection = name(varint());
        s.operation = name(varint());
        s.call = varint();
        span(s.start, s.end);
        trace_.steps.push_back(s);
        return;
      }
      case kTransfer: {
        Transfer t;
        t.from = small(varint());
        t.to = small(varint());
        t.bytes = varint();
        span(t.start, t.end);
        trace_.transfers.push_back(t);
        return;
      }
      case kLifecycle: {
        Lifecycle c;
        const std::uint8_t k = byte();
        if (k > static_cast<std::uint8_t>(Change::ThreadReplayed))
          fail("unknown lifecycle change " + std::to_string(k));
        c.kind = static_cast<Change>(k);
        c.thread = varint();
        c.collection = name(varint());
        c.node = small(varint());
        c.to = small(varint());
        c.time = time();
        trace_.changes.push_back(c);
        return;
      }
      case kPhase: {
        Phase p;
        p.name = name(varint());
        const std::uint8_t begin = byte();
        if (begin > 1) fail("a phase neither begins nor ends");
        p.begin = begin == 1;
        p.time = time();
        trace_.phases.push_back(p);
        return;
      }
      case kCounter: {
        Counter c;
        c.name = name(varint());
        std::uint64_t bits = 0;
        for (int k = 0; k < 8; ++k) bits |= static_cast<std::uint64_t>(byte()) << (8 * k);
        std::memcpy(&c.value, &bits, sizeof bits);
        if (!std::isfinite(c.value)) fail("a counter's value is not a number");
        c.time = time();
        trace_.counters.push_back(c);
        return;
      }
      case kInfo: {
        Info i;
        i.key = name(varint());
        i.value = name(varint());
        trace_.info.push_back(i);
        return;
      }
      default: fail("unknown record kind " + std::to_string(kind));
    }
  }

  [[noreturn]] void fail(const std::string& what) const { throw TraceError(base_ + record_at_, what); }

  std::uint8_t byte() {
    if (at_ >= size_) fail("a record runs past the end of its block");
    return data_[at_++];
  }
  std::uint64_t varint() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      const std::uint8_t b = byte();
      v |= static_cast<std::uint64_t>(b & 0x7F) << shift;
      if (!(b & 0x80)) return v;
    }
    fail("a number longer than 64 bits");
  }
  std::uint32_t small(std::uint64_t v) const {
    if (v > UINT32_MAX) fail("a node number above 2^32");
    return static_cast<std::uint32_t>(v);
  }
  NameId name(std::uint64_t id) const {
    if (id >= trace_.names.size()) fail("name " + std::to_string(id) + " used before it was defined");
    return static_cast<NameId>(id);
  }
  double time() {
    clock_ += unzigzag(varint());
    return seconds(clock_);
  }
  void span(double& start, double& end) {
    const std::int64_t from = clock_ + unzigzag(varint());
    clock_ = from;
    const std::uint64_t d = varint();
    start = seconds(from);
    end = seconds(from + static_cast<std::int64_t>(d));
  }

  const std::uint8_t* data_;
  std::size_t size_, at_ = 0, record_at_ = 0;
  std::uint64_t base_;
  Trace& trace_;
  std::int64_t clock_ = 0;
};

}  // namespace

Trace parse(const std::string& bytes, Partial partial) {
  const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
  const std::size_t size = bytes.size();
  if (size < kFileHeader || std::memcmp(data, kFileMagic.data(), kFileMagic.size()) != 0)
    throw TraceError(0, "not a DPS trace (it does not begin with " + std::string(kFileMagic) + ")");
  if (const std::uint32_t version = get_u32(data + 8); version < kOldestVersion || version > kVersion)
    throw TraceError(8, "trace format version " + std::to_string(version) + ", this reader knows versions " +
                            std::to_string(kOldestVersion) + " to " + std::to_string(kVersion));
  Trace trace;
  std::uint64_t events = 0;
  auto ends_early = [&](std::uint64_t at, const std::string& why) {
    const std::string what = why + " (the run did not finish: " + std::to_string(events) + " events before it)";
    if (partial == Partial::reject) throw TraceError(at, what);
    trace.damage = "byte " + std::to_string(at) + ": " + what;
  };
  for (std::size_t at = kFileHeader;;) {
    if (at == size) {
      ends_early(at, "the file ends without its end mark");
      return trace;
    }
    if (size - at < kBlockHeader) {
      ends_early(at, "the file ends inside a block header");
      return trace;
    }
    const std::string_view tag(reinterpret_cast<const char*>(data + at), 4);
    if (tag == kEndTag) {
      const std::uint64_t count = get_u32(data + at + 8) | std::uint64_t{get_u32(data + at + 12)} << 32;
      if (count != events)
        throw TraceError(at, "the end mark counts " + std::to_string(count) + " events, the blocks hold " +
                                 std::to_string(events));
      if (at + kBlockHeader != size)
        throw TraceError(at + kBlockHeader, std::to_string(size - at - kBlockHeader) + " bytes after the end mark");
      return trace;
    }
    if (tag != kBlockTag) throw TraceError(at, "not a block (the file is corrupted)");
    const std::uint32_t length = get_u32(data + at + 4), records = get_u32(data + at + 8);
    const std::size_t payload = at + kBlockHeader;
    if (length > size - payload) {
      ends_early(at, "the block needs " + std::to_string(length) + " bytes, the file has " +
                         std::to_string(size - payload) + " more");
      return trace;
    }
    if (crc32(data + payload, length) != get_u32(data + at + 12))
      throw TraceError(at, "the block's checksum does not match its contents (the file is corrupted)");
    const std::size_t before = trace.events();
    BlockReader(data + payload, length, payload, trace).records(records);
    events += trace.events() - before;
    at = payload + length;
  }
}

Trace read(const std::string& path, Partial partial) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open the trace '" + path + "'");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  try {
    Trace trace = parse(bytes.str(), partial);
    if (!trace.damage.empty()) trace.damage = path + ": " + trace.damage;
    return trace;
  } catch (const TraceError& e) {
    throw TraceError(e.offset, e.reason, path);
  }
}

}  // namespace dps::trace
