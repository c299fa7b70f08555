// Tests of the all-to-all copy plan (kernels/alltoall_plan.h): EvenPart, PieceWidth, and a host
// simulation of the kernel's copy loop (lanes, the rows of each warp, runs, exactly as in
// kernels/alltoall_kernel.cu and kernels/alltoall_copy.cuh) over a grid of shapes, checking that
// every output byte of every rank is stored exactly once, with the byte an independent reference
// puts there, and that every store is aligned to its width.
#include "kernels/alltoall_plan.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "ltx/alltoall_spec.h"
#include "ltx/data_type.h"

namespace ltx {
namespace {

TEST(EvenPartTest, PartsAreContiguousAndCoverEverything) {
  for (int64_t total : {0, 1, 2, 7, 8, 9, 100, 4099}) {
    for (int parts = 1; parts <= 20; ++parts) {
      int64_t next = 0;
      for (int part = 0; part < parts; ++part) {
        const ByteRange range = EvenPart(total, part, parts);
        ASSERT_EQ(range.begin, next) << total << " " << part << "/" << parts;
        ASSERT_LE(range.end - range.begin, total / parts + 1);
        ASSERT_GE(range.end - range.begin, total / parts);
        next = range.end;
      }
      EXPECT_EQ(next, total);
    }
  }
}

TEST(PieceWidthTest, AlignedPiecesTakeSixteenBytesAndMisalignedOnesNarrowDown) {
  Piece piece;
  piece.rows_per_slice = 4;
  piece.rows = 8;
  piece.run_bytes = 256;
  piece.src = {4 * 1024, 512, 1024};
  piece.dst = {8 * 256, 0, 256};
  EXPECT_EQ(PieceWidth(piece, 0x1000, 0x2000), 16);
  EXPECT_EQ(PieceWidth(piece, 0x1008, 0x2000), 8);
  EXPECT_EQ(PieceWidth(piece, 0x1000, 0x2001), 1);
  piece.run_bytes = 6;
  EXPECT_EQ(PieceWidth(piece, 0x1000, 0x2000), 2);
  piece.run_bytes = 256;
  piece.dst.row_stride = 260;
  EXPECT_EQ(PieceWidth(piece, 0x1000, 0x2000), 4);
}

struct PlanCase {
  AllToAllDirection direction;
  DataType dtype;
  int64_t batch;
  int64_t heads;
  int64_t head_dim;
  std::vector<int64_t> counts;
  int blocks;
  int warps;  // Warps per block.
  uint64_t input_misalignment;
  uint64_t output_misalignment;

