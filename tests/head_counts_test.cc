// Tests of ltx_alltoall's head split flag (tools/ltx_alltoall/head_counts.h): lists, the even
// split, and every rejection as InvalidArgument saying what is wrong.
#include "tools/ltx_alltoall/head_counts.h"

#include <cstdint>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ltx {
namespace {

using ::testing::HasSubstr;

TEST(ParseHeadCountsTest, ListsOnePerRank) {
  EXPECT_EQ(ParseHeadCounts("6,10,6,10", 4).value(), (std::vector<int64_t>{6, 10, 6, 10}));
  EXPECT_EQ(ParseHeadCounts("2,0,3", 3).value(), (std::vector<int64_t>{2, 0, 3}));
  EXPECT_EQ(ParseHeadCounts("32", 1).value(), std::vector<int64_t>{32});
}

TEST(ParseHeadCountsTest, EmptyIsTheEvenSplit) {
  EXPECT_EQ(ParseHeadCounts("", 4).value(), std::vector<int64_t>{});
}

TEST(ParseHeadCountsTest, RejectsBadPartsLengthsAndNoHeads) {
  for (const char* bad : {"a,2", "2,-1", "1.5,2", "2,99999999999"}) {
    const absl::StatusOr<std::vector<int64_t>> counts = ParseHeadCounts(bad, 2);
    EXPECT_EQ(counts.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(counts.status().message(), HasSubstr("is not a head count")) << bad;
  }
  const absl::StatusOr<std::vector<int64_t>> short_list = ParseHeadCounts("2,3", 4);
  EXPECT_EQ(short_list.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(short_list.status().message(), HasSubstr("2 head counts for 4 ranks"));
  EXPECT_EQ(ParseHeadCounts("2,3,4", 2).status().code(), absl::StatusCode::kInvalidArgument);
  const absl::StatusOr<std::vector<int64_t>> none = ParseHeadCounts("0,0", 2);
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(none.status().message(), HasSubstr("no rank holds a head"));
}

TEST(CheckHeadCountsTest, TheSplitMustSumToTheShapesHeads) {
  EXPECT_TRUE(CheckHeadCounts({}, 32).ok());
  EXPECT_TRUE(CheckHeadCounts({6, 10, 6, 10}, 32).ok());
  EXPECT_TRUE(CheckHeadCounts({0, 32}, 32).ok());
  const absl::Status status = CheckHeadCounts({6, 10, 6, 9}, 32);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("6,10,6,9 sums to 31 heads; the shape has 32"));
}

}  // namespace
}  // namespace ltx
