// The phase breakdown's plain logic: the protocols' phase layouts, reducing timed-kernel records
// over blocks (with the spread of the direct kernel's stores), the means per rank, the cross-GPU
// round trips with clock offsets cancelling, the tables, the block list and the settings'
// validation.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/wire/phase_timestamps.h"
#include "ltx/runtime_options.h"
#include "tools/bench/breakdown_calls.h"
#include "tools/bench/breakdown_phases.h"
#include "tools/bench/breakdown_plan.h"
#include "tools/bench/breakdown_table.h"
#include "tools/ltx_allgather/breakdown_config.h"

namespace ltx {
namespace {

constexpr int kSamples = 4;
constexpr int kMaxBlocks = 3;
constexpr int kSent = static_cast<int>(OneTripPhase::kSent);
constexpr int kSeen = static_cast<int>(OneTripPhase::kLastArrived);
constexpr int kEnd = static_cast<int>(OneTripPhase::kEnd);

// A block's record of op `op` that starts at `start` ns and reaches phase p at start + 100 p
// (+ `late` for the last phase), with kHeadersChecked only in block 0.
PhaseTimestampRecord Record(uint64_t op, int block, uint64_t start, uint64_t late = 0) {
  PhaseTimestampRecord record;
  record.op = op;
  for (int phase = 0; phase < kPhaseCount<OneTripPhase>; ++phase) {
    record.ns[phase] = start + 100 * phase;
  }
  record.ns[kEnd] += late;
  if (block != 0) record.ns[static_cast<int>(OneTripPhase::kHeadersChecked)] = 0;
  return record;
}

// Records of ops 1..`ops` (2 blocks each, block 1 starting 50 ns later), op n starting at
// `first` + n * `period`, laid out as the kernel writes them.
std::vector<PhaseTimestampRecord> Records(int ops, uint64_t first, uint64_t period) {
  std::vector<PhaseTimestampRecord> records(kSamples * kMaxBlocks);
  for (uint64_t op = 1; op <= static_cast<uint64_t>(ops); ++op) {
    for (int block = 0; block < 2; ++block) {
      records[PhaseRecordIndex(op, block, kSamples, kMaxBlocks)] =
          Record(op, block, first + op * period + 50 * block);
    }
  }
  return records;
}

std::vector<OpPhases> OneTripOps(int ops, uint64_t first, uint64_t period) {
  return OpsOfRecords(Records(ops, first, period), kSamples, kMaxBlocks,
                      PhaseLayoutOf(Protocol::kOneTrip));
}

TEST(BreakdownCallsTest, TitlesNameTheProtocolTheStyleAndBothTimings) {
  Measured untimed;
  untimed.device_us = 5.1;
  untimed.host_us = 2.31;
  Measured timed;
  timed.device_us = 5.4;
  timed.host_us = 2.4;
  EXPECT_EQ(PhaseTableTitle(Protocol::kOneTrip, "64K per rank",
                            BreakdownCalls{0, false, true, true}, untimed, timed),
            "one_trip, 64K per rank, graph replay, blocks auto: 5.10 us per call (device), host "
            "2.31 us; timed kernel 5.40 us, host 2.40 us");
  EXPECT_EQ(PhaseTableTitle(Protocol::kDirect, "seq_to_heads", BreakdownCalls{8, true}, untimed,
                            timed),
            "direct, seq_to_heads, eager per-rank, blocks 8, early start: 5.10 us per call "
            "(device), host 2.31 us; timed kernel 5.40 us, host 2.40 us");
}

TEST(BreakdownPhasesTest, EveryTimedProtocolLabelsEveryPhase) {
  const PhaseLayout one_trip = PhaseLayoutOf(Protocol::kOneTrip);
  EXPECT_EQ(one_trip.phases, kPhaseCount<OneTripPhase>);
  EXPECT_EQ(one_trip.labels.size(), static_cast<size_t>(one_trip.phases));
  EXPECT_EQ(one_trip.store_end, -1);
  const PhaseLayout direct = PhaseLayoutOf(Protocol::kDirect);
  EXPECT_EQ(direct.phases, kPhaseCount<DirectPhase>);
  EXPECT_EQ(direct.labels.size(), static_cast<size_t>(direct.phases));
  EXPECT_EQ(direct.store_begin, static_cast<int>(DirectPhase::kFirstStore));
  EXPECT_EQ(direct.store_end, static_cast<int>(DirectPhase::kStoresDone));
  EXPECT_EQ(direct.trips.size(), 2u);
  EXPECT_LE(direct.phases, kMaxPhaseCount);
  EXPECT_EQ(PhaseLayoutOf(Protocol::kCopyEngine).phases, 0);
}

TEST(BreakdownTableTest, BlocksReduceToTheFirstStartAndTheLatestPhase) {
  const std::vector<OpPhases> ops = OneTripOps(3, 1000, 1000);
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[0].op, 1u);
  EXPECT_EQ(ops[0].blocks, 2);
  EXPECT_EQ(ops[0].first_start, 2000u);
  EXPECT_EQ(ops[0].last_start, 2050u);
  EXPECT_EQ(ops[0].latest[kSent], 2150u);
  EXPECT_EQ(ops[0].latest[static_cast<int>(OneTripPhase::kHeadersChecked)], 2300u);
  EXPECT_EQ(ops[0].last_storing_block, -1);  // The one-trip layout has no store span.
}

TEST(BreakdownTableTest, OnlyTheLatestSamplesSurvive) {
  // 6 ops into 4 samples: ops 3..6 remain.
  const std::vector<OpPhases> ops = OneTripOps(6, 0, 1000);
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(ops.front().op, 3u);
  EXPECT_EQ(ops.back().op, 6u);
}

TEST(BreakdownTableTest, RankSummaryGivesPhasesGapAndPeriodInMicroseconds) {
  const RankPhases rank = SummarizeRank(OneTripOps(4, 0, 1000));
  EXPECT_EQ(rank.ops, 4);
  EXPECT_EQ(rank.blocks, 2);
  EXPECT_DOUBLE_EQ(rank.last_block_start_us, 0.05);
  EXPECT_DOUBLE_EQ(rank.us[kSent], 0.15);  // Block 1: 50 + 100.
  EXPECT_DOUBLE_EQ(rank.us[static_cast<int>(OneTripPhase::kHeadersChecked)], 0.3);
  EXPECT_DOUBLE_EQ(rank.us[kEnd], 0.65);
  EXPECT_DOUBLE_EQ(rank.period_us, 1.0);
  EXPECT_DOUBLE_EQ(rank.gap_us, 0.35);  // 1000 - 650.
  EXPECT_LT(rank.stores_done_spread_us, 0);
  EXPECT_EQ(rank.last_storing_block, -1);
}

// A direct-kernel record of op `op`: the block starts at `start`, publishes 200 ns later, sees
// its target at +1000, stores from +1100 for `store_ns`, then fences 500 ns and counts 100 ns;
// `last` blocks also store and see the exit flags (+300, +1300) before ending.
PhaseTimestampRecord DirectRecord(uint64_t op, uint64_t start, uint64_t store_ns, bool last) {
  PhaseTimestampRecord record;
  record.op = op;
  auto at = [&record](DirectPhase phase, uint64_t ns) { record.ns[static_cast<int>(phase)] = ns; };
  const uint64_t done = start + 1100 + store_ns;
  at(DirectPhase::kStart, start);
  at(DirectPhase::kEntryPublished, start + 200);
  at(DirectPhase::kTargetSeen, start + 1000);
  at(DirectPhase::kFirstStore, start + 1100);
  at(DirectPhase::kStoresDone, done);
  at(DirectPhase::kFenced, done + 500);
  at(DirectPhase::kCounted, done + 600);
  if (last) {
    at(DirectPhase::kExitFlagsStored, done + 900);
    at(DirectPhase::kExitFlagsSeen, done + 1900);
  }
  at(DirectPhase::kEnd, done + (last ? 2000 : 700));
  return record;
}

// Op `op` of three blocks starting at `start`: block 1 starts 100 ns late and stores longest
// (4000 ns), so it is the last to finish storing; block 0 stores 1000 ns, block 2 2000 ns.
std::vector<PhaseTimestampRecord> DirectOp(uint64_t op, uint64_t start) {
  std::vector<PhaseTimestampRecord> records(kSamples * kMaxBlocks);
  records[PhaseRecordIndex(op, 0, kSamples, kMaxBlocks)] = DirectRecord(op, start, 1000, false);
  records[PhaseRecordIndex(op, 1, kSamples, kMaxBlocks)] =
      DirectRecord(op, start + 100, 4000, true);
  records[PhaseRecordIndex(op, 2, kSamples, kMaxBlocks)] = DirectRecord(op, start, 2000, false);
  return records;
}

TEST(BreakdownTableTest, DirectOpsGiveTheLastStoringBlockAndTheSpreadOfStores) {
  const PhaseLayout layout = PhaseLayoutOf(Protocol::kDirect);
  const std::vector<OpPhases> ops = OpsOfRecords(DirectOp(1, 10000), kSamples, kMaxBlocks, layout);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].last_storing_block, 1);
  EXPECT_EQ(ops[0].first_stores_done, 10000u + 1100 + 1000);
  EXPECT_EQ(ops[0].last_stores_done, 10100u + 1100 + 4000);
  EXPECT_EQ(ops[0].shortest_stores_ns, 1000u);
  EXPECT_EQ(ops[0].longest_stores_ns, 4000u);
  const RankPhases rank = SummarizeRank(ops);
  EXPECT_EQ(rank.blocks, 3);
  EXPECT_DOUBLE_EQ(rank.last_block_start_us, 0.1);
  EXPECT_DOUBLE_EQ(rank.us[static_cast<int>(DirectPhase::kStoresDone)], 5.2);
  EXPECT_DOUBLE_EQ(rank.us[static_cast<int>(DirectPhase::kExitFlagsSeen)], 7.1);
  EXPECT_DOUBLE_EQ(rank.us[static_cast<int>(DirectPhase::kEnd)], 7.2);
  EXPECT_DOUBLE_EQ(rank.first_stores_done_us, 2.1);
  EXPECT_DOUBLE_EQ(rank.stores_done_spread_us, 3.1);
  EXPECT_DOUBLE_EQ(rank.shortest_stores_us, 1.0);
  EXPECT_DOUBLE_EQ(rank.longest_stores_us, 4.0);
  EXPECT_EQ(rank.last_storing_block, 1);
  EXPECT_DOUBLE_EQ(rank.last_storing_share, 1.0);
}

