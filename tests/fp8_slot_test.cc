// Tests of the FP8 slot (kernels/wire/fp8_slot.h): a rank's codes and scales fit its slot of 16-bit
// rows for every row length from kFp8MinHidden up, the scales start on a multiple of 4 after the
// codes, the slots of a layout's ranks and slices lie where their rows do, and the decoder's
// range of peer rows covers every peer's rows once.
#include "kernels/wire/fp8_slot.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace ltx {
namespace {

// The rows a rank decodes, as the decoder walks them: every row of every peer once, the rank's
// own never, with zero counts anywhere and batches above one.
TEST(Fp8SlotTest, PeerRowsCoverEveryPeersRowsOnce) {
  const std::vector<std::vector<int64_t>> layouts = {
      {3}, {3, 5}, {0, 4}, {4, 0}, {0, 0}, {2, 0, 7}, {0, 0, 1}, {5, 1, 0, 3, 0, 2, 9, 4}};
  for (const std::vector<int64_t>& counts : layouts) {
    const int world = static_cast<int>(counts.size());
    for (int64_t batch : {1, 3}) {
      for (int rank = 0; rank < world; ++rank) {
        int64_t expected = 0;
        std::vector<std::vector<int>> seen(world);
        for (int peer = 0; peer < world; ++peer) {
          seen[peer].assign(batch * counts[peer], 0);
          if (peer != rank) expected += batch * counts[peer];
        }
        const int64_t total = Fp8PeerRows(counts.data(), world, rank, batch);
        ASSERT_EQ(total, expected);
        for (int64_t index = 0; index < total; ++index) {
          const Fp8PeerRow found = Fp8PeerRowOf(counts.data(), world, rank, batch, index);
          ASSERT_NE(found.peer, rank);
          ASSERT_GT(counts[found.peer], 0);  // The decoder divides by it.
          ASSERT_LT(found.row, batch * counts[found.peer]);
          ++seen[found.peer][found.row];
        }
        for (int peer = 0; peer < world; ++peer) {
          for (size_t row = 0; peer != rank && row < seen[peer].size(); ++row) {
            ASSERT_EQ(seen[peer][row], 1) << "rank " << rank << " peer " << peer << " row " << row;
          }
        }
      }
    }
  }
}

TEST(Fp8SlotTest, CodesAndScalesFitTheSlotFromTheLeastRowLength) {
  for (int64_t hidden = kFp8MinHidden; hidden <= 300; ++hidden) {
    for (int64_t tokens = 0; tokens <= 257; ++tokens) {
      ASSERT_TRUE(Fp8SlotFits(tokens, hidden)) << tokens << " x " << hidden;
      const int64_t codes_end = Fp8CodesOffset(hidden, tokens);
      EXPECT_GE(Fp8ScalesOffset(tokens, hidden), codes_end);
      EXPECT_LT(Fp8ScalesOffset(tokens, hidden), codes_end + 4);
      EXPECT_EQ(Fp8ScalesOffset(tokens, hidden) % 4, 0);
    }
  }
  // Shorter rows do not always fit: one row of 2 elements has 4 bytes for 2 codes and a scale.
  EXPECT_FALSE(Fp8SlotFits(1, 2));
}

TEST(Fp8SlotTest, RowsAndScalesFollowEachOther) {
  EXPECT_EQ(Fp8CodesOffset(64, 0), 0);
  EXPECT_EQ(Fp8CodesOffset(64, 5), 320);
  EXPECT_EQ(Fp8ScalesOffset(3, 9), 28);  // 27 code bytes, then the next multiple of 4.
  EXPECT_EQ(Fp8ScaleOffset(3, 9, 2), 36);
}

TEST(Fp8SlotTest, ASlotStartsAtItsRanksRowsInItsSlice) {
  // Three ranks of 3, 0 and 5 tokens (prefixes 0, 3, 3), rows of 128 bytes, two slices.
  EXPECT_EQ(Fp8SlotOffset(8, 0, 128, 0), 0);
  EXPECT_EQ(Fp8SlotOffset(8, 3, 128, 0), 3 * 128);
  EXPECT_EQ(Fp8SlotOffset(8, 3, 128, 1), (8 + 3) * 128);
}

}  // namespace
}  // namespace ltx
