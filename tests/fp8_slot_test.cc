// Tests of the FP8 slot (kernels/wire/fp8_slot.h): a rank's codes and scales fit its slot of 16-bit
// rows for every row length from kFp8MinHidden up, the scales start on a multiple of 4 after the
// codes, and the slots of a layout's ranks and slices lie where their rows do.
#include "kernels/wire/fp8_slot.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace ltx {
namespace {

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
