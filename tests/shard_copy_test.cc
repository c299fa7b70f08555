// Tests of ltx/shard_copy.h: a shard's strided copy reads every input byte and, over all ranks,
// writes every output byte exactly once for uneven and zero counts and odd row sizes; one call
// where the pitch allows it, one per row otherwise; the CUDA parameters of the strided call.
// Needs no GPU.
#include "ltx/shard_copy.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "ltx/allgather_spec.h"

namespace ltx {
namespace {

AllGatherLayout Layout(int64_t batch, int64_t hidden, std::vector<int64_t> counts) {
  AllGatherShape shape;
  shape.dtype = DataType::kBFloat16;
  shape.batch = batch;
  shape.hidden = hidden;
  shape.token_counts = counts;
  absl::StatusOr<AllGatherLayout> layout = ComputeLayout(shape, static_cast<int>(counts.size()));
  EXPECT_TRUE(layout.ok()) << layout.status();
  return *layout;
}

TEST(ShardCopyTest, RowsAreBatchSlices) {
  const AllGatherLayout layout = Layout(3, 7, {2, 0, 5});  // 14-byte rows, 7 tokens in all.
  std::vector<uint8_t> input(3 * 5 * 14);
  std::vector<uint8_t> output(layout.output_bytes);
  const ShardCopy copy = PlanShardCopy(layout.GeometryOf(2), input.data(), output.data());
  EXPECT_EQ(copy.src, input.data());
  EXPECT_EQ(copy.src_pitch, 5 * 14);
  EXPECT_EQ(copy.dst, output.data() + 2 * 14);
  EXPECT_EQ(copy.dst_pitch, 7 * 14);
  EXPECT_EQ(copy.width, 5 * 14);
  EXPECT_EQ(copy.height, 3);
}

// Over every rank, the rows of the shard copies cover each output byte once, and each rank's
// rows read its whole input once.
TEST(ShardCopyTest, EveryOutputByteOnceForEveryShape) {
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
          const ShardCopy copy =
              PlanShardCopy(layout.GeometryOf(rank), input.data(), output.data());
          for (int64_t row = 0; row < copy.height; ++row) {
            for (int64_t byte = 0; byte < copy.width; ++byte) {
              ++read[copy.src + row * copy.src_pitch + byte - input.data()];
              ++written[copy.dst + row * copy.dst_pitch + byte - output.data()];
            }
          }
          for (int count : read) ASSERT_EQ(count, 1) << "rank " << rank;
        }
        for (int count : written) {
          ASSERT_EQ(count, 1) << "batch " << batch << " hidden " << hidden;
        }
      }
    }
  }
}

TEST(ShardCopyTest, OneStridedCallWherePitchesFit) {
  ShardCopy copy;
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
}

TEST(ShardCopyTest, StridedCallParameters) {
  std::vector<uint8_t> input(64);
  std::vector<uint8_t> output(256);
  ShardCopy copy;
  copy.src = input.data();
  copy.src_pitch = 16;
  copy.dst = output.data() + 8;
  copy.dst_pitch = 64;
  copy.width = 16;
  copy.height = 4;
  const cudaMemcpy3DPeerParms params = StridedCallParams(copy, 3, 1);
  EXPECT_EQ(params.srcArray, nullptr);
  EXPECT_EQ(params.dstArray, nullptr);
  EXPECT_EQ(params.srcPtr.ptr, input.data());
  EXPECT_EQ(params.srcPtr.pitch, 16u);
  EXPECT_EQ(params.srcDevice, 3);
  EXPECT_EQ(params.dstPtr.ptr, output.data() + 8);
  EXPECT_EQ(params.dstPtr.pitch, 64u);
  EXPECT_EQ(params.dstDevice, 1);
  EXPECT_EQ(params.srcPos.x + params.srcPos.y + params.srcPos.z, 0u);
  EXPECT_EQ(params.dstPos.x + params.dstPos.y + params.dstPos.z, 0u);
  EXPECT_EQ(params.extent.width, 16u);
  EXPECT_EQ(params.extent.height, 4u);
  EXPECT_EQ(params.extent.depth, 1u);
}

TEST(ShardCopyTest, AnEmptyCopyQueuesNothing) {
  ShardCopy copy;  // A rank without tokens: width 0.
  copy.height = 2;
  EXPECT_EQ(QueueShardCopy(copy, 0, 1, 1 << 30, nullptr), cudaSuccess);
}

}  // namespace
}  // namespace ltx
