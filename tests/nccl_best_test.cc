// Tests of NCCL's three modes in the benchmarks that need no GPU and no NCCL: the version codes,
// the best of the modes and ltx's speedup over it, and their table cells and JSON when some
// modes did not run.
#include "tools/bench/nccl_best.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/bench/nccl_version.h"

namespace ltx {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using tools::DecodeNcclVersion;

TEST(NcclVersionTest, DecodesBothEncodings) {
  EXPECT_EQ(DecodeNcclVersion(22803).ToString(), "2.28.3");
  EXPECT_EQ(DecodeNcclVersion(22105).ToString(), "2.21.5");
  EXPECT_EQ(DecodeNcclVersion(2804).ToString(), "2.8.4");  // Before 2.9: major * 1000.
  EXPECT_EQ(DecodeNcclVersion(30001).ToString(), "3.0.1");
}

TEST(NcclVersionTest, ComparesWithTheFeatureReleases) {
  EXPECT_TRUE(DecodeNcclVersion(22700).AtLeast(2, 27));
  EXPECT_FALSE(DecodeNcclVersion(22605).AtLeast(2, 27));
  EXPECT_FALSE(DecodeNcclVersion(22707).AtLeast(tools::kNcclCopyEngineSince.major,
                                                tools::kNcclCopyEngineSince.minor));
  EXPECT_TRUE(DecodeNcclVersion(22903).AtLeast(2, 28));
  EXPECT_TRUE(DecodeNcclVersion(30000).AtLeast(2, 28));
  EXPECT_FALSE(DecodeNcclVersion(2804).AtLeast(2, 27));
}

NcclTimes Times(double plain, double window, double ce) {
  NcclTimes times;
  At(times, NcclMode::kPlain).us = plain;
  At(times, NcclMode::kWindows).us = window;
  At(times, NcclMode::kCopyEngine).us = ce;
  for (NcclTime& time : times) time.busbw = time.us > 0 ? 100 / time.us : -1;
  return times;
}

TEST(BestNcclTest, PicksTheFastestMeasuredMode) {
  NcclBest best = BestNccl(Times(8.0, 6.5, 7.0));
  ASSERT_TRUE(best.mode.has_value());
  EXPECT_EQ(*best.mode, NcclMode::kWindows);
  EXPECT_DOUBLE_EQ(best.us, 6.5);
  EXPECT_DOUBLE_EQ(best.busbw, 100 / 6.5);
  EXPECT_DOUBLE_EQ(SpeedupOverBest(5.0, best), 1.3);

  best = BestNccl(Times(8.0, -1, 9.0));  // A mode that did not run is never the best.
  EXPECT_EQ(*best.mode, NcclMode::kPlain);
  best = BestNccl(Times(-1, -1, 9.0));
  EXPECT_EQ(*best.mode, NcclMode::kCopyEngine);
  best = BestNccl(Times(7.0, 7.0, 7.0));  // Ties go to the first mode.
  EXPECT_EQ(*best.mode, NcclMode::kPlain);
}

TEST(BestNcclTest, NoModeNoBestAndNoSpeedup) {
  const NcclBest best = BestNccl(NcclTimes{});
  EXPECT_FALSE(best.mode.has_value());
  EXPECT_EQ(SpeedupOverBest(5.0, best), -1);
  EXPECT_EQ(SpeedupOverBest(0, BestNccl(Times(8.0, -1, -1))), -1);
}

TEST(NcclCellsTest, SaysWhichModesDidNotRun) {
  NcclTimes times = Times(8.85, -1, -1);
  At(times, NcclMode::kWindows).why_not = "NCCL 2.21.5 has no symmetric windows";
  At(times, NcclMode::kCopyEngine).why_not = "NCCL 2.21.5 has no copy-engine collectives";
  EXPECT_EQ(NcclCell(At(times, NcclMode::kPlain), 9), "     8.85");
  EXPECT_EQ(NcclCell(At(times, NcclMode::kWindows), 9), "      n/a");
  EXPECT_EQ(NcclCell(NcclTime{}, 9), "        -");  // No NCCL at all.
  const std::string cells = NcclCells(times, 5.9);
  EXPECT_EQ(cells, "     8.85       n/a       n/a |      8.85    11.30  plain |   1.50x");
  EXPECT_EQ(NcclColumnTitles().size(), cells.size());
  EXPECT_EQ(NcclCells(NcclTimes{}, 5.9),
            "        -         -         - |         -        -      - |       -");
  EXPECT_EQ(SpeedupCell(0.8, 7), "  0.80x");
}

TEST(NcclJsonTest, RecordsTimesReasonsAndTheBest) {
  NcclTimes times = Times(8.0, 6.0, -1);
  At(times, NcclMode::kCopyEngine).why_not = "ncclCommInitRankConfig failed: \"bad\"";
  const std::string json = NcclJsonMembers(times, 4.0);
  EXPECT_THAT(json, HasSubstr("\"plain\": {\"us\": 8.000, \"busbw_gbps\": 12.500}"));
  EXPECT_THAT(json, HasSubstr("\"window\": {\"us\": 6.000"));
  EXPECT_THAT(
      json, HasSubstr("\"ce\": {\"unavailable\": \"ncclCommInitRankConfig failed: \\\"bad\\\"\"}"));
  EXPECT_THAT(json, HasSubstr("\"best_nccl\": \"window\", \"best_nccl_us\": 6.000"));
  EXPECT_THAT(json, HasSubstr("\"ltx_vs_best_nccl\": 1.500"));
  const std::string none = NcclJsonMembers(NcclTimes{}, 4.0);
  EXPECT_THAT(none, HasSubstr("\"plain\": {\"unavailable\": \"NCCL not loaded\"}"));
  EXPECT_THAT(none, HasSubstr("\"best_nccl\": null"));
  EXPECT_THAT(none, Not(HasSubstr("\"us\"")));
}

TEST(JsonStringTest, EscapesQuotesBackslashesAndControls) {
  EXPECT_EQ(JsonString("a\"b\\c\nd\x01"), "\"a\\\"b\\\\c\\nd\\u0001\"");
}

}  // namespace
}  // namespace ltx