TEST(BreakdownTableTest, TheMostFrequentLastStoringBlockWins) {
  std::vector<OpPhases> ops(4);
  const int last[] = {2, 0, 2, 1};
  for (int i = 0; i < 4; ++i) {
    ops[i].op = i + 1;
    ops[i].blocks = 3;
    ops[i].last_storing_block = last[i];
    ops[i].first_stores_done = ops[i].last_stores_done = 1;
  }
  const RankPhases rank = SummarizeRank(ops);
  EXPECT_EQ(rank.last_storing_block, 2);
  EXPECT_DOUBLE_EQ(rank.last_storing_share, 0.5);
}

TEST(BreakdownTableTest, RoundTripCancelsTheClockOffset) {
  // Rank 1's clock runs 5000 ns ahead; each direction takes 700 ns after the sender's kSent.
  std::vector<OpPhases> zero(1), one(1);
  zero[0].op = one[0].op = 9;
  zero[0].latest[kSent] = 1000;
  one[0].latest[kSent] = 5000 + 1000;
  one[0].latest[kSeen] = 5000 + 1000 + 700;
  zero[0].latest[kSeen] = 1000 + 700;
  const std::vector<PairTrip> trips = PairTrips({zero, one}, PhaseLayoutOf(Protocol::kOneTrip));
  ASSERT_EQ(trips.size(), 1u);
  EXPECT_EQ(trips[0].rank, 1);
  EXPECT_EQ(trips[0].ops, 1);
  EXPECT_DOUBLE_EQ(trips[0].round_trip_us, 1.4);
  EXPECT_DOUBLE_EQ(trips[0].offset_us, 5.0);
}