  std::string ToString() const {
    return absl::StrCat(direction == AllToAllDirection::kSeqToHeads ? "seq->heads" : "heads->seq",
                        " ", DataTypeName(dtype), " batch=", batch, " heads=", heads,
                        " head_dim=", head_dim, " counts=[", absl::StrJoin(counts, ","),
                        "] blocks=", blocks, " warps=", warps, " misalign=", input_misalignment,
                        "/", output_misalignment);
  }
};

// Byte offset of element (b, token, head, byte) in a [batch, tokens, heads, head_bytes] tensor.
int64_t Offset(int64_t b, int64_t token, int64_t head, int64_t byte, int64_t tokens, int64_t heads,
               int64_t head_bytes) {
  return ((b * tokens + token) * heads + head) * head_bytes + byte;
}

// The reference: for each rank's output, where each byte comes from (source rank and offset
// in its input), written from the tensor definitions alone.
struct SourceByte {
  int rank = -1;
  int64_t offset = -1;
};
std::vector<std::vector<SourceByte>> Reference(const PlanCase& c, const AllToAllLayout& layout) {
  const int world = layout.world_size;
  const int64_t head_bytes = c.head_dim * ElementSize(c.dtype);
  const int64_t group = c.heads / world;
  const int64_t total = layout.geometry.total_tokens;
  std::vector<std::vector<SourceByte>> expected(world);
  for (int r = 0; r < world; ++r) expected[r].resize(layout.OutputBytes(r));
  for (int s = 0; s < world; ++s) {    // Sequence-sharded rank.
    for (int h = 0; h < world; ++h) {  // Head-group rank.
      for (int64_t b = 0; b < c.batch; ++b) {
        for (int64_t i = 0; i < c.counts[s]; ++i) {
          for (int64_t k = 0; k < group; ++k) {
            for (int64_t byte = 0; byte < head_bytes; ++byte) {
              const int64_t seq =
                  Offset(b, i, h * group + k, byte, c.counts[s], c.heads, head_bytes);
              const int64_t heads = Offset(b, layout.geometry.prefix_tokens[s] + i, k, byte, total,
                                           group, head_bytes);
              if (c.direction == AllToAllDirection::kSeqToHeads) {
                expected[h][heads] = {s, seq};
              } else {
                expected[s][seq] = {h, heads};
              }
            }
          }
        }
      }
    }
  }
  return expected;
}

// Runs the kernel's loop on the host: every block, lane, row and store unit.
void SimulateAndCheck(const PlanCase& c) {
  SCOPED_TRACE(c.ToString());
  AllToAllShape shape;
  shape.dtype = c.dtype;
  shape.batch = c.batch;
  shape.heads = c.heads;
  shape.head_dim = c.head_dim;
  shape.token_counts = c.counts;
  shape.direction = c.direction;
  const int world = static_cast<int>(c.counts.size());
  const absl::StatusOr<AllToAllLayout> layout = ComputeAllToAllLayout(shape, world);
  ASSERT_TRUE(layout.ok()) << layout.status();
  const std::vector<std::vector<SourceByte>> expected = Reference(c, *layout);
  std::vector<std::vector<int>> writes(world);
  for (int r = 0; r < world; ++r) writes[r].assign(layout->OutputBytes(r), 0);
  const uint64_t input_address = 0x10000 + c.input_misalignment;
  const uint64_t output_address = 0x80000 + c.output_misalignment;
  for (int rank = 0; rank < world; ++rank) {
    const int lanes = LaneCount(c.blocks, world);
    for (int lane = 0; lane < lanes; ++lane) {
      const int target = LaneTarget(lane, rank, world);
      const Piece piece = PieceOf(layout->geometry, rank, target);
      const int width = PieceWidth(piece, input_address, output_address);
      const ByteRange rows = LaneRows(piece, lane, lanes, world);
      // Warp w copies rows begin + w + i * warps, kRowsInFlight at a time (as the kernel).
      for (int warp = 0; warp < c.warps; ++warp) {
        for (int64_t first = rows.begin + warp; first < rows.end;
             first += int64_t{c.warps} * kRowsInFlight) {
          for (int k = 0; k < kRowsInFlight; ++k) {
            const int64_t row = first + int64_t{k} * c.warps;
            if (row >= rows.end) continue;
            const int64_t src = RowOffset(piece.src, piece.rows_per_slice, row);
            const int64_t dst = RowOffset(piece.dst, piece.rows_per_slice, row);
            ASSERT_EQ((input_address + src) % width, 0u);
            ASSERT_EQ((output_address + dst) % width, 0u);
            ASSERT_EQ(piece.run_bytes % width, 0);
            for (int64_t byte = 0; byte < piece.run_bytes; ++byte) {
              ASSERT_GE(src + byte, 0);
              ASSERT_LT(src + byte, layout->InputBytes(rank));
              ASSERT_GE(dst + byte, 0);
              ASSERT_LT(dst + byte, layout->OutputBytes(target));
              const SourceByte want = expected[target][dst + byte];
              ASSERT_EQ(want.rank, rank) << "output " << target << " byte " << dst + byte;
              ASSERT_EQ(want.offset, src + byte) << "output " << target << " byte " << dst + byte;
              ++writes[target][dst + byte];
            }
          }
        }
      }
    }
  }
  for (int r = 0; r < world; ++r) {
    for (int64_t i = 0; i < layout->OutputBytes(r); ++i) {
      ASSERT_EQ(writes[r][i], 1) << "rank " << r << " output byte " << i;
    }
  }
}

std::vector<std::vector<int64_t>> CountsFor(int world, std::mt19937& random) {
  std::vector<std::vector<int64_t>> all;
  all.push_back(std::vector<int64_t>(world, 3));
  std::vector<int64_t> uneven;
  for (int r = 0; r < world; ++r) uneven.push_back(static_cast<int64_t>(random() % 6));
  all.push_back(uneven);
  std::vector<int64_t> zeros(world, 0);
  zeros[world - 1] = 5;
  all.push_back(zeros);
  all.push_back(std::vector<int64_t>(world, 0));
  return all;
}

TEST(AllToAllPlanTest, EveryOutputByteIsStoredOnceFromTheRightInputByte) {
  std::mt19937 random(7);
  int cases = 0;
  for (int world = 1; world <= 8; ++world) {
    for (AllToAllDirection direction :
         {AllToAllDirection::kSeqToHeads, AllToAllDirection::kHeadsToSeq}) {
      for (const std::vector<int64_t>& counts : CountsFor(world, random)) {
        for (DataType dtype : {DataType::kBFloat16, DataType::kFloat32, DataType::kUint8}) {
          for (int64_t head_dim : {1, 3, 8}) {
            const int64_t heads = world * (1 + static_cast<int64_t>(random() % 2));
            const int64_t batch = 1 + static_cast<int64_t>(random() % 3);
            for (int blocks : {1, world, 2 * world + 1, 37}) {
              const uint64_t input_misalignment = random() % 3 == 0 ? random() % 16 : 0;
              const uint64_t output_misalignment = random() % 3 == 0 ? random() % 16 : 0;
              const int warps = blocks % 2 == 0 ? 16 : 3;
              SimulateAndCheck({direction, dtype, batch, heads, head_dim, counts, blocks, warps,
                                input_misalignment, output_misalignment});
              ++cases;
              if (HasFatalFailure()) return;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(cases, 1000);
}

TEST(AllToAllPlanTest, ModelShapesStoreSixteenByteVectors) {
  // 32 heads of 128 bf16 elements over 8 ranks: 1 KiB runs, all 16-byte aligned.
  const std::vector<int64_t> counts = {4, 4, 4, 4, 4, 4, 4, 3};
  AllToAllShape shape;
  shape.heads = 32;
  shape.head_dim = 128;
  shape.token_counts = counts;
  for (AllToAllDirection direction :
       {AllToAllDirection::kSeqToHeads, AllToAllDirection::kHeadsToSeq}) {
    shape.direction = direction;
    const absl::StatusOr<AllToAllLayout> layout = ComputeAllToAllLayout(shape, 8);
    ASSERT_TRUE(layout.ok()) << layout.status();
    for (int rank = 0; rank < 8; ++rank) {
      for (int target = 0; target < 8; ++target) {
        const Piece piece = PieceOf(layout->geometry, rank, target);
        EXPECT_EQ(piece.run_bytes, 1024);
        EXPECT_EQ(PieceWidth(piece, 0x10000, 0x20000), 16);
      }
    }
  }
}

TEST(AllToAllPlanTest, LargestPieceBytesIsTheBiggestTargetShare) {
  const std::vector<int64_t> counts = {2, 0, 5};
  AllToAllShape shape;
  shape.dtype = DataType::kFloat32;
  shape.batch = 2;
  shape.heads = 6;
  shape.head_dim = 3;
  shape.token_counts = counts;
  shape.direction = AllToAllDirection::kSeqToHeads;
  absl::StatusOr<AllToAllLayout> layout = ComputeAllToAllLayout(shape, 3);
  ASSERT_TRUE(layout.ok());
  // Sequence -> heads: rank 2 sends each target batch * 5 tokens * 2 heads * 12 bytes.
  EXPECT_EQ(LargestPieceBytes(layout->geometry, 2), 2 * 5 * 2 * 12);
  EXPECT_EQ(LargestPieceBytes(layout->geometry, 1), 0);
  // Heads -> sequence: every rank sends its group of the largest sequence shard (5 tokens).
  shape.direction = AllToAllDirection::kHeadsToSeq;
  layout = ComputeAllToAllLayout(shape, 3);
  ASSERT_TRUE(layout.ok());
  EXPECT_EQ(LargestPieceBytes(layout->geometry, 1), 2 * 5 * 2 * 12);
}

}  // namespace
}  // namespace ltx
