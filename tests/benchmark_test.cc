// Tests of the benchmark's logic that needs no GPU: names, token splits, the size list,
// validation, the table's text, and RunBenchmark refusing a bad sweep before any GPU work.
#include "tools/ltx_allgather/benchmark.h"

#include <numeric>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/bench/bench_style.h"
#include "tools/bench/bench_table.h"
#include "tools/bench/bench_timing.h"
#include "tools/bench/style_timing.h"
#include "tools/bench/tensor_calls.h"
#include "tools/bench/timing_plan.h"
#include "tools/ltx_allgather/bench_config.h"

namespace ltx {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

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

TEST(BenchNamesTest, NamesRoundTripAndUnknownNamesAreRejected) {
  for (BenchStyle style : {BenchStyle::kPerRank, BenchStyle::kCoordinated, BenchStyle::kGraph,
                           BenchStyle::kRankOneThread}) {
    EXPECT_EQ(*ParseBenchStyle(BenchStyleName(style)), style);
  }
  for (SplitPattern split : {SplitPattern::kEven, SplitPattern::kUneven, SplitPattern::kZeros}) {
    EXPECT_EQ(*ParseSplitPattern(SplitPatternName(split)), split);
  }
  EXPECT_EQ(ParseBenchStyle("fast").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(ParseSplitPattern("random").status().message()),
              HasSubstr("'random'; expected one of even, uneven, zeros"));
}

TEST(SweepSizesTest, StepsByTheFactorUpToTheLargestSize) {
  BenchConfig config;
  config.min_bytes = 8 << 10;
  config.max_bytes = 4 << 20;
  config.factor = 8;
  EXPECT_EQ(SweepSizes(config), (std::vector<int64_t>{8 << 10, 64 << 10, 512 << 10, 4 << 20}));
  config.max_bytes = (4 << 20) - 1;
  EXPECT_EQ(SweepSizes(config).size(), 3u);
  config.max_bytes = config.min_bytes;
  EXPECT_EQ(SweepSizes(config), (std::vector<int64_t>{8 << 10}));
}

TEST(ValidateBenchConfigTest, RejectsWhatCannotRun) {
  EXPECT_TRUE(ValidateBenchConfig(BenchConfig()).ok());
  auto rejected = [](void (*edit)(BenchConfig&)) {
    BenchConfig config;
    edit(config);
    return ValidateBenchConfig(config).code() == absl::StatusCode::kInvalidArgument;
  };
  EXPECT_TRUE(rejected([](BenchConfig& c) { c.max_bytes = c.min_bytes - 1; }));
  EXPECT_TRUE(rejected([](BenchConfig& c) { c.min_bytes = 0; }));
  EXPECT_TRUE(rejected([](BenchConfig& c) { c.factor = 1; }));
  EXPECT_TRUE(rejected([](BenchConfig& c) { c.hidden = 0; }));
  EXPECT_TRUE(rejected([](BenchConfig& c) { c.timing.iterations = 0; }));
  EXPECT_TRUE(rejected([](BenchConfig& c) { c.timing.windows = 0; }));
  EXPECT_TRUE(rejected([](BenchConfig& c) { c.timing.warmup = -1; }));
  EXPECT_TRUE(rejected([](BenchConfig& c) {
    c.style = BenchStyle::kGraph;
    c.runtime.transport = Transport::kCopyEngine;
  }));
  // Captured copy-engine calls run on the peer-store transport.
  EXPECT_FALSE(rejected([](BenchConfig& c) {
    c.style = BenchStyle::kGraph;
    c.call.protocol = Protocol::kCopyEngine;
  }));
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

TEST(BenchTableTest, FormatsBytesRowsAndTheFloor) {
  EXPECT_EQ(FormatBytes(512), "512");
  EXPECT_EQ(FormatBytes(8 << 10), "8K");
  EXPECT_EQ(FormatBytes(3 << 20), "3M");
  EXPECT_EQ(FormatBytes(int64_t{2} << 30), "2G");
  EXPECT_EQ(FormatBytes((1 << 20) + 1024), "1025K");
  BenchRow row;
  row.size_bytes = 32 << 10;
  row.per_rank_bytes = 8 << 10;
  row.count = 16384;
  row.ltx_us = 5.9;
  row.vs_floor = 2.5;
  const std::string ltx_only = FormatRow(row, DataType::kBFloat16);
  EXPECT_THAT(ltx_only, HasSubstr("32K"));
  EXPECT_THAT(ltx_only, HasSubstr("bf16"));
  EXPECT_THAT(ltx_only, HasSubstr("5.90"));
  EXPECT_THAT(ltx_only, HasSubstr("2.50 |"));
  EXPECT_THAT(ltx_only, HasSubstr("- |       -\n"));
  At(row.nccl, NcclMode::kPlain).us = 8.85;
  At(row.nccl, NcclMode::kWindows).why_not = "NCCL 2.21.5 has no symmetric windows";
  At(row.nccl, NcclMode::kCopyEngine).us = 12.0;
  const std::string with_nccl = FormatRow(row, DataType::kBFloat16);
  EXPECT_THAT(with_nccl, HasSubstr("     8.85       n/a     12.00 |      8.85"));
  EXPECT_THAT(with_nccl, HasSubstr("plain |   1.50x\n"));
  EXPECT_THAT(ColumnHeader(1), HasSubstr("best(us)"));
  EXPECT_THAT(ColumnHeader(1), HasSubstr("xfloor"));
  EXPECT_THAT(ColumnHeader(1), Not(HasSubstr("calls(")));
  EXPECT_THAT(ColumnHeader(3), HasSubstr("   op(3)us calls(3)us op/calls\n"));
  EXPECT_THAT(ColumnHeader(3), HasSubstr("# (ltx: one op of 3 tensors of the shape"));
  row.tensors = 3;
  row.calls_us = 11.8;
  // NCCL's columns move one tensor: no speedup against the op of three.
  EXPECT_THAT(FormatRow(row, DataType::kBFloat16),
              HasSubstr("plain |       - |      5.90      11.80    0.500\n"));
  LaunchFloor floor;
  floor.blocks = 132;
  floor.graph_us = 2.1;
  floor.eager_us = 3.5;
  EXPECT_THAT(FloorLine(floor), HasSubstr("empty kernel 132 x 512"));
  EXPECT_EQ(floor.For(BenchStyle::kGraph), 2.1);
  EXPECT_EQ(floor.For(BenchStyle::kPerRank), 3.5);
  EXPECT_EQ(floor.For(BenchStyle::kCoordinated), 3.5);
}

TEST(BenchTableTest, BusBandwidthIsNcclTestsOwn) {
  EXPECT_DOUBLE_EQ(BusBandwidth(400.0, 2), 200.0);
  EXPECT_DOUBLE_EQ(BusBandwidth(400.0, 8), 350.0);
  EXPECT_DOUBLE_EQ(BusBandwidth(400.0, 1), 0.0);  // One rank: nothing crosses a link.
}

TEST(MedianTest, TakesTheMiddleValue) {
  EXPECT_EQ(Median({}), 0);
  EXPECT_EQ(Median({3, 1, 2}), 2);
  EXPECT_EQ(Median({4, 1, 3, 2}), 3);
}

// The graph style runs whole graphs of kCallsPerGraph calls: the plan it prints is the one it
// runs, warm-up and windows rounded down, a window at least one graph; other styles run it as is.
TEST(PlanAsRunTest, GraphsRoundToWholeGraphs) {
  constexpr int kGraph = GraphSet::kCallsPerGraph;
  const TimingPlan asked{/*warmup=*/kGraph + 5, /*iterations=*/3 * kGraph - 1, /*windows=*/4};
  const TimingPlan graph = PlanAsRun(BenchStyle::kGraph, asked);
  EXPECT_EQ(graph.warmup, kGraph);
  EXPECT_EQ(graph.iterations, 2 * kGraph);
  EXPECT_EQ(graph.windows, 4);
  const TimingPlan short_plan = PlanAsRun(BenchStyle::kGraph, TimingPlan{kGraph - 1, 1, 1});
  EXPECT_EQ(short_plan.warmup, 0);
  EXPECT_EQ(short_plan.iterations, kGraph);
  for (BenchStyle style :
       {BenchStyle::kPerRank, BenchStyle::kRankOneThread, BenchStyle::kCoordinated}) {
    const TimingPlan eager = PlanAsRun(style, asked);
    EXPECT_EQ(eager.warmup, asked.warmup);
    EXPECT_EQ(eager.iterations, asked.iterations);
  }
  EXPECT_EQ(InWholeUnits(TimingPlan{7, 7, 2}, 1).iterations, 7);
}

// With several tensors ltx's op moves every tensor's bytes and NCCL's columns one tensor's: no
// speedup is set against them.
TEST(TensorCallsTest, NoSpeedupOverNcclForSeveralTensors) {
  EXPECT_EQ(LtxUsAgainstNccl(TensorCalls{1, 5.0, -1}), 5.0);
  EXPECT_EQ(LtxUsAgainstNccl(TensorCalls{3, 5.0, 12.0}), -1);
  EXPECT_THAT(TensorCallsNote(3), HasSubstr("no speedup over NCCL"));
}

TEST(BenchStyleTest, HostTimeSaysWhatItCountsInEachStyle) {
  EXPECT_THAT(HostTimeMeaning(BenchStyle::kPerRank), HasSubstr("median over the ranks"));
  EXPECT_THAT(HostTimeMeaning(BenchStyle::kCoordinated), HasSubstr("coordinated"));
  EXPECT_THAT(HostTimeMeaning(BenchStyle::kGraph), HasSubstr("graph launch"));
  EXPECT_THAT(HostTimeMeaning(BenchStyle::kRankOneThread), HasSubstr("every rank's call"));
}

}  // namespace
}  // namespace ltx