TEST(BreakdownTableTest, DirectRoundTripsAreTheEntryAndTheExit) {
  // Rank 1's clock runs 3000 ns behind rank 0's; the ops start together.
  const PhaseLayout layout = PhaseLayoutOf(Protocol::kDirect);
  const std::vector<PairTrip> trips =
      PairTrips({OpsOfRecords(DirectOp(1, 10000), kSamples, kMaxBlocks, layout),
                 OpsOfRecords(DirectOp(1, 7000), kSamples, kMaxBlocks, layout)},
                layout);
  ASSERT_EQ(trips.size(), 2u);
  EXPECT_EQ(trips[0].name, layout.trips[0].name);
  EXPECT_DOUBLE_EQ(trips[0].round_trip_us, 1.6);  // Published +300 (block 1), seen +1100.
  EXPECT_DOUBLE_EQ(trips[0].offset_us, -3.0);
  EXPECT_EQ(trips[1].name, layout.trips[1].name);
  EXPECT_DOUBLE_EQ(trips[1].round_trip_us, 2.0);  // Exit flags stored to seen: 1000 each way.
  EXPECT_DOUBLE_EQ(trips[1].offset_us, -3.0);
}

TEST(BreakdownTableTest, TablesNameEveryPhaseAndTheRest) {
  const PhaseLayout layout = PhaseLayoutOf(Protocol::kOneTrip);
  RankPhases rank;
  rank.ops = 10;
  rank.us.fill(1.5);
  rank.us[static_cast<int>(OneTripPhase::kHeadersChecked)] = -1;
  const std::string table = FormatPhaseTable("title", layout, {rank, rank},
                                             {PairTrip{layout.trips[0].name, 1, 10, 2.5, 0.1}});
  EXPECT_NE(table.find("# title\n"), std::string::npos);
  EXPECT_NE(table.find("rank1"), std::string::npos);
  for (int phase = 1; phase < layout.phases; ++phase) {
    EXPECT_NE(table.find(layout.labels[phase]), std::string::npos);
  }
  EXPECT_EQ(table.find("last to finish storing"), std::string::npos);
  EXPECT_NE(table.find("round trip (sent to peer's last line) <= 2.50 us"), std::string::npos);
  const std::string host = FormatHostTable({{"a", 1.0}, {"b", 2.0}}, {"whole", 4.5});
  EXPECT_NE(host.find("sum of the steps"), std::string::npos);
  EXPECT_NE(host.find("    3.000"), std::string::npos);
  EXPECT_NE(host.find("    1.500"), std::string::npos);  // The rest.
}

