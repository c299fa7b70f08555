// Tests of the one-trip staging layout: line counts, flags, header packing, block counts and line
// indices.
#include "kernels/one_trip_layout.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <set>

#include "gtest/gtest.h"
#include "kernels/entry_announcement.h"

namespace ltx {
namespace {

TEST(OneTripLayoutTest, LinesCoverTheShardPlusTheHeader) {
  EXPECT_EQ(OneTripLines(0), kOneTripHeaderLines);
  EXPECT_EQ(OneTripLines(1), kOneTripHeaderLines + 1);
  EXPECT_EQ(OneTripLines(8), kOneTripHeaderLines + 1);
  EXPECT_EQ(OneTripLines(9), kOneTripHeaderLines + 2);
  EXPECT_EQ(OneTripLines(kOneTripMaxShardBytes), kOneTripLinesPerSource);
}

TEST(OneTripLayoutTest, FlagIsNeverZeroAndDiffersWithinAParity) {
  for (uint64_t op : {uint64_t{1}, uint64_t{2}, uint64_t{3}, uint64_t{0xFFFFFFFF},
                      uint64_t{0x100000000}, uint64_t{0x100000001}, uint64_t{0x1FFFFFFFE}}) {
    EXPECT_NE(OneTripFlag(op), 0u) << op;
    EXPECT_NE(OneTripFlag(op), OneTripFlag(op + 2)) << op;
    EXPECT_NE(OneTripFlag(op), OneTripFlag(op + 1)) << op;
  }
  EXPECT_EQ(OneTripFlag(1), 1u);
}

TEST(OneTripLayoutTest, LineRoundTripsThePayloadWithTheFlagInEachWord) {
  const uint64_t payload = 0x0123456789abcdefull;
  const OneTripLine line = MakeOneTripLine(payload, 0x5a5a0001u);
  // Each 8-byte word holds 4 payload bytes, then the flag (little-endian memory order).
  uint32_t halves[4];
  static_assert(sizeof(line) == sizeof(halves), "16-byte lines");
  std::memcpy(halves, &line, sizeof(line));
  EXPECT_EQ(halves[0], 0x89abcdefu);
  EXPECT_EQ(halves[1], 0x5a5a0001u);
  EXPECT_EQ(halves[2], 0x01234567u);
  EXPECT_EQ(halves[3], 0x5a5a0001u);
  uint64_t read = 0;
  uint32_t seen = 0;
  EXPECT_TRUE(ReadOneTripLine(line, 0x5a5a0001u, &read, &seen));
  EXPECT_EQ(read, payload);
  EXPECT_EQ(seen, 0x5a5a0001u);
}

TEST(OneTripLayoutTest, LineWithAWordOfAnotherOpIsNotAccepted) {
  const OneTripLine now = MakeOneTripLine(0x1111111122222222ull, OneTripFlag(3));
  const OneTripLine before = MakeOneTripLine(0x3333333344444444ull, OneTripFlag(1));
  uint64_t payload = 0;
  uint32_t seen = 0;
  EXPECT_FALSE(ReadOneTripLine(OneTripLine{now.low, before.high}, OneTripFlag(3), &payload,
                               &seen));
  EXPECT_EQ(seen, OneTripFlag(3));
  EXPECT_FALSE(ReadOneTripLine(OneTripLine{before.low, now.high}, OneTripFlag(3), &payload,
                               &seen));
  EXPECT_EQ(seen, OneTripFlag(1));
  EXPECT_FALSE(ReadOneTripLine(OneTripLine{0, 0}, OneTripFlag(3), &payload, &seen));
  EXPECT_EQ(seen, 0u);
}

TEST(OneTripLayoutTest, HeaderRoundTripsTheAnnouncementWithoutItsOutput) {
  const EntryAnnouncement sent =
      MakeEntryAnnouncement(/*output_address=*/0x7f0000001000, /*dtype=*/-3, /*row_bytes=*/8192,
                            /*batch=*/5, /*total_tokens=*/(int64_t{1} << 40) + 7,
                            /*counts_digest=*/0xfedcba9876543210ull);
  uint64_t payloads[kOneTripHeaderLines];
  PackHeader(sent, payloads);
  const EntryAnnouncement received = UnpackHeader(payloads);
  EXPECT_EQ(received.output_address, 0u);
  EXPECT_EQ(received.dtype, sent.dtype);
  EXPECT_EQ(received.row_bytes, sent.row_bytes);
  EXPECT_EQ(received.batch, sent.batch);
  EXPECT_EQ(received.total_tokens, sent.total_tokens);
  EXPECT_EQ(received.counts_digest, sent.counts_digest);
  uint64_t mine = 0;
  uint64_t theirs = 0;
  EXPECT_EQ(FindMismatch(sent, received, &mine, &theirs), MismatchField::kNone);
}

TEST(OneTripLayoutTest, BlockCountIsBounded) {
  for (int world = 1; world <= 8; ++world) {
    for (int max_blocks : {1, 4, 132}) {
      for (int64_t lines : {int64_t{6}, int64_t{1030}, kOneTripLinesPerSource}) {
        const int blocks = OneTripBlockCount(lines, world, max_blocks);
        EXPECT_GE(blocks, 1);
        EXPECT_LE(blocks, max_blocks);
        EXPECT_GE(int64_t{blocks} * kOneTripLinesPerBlock,
                  std::min<int64_t>(world * lines, int64_t{max_blocks} * kOneTripLinesPerBlock));
      }
    }
  }
}

TEST(OneTripLayoutTest, LineIndicesOfParitiesAndSourcesAreDisjoint) {
  for (int world = 1; world <= 8; ++world) {
    std::set<int64_t> firsts;
    for (int parity = 0; parity < 2; ++parity) {
      for (int source = 0; source < world; ++source) {
        const int64_t first = OneTripLineIndex(parity, source, world, 0);
        const int64_t last = OneTripLineIndex(parity, source, world, kOneTripLinesPerSource - 1);
        EXPECT_EQ(last - first + 1, kOneTripLinesPerSource);
        EXPECT_EQ(first % kOneTripLinesPerSource, 0);
        EXPECT_LT((last + 1) * static_cast<int64_t>(sizeof(OneTripLine)),
                  OneTripStagingBytes(world) + 1);
        EXPECT_TRUE(firsts.insert(first).second);
      }
    }
  }
}

}  // namespace
}  // namespace ltx
