// Tests of the one-trip staging layout: line counts, flags, block counts and line indices.
#include "kernels/one_trip_layout.h"

#include <set>

#include "gtest/gtest.h"

namespace ltx {
namespace {

TEST(OneTripLayoutTest, LinesCoverTheShardPlusTheHeader) {
  EXPECT_EQ(OneTripLines(0), kOneTripHeaderLines);
  EXPECT_EQ(OneTripLines(1), kOneTripHeaderLines + 1);
  EXPECT_EQ(OneTripLines(8), kOneTripHeaderLines + 1);
  EXPECT_EQ(OneTripLines(9), kOneTripHeaderLines + 2);
  EXPECT_EQ(OneTripLines(kOneTripMaxShardBytes), kOneTripLinesPerSource);
}

TEST(OneTripLayoutTest, FlagIsNeverZeroAndDiffersWithinAParity) {
  for (uint64_t epoch : {uint64_t{1}, uint64_t{2}, uint64_t{3}, uint64_t{0xFFFFFFFF},
                         uint64_t{0x100000000}, uint64_t{0x100000001}, uint64_t{0x1FFFFFFFE}}) {
    EXPECT_NE(OneTripFlag(epoch), 0u) << epoch;
    EXPECT_NE(OneTripFlag(epoch), OneTripFlag(epoch + 2)) << epoch;
    EXPECT_NE(OneTripFlag(epoch), OneTripFlag(epoch + 1)) << epoch;
  }
  EXPECT_EQ(OneTripFlag(1), 1u);
}

TEST(OneTripLayoutTest, BlockCountIsBounded) {
  for (int world = 1; world <= 8; ++world) {
    for (int max_blocks : {1, 4, 132}) {
      for (int64_t lines : {int64_t{6}, int64_t{1030}, kOneTripLinesPerSource}) {
        const int blocks = OneTripBlockCount(lines, world, max_blocks);
        EXPECT_GE(blocks, 1);
        EXPECT_LE(blocks, max_blocks);
        EXPECT_GE(int64_t{blocks} * kOneTripLinesPerBlock,
                  std::min<int64_t>(world * lines, int64_t{max_blocks} * kOneTripLinesPerBlock));
      }
    }
  }
}

TEST(OneTripLayoutTest, LineIndicesOfParitiesAndSourcesAreDisjoint) {
  for (int world = 1; world <= 8; ++world) {
    std::set<int64_t> firsts;
    for (int parity = 0; parity < 2; ++parity) {
      for (int source = 0; source < world; ++source) {
        const int64_t first = OneTripLineIndex(parity, source, world, 0);
        const int64_t last = OneTripLineIndex(parity, source, world, kOneTripLinesPerSource - 1);
        EXPECT_EQ(last - first + 1, kOneTripLinesPerSource);
        EXPECT_EQ(first % kOneTripLinesPerSource, 0);
        EXPECT_LT((last + 1) * static_cast<int64_t>(sizeof(OneTripLine)),
                  OneTripStagingBytes(world) + 1);
        EXPECT_TRUE(firsts.insert(first).second);
      }
    }
  }
}

}  // namespace
}  // namespace ltx
