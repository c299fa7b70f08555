// The phase breakdown's plain logic: reducing timed-kernel records over blocks, the medians per
// rank, the cross-GPU round trip with clock offsets cancelling, the tables, the block list and
// the settings' validation.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/one_trip_timestamps.h"
#include "tools/ltx_allgather/breakdown_config.h"
#include "tools/ltx_allgather/breakdown_table.h"

namespace ltx {
namespace {

constexpr int kSamples = 4;
constexpr int kMaxBlocks = 3;
constexpr int kSent = static_cast<int>(OneTripPhase::kSent);
constexpr int kSeen = static_cast<int>(OneTripPhase::kLastArrived);
constexpr int kEnd = static_cast<int>(OneTripPhase::kEnd);

// A block's record of op `op` that starts at `start` ns and reaches phase p at start + 100 p
// (+ `late` for the last phase), with kHeadersChecked only in block 0.
OneTripTimestampRecord Record(uint64_t op, int block, uint64_t start, uint64_t late = 0) {
  OneTripTimestampRecord record;
  record.op = op;
  for (int phase = 0; phase < kOneTripPhaseCount; ++phase) {
    record.ns[phase] = start + 100 * phase;
  }
  record.ns[kEnd] += late;
  if (block != 0) record.ns[static_cast<int>(OneTripPhase::kHeadersChecked)] = 0;
  return record;
}

// Records of ops 1..`ops` (2 blocks each, block 1 starting 50 ns later), op n starting at
// `first` + n * `period`, laid out as the kernel writes them.
std::vector<OneTripTimestampRecord> Records(int ops, uint64_t first, uint64_t period) {
  std::vector<OneTripTimestampRecord> records(kSamples * kMaxBlocks);
  for (uint64_t op = 1; op <= static_cast<uint64_t>(ops); ++op) {
    for (int block = 0; block < 2; ++block) {
      records[OneTripRecordIndex(op, block, kSamples, kMaxBlocks)] =
          Record(op, block, first + op * period + 50 * block);
    }
  }
  return records;
}

TEST(BreakdownTableTest, BlocksReduceToTheFirstStartAndTheLatestPhase) {
  const std::vector<OpPhases> ops = OpsOfRecords(Records(3, 1000, 1000), kSamples, kMaxBlocks);
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[0].op, 1u);
  EXPECT_EQ(ops[0].blocks, 2);
  EXPECT_EQ(ops[0].first_start, 2000u);
  EXPECT_EQ(ops[0].last_start, 2050u);
  EXPECT_EQ(ops[0].latest[kSent], 2150u);
  EXPECT_EQ(ops[0].latest[static_cast<int>(OneTripPhase::kHeadersChecked)], 2300u);
}

TEST(BreakdownTableTest, OnlyTheLatestSamplesSurvive) {
  // 6 ops into 4 samples: ops 3..6 remain.
  const std::vector<OpPhases> ops = OpsOfRecords(Records(6, 0, 1000), kSamples, kMaxBlocks);
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(ops.front().op, 3u);
  EXPECT_EQ(ops.back().op, 6u);
}

TEST(BreakdownTableTest, RankSummaryGivesPhasesGapAndPeriodInMicroseconds) {
  const RankPhases rank = SummarizeRank(OpsOfRecords(Records(4, 0, 1000), kSamples, kMaxBlocks));
  EXPECT_EQ(rank.ops, 4);
  EXPECT_EQ(rank.blocks, 2);
  EXPECT_DOUBLE_EQ(rank.last_block_start_us, 0.05);
  EXPECT_DOUBLE_EQ(rank.us[kSent], 0.15);  // Block 1: 50 + 100.
  EXPECT_DOUBLE_EQ(rank.us[static_cast<int>(OneTripPhase::kHeadersChecked)], 0.3);
  EXPECT_DOUBLE_EQ(rank.us[kEnd], 0.65);
  EXPECT_DOUBLE_EQ(rank.period_us, 1.0);
  EXPECT_DOUBLE_EQ(rank.gap_us, 0.35);  // 1000 - 650.
}

TEST(BreakdownTableTest, RoundTripCancelsTheClockOffset) {
  // Rank 1's clock runs 5000 ns ahead; each direction takes 700 ns after the sender's kSent.
  std::vector<OpPhases> zero(1), one(1);
  zero[0].op = one[0].op = 9;
  zero[0].latest[kSent] = 1000;
  one[0].latest[kSent] = 5000 + 1000;
  one[0].latest[kSeen] = 5000 + 1000 + 700;
  zero[0].latest[kSeen] = 1000 + 700;
  const std::vector<PairTrip> trips = PairTrips({zero, one});
  ASSERT_EQ(trips.size(), 1u);
  EXPECT_EQ(trips[0].rank, 1);
  EXPECT_EQ(trips[0].ops, 1);
  EXPECT_DOUBLE_EQ(trips[0].round_trip_us, 1.4);
  EXPECT_DOUBLE_EQ(trips[0].offset_us, 5.0);
}

TEST(BreakdownTableTest, TablesNameEveryPhaseAndTheRest) {
  RankPhases rank;
  rank.ops = 10;
  rank.us.fill(1.5);
  rank.us[static_cast<int>(OneTripPhase::kHeadersChecked)] = -1;
  const std::string table = FormatPhaseTable("title", {rank, rank}, {PairTrip{1, 10, 2.5, 0.1}});
  EXPECT_NE(table.find("# title\n"), std::string::npos);
  EXPECT_NE(table.find("rank1"), std::string::npos);
  for (int phase = 1; phase < kOneTripPhaseCount; ++phase) {
    EXPECT_NE(table.find(PhaseLabel(static_cast<OneTripPhase>(phase))), std::string::npos);
  }
  EXPECT_NE(table.find("round trip (sent to peer's last line) <= 2.50 us"), std::string::npos);
  const std::string host = FormatHostTable({{"a", 1.0}, {"b", 2.0}}, {"whole", 4.5});
  EXPECT_NE(host.find("sum of the steps"), std::string::npos);
  EXPECT_NE(host.find("    3.000"), std::string::npos);
  EXPECT_NE(host.find("    1.500"), std::string::npos);  // The rest.
}

TEST(BreakdownConfigTest, BlockListsParse) {
  EXPECT_EQ(*ParseBlockList("0,1,2,4"), (std::vector<int>{0, 1, 2, 4}));
  EXPECT_FALSE(ParseBlockList("").ok());
  EXPECT_FALSE(ParseBlockList("1,-2").ok());
  EXPECT_FALSE(ParseBlockList("x").ok());
  EXPECT_FALSE(ParseBlockList("2000").ok());
}

TEST(BreakdownConfigTest, SizesMustFitOneTrip) {
  BreakdownConfig config;
  EXPECT_TRUE(ValidateBreakdownConfig(config).ok());
  EXPECT_EQ(BreakdownTokensPerRank(config), 1);  // 8K of bf16 rows of 4096.
  config.per_rank_bytes = 1024;
  EXPECT_FALSE(ValidateBreakdownConfig(config).ok());
  config.per_rank_bytes = (512 << 10) + 1;
  EXPECT_FALSE(ValidateBreakdownConfig(config).ok());
  config.per_rank_bytes = 8 << 10;
  config.runtime.transport = Transport::kCopyEngine;
  EXPECT_FALSE(ValidateBreakdownConfig(config).ok());
}

}  // namespace
}  // namespace ltx
