// CPU tests of the GPU tests' rank layout switch (tools/testing/test_ranks.h): the layouts each
// variable names, the malformed values it refuses, and the ranks a test takes from a layout.
#include "tools/testing/test_ranks.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ltx {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ParseRankLayoutTest, WithoutTheSwitchOneRankPerVisibleGpu) {
  EXPECT_THAT(*ParseRankLayout(nullptr, nullptr, 3), ElementsAre(0, 1, 2));
  EXPECT_THAT(*ParseRankLayout("", "", 2), ElementsAre(0, 1));
  EXPECT_TRUE(ParseRankLayout(nullptr, nullptr, 0)->empty());
}

TEST(ParseRankLayoutTest, DevicesNameTheLayoutWithRepeats) {
  EXPECT_THAT(*ParseRankLayout("0,0,1", nullptr, 2), ElementsAre(0, 0, 1));
  EXPECT_THAT(*ParseRankLayout("1, 0", "8", 2), ElementsAre(1, 0));  // Devices win.
  EXPECT_TRUE(ParseRankLayout("0,0", nullptr, 0)->empty());
}

TEST(ParseRankLayoutTest, RanksGoRoundRobinOverTheVisibleGpus) {
  EXPECT_THAT(*ParseRankLayout(nullptr, "8", 2), ElementsAre(0, 1, 0, 1, 0, 1, 0, 1));
  EXPECT_THAT(*ParseRankLayout(nullptr, "3", 1), ElementsAre(0, 0, 0));
  EXPECT_THAT(*ParseRankLayout(nullptr, "2", 4), ElementsAre(0, 1));
}

TEST(ParseRankLayoutTest, MalformedValuesNameTheVariable) {
  const struct {
    const char* devices;
    const char* ranks;
    const char* names;
  } kCases[] = {
      {"0,x", nullptr, "LTX_TEST_DEVICES=0,x"},   {"0,-1", nullptr, "LTX_TEST_DEVICES"},
      {"0,0,0,0,0,0,0,0,0", nullptr, "9 ranks"},  {"0,2", nullptr, "GPU 2 is not visible"},
      {nullptr, "0", "LTX_TEST_RANKS=0"},         {nullptr, "9", "LTX_TEST_RANKS=9"},
      {nullptr, "two", "LTX_TEST_RANKS"},         {nullptr, "2,2", "not one number"},
  };
  for (const auto& c : kCases) {
    const absl::StatusOr<std::vector<int>> layout = ParseRankLayout(c.devices, c.ranks, 2);
    ASSERT_FALSE(layout.ok()) << c.names;
    EXPECT_EQ(layout.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(layout.status().message()), HasSubstr(c.names));
  }
}

TEST(RanksOfLayoutTest, PrefixOrRoundRobinOverTheDistinctGpus) {
  EXPECT_THAT(RanksOfLayout({0, 1, 0, 1}, 2), ElementsAre(0, 1));
  EXPECT_THAT(RanksOfLayout({0}, 2), ElementsAre(0, 0));
  EXPECT_THAT(RanksOfLayout({1, 1, 0}, 4), ElementsAre(1, 0, 1, 0));
}

TEST(SubLayoutsTest, PrefixesThenReorderings) {
  EXPECT_THAT(SubLayouts({0}), ElementsAre(ElementsAre(0)));
  EXPECT_THAT(SubLayouts({0, 1, 2, 3}),
              ElementsAre(ElementsAre(0), ElementsAre(0, 1), ElementsAre(0, 1, 2),
                          ElementsAre(0, 1, 2, 3), ElementsAre(3, 2, 1, 0), ElementsAre(2, 0, 1),
                          ElementsAre(3, 1)));
}

TEST(TestRanksTest, RankIndices) { EXPECT_THAT(RankIndices(3), ElementsAre(0, 1, 2)); }

}  // namespace
}  // namespace ltx