TEST(BreakdownTableTest, DirectTableShowsTheBlocksStores) {
  const PhaseLayout layout = PhaseLayoutOf(Protocol::kDirect);
  const RankPhases rank =
      SummarizeRank(OpsOfRecords(DirectOp(1, 10000), kSamples, kMaxBlocks, layout));
  const std::string table = FormatPhaseTable("direct", layout, {rank}, {});
  for (int phase = 1; phase < layout.phases; ++phase) {
    EXPECT_NE(table.find(layout.labels[phase]), std::string::npos) << layout.labels[phase];
  }
  EXPECT_NE(table.find("stores done: last block - first block"), std::string::npos);
  EXPECT_NE(table.find("      3.10\n"), std::string::npos);  // The spread.
  const size_t last = table.find("block most often last to finish storing");
  ASSERT_NE(last, std::string::npos);
  EXPECT_EQ(table.substr(table.find('\n', last) - 2, 3), " 1\n") << table;
  EXPECT_NE(table.find("share of ops in which it was (%)"), std::string::npos);
}

TEST(BreakdownConfigTest, BlockListsParse) {
  EXPECT_EQ(*ParseBlockList("0,1,2,4"), (std::vector<int>{0, 1, 2, 4}));
  EXPECT_FALSE(ParseBlockList("").ok());
  EXPECT_FALSE(ParseBlockList("1,-2").ok());
  EXPECT_FALSE(ParseBlockList("x").ok());
  EXPECT_FALSE(ParseBlockList("2000").ok());
}

TEST(BreakdownConfigTest, SizesMustFitTheProtocol) {
  BreakdownConfig config;
  EXPECT_TRUE(ValidateBreakdownConfig(config).ok());
  EXPECT_EQ(BreakdownTokensPerRank(config), 1);  // 8K of bf16 rows of 4096.
  config.per_rank_bytes = 1024;
  EXPECT_FALSE(ValidateBreakdownConfig(config).ok());
  config.per_rank_bytes = (512 << 10) + 1;
  EXPECT_FALSE(ValidateBreakdownConfig(config).ok());
  config.protocol = Protocol::kDirect;
  EXPECT_TRUE(ValidateBreakdownConfig(config).ok());
  config.per_rank_bytes = (int64_t{1} << 30) + 1;
  EXPECT_FALSE(ValidateBreakdownConfig(config).ok());
  config.per_rank_bytes = 8 << 10;
  config.protocol = Protocol::kAuto;
  EXPECT_FALSE(ValidateBreakdownConfig(config).ok());
  config.protocol = Protocol::kOneTrip;
  config.runtime.transport = Transport::kCopyEngine;
  EXPECT_FALSE(ValidateBreakdownConfig(config).ok());
}

// Auto times the one-trip kernel up to its 512 KiB per rank and the direct kernel above; a
// protocol asked for is kept.
TEST(BreakdownConfigTest, AutoTakesOneTripUpToItsLimit) {
  EXPECT_EQ(BreakdownProtocol(Protocol::kAuto, 8 << 10), Protocol::kOneTrip);
  EXPECT_EQ(BreakdownProtocol(Protocol::kAuto, 512 << 10), Protocol::kOneTrip);
  EXPECT_EQ(BreakdownProtocol(Protocol::kAuto, (512 << 10) + 1), Protocol::kDirect);
  EXPECT_EQ(BreakdownProtocol(Protocol::kDirect, 8 << 10), Protocol::kDirect);
  EXPECT_EQ(BreakdownProtocol(Protocol::kOneTrip, 4 << 20), Protocol::kOneTrip);
  EXPECT_EQ(BreakdownProtocol(Protocol::kCopyEngine, 8 << 10), Protocol::kCopyEngine);
}

}  // namespace
}  // namespace ltx
