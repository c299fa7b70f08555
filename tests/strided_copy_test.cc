// Tests of ltx/transport/copy_engine/strided_copy.h: the copies of AllGather shards and all-to-all
// pieces, applied on the host exactly as CUDA applies them (the strided call's pitched pointers and
// extent, and the one-call-per-row form), write every output byte of every rank exactly once, from
// the right input byte: AllGather shards for uneven and zero counts and odd row sizes; all-to-all
// pieces over the shape grid of tests/alltoall_grid.h (both directions, uneven and zero token
// counts and head splits, batch 1 to 3, world sizes 1 to 8). Also: one call where the pitches
// allow it, one per row otherwise; the CUDA parameters of the strided call. Needs no GPU.
#include "ltx/transport/copy_engine/strided_copy.h"

#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "ltx/collectives/allgather_layout.h"
#include "ltx/collectives/alltoall_layout.h"
#include "tests/alltoall_grid.h"

namespace ltx {
namespace {

// The two ways a copy reaches CUDA (QueueStridedCopy, AddStridedCopyNodes).
enum class CopyForm {
  kStridedCall,  // One cudaMemcpy3DPeerAsync (or strided memcpy node).
  kRowCalls,     // One cudaMemcpyPeerAsync (or 1D memcpy node) per row.
};

// Applies `copy` on the host as CUDA applies it in `form`, calling visit(src, dst) for every
// byte copied. Checks what CUDA requires of the strided call: pitches of at least the width,
// and slices (ysize) of at least the height.
template <typename Visit>
void ApplyAsCuda(const StridedCopy& copy, CopyForm form, const Visit& visit) {
  if (IsEmpty(copy)) return;
  if (form == CopyForm::kRowCalls) {
    for (int64_t row = 0; row < copy.height * copy.depth; ++row) {
      const CopyRow at = RowOf(copy, row);
      for (int64_t x = 0; x < copy.width; ++x) visit(at.src + x, at.dst + x);
    }
    return;
  }
  const cudaMemcpy3DPeerParms p = StridedCallParams(copy, 0, 1);
  ASSERT_GE(p.srcPtr.pitch, p.extent.width);
  ASSERT_GE(p.dstPtr.pitch, p.extent.width);
  ASSERT_GE(p.srcPtr.ysize, p.extent.height);
  ASSERT_GE(p.dstPtr.ysize, p.extent.height);
  const auto* src = static_cast<const uint8_t*>(p.srcPtr.ptr);
  auto* dst = static_cast<uint8_t*>(p.dstPtr.ptr);
  for (size_t z = 0; z < p.extent.depth; ++z) {
    for (size_t y = 0; y < p.extent.height; ++y) {
      const size_t src_row = (z * p.srcPtr.ysize + y) * p.srcPtr.pitch;
      const size_t dst_row = (z * p.dstPtr.ysize + y) * p.dstPtr.pitch;
      for (size_t x = 0; x < p.extent.width; ++x) visit(src + src_row + x, dst + dst_row + x);
    }
  }
}

AllGatherLayout Layout(int64_t batch, int64_t hidden, std::vector<int64_t> counts) {
  AllGatherShape shape;
  shape.dtype = DataType::kBFloat16;
  shape.batch = batch;
  shape.hidden = hidden;
  shape.token_counts = counts;
  absl::StatusOr<AllGatherLayout> layout =
      ComputeAllGatherLayout(shape, static_cast<int>(counts.size()));
  EXPECT_TRUE(layout.ok()) << layout.status();
  return *layout;
}

TEST(StridedCopyTest, ShardRowsAreBatchSlices) {
  const AllGatherLayout layout = Layout(3, 7, {2, 0, 5});  // 14-byte rows, 7 tokens in all.
  std::vector<uint8_t> input(3 * 5 * 14);
  std::vector<uint8_t> output(layout.output_bytes);
  const StridedCopy copy = PlanShardCopy(layout.GeometryOf(2), input.data(), output.data());
  EXPECT_EQ(copy.src, input.data());
  EXPECT_EQ(copy.src_pitch, 5 * 14);
  EXPECT_EQ(copy.dst, output.data() + 2 * 14);
  EXPECT_EQ(copy.dst_pitch, 7 * 14);
  EXPECT_EQ(copy.width, 5 * 14);
  EXPECT_EQ(copy.height, 3);
  EXPECT_EQ(copy.depth, 1);
  EXPECT_TRUE(IsEmpty(PlanShardCopy(layout.GeometryOf(1), input.data(), output.data())));
}

// An in-place input (batch 1, at the rank's own tokens) makes the rank's own copy one onto
// itself, which is skipped; its copies into other outputs, and a rank that is not in place,
// still move.
TEST(StridedCopyTest, AnInPlaceOwnCopyIsOntoItself) {
  const AllGatherLayout layout = Layout(1, 7, {2, 3, 5});
  std::vector<uint8_t> output(layout.output_bytes);
  std::vector<uint8_t> peer_output(layout.output_bytes);
  const uint8_t* in_place = output.data() + layout.InPlaceOffset(1);
  EXPECT_TRUE(IsOntoItself(PlanShardCopy(layout.GeometryOf(1), in_place, output.data())));
  EXPECT_FALSE(IsOntoItself(PlanShardCopy(layout.GeometryOf(1), in_place, peer_output.data())));
  EXPECT_FALSE(IsOntoItself(PlanShardCopy(layout.GeometryOf(2), in_place, output.data())));
  std::vector<uint8_t> input(layout.InputBytes(1));
  EXPECT_FALSE(IsOntoItself(PlanShardCopy(layout.GeometryOf(1), input.data(), output.data())));
}

// Over every rank, the shard copies in either form cover each output byte once, and each
// rank's copies read its whole input once.
TEST(StridedCopyTest, EveryShardOutputByteOnceForEveryShape) {
  for (CopyForm form : {CopyForm::kStridedCall, CopyForm::kRowCalls}) {
    for (int64_t batch : {1, 2, 5}) {
      for (int64_t hidden : {1, 3, 64, 1000}) {
        for (const std::vector<int64_t>& counts : std::vector<std::vector<int64_t>>{
                 {4}, {1, 2}, {0, 3, 0, 7}, {5, 5, 5, 5, 5, 5, 5, 1}, {0, 0}}) {
          const AllGatherLayout layout = Layout(batch, hidden, counts);
          std::vector<uint8_t> output(layout.output_bytes + 1);
          std::vector<int> written(layout.output_bytes, 0);
          for (int rank = 0; rank < layout.world_size; ++rank) {
            std::vector<uint8_t> input(layout.InputBytes(rank) + 1);
            std::vector<int> read(layout.InputBytes(rank), 0);
            ApplyAsCuda(PlanShardCopy(layout.GeometryOf(rank), input.data(), output.data()),
                        form, [&](const uint8_t* src, uint8_t* dst) {
                          ++read[src - input.data()];
                          ++written[dst - output.data()];
                        });
            for (int count : read) ASSERT_EQ(count, 1) << "rank " << rank;
          }
          for (int count : written) {
            ASSERT_EQ(count, 1) << "batch " << batch << " hidden " << hidden;
          }
        }
      }
    }
  }
}

// Every piece copy of case `c`, applied in `form` from every rank's input into every rank's
// output, writes each output byte once, with the byte the reference puts there; an empty
// piece plans an empty copy, and a piece's slices are whole rows on both sides.
void SimulatePieceCopies(const PlanCase& c, CopyForm form) {
  SCOPED_TRACE(c.ToString());
  const absl::StatusOr<AllToAllLayout> layout = LayoutOf(c);
  ASSERT_TRUE(layout.ok()) << layout.status();
  const int world = layout->world_size;
  const std::vector<std::vector<SourceByte>> expected = Reference(c, *layout);
  std::vector<std::vector<uint8_t>> inputs(world);
  std::vector<std::vector<uint8_t>> outputs(world);
  std::vector<std::vector<int>> writes(world);
  for (int r = 0; r < world; ++r) {
    inputs[r].resize(layout->InputBytes(r));
    outputs[r].resize(layout->OutputBytes(r));
    writes[r].assign(layout->OutputBytes(r), 0);
  }
  for (int source = 0; source < world; ++source) {
    for (int target = 0; target < world; ++target) {
      const Piece piece = PieceOf(layout->geometry, source, target);
      const StridedCopy copy = PlanPieceCopy(layout->geometry, source, target,
                                             inputs[source].data(), outputs[target].data());
      ASSERT_EQ(IsEmpty(copy), piece.rows * piece.run_bytes == 0);
      if (!IsEmpty(copy)) {
        ASSERT_EQ(copy.src_slice_rows * copy.src_pitch, piece.src.slice_stride);
        ASSERT_EQ(copy.dst_slice_rows * copy.dst_pitch, piece.dst.slice_stride);
      }
      ApplyAsCuda(copy, form, [&](const uint8_t* src, uint8_t* dst) {
        const int64_t from = src - inputs[source].data();
        const int64_t to = dst - outputs[target].data();
        ASSERT_GE(from, 0);
        ASSERT_LT(from, layout->InputBytes(source));
        ASSERT_GE(to, 0);
        ASSERT_LT(to, layout->OutputBytes(target));
        ASSERT_EQ(expected[target][to].rank, source) << "output " << target << " byte " << to;
        ASSERT_EQ(expected[target][to].offset, from) << "output " << target << " byte " << to;
        ++writes[target][to];
      });
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
  for (int r = 0; r < world; ++r) {
    for (int64_t i = 0; i < layout->OutputBytes(r); ++i) {
      ASSERT_EQ(writes[r][i], 1) << "rank " << r << " output byte " << i;
    }
  }
}

TEST(StridedCopyTest, EveryPieceOutputByteOnceFromTheRightInputByte) {
  for (CopyForm form : {CopyForm::kStridedCall, CopyForm::kRowCalls}) {
    std::mt19937 random(form == CopyForm::kStridedCall ? 3 : 5);
    const int cases = ForEachGridCase(
        random, [](int) { return std::vector<int>{1}; },
        [form](PlanCase* c, std::mt19937&) { SimulatePieceCopies(*c, form); });
    if (HasFatalFailure()) return;
    EXPECT_GT(cases, 500);
  }
}

TEST(StridedCopyTest, PieceSlicesAreBatchSlices) {
  const absl::StatusOr<AllToAllLayout> layout = UnevenSplitLayout(/*batch=*/2);
  ASSERT_TRUE(layout.ok()) << layout.status();
  std::vector<uint8_t> input(layout->InputBytes(2));
  std::vector<uint8_t> output(layout->OutputBytes(2));
  // Rank 2's 4 tokens of its own 3 heads: 48 bytes from byte 32 of each 80-byte token row,
  // into 48-byte rows after the 3 tokens of ranks 0 and 1, 7 rows per output slice.
  const StridedCopy copy = PlanPieceCopy(layout->geometry, 2, 2, input.data(), output.data());
  EXPECT_EQ(copy.src, input.data() + 32);
  EXPECT_EQ(copy.src_pitch, 80);
  EXPECT_EQ(copy.src_slice_rows, 4);
  EXPECT_EQ(copy.dst, output.data() + 3 * 48);
  EXPECT_EQ(copy.dst_pitch, 48);
  EXPECT_EQ(copy.dst_slice_rows, 7);
  EXPECT_EQ(copy.width, 48);
  EXPECT_EQ(copy.height, 4);
  EXPECT_EQ(copy.depth, 2);
  // Rank 1 holds no heads: nothing goes to it.
  EXPECT_TRUE(IsEmpty(PlanPieceCopy(layout->geometry, 2, 1, input.data(), nullptr)));
}

TEST(StridedCopyTest, OneStridedCallWherePitchesFit) {
  StridedCopy copy;
  copy.width = 100;
  copy.src_pitch = 100;
  copy.dst_pitch = 400;
  copy.height = 3;
  EXPECT_TRUE(IsOneStridedCall(copy, 400));
  EXPECT_FALSE(IsOneStridedCall(copy, 399));  // The output pitch is too large.
  copy.src_pitch = 500;
  EXPECT_FALSE(IsOneStridedCall(copy, 400));  // The input pitch is too large.
  copy.src_pitch = 100;
  copy.height = 1;
  EXPECT_FALSE(IsOneStridedCall(copy, 400));  // One row: a plain copy.
  copy.depth = 2;
  EXPECT_TRUE(IsOneStridedCall(copy, 400));  // One row in each of two slices.
}

TEST(StridedCopyTest, StridedCallParameters) {
  std::vector<uint8_t> input(64);
  std::vector<uint8_t> output(512);
  StridedCopy copy;
  copy.src = input.data();
  copy.src_pitch = 16;
  copy.src_slice_rows = 2;
  copy.dst = output.data() + 8;
  copy.dst_pitch = 64;
  copy.dst_slice_rows = 3;
  copy.width = 16;
  copy.height = 2;
  copy.depth = 2;
  const cudaMemcpy3DPeerParms params = StridedCallParams(copy, 3, 1);
  EXPECT_EQ(params.srcArray, nullptr);
  EXPECT_EQ(params.dstArray, nullptr);
  EXPECT_EQ(params.srcPtr.ptr, input.data());
  EXPECT_EQ(params.srcPtr.pitch, 16u);
  EXPECT_EQ(params.srcPtr.ysize, 2u);
  EXPECT_EQ(params.srcDevice, 3);
  EXPECT_EQ(params.dstPtr.ptr, output.data() + 8);
  EXPECT_EQ(params.dstPtr.pitch, 64u);
  EXPECT_EQ(params.dstPtr.ysize, 3u);
  EXPECT_EQ(params.dstDevice, 1);
  EXPECT_EQ(params.srcPos.x + params.srcPos.y + params.srcPos.z, 0u);
  EXPECT_EQ(params.dstPos.x + params.dstPos.y + params.dstPos.z, 0u);
  EXPECT_EQ(params.extent.width, 16u);
  EXPECT_EQ(params.extent.height, 2u);
  EXPECT_EQ(params.extent.depth, 2u);
  // Row 3 is row 1 of slice 1.
  const CopyRow row = RowOf(copy, 3);
  EXPECT_EQ(row.src, input.data() + (2 + 1) * 16);
  EXPECT_EQ(row.dst, output.data() + 8 + (3 + 1) * 64);
}

TEST(StridedCopyTest, AnEmptyCopyQueuesNothing) {
  StridedCopy copy;  // A rank without tokens: width 0.
  copy.height = 2;
  EXPECT_EQ(QueueStridedCopy(copy, 0, 1, 1 << 30, nullptr), cudaSuccess);
  copy.width = 16;
  copy.depth = 0;
  EXPECT_EQ(QueueStridedCopy(copy, 0, 1, 1 << 30, nullptr), cudaSuccess);
}

}  // namespace
}  // namespace ltx
