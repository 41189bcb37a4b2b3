// TraceWriter: records encoded into a block buffer, blocks appended to the file whole.
#include "dps/trace/writer.hpp"

#include "codec.hpp"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace dps::trace {

using namespace codec;

TraceWriter::TraceWriter(const std::string& path) : path_(path) {
  file_ = std::fopen(path.c_str(), "wb");
  if (!file_) throw std::runtime_error("cannot write the trace '" + path + "': " + std::strerror(errno));
  std::uint8_t header[kFileHeader] = {};
  std::memcpy(header, kFileMagic.data(), kFileMagic.size());
  put_u32(header + 8, kVersion);
  put(header, sizeof header);
  block_.reserve(kBlockBytes + 256);
}

TraceWriter::~TraceWriter() {
  try {
    close();
  } catch (const std::exception&) {
  }
}

NameId TraceWriter::name(std::string_view text) {
  if (auto it = names_.find(text); it != names_.end()) return it->second;
  const auto id = static_cast<NameId>(names_.size());
  names_.emplace(std::string(text), id);
  begin(kName);
  put_varint(block_, text.size());
  block_.insert(block_.end(), text.begin(), text.end());
  written();
  return id;
}

void TraceWriter::write(const Step& s) {
  begin(kStep);
  put_varint(block_, s.node);
  put_varint(block_, s.thread);
  put_varint(block_, s.collection);
  put_varint(block_, s.operation);
  put_varint(block_, s.call);
  time(s.start);
  duration(s.start, s.end);
  ++events_;
  written();
}

void TraceWriter::write(const Transfer& t) {
  begin(kTransfer);
  put_varint(block_, t.from);
  put_varint(block_, t.to);
  put_varint(block_, t.bytes);
  time(t.start);
  duration(t.start, t.end);
  ++events_;
  written();
}

void TraceWriter::write(const Lifecycle& c) {
  begin(kLifecycle);
  block_.push_back(static_cast<std::uint8_t>(c.kind));
  put_varint(block_, c.thread);
  put_varint(block_, c.collection);
  put_varint(block_, c.node);
  put_varint(block_, c.to);
  time(c.time);
  ++events_;
  written();
}

void TraceWriter::write(const Phase& p) {
  begin(kPhase);
  put_varint(block_, p.name);
  block_.push_back(p.begin ? 1 : 0);
  time(p.time);
  ++events_;
  written();
}

void TraceWriter::write(const Counter& c) {
  if (!std::isfinite(c.value)) throw std::invalid_argument("a trace counter's value must be a number");
  begin(kCounter);
  put_varint(block_, c.name);
  std::uint64_t bits = 0;
  std::memcpy(&bits, &c.value, sizeof bits);
  for (int k = 0; k < 8; ++k) block_.push_back(static_cast<std::uint8_t>(bits >> (8 * k)));
  time(c.time);
  ++events_;
  written();
}

void TraceWriter::info(std::string_view key, std::string_view value) {
  const NameId k = name(key), v = name(value);
  begin(kInfo);
  put_varint(block_, k);
  put_varint(block_, v);
  written();
}

void TraceWriter::begin(std::uint8_t kind) {
  if (!file_) throw std::logic_error("the trace '" + path_ + "' is closed");
  block_.push_back(kind);
}

void TraceWriter::time(double t) {
  const std::int64_t ns = nanoseconds(t);
  put_varint(block_, zigzag(ns - clock_));
  clock_ = ns;
}

void TraceWriter::duration(double start, double end) {
  const std::int64_t d = nanoseconds(end) - nanoseconds(start);
  put_varint(block_, static_cast<std::uint64_t>(d > 0 ? d : 0));
}

void TraceWriter::written() {
  ++records_;
  if (block_.size() >= kBlockBytes) return flush();
  // The clock is read once every 256 records: a trace's records come in bursts.
  if ((records_ & 0xFF) == 0 && std::chrono::steady_clock::now() - flushed_ >= kFlushEvery) flush();
}

void TraceWriter::flush() {
  if (!file_) return;
  flushed_ = std::chrono::steady_clock::now();
  if (records_ == 0) return;
  std::uint8_t header[kBlockHeader];
  std::memcpy(header, kBlockTag.data(), 4);
  put_u32(header + 4, static_cast<std::uint32_t>(block_.size()));
  put_u32(header + 8, records_);
  put_u32(header + 12, crc32(block_.data(), block_.size()));
  put(header, sizeof header);
  put(block_.data(), block_.size());
  if (std::fflush(file_) != 0) throw std::runtime_error("cannot write the trace '" + path_ + "': " + std::strerror(errno));
  block_.clear();
  records_ = 0;
  clock_ = 0;
}

void TraceWriter::close() {
  if (!file_) return;
  flush();
  std::uint8_t end[kBlockHeader] = {};
  std::memcpy(end, kEndTag.data(), 4);
  put_u32(end + 8, static_cast<std::uint32_t>(events_));  // the events in the file, low then high half
  put_u32(end + 12, static_cast<std::uint32_t>(events_ >> 32));
  put(end, sizeof end);
  const int closed = std::fclose(file_);
  file_ = nullptr;
  if (closed != 0) throw std::runtime_error("cannot write the trace '" + path_ + "': " + std::strerror(errno));
}

void TraceWriter::put(const void* data, std::size_t n) {
  if (std::fwrite(data, 1, n, file_) != n)
    throw std::runtime_error("cannot write the trace '" + path_ + "': " + std::strerror(errno));
  bytes_ += n;
}

}  // namespace dps::trace
