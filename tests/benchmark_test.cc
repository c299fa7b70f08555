// Tests of the benchmark's pure helpers: token splits and flag parsing.
#include "tools/benchmark.h"

#include <numeric>

#include "gtest/gtest.h"

namespace ltx {
namespace {

int64_t Sum(const std::vector<int64_t>& counts) {
  return std::accumulate(counts.begin(), counts.end(), int64_t{0});
}

TEST(SplitTokensTest, EverySplitKeepsTheTotal) {
  for (SplitPattern pattern : {SplitPattern::kEven, SplitPattern::kUneven, SplitPattern::kZeros}) {
    for (int world = 1; world <= 8; ++world) {
      for (int64_t total : {1, 7, 64, 1000, 65537}) {
        const std::vector<int64_t> counts = SplitTokens(total, world, pattern);
        ASSERT_EQ(static_cast<int>(counts.size()), world);
        EXPECT_EQ(Sum(counts), total);
        for (int64_t count : counts) EXPECT_GE(count, 0);
      }
    }
  }
}

TEST(SplitTokensTest, PatternsHaveTheirShape) {
  EXPECT_EQ(SplitTokens(400, 4, SplitPattern::kEven), (std::vector<int64_t>{100, 100, 100, 100}));
  EXPECT_EQ(SplitTokens(100, 4, SplitPattern::kUneven), (std::vector<int64_t>{10, 20, 30, 40}));
  EXPECT_EQ(SplitTokens(100, 4, SplitPattern::kZeros), (std::vector<int64_t>{50, 0, 50, 0}));
}

TEST(BenchFlagsTest, NamesRoundTripAndUnknownNamesAreRejected) {
  for (BenchStyle style : {BenchStyle::kPerRank, BenchStyle::kCoordinated, BenchStyle::kGraph}) {
    EXPECT_EQ(*ParseBenchStyle(BenchStyleName(style)), style);
  }
  for (Protocol protocol :
       {Protocol::kAuto, Protocol::kDirect, Protocol::kOneTrip, Protocol::kCopyEngine}) {
    EXPECT_EQ(*ParseProtocol(ProtocolName(protocol)), protocol);
  }
  for (Transport transport :
       {Transport::kAuto, Transport::kPeerStores, Transport::kCopyEngine}) {
    EXPECT_EQ(*ParseTransport(TransportName(transport)), transport);
  }
  EXPECT_EQ(ParseBenchStyle("fast").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseProtocol("ll").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseTransport("ib").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseSplitPattern("random").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(RunBenchmarkTest, RejectsABadSweepBeforeTouchingAGpu) {
  BenchConfig config;
  config.min_bytes = 1024;
  config.max_bytes = 512;
  EXPECT_EQ(RunBenchmark(config).status().code(), absl::StatusCode::kInvalidArgument);
  config.max_bytes = 4096;
  config.factor = 1;
  EXPECT_EQ(RunBenchmark(config).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ltx
