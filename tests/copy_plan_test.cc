// Tests of the AllGather copy plan (kernels/protocols/copy_plan.h): the unit functions
// (LaneTilesOf, LaneTile, SplitForCopy, LanePartCount, AutoBlockCount) and a host simulation of the
// kernel's copy loop (lanes, tiles, slices, head/body/tail per thread, as
// kernels/device/block_copy.cuh runs it) that checks every output byte is stored exactly once, with
// the right value, over a grid of shapes; for ops of several tensors, every output byte of every
// tensor once, from that tensor's input of the right rank.
#include "kernels/protocols/copy_plan.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "gtest/gtest.h"
#include "ltx/collectives/allgather_layout.h"
#include "ltx/data_type.h"

namespace ltx {
namespace {

// ---------------------------------------------------------------------------------------------
// SplitForCopy

void ExpectSplit(uint64_t dst, uint64_t src, int64_t bytes, int width, int64_t head, int64_t units,
                 int64_t tail) {
  SCOPED_TRACE(absl::StrCat("dst=", dst, " src=", src, " bytes=", bytes));
  const CopySplit split = SplitForCopy(dst, src, bytes);
  EXPECT_EQ(split.width, width);
  EXPECT_EQ(split.head_bytes, head);
  EXPECT_EQ(split.body_units, units);
  EXPECT_EQ(split.tail_bytes, tail);
}

TEST(SplitForCopyTest, CoAlignedAddressesUseSixteenByteVectors) {
  ExpectSplit(0x1000, 0x2000, 64, 16, 0, 4, 0);
  ExpectSplit(0x1000, 0x2000, 70, 16, 0, 4, 6);
  ExpectSplit(0x1000, 0x2000, 15, 16, 0, 0, 15);
}

TEST(SplitForCopyTest, EqualMisalignmentUsesAHeadThenSixteenByteVectors) {
  // Both at 3 mod 16: 13 head bytes reach the next 16-byte boundary.
  ExpectSplit(0x1003, 0x2003, 100, 16, 13, 5, 7);
  ExpectSplit(0x100f, 0x200f, 17, 16, 1, 1, 0);
}

TEST(SplitForCopyTest, MisalignmentByEightUsesEightByteUnits) {
  ExpectSplit(0x1008, 0x2000, 64, 8, 0, 8, 0);
  ExpectSplit(0x1000, 0x2008, 64, 8, 0, 8, 0);
  ExpectSplit(0x1004, 0x200c, 30, 8, 4, 3, 2);
}

TEST(SplitForCopyTest, MisalignmentByFourAndTwoUsesFourAndTwoByteUnits) {
  ExpectSplit(0x1004, 0x2000, 16, 4, 0, 4, 0);
  ExpectSplit(0x1002, 0x2006, 16, 4, 2, 3, 2);
  ExpectSplit(0x1002, 0x2000, 9, 2, 0, 4, 1);
  ExpectSplit(0x1001, 0x2003, 9, 2, 1, 4, 0);
}

TEST(SplitForCopyTest, MisalignmentByOneCopiesSingleBytes) {
  ExpectSplit(0x1001, 0x2000, 10, 1, 0, 10, 0);
  ExpectSplit(0x1003, 0x2008, 33, 1, 0, 33, 0);
}

TEST(SplitForCopyTest, SegmentShorterThanTheHeadIsAllHead) {
  ExpectSplit(0x1003, 0x2003, 5, 16, 5, 0, 0);
  ExpectSplit(0x1003, 0x2003, 13, 16, 13, 0, 0);
  ExpectSplit(0x1001, 0x2005, 2, 4, 2, 0, 0);
}

TEST(SplitForCopyTest, EmptySegmentHasNoBytes) { ExpectSplit(0x1003, 0x2003, 0, 16, 0, 0, 0); }

TEST(SplitForCopyTest, PartsAddUpAndBodyIsAlignedForEveryResidue) {
  for (uint64_t dst_mod = 0; dst_mod < 16; ++dst_mod) {
    for (uint64_t src_mod = 0; src_mod < 16; ++src_mod) {
      for (int64_t bytes = 0; bytes <= 70; ++bytes) {
        const uint64_t dst = 0x10000 + dst_mod;
        const uint64_t src = 0x7000 + src_mod;
        const CopySplit split = SplitForCopy(dst, src, bytes);
        SCOPED_TRACE(absl::StrCat("dst=", dst, " src=", src, " bytes=", bytes));
        ASSERT_TRUE(split.width == 1 || split.width == 2 || split.width == 4 || split.width == 8 ||
                    split.width == 16);
        ASSERT_EQ(split.head_bytes + split.body_units * split.width + split.tail_bytes, bytes);
        ASSERT_GE(split.head_bytes, 0);
        ASSERT_LT(split.head_bytes, split.width == 1 ? 1 : split.width);
        ASSERT_GE(split.tail_bytes, 0);
        ASSERT_LT(split.tail_bytes, split.width == 1 ? 1 : split.width);
        if (split.body_units > 0) {
          ASSERT_EQ((dst + split.head_bytes) % split.width, 0u);
          ASSERT_EQ((src + split.head_bytes) % split.width, 0u);
        }
        // The width is the widest co-alignment, capped at kVectorBytes.
        const uint64_t misalignment = (dst ^ src) & 15;
        const int widest = misalignment == 0 ? 16 : static_cast<int>(misalignment & -misalignment);
        ASSERT_EQ(split.width, widest);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Lanes

TEST(LanePlanTest, LaneCountIsAtLeastTheWorldSize) {
  EXPECT_EQ(LaneCount(1, 8), 8);
  EXPECT_EQ(LaneCount(7, 8), 8);
  EXPECT_EQ(LaneCount(8, 8), 8);
  EXPECT_EQ(LaneCount(9, 8), 9);
  EXPECT_EQ(LaneCount(264, 3), 264);
}

TEST(LanePlanTest, EachTargetsPartsAreNumberedZeroToPartCount) {
  for (int world = 1; world <= kMaxWorldSize; ++world) {
    for (int rank = 0; rank < world; ++rank) {
      for (int blocks = 1; blocks <= 300; ++blocks) {
        const int lanes = LaneCount(blocks, world);
        SCOPED_TRACE(absl::StrCat("world=", world, " rank=", rank, " lanes=", lanes));
        std::vector<std::vector<int>> parts_of_target(world);
        std::vector<int> part_count_of_target(world, -1);
        for (int lane = 0; lane < lanes; ++lane) {
          const int target = LaneTarget(lane, rank, world);
          ASSERT_GE(target, 0);
          ASSERT_LT(target, world);
          parts_of_target[target].push_back(LanePart(lane, world));
          const int count = LanePartCount(lane, lanes, world);
          if (part_count_of_target[target] == -1) part_count_of_target[target] = count;
          ASSERT_EQ(count, part_count_of_target[target]) << "lane " << lane;
        }
        for (int target = 0; target < world; ++target) {
          std::vector<int>& parts = parts_of_target[target];
          std::sort(parts.begin(), parts.end());
          ASSERT_EQ(static_cast<int>(parts.size()), part_count_of_target[target]);
          for (int i = 0; i < static_cast<int>(parts.size()); ++i) ASSERT_EQ(parts[i], i);
        }
      }
    }
  }
}

TEST(LanePlanTest, PartCountsOverOneSetOfTargetsSumToTheLaneCount) {
  for (int world = 1; world <= kMaxWorldSize; ++world) {
    for (int lanes = world; lanes <= 300; ++lanes) {
      int sum = 0;
      for (int lane = 0; lane < world; ++lane) sum += LanePartCount(lane, lanes, world);
      EXPECT_EQ(sum, lanes) << "world " << world << " lanes " << lanes;
    }
  }
}

TEST(LanePlanTest, ExtraLanesOfDifferentRanksGoToDifferentTargets) {
  // 10 lanes over 8 ranks: two targets get a second lane, and which ones rotates with the rank.
  const int world = 8;
  const int lanes = 10;
  for (int rank = 0; rank < world; ++rank) {
    std::vector<int> lanes_of_target(world, 0);
    for (int lane = 0; lane < lanes; ++lane) ++lanes_of_target[LaneTarget(lane, rank, world)];
    EXPECT_EQ(lanes_of_target[rank % world], 2);
    EXPECT_EQ(lanes_of_target[(rank + 1) % world], 2);
    EXPECT_EQ(lanes_of_target[(rank + 2) % world], 1);
  }
}

// ---------------------------------------------------------------------------------------------
// AutoBlockCount

TEST(AutoBlockCountTest, StaysWithinBoundsAndGivesEveryTargetABlock) {
  for (int64_t flat :
       {int64_t{0}, int64_t{1}, kBytesPerBlock - 1, kBytesPerBlock, kBytesPerBlock + 1,
        int64_t{1} << 20, int64_t{100} << 20, int64_t{1} << 40, int64_t{1} << 62}) {
    for (int world = 1; world <= kMaxWorldSize; ++world) {
      for (int max_blocks : {1, 2, 3, 7, 8, 9, 132, 264, 1024}) {
        SCOPED_TRACE(absl::StrCat("flat=", flat, " world=", world, " max=", max_blocks));
        const int blocks = AutoBlockCount(flat, world, max_blocks);
        EXPECT_GE(blocks, 1);
        EXPECT_LE(blocks, max_blocks);
        if (max_blocks >= world) {
          EXPECT_GE(blocks, world);
        }
        int64_t per_target = (flat + kBytesPerBlock - 1) / kBytesPerBlock;
        per_target = std::max<int64_t>(per_target, 1);
        EXPECT_EQ(blocks, std::min<int64_t>(per_target * world, max_blocks));
      }
    }
  }
}

TEST(AutoBlockCountTest, OneBlockPerTargetForSmallShards) {
  EXPECT_EQ(AutoBlockCount(0, 8, 264), 8);
  EXPECT_EQ(AutoBlockCount(100, 4, 264), 4);
  EXPECT_EQ(AutoBlockCount(kBytesPerBlock, 2, 264), 2);
  EXPECT_EQ(AutoBlockCount(kBytesPerBlock + 1, 2, 264), 4);
}

// ---------------------------------------------------------------------------------------------
// Slices

ShardGeometry MakeGeometry(int64_t batch, int64_t shard_bytes, int64_t stride, int64_t offset) {
  ShardGeometry g;
  g.batch = batch;
  g.shard_bytes = shard_bytes;
  g.output_batch_stride = stride;
  g.output_offset = offset;
  return g;
}

// ---------------------------------------------------------------------------------------------
// ShardGeometryOf

TEST(ShardGeometryOfTest, PlacesTheShardAtItsPrefixInEverySlice) {
  const ShardGeometry g = ShardGeometryOf(/*batch=*/3, /*row_bytes=*/22, /*total_tokens=*/9,
                                          /*tokens=*/5, /*prefix_tokens=*/3);
  EXPECT_EQ(g.batch, 3);
  EXPECT_EQ(g.shard_bytes, 5 * 22);
  EXPECT_EQ(g.output_batch_stride, 9 * 22);
  EXPECT_EQ(g.output_offset, 3 * 22);
  EXPECT_EQ(FlatShardBytes(g), 3 * 5 * 22);
}

TEST(ShardGeometryOfTest, ZeroTokensGiveAnEmptyShard) {
  const ShardGeometry g = ShardGeometryOf(2, 4096, 10, 0, 10);
  EXPECT_EQ(g.shard_bytes, 0);
  EXPECT_EQ(FlatShardBytes(g), 0);
  EXPECT_EQ(g.output_offset, 10 * 4096);
}

TEST(SliceTest, RangeAcrossSlicesSplitsIntoContiguousSegments) {
  // 3 slices of 10 bytes; output stride 50, this shard at byte 20 of each output slice.
  const ShardGeometry g = MakeGeometry(3, 10, 50, 20);
  ByteRange range;
  range.begin = 5;
  range.end = 27;
  ASSERT_EQ(FirstSlice(g, range), 0);
  ASSERT_EQ(EndSlice(g, range), 3);
  const Segment s0 = SliceSegment(g, range, 0);
  EXPECT_EQ(s0.src_offset, 5);
  EXPECT_EQ(s0.dst_offset, 25);
  EXPECT_EQ(s0.bytes, 5);
  const Segment s1 = SliceSegment(g, range, 1);
  EXPECT_EQ(s1.src_offset, 10);
  EXPECT_EQ(s1.dst_offset, 70);
  EXPECT_EQ(s1.bytes, 10);
  const Segment s2 = SliceSegment(g, range, 2);
  EXPECT_EQ(s2.src_offset, 20);
  EXPECT_EQ(s2.dst_offset, 120);
  EXPECT_EQ(s2.bytes, 7);
}

TEST(SliceTest, EmptyShardHasNoSlicesInAnyLane) {
  const ShardGeometry g = MakeGeometry(3, 0, 300, 100);
  for (int lanes : {1, 2, 8, 264}) {
    for (int lane = 0; lane < lanes; ++lane) {
      const ByteRange range =
          LaneTile(LaneTilesOf(g, lane, lanes, std::min(lanes, 8), /*tensors=*/1), 0);
      EXPECT_EQ(range.begin, range.end);
      EXPECT_EQ(FirstSlice(g, range), EndSlice(g, range));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// LaneTileBytes, LaneTilesOf, LaneTile

TEST(LaneTileTest, TilesAreFullWhenEveryLaneGetsOne) {
  EXPECT_EQ(LaneTileBytes(int64_t{64} << 20, 66), kLaneTileBytes);
  EXPECT_EQ(LaneTileBytes(66 * kLaneTileBytes, 66), kLaneTileBytes);
  EXPECT_EQ(LaneTileBytes(int64_t{64} << 20, kSmallTileLanes), kLaneTileBytes);
}

TEST(LaneTileTest, FewerLanesTakeLargerTiles) {
  const int64_t total = int64_t{64} << 20;
  EXPECT_EQ(LaneTileBytes(total, kSmallTileLanes - 1), 2 * kLaneTileBytes);
  EXPECT_EQ(LaneTileBytes(total, 8), 8 * kLaneTileBytes);
  EXPECT_EQ(LaneTileBytes(total, 1), kSmallTileLanes * kLaneTileBytes);
  // Still never more than an even split.
  EXPECT_EQ(LaneTileBytes(100000, 2), 50000);
}

TEST(LaneTileTest, SmallRangesAreSplitEvenlyInWholeVectors) {
  EXPECT_EQ(LaneTileBytes(1000, 4), 256);  // 63 vectors over 4 lanes: 16 each.
  EXPECT_EQ(LaneTileBytes(15, 8), kVectorBytes);
  EXPECT_EQ(LaneTileBytes(0, 8), kVectorBytes);
}

// A lane's tiles: part, part + parts, ... of tile_bytes each, the last one cut at the end of the
// flat shard, then empty ranges.
TEST(LaneTileTest, TilesOfALaneStepByItsPartCount) {
  const ShardGeometry g = MakeGeometry(2, 3000000, 9000000, 0);
  // 5 lanes over 2 targets: lanes 0, 2, 4 serve target 0 (3 parts), lanes 1, 3 target 1.
  const LaneTiles tiles = LaneTilesOf(g, /*lane=*/3, /*lanes=*/5, /*world=*/2, /*tensors=*/1);
  const int64_t tile = kLaneTileBytes * (kSmallTileLanes / 2);  // 2 parts: 1 MiB tiles.
  EXPECT_EQ(tiles.total, 6000000);
  EXPECT_EQ(tiles.tile_bytes, tile);  // 3000000 bytes each for 2 parts: capped.
  EXPECT_EQ(tiles.first, tile);       // Part 1.
  EXPECT_EQ(tiles.stride, 2 * tile);
  const int64_t expected[][2] = {{tile, 2 * tile}, {3 * tile, 4 * tile}, {5 * tile, 6000000},
                                 {6000000, 6000000}, {6000000, 6000000}};
  for (int64_t k = 0; k < 5; ++k) {
    const ByteRange range = LaneTile(tiles, k);
    EXPECT_EQ(range.begin, expected[k][0]) << "k=" << k;
    EXPECT_EQ(range.end, expected[k][1]) << "k=" << k;  // k = 2: cut at the end of the shard.
  }
  const LaneTiles part0 = LaneTilesOf(g, /*lane=*/1, /*lanes=*/5, /*world=*/2, /*tensors=*/1);
  EXPECT_EQ(part0.first, 0);
  EXPECT_EQ(LaneTile(part0, 2).begin, 4 * tile);
  EXPECT_EQ(LaneTile(part0, 2).end, 5 * tile);
  EXPECT_EQ(LaneTile(part0, 3).begin, LaneTile(part0, 3).end);
  const LaneTiles three_parts = LaneTilesOf(g, /*lane=*/4, /*lanes=*/5, /*world=*/2, /*tensors=*/1);
  const int64_t third = kLaneTileBytes * ((kSmallTileLanes + 2) / 3);
  EXPECT_EQ(three_parts.tile_bytes, third);
  EXPECT_EQ(three_parts.first, 2 * third);
  EXPECT_EQ(three_parts.stride, 3 * third);
}

// The tiles of a target's lanes, taken in each lane's order, cover its flat range exactly once,
// and at any step k the lanes work side by side on consecutive tiles.
TEST(LaneTileTest, LanesOfATargetSweepTheRangeTogether) {
  for (int64_t batch : {1, 3}) {
    for (int64_t shard : {int64_t{0}, int64_t{7}, int64_t{4096}, int64_t{1} << 20,
                          (int64_t{4} << 20) + 48, int64_t{33} << 20}) {
      const ShardGeometry g = MakeGeometry(batch, shard, shard * 2 + 64, 32);
      const int64_t total = FlatShardBytes(g);
      for (int world : {1, 2, 4, 8}) {
        for (int lanes : {world, 16, 66, 132, 264}) {
          if (lanes < world) continue;
          SCOPED_TRACE(
              absl::StrCat("batch=", batch, " shard=", shard, " world=", world, " lanes=", lanes));
          for (int target = 0; target < world; ++target) {
            std::vector<ByteRange> tiles;
            int64_t covered = 0;
            for (int lane = target; lane < lanes; lane += world) {
              const LaneTiles lane_tiles = LaneTilesOf(g, lane, lanes, world, /*tensors=*/1);
              ASSERT_EQ(lane_tiles.tile_bytes,
                        LaneTileBytes(total, LanePartCount(lane, lanes, world)));
              for (int64_t k = 0;; ++k) {
                const ByteRange tile = LaneTile(lane_tiles, k);
                if (tile.begin == tile.end) break;
                ASSERT_LE(tile.end - tile.begin, lane_tiles.tile_bytes);
                tiles.push_back(tile);
                covered += tile.end - tile.begin;
              }
            }
            std::sort(tiles.begin(), tiles.end(),
                      [](const ByteRange& a, const ByteRange& b) { return a.begin < b.begin; });
            int64_t next = 0;
            for (const ByteRange& tile : tiles) {
              ASSERT_EQ(tile.begin, next);
              next = tile.end;
            }
            EXPECT_EQ(next, total);
            EXPECT_EQ(covered, total);
          }
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Simulation of the kernel's copy loop.

// One AllGather shape and launch configuration to simulate.
struct SimCase {
  int world = 1;
  int blocks = 1;
  int threads = 32;
  int64_t row_bytes = 1;
  int64_t batch = 1;
  std::vector<int64_t> counts;
  uint64_t input_misalignment = 0;   // Input base address mod 16.
  uint64_t output_misalignment = 0;  // Output base address mod 16.
  int tensors = 1;                   // AllGatherShape::tensors.

  std::string ToString() const {
    return absl::StrCat("world=", world, " blocks=", blocks, " threads=", threads,
                        " row_bytes=", row_bytes, " batch=", batch, " counts={",
                        absl::StrJoin(counts, ","), "} input_base%16=", input_misalignment,
                        " output_base%16=", output_misalignment, " tensors=", tensors);
  }
};

// Virtual base addresses: far apart, distinct per rank and tensor, with the requested residues
// mod 16 for tensor 0 (tensor t's moved by 5 * t more, so that tensors differ in alignment).
uint64_t TensorBase(uint64_t region, int rank, int tensor, uint64_t misalignment) {
  return region + (static_cast<uint64_t>(rank) << 36) + (static_cast<uint64_t>(tensor) << 32) +
         (misalignment + 5 * static_cast<uint64_t>(tensor)) % 16;
}
uint64_t InputBase(int rank, int tensor, uint64_t misalignment) {
  return TensorBase(0x7f0000000000ull, rank, tensor, misalignment);
}
uint64_t OutputBase(int rank, int tensor, uint64_t misalignment) {
  return TensorBase(0x5f0000000000ull, rank, tensor, misalignment);
}

class KernelSimulator {
 public:
  KernelSimulator(const SimCase& c, const AllGatherLayout& layout, std::mt19937_64* rng)
      : case_(c), layout_(layout) {
    inputs_.resize(c.tensors, Buffers(c.world));
    for (int tensor = 0; tensor < c.tensors; ++tensor) {
      for (int rank = 0; rank < c.world; ++rank) {
        inputs_[tensor][rank].resize(layout.InputBytes(rank));
        for (uint8_t& byte : inputs_[tensor][rank]) {
          byte = static_cast<uint8_t>(1 + (*rng)() % 255);
        }
      }
    }
    outputs_.assign(c.tensors,
                    Buffers(c.world, std::vector<uint8_t>(layout.output_bytes, kPoison)));
    store_counts_.assign(c.tensors, Buffers(c.world, std::vector<uint8_t>(layout.output_bytes, 0)));
    stores_by_source_.assign(c.world, 0);
  }

  // Runs every block of every rank. Returns false (with `error_` set) on the first store that
  // is out of bounds or a vector access that is not aligned to its width.
  bool RunAllRanks() {
    for (int rank = 0; rank < case_.world; ++rank) {
      if (!RunRank(rank)) return false;
    }
    return true;
  }

  // Checks every output of every tensor of every target: each byte stored exactly once, with
  // its value in that tensor's input of its rank. Returns an empty string on success, else a
  // description of the first bad byte.
  std::string CheckOutputs() const {
    for (int tensor = 0; tensor < case_.tensors; ++tensor) {
      const std::string bad = CheckTensor(tensor);
      if (!bad.empty()) return absl::StrCat("tensor ", tensor, ": ", bad);
    }
    return "";
  }

  const std::string& error() const { return error_; }
  int64_t stores_by_source(int rank) const { return stores_by_source_[rank]; }

 private:
  static constexpr uint8_t kPoison = 0;               // Inputs are never zero.
  using Buffers = std::vector<std::vector<uint8_t>>;  // One per rank.

  std::string CheckTensor(int tensor) const {
    const int64_t row = layout_.row_bytes;
    for (int target = 0; target < case_.world; ++target) {
      const uint8_t* out = outputs_[tensor][target].data();
      const uint8_t* stores = store_counts_[tensor][target].data();
      for (int64_t i = 0; i < layout_.output_bytes; ++i) {
        if (stores[i] != 1) {
          return absl::StrCat("target ", target, " byte ", i, " stored ",
                              static_cast<int>(stores[i]), " times");
        }
      }
      for (int rank = 0; rank < case_.world; ++rank) {
        const ShardGeometry g = layout_.GeometryOf(rank);
        const uint8_t* in = inputs_[tensor][rank].data();
        for (int64_t b = 0; b < layout_.batch; ++b) {
          const int64_t out_begin =
              b * layout_.total_tokens * row + layout_.prefix_tokens[rank] * row;
          const int64_t in_begin = b * g.shard_bytes;
          for (int64_t j = 0; j < g.shard_bytes; ++j) {
            if (out[out_begin + j] != in[in_begin + j]) {
              return absl::StrCat("target ", target, " byte ", out_begin + j, " (rank ", rank,
                                  " slice ", b, " byte ", j, ") is ",
                                  static_cast<int>(out[out_begin + j]), ", expected ",
                                  static_cast<int>(in[in_begin + j]));
            }
          }
        }
      }
    }
    return "";
  }

  bool RunRank(int rank) {
    const int world = case_.world;
    const ShardGeometry g = layout_.GeometryOf(rank);
    const int64_t flat = case_.tensors * FlatShardBytes(g);
    const int lanes = LaneCount(case_.blocks, world);
    for (int block = 0; block < case_.blocks; ++block) {
      for (int lane = block; lane < lanes; lane += case_.blocks) {
        const int target = LaneTarget(lane, rank, world);
        // Mirrors CopyLane: the lane's tiles, computed once, in order up to the first empty one.
        const LaneTiles tiles = LaneTilesOf(g, lane, lanes, world, case_.tensors);
        for (int64_t k = 0;; ++k) {
          const ByteRange range = LaneTile(tiles, k);
          if (range.begin < 0 || range.end > flat || range.begin > range.end) {
            error_ = absl::StrCat("rank ", rank, " lane ", lane, " tile ", k, " [", range.begin,
                                  ", ", range.end, ") outside [0, ", flat, ")");
            return false;
          }
          if (range.begin == range.end) break;
          const int64_t end_slice = EndSlice(g, range);
          for (int64_t slice = FirstSlice(g, range); slice < end_slice; ++slice) {
            const TensorSegment part = TensorSliceSegment(g, range, slice);
            if (part.tensor < 0 || part.tensor >= case_.tensors) {
              error_ = absl::StrCat("rank ", rank, " slice ", slice, " of tensor ", part.tensor);
              return false;
            }
            if (!CopySegment(rank, target, part.tensor, part.segment)) return false;
          }
        }
      }
    }
    return true;
  }

  // Mirrors CopySegment: single-byte head, `width`-byte body units, single-byte tail.
  bool CopySegment(int rank, int target, int tensor, const Segment& segment) {
    const uint64_t dst = OutputBase(target, tensor, case_.output_misalignment) + segment.dst_offset;
    const uint64_t src = InputBase(rank, tensor, case_.input_misalignment) + segment.src_offset;
    const CopySplit split = SplitForCopy(dst, src, segment.bytes);
    if (split.head_bytes + split.body_units * split.width + split.tail_bytes != segment.bytes) {
      error_ = "split does not add up to the segment";
      return false;
    }
    if (split.body_units > 0 && ((dst + split.head_bytes) % split.width != 0 ||
                                 (src + split.head_bytes) % split.width != 0)) {
      error_ = absl::StrCat("body of width ", split.width, " is misaligned: dst ",
                            dst + split.head_bytes, " src ", src + split.head_bytes);
      return false;
    }
    int64_t dst_offset = segment.dst_offset;
    int64_t src_offset = segment.src_offset;
    const Stores stores{rank, target, tensor};
    if (!CopyBytes(stores, dst_offset, src_offset, split.head_bytes)) return false;
    dst_offset += split.head_bytes;
    src_offset += split.head_bytes;
    if (!CopyBody(stores, dst_offset, src_offset, split.width, split.body_units)) return false;
    const int64_t body_bytes = split.body_units * split.width;
    return CopyBytes(stores, dst_offset + body_bytes, src_offset + body_bytes, split.tail_bytes);
  }

  // Who stores: rank `rank` into tensor `tensor`'s output of `target`, from that tensor's input.
  struct Stores {
    int rank;
    int target;
    int tensor;
  };

  // Mirrors CopyBytes: thread t copies bytes t, t + threads, ... Threads with t >= bytes store
  // nothing, so they are not visited.
  bool CopyBytes(const Stores& by, int64_t dst_offset, int64_t src_offset, int64_t bytes) {
    for (int64_t t = 0; t < case_.threads && t < bytes; ++t) {
      for (int64_t i = t; i < bytes; i += case_.threads) {
        if (!Store(by, dst_offset + i, src_offset + i, 1)) return false;
      }
    }
    return true;
  }

  // Mirrors CopyBody: thread t copies units t, t + threads, ... of `width` bytes each.
  bool CopyBody(const Stores& by, int64_t dst_offset, int64_t src_offset, int width,
                int64_t units) {
    for (int64_t t = 0; t < case_.threads && t < units; ++t) {
      for (int64_t u = t; u < units; u += case_.threads) {
        if (!Store(by, dst_offset + u * width, src_offset + u * width, width)) return false;
      }
    }
    return true;
  }

  bool Store(const Stores& by, int64_t dst_offset, int64_t src_offset, int width) {
    const std::vector<uint8_t>& input = inputs_[by.tensor][by.rank];
    if (dst_offset < 0 || dst_offset + width > layout_.output_bytes || src_offset < 0 ||
        src_offset + width > static_cast<int64_t>(input.size())) {
      error_ =
          absl::StrCat("rank ", by.rank, " stores ", width, " bytes from input byte ", src_offset,
                       " (of ", input.size(), ") to byte ", dst_offset, " of target ", by.target,
                       " (of ", layout_.output_bytes, ") of tensor ", by.tensor);
      return false;
    }
    uint8_t* out = outputs_[by.tensor][by.target].data() + dst_offset;
    uint8_t* stores = store_counts_[by.tensor][by.target].data() + dst_offset;
    const uint8_t* in = input.data() + src_offset;
    for (int k = 0; k < width; ++k) {
      out[k] = in[k];
      if (stores[k] < 255) ++stores[k];
    }
    stores_by_source_[by.rank] += width;
    return true;
  }

  const SimCase& case_;
  const AllGatherLayout& layout_;
  // [tensor][rank]
  std::vector<Buffers> inputs_;
  std::vector<Buffers> outputs_;
  std::vector<Buffers> store_counts_;
  std::vector<int64_t> stores_by_source_;
  std::string error_;
};

// Simulates `c` and checks the gathered outputs. Returns the bytes stored in all.
int64_t SimulateAndCheck(const SimCase& c, std::mt19937_64* rng) {
  SCOPED_TRACE(c.ToString());
  AllGatherShape shape;
  shape.dtype = DataType::kUint8;
  shape.batch = c.batch;
  shape.hidden = c.row_bytes;
  shape.token_counts = c.counts;
  shape.tensors = c.tensors;
  const absl::StatusOr<AllGatherLayout> layout = ComputeAllGatherLayout(shape, c.world);
  EXPECT_TRUE(layout.ok()) << layout.status();
  if (!layout.ok()) return 0;
  EXPECT_EQ(layout->row_bytes, c.row_bytes);

  KernelSimulator sim(c, *layout, rng);
  const bool ran = sim.RunAllRanks();
  EXPECT_TRUE(ran) << sim.error() << " [" << c.ToString() << "]";
  if (!ran) return 0;
  const std::string bad = sim.CheckOutputs();
  EXPECT_EQ(bad, "") << " [" << c.ToString() << "]";
  int64_t stored = 0;
  for (int rank = 0; rank < c.world; ++rank) {
    const int64_t expected = c.tensors * layout->InputBytes(rank) * c.world;
    EXPECT_EQ(sim.stores_by_source(rank), expected)
        << "rank " << rank << " [" << c.ToString() << "]";
    stored += sim.stores_by_source(rank);
  }
  return stored;
}

// Uneven counts with zero-token ranks, rotated by `shift` so that the zeros move around.
std::vector<int64_t> UnevenCounts(int world, int shift) {
  static constexpr int64_t kPattern[] = {2, 0, 3, 1, 0, 4, 1, 2, 5};
  std::vector<int64_t> counts(world);
  for (int rank = 0; rank < world; ++rank) counts[rank] = kPattern[(rank + shift) % 9];
  return counts;
}

std::vector<int> BlockCountsFor(int world) {
  std::vector<int> blocks = {1, 2, 3, 7, world, world + 1, 132, 264};
  if (world > 1) blocks.push_back(world - 1);
  std::sort(blocks.begin(), blocks.end());
  blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
  return blocks;
}

struct Misalignment {
  uint64_t input;
  uint64_t output;
};

constexpr Misalignment kMisalignments[] = {
    {0, 0},  // Both 16-byte aligned: 16-byte vectors.
    {3, 8},  // Co-aligned to 1 byte only.
    {5, 5},  // Equal misalignment: head bytes, then 16-byte vectors.
    {0, 8},  // 8-byte units.
    {6, 2},  // 4-byte units.
};

constexpr int kThreadCounts[] = {32, 128, 512, 1024};

TEST(CopyPlanSimulationTest, EveryOutputByteStoredOnceForAllSmallShapes) {
  std::mt19937_64 rng(20240601);
  int64_t cases = 0;
  int64_t stored = 0;
  for (int world = 1; world <= kMaxWorldSize; ++world) {
    for (int blocks : BlockCountsFor(world)) {
      for (int threads : kThreadCounts) {
        for (int64_t row : {1, 2, 3, 7, 14, 15, 16, 17, 31, 100}) {
          for (int64_t batch : {1, 3}) {
            for (const Misalignment& m : kMisalignments) {
              for (bool even : {false, true}) {
                SimCase c;
                c.world = world;
                c.blocks = blocks;
                c.threads = threads;
                c.row_bytes = row;
                c.batch = batch;
                c.counts = even ? std::vector<int64_t>(world, 2)
                                : UnevenCounts(world, static_cast<int>(cases % 9));
                c.input_misalignment = m.input;
                c.output_misalignment = m.output;
                stored += SimulateAndCheck(c, &rng);
                ++cases;
                if (HasFailure()) return;
              }
            }
          }
        }
      }
    }
  }
  RecordProperty("cases", static_cast<int>(cases));
  RecordProperty("bytes_stored", static_cast<int>(std::min<int64_t>(stored, INT32_MAX)));
}

TEST(CopyPlanSimulationTest, EveryOutputByteStoredOnceForSampledLargeRows) {
  std::mt19937_64 rng(7);
  // Bytes stored per case at most, and over the whole test at most.
  constexpr int64_t kCaseBudget = int64_t{3} << 20;
  constexpr int64_t kTotalBudget = int64_t{96} << 20;
  const int64_t rows[] = {1,  2,   3,    7,        14,    15,    16,    17,
                          31, 100, 1000, 4096 + 3, 16384, 16400, 131072};
  const int block_choices[] = {1, 2, 3, 7, 8, 9, 16, 132, 264};
  int64_t stored = 0;
  int cases = 0;
  for (int round = 0; round < 8; ++round) {
    for (int64_t row : rows) {
      SimCase c;
      c.world = 1 + static_cast<int>(rng() % kMaxWorldSize);
      c.blocks = block_choices[rng() % (sizeof(block_choices) / sizeof(block_choices[0]))];
      c.threads = kThreadCounts[rng() % 4];
      c.row_bytes = row;
      c.batch = rng() % 2 == 0 ? 1 : 3;
      c.counts.resize(c.world);
      for (int64_t& count : c.counts) count = static_cast<int64_t>(rng() % 4);
      if (c.world > 1) c.counts[rng() % c.world] = 0;  // Always a zero-token rank.
      c.input_misalignment = rng() % 16;
      c.output_misalignment = round % 4 == 0 ? c.input_misalignment : rng() % 16;
      // Keep the case within budget: drop tokens from the largest rank until it fits.
      auto bytes = [&c] {
        int64_t total = 0;
        for (int64_t count : c.counts) total += count;
        return total * c.row_bytes * c.batch * c.world;
      };
      while (bytes() > kCaseBudget) {
        int64_t& largest = *std::max_element(c.counts.begin(), c.counts.end());
        --largest;
      }
      if (stored + bytes() > kTotalBudget) continue;
      stored += SimulateAndCheck(c, &rng);
      ++cases;
      if (HasFailure()) return;
    }
  }
  EXPECT_GT(cases, 80);
  RecordProperty("cases", cases);
}

TEST(CopyPlanSimulationTest, LargestRowOnEightRanksWithManyBlocks) {
  std::mt19937_64 rng(11);
  for (int blocks : {8, 132, 264}) {
    SimCase c;
    c.world = 8;
    c.blocks = blocks;
    c.threads = 1024;
    c.row_bytes = 131072;
    c.batch = 1;
    c.counts = {1, 0, 1, 0, 0, 1, 0, 1};
    c.input_misalignment = 0;
    c.output_misalignment = 0;
    SimulateAndCheck(c, &rng);
    c.input_misalignment = 3;
    c.output_misalignment = 8;
    SimulateAndCheck(c, &rng);
  }
}

TEST(CopyPlanSimulationTest, ZeroTokenRanksStoreNothing) {
  std::mt19937_64 rng(3);
  SimCase c;
  c.world = 4;
  c.blocks = 7;
  c.threads = 128;
  c.row_bytes = 17;
  c.batch = 3;
  c.counts = {0, 5, 0, 2};
  AllGatherShape shape;
  shape.dtype = DataType::kUint8;
  shape.batch = c.batch;
  shape.hidden = c.row_bytes;
  shape.token_counts = c.counts;
  const absl::StatusOr<AllGatherLayout> layout = ComputeAllGatherLayout(shape, c.world);
  ASSERT_TRUE(layout.ok()) << layout.status();
  KernelSimulator sim(c, *layout, &rng);
  ASSERT_TRUE(sim.RunAllRanks()) << sim.error();
  EXPECT_EQ(sim.CheckOutputs(), "");
  EXPECT_EQ(sim.stores_by_source(0), 0);
  EXPECT_EQ(sim.stores_by_source(2), 0);
  EXPECT_EQ(sim.stores_by_source(1), 3 * 5 * 17 * 4);
  EXPECT_EQ(sim.stores_by_source(3), 3 * 2 * 17 * 4);
}

TEST(CopyPlanSimulationTest, AllRanksEmptyStoresNothing) {
  std::mt19937_64 rng(5);
  for (int blocks : {1, 8, 264}) {
    SimCase c;
    c.world = 8;
    c.blocks = blocks;
    c.threads = 1024;
    c.row_bytes = 100;
    c.batch = 3;
    c.counts.assign(8, 0);
    EXPECT_EQ(SimulateAndCheck(c, &rng), 0);
  }
}

// Ops of 2 to kMaxTensors tensors: the lanes sweep every tensor's shards as one range, so tiles
// straddle tensors (and batch slices); every output byte of every tensor is stored once, from
// its own input.
TEST(CopyPlanSimulationTest, EveryOutputByteOfEveryTensorStoredOnce) {
  std::mt19937_64 rng(20261201);
  int cases = 0;
  for (int tensors = 2; tensors <= kMaxTensors; ++tensors) {
    for (int world : {1, 2, 3, 8}) {
      for (int blocks : {1, 3, world + 1, 132}) {
        for (int64_t row : {1, 7, 16, 17, 4096 + 3}) {
          for (int64_t batch : {1, 3}) {
            for (const Misalignment& m : {kMisalignments[0], kMisalignments[1]}) {
              SimCase c;
              c.world = world;
              c.blocks = blocks;
              c.threads = 128;
              c.row_bytes = row;
              c.batch = batch;
              c.counts = UnevenCounts(world, cases % 9);
              c.input_misalignment = m.input;
              c.output_misalignment = m.output;
              c.tensors = tensors;
              SimulateAndCheck(c, &rng);
              ++cases;
              if (HasFailure()) return;
            }
          }
        }
      }
    }
  }
  RecordProperty("cases", cases);
}

// A tile larger than one tensor's shard spans tensors: the sweep's slices map to each tensor's
// own slices and offsets.
TEST(TensorSliceSegmentTest, MapsSlicesOfTheSweepToEachTensorsSlices) {
  ShardGeometry g;
  g.batch = 2;
  g.shard_bytes = 10;
  g.output_batch_stride = 40;
  g.output_offset = 5;
  const ByteRange range{15, 47};  // Tensor 0's slice 1 from byte 5, tensor 1, tensor 2's first 7.
  ASSERT_EQ(FirstSlice(g, range), 1);
  ASSERT_EQ(EndSlice(g, range), 5);
  const struct {
    int64_t slice;
    int tensor;
    int64_t src;
    int64_t dst;
    int64_t bytes;
  } expected[] = {{1, 0, 15, 40 + 5 + 5, 5}, {2, 1, 0, 5, 10}, {3, 1, 10, 45, 10}, {4, 2, 0, 5, 7}};
  for (const auto& e : expected) {
    const TensorSegment part = TensorSliceSegment(g, range, e.slice);
    EXPECT_EQ(part.tensor, e.tensor) << e.slice;
    EXPECT_EQ(part.segment.src_offset, e.src) << e.slice;
    EXPECT_EQ(part.segment.dst_offset, e.dst) << e.slice;
    EXPECT_EQ(part.segment.bytes, e.bytes) << e.slice;
  }
}

// The tensors' addresses of a multi-tensor op, read back by Input and Output for every tensor
// (chosen by comparison, as the kernels read them), and only tensor 0 for a one-tensor op.
TEST(TensorAddressesTest, InputAndOutputOfEveryTensor) {
  static_assert(kMaxOpTensors == 4, "the addresses below name four tensors");
  struct Params {
    int tensors = kMaxOpTensors;
    const void* input = reinterpret_cast<const void*>(0x1000);
    const void* more_inputs[kMaxOpTensors - 1] = {reinterpret_cast<const void*>(0x2000),
                                                  reinterpret_cast<const void*>(0x3000),
                                                  reinterpret_cast<const void*>(0x4000)};
  } p;
  const uint64_t outputs[kMaxOpTensors] = {0xa000, 0xb000, 0xc000, 0xd000};
  const TensorAddresses at = TensorAddressesOf(p, outputs);
  EXPECT_EQ(at.tensors, kMaxOpTensors);
  for (int tensor = 0; tensor < kMaxOpTensors; ++tensor) {
    EXPECT_EQ(at.Input(tensor), 0x1000u * (tensor + 1)) << tensor;
    EXPECT_EQ(at.Output(tensor), 0xa000u + 0x1000u * tensor) << tensor;
  }
  p.tensors = 1;
  const TensorAddresses one = TensorAddressesOf(p, outputs);
  EXPECT_EQ(one.Input(0), 0x1000u);
  EXPECT_EQ(one.Output(0), 0xa000u);
  EXPECT_EQ(one.inputs[1], 0u);  // Nothing written past the op's tensors.
  EXPECT_EQ(one.outputs[1], 0u);
}

}  // namespace
}  // namespace ltx
