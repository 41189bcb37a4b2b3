// Epoch-based reclamation (detail/epochs.hpp): what is buried while a reader's guard is open stays
// until every such guard has closed, on whichever threads they were opened, and is freed by the next
// collection after that. A graveyard that freed at once, or a guard that announced nothing, fails here.
#include <dps/kernel/epochs.hpp>

#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <semaphore>
#include <string>
#include <thread>

namespace dps::detail {
namespace {

// An object handed to a graveyard: `freed()` once the graveyard destroyed what it buried.
struct Buried {
  std::shared_ptr<int> object = std::make_shared<int>(0);
  std::weak_ptr<int> watch = object;
  int asked = 0;  // how often the graveyard asked whether it may go

  void into(Graveyard& graveyard, int not_ready_times = 0) {
    graveyard.bury([this, held = std::move(object), not_ready_times] { return ++asked > not_ready_times; });
  }
  bool freed() const { return watch.expired(); }
};

// A reader on a thread of its own, holding a guard from its construction until close().
class Reader {
 public:
  Reader()
      : thread_([this] {
          EpochGuard guard;
          opened_.release();
          close_.acquire();
        }) {
    opened_.acquire();
  }
  ~Reader() { close(); }
  void close() {
    if (!thread_.joinable()) return;
    close_.release();
    thread_.join();
  }

 private:
  std::binary_semaphore opened_{0}, close_{0};
  std::thread thread_;
};

void collect(Graveyard& graveyard, int times = 3) {  // more than the two epochs a grave waits for
  for (int i = 0; i < times; ++i) graveyard.collect();
}

TEST(Epochs, WhatIsBuriedUnderAnOpenGuardIsFreedOnlyAfterItCloses) {
  Graveyard graveyard;
  Buried buried;
  {
    EpochGuard guard;
    buried.into(graveyard);
    collect(graveyard);
    EXPECT_FALSE(buried.freed());
    EXPECT_EQ(buried.asked, 0) << "not even asked while a reader may hold it";
    EXPECT_EQ(graveyard.size(), 1u);
  }
  graveyard.collect();
  EXPECT_TRUE(buried.freed());
  EXPECT_EQ(buried.asked, 1);
  EXPECT_EQ(graveyard.size(), 0u);
}

TEST(Epochs, WithoutAnOpenGuardOneCollectionFrees) {
  Graveyard graveyard;
  Buried buried;
  buried.into(graveyard);
  graveyard.collect();
  EXPECT_TRUE(buried.freed());
}

TEST(Epochs, ANestedGuardClosingLeavesTheOuterOneProtecting) {
  Graveyard graveyard;
  Buried buried;
  {
    EpochGuard outer;
    {
      EpochGuard inner;
      buried.into(graveyard);
    }
    collect(graveyard);
    EXPECT_FALSE(buried.freed());
  }
  graveyard.collect();
  EXPECT_TRUE(buried.freed());
}

// Each of three readers in turn is the last to close: the reclaimer must watch every thread's guard.
TEST(Epochs, GuardsOnOtherThreadsKeepWhatWasBuriedUntilTheLastCloses) {
  for (std::size_t last = 0; last < 3; ++last) {
    SCOPED_TRACE("reader " + std::to_string(last) + " closes last");
    Graveyard graveyard;
    Buried buried;
    std::array<Reader, 3> readers;  // all open before the burial: any may have read the object
    buried.into(graveyard);
    collect(graveyard);
    for (std::size_t r = 0; r < readers.size(); ++r) {
      if (r == last) continue;
      EXPECT_FALSE(buried.freed());
      readers[r].close();
      collect(graveyard);
    }
    EXPECT_FALSE(buried.freed()) << "reader " << last << " still holds its guard";
    EXPECT_EQ(buried.asked, 0);
    readers[last].close();
    graveyard.collect();
    EXPECT_TRUE(buried.freed());
  }
}

TEST(Epochs, WhatIsNotReadyIsAskedAgainAfterAFurtherGracePeriod) {
  Graveyard graveyard;
  Buried buried;
  buried.into(graveyard, 1);  // "something else still uses it" the first time
  graveyard.collect();
  EXPECT_EQ(buried.asked, 1);
  EXPECT_FALSE(buried.freed());
  EXPECT_EQ(graveyard.size(), 1u);
  {
    Reader reader;  // a new grace period: not asked again while this guard is open
    collect(graveyard);
    EXPECT_EQ(buried.asked, 1);
  }
  graveyard.collect();
  EXPECT_EQ(buried.asked, 2);
  EXPECT_TRUE(buried.freed());
  EXPECT_EQ(graveyard.size(), 0u);
}

}  // namespace
}  // namespace dps::detail
