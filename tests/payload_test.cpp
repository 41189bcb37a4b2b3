// Data objects: moved, never copied, between operations; sized for the wire; large arrays that know
// their size without holding their data (NOALLOC).
#include "support.hpp"

#include <gtest/gtest.h>
#include <cereal/archives/binary.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/vector.hpp>

#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace dps::test {
namespace {

struct Tracked {  // counts its copies
  static inline int copies = 0;
  std::vector<double> data;
  Tracked() = default;
  explicit Tracked(std::size_t n) : data(n, 1.0) {}
  Tracked(const Tracked& o) : data(o.data) { ++copies; }
  Tracked(Tracked&&) noexcept = default;
  Tracked& operator=(const Tracked& o) {
    data = o.data;
    ++copies;
    return *this;
  }
  Tracked& operator=(Tracked&&) noexcept = default;
  template <class A>
  void serialize(A& a) {
    a(data);
  }
};

TEST(Payload, InlineAndBoxedObjectsMoveWithoutCopies) {
  Payload small = Payload::of(Range{3, 4});
  Payload moved = std::move(small);
  EXPECT_TRUE(small.empty());
  EXPECT_EQ(moved.get<Range>().last, 4);
  Tracked::copies = 0;
  Payload big = Payload::of(Tracked(1000));
  Payload other = std::move(big);
  Tracked back = other.take<Tracked>();
  EXPECT_EQ(back.data.size(), 1000u);
  EXPECT_EQ(Tracked::copies, 0);
  EXPECT_TRUE(other.empty());
}

struct Fill : Split<Range, Tracked> {
  Step execute(Range r) {
    for (long i = r.first; i < r.last; ++i) co_await post(Tracked(1 << 12));
  }
};
struct Touch : Leaf<Tracked, Tracked> {
  Tracked execute(Tracked t) {
    t.data[0] += 1;
    return t;
  }
};
struct Weigh : Merge<Tracked, Partial> {
  Step execute(Tracked t) {
    Partial p{static_cast<long>(t.data[0]), 1};
    while (auto u = co_await next()) p.sum += static_cast<long>(u->data[0]), ++p.count;
    co_await post(p);
  }
};

TEST(Payload, ObjectsTravelThroughAGraphWithoutCopies) {
  Application app(ApplicationOptions{.nodes = 2, .workers = 2});
  auto master = app.threads<Stateless>("master", 1);
  auto workers = app.threads<Stateless>("workers", 2);
  auto graph = app.graph(op<Fill>(master) >> op<Touch>(workers) >> op<Weigh>(master));
  Tracked::copies = 0;
  const Partial p = graph.call(Range{0, 100}).get();
  EXPECT_EQ(p.count, 100);
  EXPECT_EQ(p.sum, 200);
  EXPECT_EQ(Tracked::copies, 0);
}

// What a sender keeps of what it sends under fault tolerance (Payload::clone).
struct Shared {  // its bulk shared, immutable
  std::shared_ptr<const std::vector<double>> values;
  template <class A>
  void save(A& a) const {
    a(*values);
  }
  template <class A>
  void load(A& a) {
    auto v = std::make_shared<std::vector<double>>();
    a(*v);
    values = std::move(v);
  }
};

struct MoveOnly {
  std::unique_ptr<int> value;
  MoveOnly() = default;
  explicit MoveOnly(int v) : value(std::make_unique<int>(v)) {}
  template <class A>
  void save(A& a) const {
    a(*value);
  }
  template <class A>
  void load(A& a) {
    value = std::make_unique<int>();
    a(*value);
  }
};

TEST(Payload, ACloneIsItsTypesCopyOrItsWireImageReadBack) {
  Tracked::copies = 0;
  const Payload tracked = Payload::of(Tracked(100));
  Payload copy = tracked.clone();
  EXPECT_EQ(Tracked::copies, 1) << "its type's copy";
  copy.get<Tracked>().data[0] = 7;
  EXPECT_EQ(tracked.get<Tracked>().data[0], 1.0) << "a deep copy: the kept one does not change";

  const Payload shared = Payload::of(Shared{std::make_shared<const std::vector<double>>(1000, 2.0)});
  const Payload kept = shared.clone();
  EXPECT_EQ(kept.get<Shared>().values, shared.get<Shared>().values) << "the bulk is shared, not copied";
  EXPECT_EQ(kept.get<Shared>().values.use_count(), 2);

  const Payload unique = Payload::of(MoveOnly(42));
  const Payload read_back = unique.clone();
  EXPECT_EQ(*read_back.get<MoveOnly>().value, 42) << "no copy constructor: through its wire image";
  EXPECT_NE(read_back.get<MoveOnly>().value.get(), unique.get<MoveOnly>().value.get());

  EXPECT_THROW((void)Payload::local(Range{1, 2}).clone(), std::logic_error) << "a kernel object never crosses";
}

TEST(Payload, WireSizeCountsSerializedBytes) {
  EXPECT_EQ(wire_size(Range{1, 2}), 2 * sizeof(long));
  EXPECT_EQ(Payload::of(Range{1, 2}).wire_size(), 2 * sizeof(long));
  EXPECT_EQ(wire_size(Tracked(10)), sizeof(cereal::size_type) + 10 * sizeof(double));
  EXPECT_EQ(wire_size(std::string("hello")), sizeof(cereal::size_type) + 5);
  // What we count is what cereal's binary archive writes.
  std::ostringstream out;
  {
    cereal::BinaryOutputArchive ar(out);
    ar(Tracked(10), std::string("hello"));
  }
  EXPECT_EQ(out.str().size(), wire_size(Tracked(10)) + wire_size(std::string("hello")));
}

struct Block {
  LargeArray<double> a;
  int k = 0;
  template <class A>
  void serialize(A& ar) {
    ar(a, k);
  }
};

TEST(LargeArray, AllocatesForRealAndRoundTrips) {
  Block b{LargeArray<double>(1000), 7};
  ASSERT_TRUE(b.a.allocated());
  for (std::size_t i = 0; i < 1000; ++i) b.a[i] = static_cast<double>(i) / 3;
  std::ostringstream out;
  {
    cereal::BinaryOutputArchive ar(out);
    ar(b);
  }
  EXPECT_EQ(out.str().size(), wire_size(b));
  Block c;
  std::istringstream in(out.str());
  {
    cereal::BinaryInputArchive ar(in);
    ar(c);
  }
  ASSERT_EQ(c.a.size(), 1000u);
  EXPECT_EQ(c.k, 7);
  EXPECT_DOUBLE_EQ(c.a[999], 333.0);
  Block copy = c;
  EXPECT_NE(copy.a.data(), c.a.data());
  EXPECT_DOUBLE_EQ(copy.a[3], 1.0);
}

// Encoded with a WireWriter into a received message's own buffer, at byte `shift` of it.
std::vector<std::byte> encoded(const Block& b) {
  std::vector<std::byte> head, out;
  WireWriter w(head);
  w(b);
  std::size_t at = 0;
  for (const auto& seg : w.segments()) {
    const std::byte* from = seg.external ? seg.external : head.data() + at;
    if (!seg.external) at += seg.size;
    out.insert(out.end(), from, from + seg.size);
  }
  return out;
}

// A large array received in a frame read apart takes the frame's buffer over instead of copying it
// out, when its elements lie aligned there; otherwise, and for a second array, it copies.
TEST(LargeArray, AReceivedArrayTakesItsFramesBufferOverWhereItLiesAligned) {
  Block b{LargeArray<double>(1 << 12), 5};  // 32 KiB: above WireReader::kAdoptAbove
  for (std::size_t i = 0; i < b.a.size(); ++i) b.a[i] = static_cast<double>(i) + 0.5;
  const std::vector<std::byte> bytes = encoded(b);
  for (const std::size_t shift : {std::size_t{0}, std::size_t{3}}) {  // the array's data at 8, or at 11
    SCOPED_TRACE("shift " + std::to_string(shift));
    WireBuffer buffer(bytes.size() + shift);
    std::byte* const message = buffer.data() + shift;
    std::memcpy(message, bytes.data(), bytes.size());
    WireReader in(std::span<const std::byte>(message, bytes.size()), &buffer);
    Block c;
    in(c);
    EXPECT_TRUE(in.done());
    ASSERT_EQ(c.a.size(), b.a.size());
    EXPECT_EQ(c.k, 5);
    EXPECT_DOUBLE_EQ(c.a[4095], 4095.5);
    const bool aligned = shift == 0;
    EXPECT_EQ(buffer.released(), aligned);
    EXPECT_EQ(c.a.data() == reinterpret_cast<const double*>(message + sizeof(cereal::size_type)), aligned)
        << "the elements are where they arrived only when taken over";
  }  // the block frees what it took over (ASan checks)
}

TEST(LargeArray, AnArrayLongerThanItsMessageIsAWireError) {
  Block b{LargeArray<double>(1 << 12), 5};
  std::vector<std::byte> bytes = encoded(b);
  const std::uint64_t lie = std::uint64_t{1} << 61;  // times 8 wraps around to 0
  std::memcpy(bytes.data(), &lie, sizeof lie);
  WireBuffer buffer(bytes.size());
  std::memcpy(buffer.data(), bytes.data(), bytes.size());
  WireReader in(std::span<const std::byte>(buffer.data(), bytes.size()), &buffer);
  Block c;
  EXPECT_THROW(in(c), WireError);
  EXPECT_FALSE(buffer.released());
}

struct MakeBlocks : Split<Range, Block> {
  Step execute(Range r) {
    for (long i = r.first; i < r.last; ++i) {
      Block b{LargeArray<double>(1 << 16), static_cast<int>(i)};  // named: see the GCC 12 note in operation.hpp
      co_await post(std::move(b));
    }
  }
};
struct Inspect : Leaf<Block, Partial> {
  Partial execute(const Block& b) { return {static_cast<long>(wire_size(b)), b.a.allocated() ? 1L : 0L}; }
};

Partial blocks_under(Flags flags) {
  Application app(std::make_unique<TestBackend>(2, 2, flags));
  auto master = app.threads<Stateless>("master", 1);
  auto workers = app.threads<Stateless>("workers", 2);
  auto graph = app.graph(op<MakeBlocks>(master) >> op<Inspect>(workers) >> op<SumPartials<>>(master));
  return graph.call(Range{0, 16}).get();
}

TEST(LargeArray, NoAllocKeepsSizesButNotData) {
  const long per_block = static_cast<long>(sizeof(cereal::size_type) + (1 << 16) * sizeof(double) + sizeof(int));
  const Partial real = blocks_under(Flags{});
  EXPECT_EQ(real.count, 16) << "16 blocks allocated in a real run";
  EXPECT_EQ(real.sum, 16 * per_block);
  const Partial noalloc = blocks_under(Flags{.allocate = false});
  EXPECT_EQ(noalloc.count, 0) << "no block allocated under NOALLOC";
  EXPECT_EQ(noalloc.sum, 16 * per_block) << "but every block keeps its size on the wire";
}

}  // namespace
}  // namespace dps::test
