// Tests of the overlap run's plain logic: how collective calls are matched to and spread among
// the GEMMs (tools/ltx_allgather/overlap_timing.h), and the derived columns of its table
// (tools/ltx_allgather/overlap_table.h).
#include <cstdio>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/ltx_allgather/overlap_table.h"
#include "tools/ltx_allgather/overlap_timing.h"

namespace ltx {
namespace {

using ::testing::HasSubstr;

TEST(MatchingCallsTest, RatioOfTimesAtLeastOne) {
  EXPECT_EQ(MatchingCalls(100, 1500, 190), 789);
  EXPECT_EQ(MatchingCalls(10, 100, 1000), 1);
  EXPECT_EQ(MatchingCalls(10, 100, 0), 1);
}

TEST(CallsAfterGemmTest, SpreadsEvenlyAndSumsUp) {
  for (int gemms : {1, 3, 100}) {
    for (int calls : {1, 2, 7, 789}) {
      int sum = 0;
      for (int i = 0; i < gemms; ++i) {
        const int after = CallsAfterGemm(i, gemms, calls);
        EXPECT_GE(after, calls / gemms);
        EXPECT_LE(after, calls / gemms + 1);
        sum += after;
      }
      EXPECT_EQ(sum, calls) << gemms << " " << calls;
    }
  }
}

TEST(OverlapTableTest, DerivedColumns) {
  EXPECT_NEAR(SlowdownPercent(1000, 1100), 10, 1e-9);
  EXPECT_NEAR(KeptPercent(200, 400), 50, 1e-9);
  EXPECT_NEAR(AllGatherBusBandwidth(int64_t{1} << 30, 2, 1e6), (1 << 30) / 1e9 / 2, 1e-9);
  OverlapRow row;
  row.gemm_alone_us = 1000;
  row.collective_alone_us = 100;
  row.gemm_calls = 10;
  row.collective_calls = 100;
  row.pair_us = 10000;  // Both fit in the time of either alone: perfect overlap.
  EXPECT_NEAR(PairOverSumPercent(row), 50, 1e-9);
  EXPECT_DOUBLE_EQ(PairOverSumPercent(OverlapRow()), 0);
}

TEST(OverlapTableTest, RowAndHeader) {
  OverlapRow row;
  row.style = "sm_budget(16)";
  row.gemm_alone_us = 1500;
  row.collective_alone_us = 200;
  row.gemm_beside_us = 1650;
  row.collective_beside_us = 250;
  row.gemm_calls = 100;
  row.collective_calls = 750;
  row.pair_us = 170000;
  const OverlapShape shape{int64_t{128} << 20, 2, 2.0 * 8192 * 8192 * 8192};
  const std::string text = FormatOverlapRow(row, shape);
  EXPECT_THAT(text, HasSubstr("sm_budget(16)"));
  EXPECT_THAT(text, HasSubstr(" 10.0 "));   // GEMM 10% slower.
  EXPECT_THAT(text, HasSubstr(" 80.0 "));   // AllGather keeps 80%.
  EXPECT_THAT(text, HasSubstr(" 733.0 "));  // TFLOP/s alone.
  EXPECT_EQ(text.back(), '\n');
  const std::string header = OverlapColumnHeader();
  EXPECT_THAT(header, HasSubstr("slower%"));
  EXPECT_THAT(header, HasSubstr("kept%"));
  EXPECT_THAT(header, HasSubstr("wall%"));
  std::printf("%s%s", header.c_str(), text.c_str());
}

}  // namespace
}  // namespace ltx
