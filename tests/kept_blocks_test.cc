// Tests of the bookkeeping of ltx/cuda/kept_blocks.h (KeptBlocks) with made-up blocks and
// context ids: blocks come back for their own device, context and size only, and blocks of a
// context that a reset replaced are forgotten. Needs no GPU.
#include "ltx/cuda/kept_blocks.h"

#include "gtest/gtest.h"

namespace ltx {
namespace {

TEST(KeptBlocksTest, EmptyGivesNothing) {
  KeptBlocks kept;
  EXPECT_EQ(kept.Take(0, 7, 64), nullptr);
  EXPECT_EQ(kept.size(), 0);
}

TEST(KeptBlocksTest, GivesBlocksBackForTheirOwnDeviceOnly) {
  KeptBlocks kept;
  int a = 0;
  int b = 0;
  int c = 0;
  kept.Keep(0, 7, 64, &a);
  kept.Keep(1, 8, 64, &b);
  kept.Keep(0, 7, 64, &c);
  EXPECT_EQ(kept.size(), 3);
  EXPECT_EQ(kept.Take(2, 9, 64), nullptr);
  void* first = kept.Take(0, 7, 64);
  void* second = kept.Take(0, 7, 64);
  EXPECT_TRUE((first == &a && second == &c) || (first == &c && second == &a));
  EXPECT_EQ(kept.Take(0, 7, 64), nullptr);
  EXPECT_EQ(kept.Take(1, 8, 64), &b);
  EXPECT_EQ(kept.size(), 0);
}

TEST(KeptBlocksTest, ForgetsTheBlocksOfAReplacedContext) {
  KeptBlocks kept;
  int a = 0;
  int b = 0;
  kept.Keep(0, 7, 64, &a);
  kept.Keep(1, 8, 64, &b);
  // GPU 0 was reset: context 7 is gone, and its block with it.
  EXPECT_EQ(kept.Take(0, 17, 64), nullptr);
  EXPECT_EQ(kept.size(), 1);
  EXPECT_EQ(kept.Take(0, 7, 64), nullptr);
  // GPU 1's block is untouched.
  EXPECT_EQ(kept.Take(1, 8, 64), &b);
}

TEST(KeptBlocksTest, GivesBlocksBackForTheirOwnSizeOnly) {
  KeptBlocks kept;
  int small = 0;
  kept.Keep(0, 7, 64, &small);
  EXPECT_EQ(kept.Take(0, 7, 4096), nullptr);
  EXPECT_EQ(kept.Take(0, 7, 64), &small);
}

}  // namespace
}  // namespace ltx
