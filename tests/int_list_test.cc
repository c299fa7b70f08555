// Tests of the tools' integer-list flags (tools/flags/int_list.h): values, ranges, errors.
#include "tools/flags/int_list.h"

#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace ltx {
namespace {

TEST(ParseIntListTest, ReadsCommaSeparatedValuesSkippingEmptyPartsAndSpaces) {
  EXPECT_EQ(ParseIntList("3,1,4", 0, 10, "x").value(), (std::vector<int>{3, 1, 4}));
  EXPECT_EQ(ParseIntList("0,,10,", 0, 10, "x").value(), (std::vector<int>{0, 10}));
  EXPECT_EQ(ParseIntList("", 0, 10, "x").value(), std::vector<int>{});
  EXPECT_EQ(ParseIntList("-2", -5, 5, "x").value(), std::vector<int>{-2});
  EXPECT_EQ(ParseIntList(" 1 , 2", 0, 10, "x").value(), (std::vector<int>{1, 2}));
}

TEST(ParseIntListTest, RefusesPartsOutsideTheRangeOrNotNumbers) {
  for (const char* bad : {"11", "-1", "1,x", "2.5", "1 2", "99999999999"}) {
    const absl::StatusOr<std::vector<int>> parsed =
        ParseIntList(bad, 0, 10, "a block count (up to 10)");
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(parsed.status().message().find("is not a block count (up to 10)"),
              absl::string_view::npos)
        << parsed.status();
  }
  EXPECT_EQ(ParseIntList("1,x", 0, 10, "a number").status().message(), "'x' is not a number");
}

}  // namespace
}  // namespace ltx
