// Tests of SelectByIndex (kernels/device/select_by_index.h): every index of an array reads its
// element, any other index element 0, for the arrays the kernels select from.
#include "kernels/device/select_by_index.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace ltx {
namespace {

TEST(SelectByIndexTest, EveryIndexReadsItsElement) {
  const uint64_t six[6] = {11, 22, 33, 44, 55, 66};
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(SelectByIndex(six, i), six[i]) << i;
  const int one[1] = {7};
  EXPECT_EQ(SelectByIndex(one, 0), 7);
}

TEST(SelectByIndexTest, AnIndexOutsideTheArrayReadsElementZero) {
  const uint64_t four[4] = {1, 2, 3, 4};
  EXPECT_EQ(SelectByIndex(four, -1), 1u);
  EXPECT_EQ(SelectByIndex(four, 4), 1u);
  EXPECT_EQ(SelectByIndex(four, int64_t{1} << 40), 1u);
}

}  // namespace
}  // namespace ltx
