// Tests of the one-trip staging layout: line counts, flags, header packing, block counts and line
// indices.
#include "kernels/wire/one_trip_layout.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/wire/entry_announcement.h"

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
  EXPECT_FALSE(ReadOneTripLine(OneTripLine{now.low, before.high}, OneTripFlag(3), &payload, &seen));
  EXPECT_EQ(seen, OneTripFlag(3));
  EXPECT_FALSE(ReadOneTripLine(OneTripLine{before.low, now.high}, OneTripFlag(3), &payload, &seen));
  EXPECT_EQ(seen, OneTripFlag(1));
  EXPECT_FALSE(ReadOneTripLine(OneTripLine{0, 0}, OneTripFlag(3), &payload, &seen));
  EXPECT_EQ(seen, 0u);
}

TEST(OneTripLayoutTest, HeaderRoundTripsTheAnnouncementWithoutItsOutput) {
  const EntryAnnouncement sent =
      MakeEntryAnnouncement(/*output_address=*/0x7f0000001000, /*dtype=*/-3, /*row_bytes=*/8192,
                            /*batch=*/5, /*total_tokens=*/(int64_t{1} << 40) + 7,
                            /*counts_digest=*/0xfedcba9876543210ull, AnnouncedProtocol::kOneTrip,
                            /*generation=*/(uint64_t{1} << 50) + 3);
  uint64_t payloads[kOneTripHeaderLines];
  PackHeader(sent, payloads);
  const EntryAnnouncement received = UnpackHeader(payloads);
  EXPECT_EQ(received.output_address, 0u);
  EXPECT_EQ(received.dtype, sent.dtype);
  EXPECT_EQ(received.row_bytes, sent.row_bytes);
  EXPECT_EQ(received.batch, sent.batch);
  EXPECT_EQ(received.total_tokens, sent.total_tokens);
  EXPECT_EQ(received.counts_digest, sent.counts_digest);
  EXPECT_EQ(received.generation, sent.generation);
  EXPECT_EQ(received.protocol, static_cast<uint32_t>(AnnouncedProtocol::kOneTrip));
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

// Where a transfer (line `line` from `source` to `target`) is handled: block, thread, round.
struct Handler {
  int block;
  int thread;
  int64_t round;
};

// Simulates the one-trip kernel's send and receive loops over the work items for every rank and
// checks that every line of every source reaches every peer exactly once, and that the receiving
// thread is the thread of the same block (and round) that sent it.
void ExpectEveryLineSentAndReceivedBySameBlock(const std::vector<int64_t>& lines, int blocks,
                                               int threads_per_block) {
  const int world = static_cast<int>(lines.size());
  SCOPED_TRACE(testing::Message() << "world " << world << " blocks " << blocks << " threads "
                                  << threads_per_block);
  std::map<std::tuple<int, int, int64_t>, Handler> sent;  // (source, target, line)
  std::map<std::tuple<int, int, int64_t>, Handler> received;
  for (int rank = 0; rank < world; ++rank) {
    int64_t max_lines = 0;
    for (int source = 0; source < world; ++source) {
      if (source != rank) max_lines = std::max(max_lines, lines[source]);
    }
    for (int block = 0; block < blocks; ++block) {
      for (int thread = 0; thread < threads_per_block; ++thread) {
        for (int64_t round = 0;; ++round) {  // SendLines
          const OneTripTransfer t = OneTripTransferOf(
              OneTripItem(round, block, blocks, thread, threads_per_block), world);
          if (t.line >= lines[rank]) break;
          ASSERT_TRUE(sent.insert({{rank, (rank + t.offset) % world, t.line},
                                   Handler{block, thread, round}})
                          .second);
        }
        for (int64_t round = 0;; ++round) {  // ReceiveData and ReceiveHeaders
          const OneTripTransfer t = OneTripTransferOf(
              OneTripItem(round, block, blocks, thread, threads_per_block), world);
          if (t.line >= max_lines) break;
          const int source = (rank + world - t.offset) % world;
          if (t.line >= lines[source]) continue;
          ASSERT_TRUE(
              received.insert({{source, rank, t.line}, Handler{block, thread, round}}).second);
        }
      }
    }
  }
  int64_t expected = 0;
  for (int source = 0; source < world; ++source) expected += (world - 1) * lines[source];
  EXPECT_EQ(static_cast<int64_t>(sent.size()), expected);
  ASSERT_EQ(received.size(), sent.size());
  for (const auto& [transfer, sender] : sent) {
    const Handler& receiver = received.at(transfer);
    EXPECT_EQ(receiver.block, sender.block);
    EXPECT_EQ(receiver.thread, sender.thread);
    EXPECT_EQ(receiver.round, sender.round);
  }
}

TEST(OneTripLayoutTest, EveryLineIsReceivedByTheBlockOfTheSameIndexThatSentIt) {
  for (int world = 2; world <= 8; ++world) {
    for (int blocks : {1, 2, 5}) {
      std::vector<int64_t> lines(world);
      for (int rank = 0; rank < world; ++rank) {
        // Uneven, some header-only, some over several rounds.
        lines[rank] = OneTripLines(8 * ((rank * 37) % 11) * (rank % 3 == 0 ? 100 : 1) + rank);
      }
      ExpectEveryLineSentAndReceivedBySameBlock(lines, blocks, 32);
      ExpectEveryLineSentAndReceivedBySameBlock(lines, blocks, 96);
    }
  }
}

TEST(OneTripLayoutTest, AWarpsItemsAreConsecutiveLinesOfOnePeer) {
  for (int world = 2; world <= 8; ++world) {
    for (int64_t warp = 0; warp < 3 * world; ++warp) {
      const OneTripTransfer first = OneTripTransferOf(warp * kOneTripRunLines, world);
      for (int lane = 1; lane < kOneTripRunLines; ++lane) {
        const OneTripTransfer t = OneTripTransferOf(warp * kOneTripRunLines + lane, world);
        EXPECT_EQ(t.offset, first.offset);
        EXPECT_EQ(t.line, first.line + lane);
      }
    }
  }
}

TEST(OneTripLayoutTest, HeaderLinesAreItemsOfBlockZero) {
  // ReceiveHeaders runs in block 0; the headers' senders must be in block 0 too.
  for (int world = 2; world <= 8; ++world) {
    for (int64_t item = 0; item < 2048; ++item) {
      if (OneTripTransferOf(item, world).line < kOneTripHeaderLines) {
        EXPECT_LT(item, 512);
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
