// Tests of the reductions' argument validation and layout (ltx/collectives/reduce_layout.h):
// ComputeAllReduceLayout, ComputeReduceScatterLayout, CheckReduceBuffers, and the host
// reference the GPU tests compare with (tools/testing/reduce_reference.h).
#include "ltx/collectives/reduce_layout.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/reduce/reduce_math.h"
#include "ltx/collectives/reduce_op.h"
#include "ltx/data_type.h"
#include "ltx/runtime/buffer_checks.h"
#include "tests/expect_invalid.h"
#include "tools/testing/reduce_reference.h"

namespace ltx {
namespace {

// The Runtime's host checks of rank `rank`'s buffers for a reduction of `layout`.
absl::Status CheckReduceBuffers(const ReduceLayout& layout, int rank,
                                const RankBuffers& buffers) {
  return CheckOpBuffers(ReduceOpOf(layout), layout.world_size, rank, buffers);
}

using ::testing::HasSubstr;

ReduceScatterShape ScatterShape(DataType dtype, int64_t batch, int64_t hidden,
                                const std::vector<int64_t>& counts) {
  ReduceScatterShape shape;
  shape.dtype = dtype;
  shape.batch = batch;
  shape.hidden = hidden;
  shape.token_counts = counts;
  return shape;
}

TEST(ReduceLayoutTest, ReduceScatterRowsArePrefixesOfTheCounts) {
  const std::vector<int64_t> counts = {3, 0, 5, 1};
  const absl::StatusOr<ReduceLayout> layout =
      ComputeReduceScatterLayout(ScatterShape(DataType::kFloat16, 2, 7, counts), 4);
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->collective, Collective::kReduceScatter);
  EXPECT_EQ(layout->total_rows, 9);
  EXPECT_EQ(layout->InputBytes(), 2 * 9 * 7 * 2);
  const int64_t first[] = {0, 3, 3, 8};
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_EQ(layout->rows[rank], counts[rank]);
    EXPECT_EQ(layout->first_rows[rank], first[rank]);
    EXPECT_EQ(layout->OutputBytes(rank), 2 * counts[rank] * 7 * 2);
    EXPECT_EQ(layout->InPlaceOffset(rank), kNotInPlace);
  }
}

TEST(ReduceLayoutTest, AllReduceIsOneRowThatEveryRankReduces) {
  AllReduceShape shape;
  shape.dtype = DataType::kFloat32;
  shape.count = 1001;
  shape.reduction = Reduction::kMax;
  const absl::StatusOr<ReduceLayout> layout = ComputeAllReduceLayout(shape, 3);
  ASSERT_TRUE(layout.ok()) << layout.status();
  for (int rank = 0; rank < 3; ++rank) {
    EXPECT_EQ(layout->OutputBytes(rank), 4004);
    EXPECT_EQ(layout->InPlaceOffset(rank), 0);
    EXPECT_EQ(layout->GeometryOf(rank).slice_elements, 1001);
    EXPECT_EQ(layout->GeometryOf(rank).input_offset, 0);
  }
  EXPECT_EQ(layout->InputBytes(), 4004);
}

TEST(ReduceLayoutTest, DigestsTellCollectivesReductionsAndCountsApart) {
  AllReduceShape all;
  all.count = 12;
  const uint64_t sum = ComputeAllReduceLayout(all, 2)->digest;
  all.reduction = Reduction::kMin;
  const uint64_t min = ComputeAllReduceLayout(all, 2)->digest;
  all.count = 13;
  const uint64_t min13 = ComputeAllReduceLayout(all, 2)->digest;
  const std::vector<int64_t> counts = {6, 6};
  const uint64_t scatter =
      ComputeReduceScatterLayout(ScatterShape(DataType::kBFloat16, 1, 1, counts), 2)->digest;
  const std::vector<uint64_t> digests = {sum, min, min13, scatter};
  for (size_t i = 0; i < digests.size(); ++i) {
    for (size_t j = i + 1; j < digests.size(); ++j) EXPECT_NE(digests[i], digests[j]) << i << j;
  }
}

TEST(ReduceLayoutTest, RejectsWhatCannotBeReduced) {
  AllReduceShape shape;
  shape.count = 8;
  for (DataType dtype : kAllDataTypes) {
    shape.dtype = dtype;
    const bool reducible = dtype == DataType::kBFloat16 || dtype == DataType::kFloat16 ||
                           dtype == DataType::kFloat32;
    const absl::StatusOr<ReduceLayout> layout = ComputeAllReduceLayout(shape, 2);
    EXPECT_EQ(layout.ok(), reducible) << DataTypeName(dtype);
    if (!reducible) ExpectInvalid(layout.status(), "cannot be reduced");
  }
  shape.dtype = DataType::kBFloat16;
  shape.reduction = static_cast<Reduction>(9);
  ExpectInvalid(ComputeAllReduceLayout(shape, 2).status(), "reduction: unknown value 9");
  shape.reduction = Reduction::kSum;
  shape.count = -1;
  ExpectInvalid(ComputeAllReduceLayout(shape, 2).status(), "count must be >= 0");
  shape.count = int64_t{1} << 62;
  ExpectInvalid(ComputeAllReduceLayout(shape, 2).status(), "overflows");
  shape.count = 8;
  ExpectInvalid(ComputeAllReduceLayout(shape, 0).status(), "world_size 0");
  ExpectInvalid(ComputeAllReduceLayout(shape, 9).status(), "world_size 9");
}

TEST(ReduceLayoutTest, RejectsCountsThatDoNotMatchTheWorld) {
  const std::vector<int64_t> three = {1, 2, 3};
  ExpectInvalid(ComputeReduceScatterLayout(ScatterShape(DataType::kFloat32, 1, 4, three), 2)
                    .status(),
                "token_counts has 3 entries but the world size is 2");
  const std::vector<int64_t> negative = {1, -2};
  ExpectInvalid(ComputeReduceScatterLayout(ScatterShape(DataType::kFloat32, 1, 4, negative), 2)
                    .status(),
                "token_counts[1] is negative");
  const std::vector<int64_t> two = {1, 2};
  ExpectInvalid(
      ComputeReduceScatterLayout(ScatterShape(DataType::kFloat32, 0, 4, two), 2).status(),
      "batch must be >= 1");
  ExpectInvalid(
      ComputeReduceScatterLayout(ScatterShape(DataType::kFloat32, 1, 0, two), 2).status(),
      "hidden must be >= 1");
  ExpectInvalid(
      ComputeReduceScatterLayout(ScatterShape(DataType::kInt32, 1, 4, two), 2).status(),
      "dtype int32 cannot be reduced");
}

TEST(CheckReduceBuffersTest, NullOverlappingAndMisalignedBuffers) {
  const std::vector<int64_t> counts = {2, 0};
  const absl::StatusOr<ReduceLayout> scatter =
      ComputeReduceScatterLayout(ScatterShape(DataType::kBFloat16, 1, 8, counts), 2);
  ASSERT_TRUE(scatter.ok());
  alignas(16) static uint8_t memory[1024];
  RankBuffers buffers;
  buffers.input = memory;
  buffers.output = memory + 512;
  EXPECT_TRUE(CheckReduceBuffers(*scatter, 0, buffers).ok());
  // A rank without tokens writes nothing: a null output is fine, a null input is not.
  RankBuffers empty_output = {memory, nullptr, nullptr};
  EXPECT_TRUE(CheckReduceBuffers(*scatter, 1, empty_output).ok());
  RankBuffers null_input = {nullptr, memory + 512, nullptr};
  ExpectInvalid(CheckReduceBuffers(*scatter, 1, null_input), "rank 1: input is null");
  RankBuffers null_output = {memory, nullptr, nullptr};
  ExpectInvalid(CheckReduceBuffers(*scatter, 0, null_output), "rank 0: output is null");
  // The ReduceScatter has no in-place form: its own rows inside its input overlap.
  RankBuffers overlapping = {memory, memory, nullptr};
  ExpectInvalid(CheckReduceBuffers(*scatter, 0, overlapping), "overlaps the output");
  RankBuffers misaligned = {memory + 1, memory + 512, nullptr};
  ExpectInvalid(CheckReduceBuffers(*scatter, 0, misaligned),
                "is not aligned to its 2-byte elements");
  ExpectInvalid(CheckReduceBuffers(*scatter, 2, buffers), "rank 2 is outside [0, 2)");

  AllReduceShape shape;
  shape.dtype = DataType::kFloat32;
  shape.count = 16;
  const absl::StatusOr<ReduceLayout> all = ComputeAllReduceLayout(shape, 2);
  ASSERT_TRUE(all.ok());
  RankBuffers in_place = {memory, memory, nullptr};
  EXPECT_TRUE(CheckReduceBuffers(*all, 1, in_place).ok());
  RankBuffers shifted = {memory + 8, memory, nullptr};
  ExpectInvalid(CheckReduceBuffers(*all, 1, shifted), "overlaps the output");
  RankBuffers half_aligned = {memory + 2, memory + 512, nullptr};
  ExpectInvalid(CheckReduceBuffers(*all, 1, half_aligned), "4-byte elements");
}

std::vector<uint8_t> BytesOf(const std::vector<float>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// A coordinated call's ranks (say, two that share a GPU) must not write into each other's
// buffers; inputs that ranks only read may be shared, and a rank in place on its own buffer is
// its own business.
TEST(CheckReduceBuffersTest, RanksDoNotWriteIntoEachOthersBuffers) {
  AllReduceShape shape;
  shape.dtype = DataType::kFloat32;
  shape.count = 16;  // 64 bytes per buffer.
  const absl::StatusOr<ReduceLayout> all = ComputeAllReduceLayout(shape, 2);
  ASSERT_TRUE(all.ok());
  const CollectiveOp op = ReduceOpOf(*all);
  alignas(16) static uint8_t memory[1024];
  const RankBuffers apart[2] = {{memory, memory + 64, nullptr},
                                {memory + 128, memory + 192, nullptr}};
  EXPECT_TRUE(CheckOpBuffersAcrossRanks(op, apart).ok());
  const RankBuffers shared_input[2] = {{memory, memory + 64, nullptr},
                                       {memory, memory + 192, nullptr}};
  EXPECT_TRUE(CheckOpBuffersAcrossRanks(op, shared_input).ok());
  const RankBuffers in_place[2] = {{memory, memory, nullptr},
                                   {memory + 64, memory + 64, nullptr}};
  EXPECT_TRUE(CheckOpBuffersAcrossRanks(op, in_place).ok());
  // Rank 1's output is rank 0's input.
  const RankBuffers onto_input[2] = {{memory, memory + 64, nullptr},
                                     {memory + 128, memory, nullptr}};
  ExpectInvalid(CheckOpBuffersAcrossRanks(op, onto_input),
                "rank 0's input and rank 1's output share bytes");
  // Both outputs overlap by one element.
  const RankBuffers outputs[2] = {{memory, memory + 256, nullptr},
                                  {memory + 128, memory + 316, nullptr}};
  ExpectInvalid(CheckOpBuffersAcrossRanks(op, outputs),
                "rank 0's output and rank 1's output share bytes");

  // A ReduceScatter: rank 0 receives its 2 rows of 8 bf16 (32 bytes) of an input of 32; rank 1,
  // without rows, writes nothing, so its empty output may point anywhere.
  const absl::StatusOr<ReduceLayout> scatter =
      ComputeReduceScatterLayout(ScatterShape(DataType::kBFloat16, 1, 8, {2, 0}), 2);
  ASSERT_TRUE(scatter.ok());
  const CollectiveOp scatter_op = ReduceOpOf(*scatter);
  const RankBuffers empty_output[2] = {{memory, memory + 512, nullptr},
                                       {memory + 128, memory, nullptr}};
  EXPECT_TRUE(CheckOpBuffersAcrossRanks(scatter_op, empty_output).ok());
  const RankBuffers into_input[2] = {{memory, memory + 512, nullptr},
                                     {memory + 512 - 16, memory + 700, nullptr}};
  ExpectInvalid(CheckOpBuffersAcrossRanks(scatter_op, into_input),
                "rank 0's output and rank 1's input share bytes");
}

TEST(ReduceReferenceTest, ReducesEachRanksRowsOfEverySlice) {
  // Two ranks, batch 2, rows {1, 2}, hidden 2: input element (b, row, h) = 100 b + 10 row + h on
  // rank 0 and twice that on rank 1.
  const std::vector<int64_t> counts = {1, 2};
  const absl::StatusOr<ReduceLayout> layout =
      ComputeReduceScatterLayout(ScatterShape(DataType::kFloat32, 2, 2, counts), 2);
  ASSERT_TRUE(layout.ok());
  std::vector<float> rank0;
  for (int b = 0; b < 2; ++b) {
    for (int row = 0; row < 3; ++row) {
      for (int h = 0; h < 2; ++h) rank0.push_back(100.0f * b + 10.0f * row + h);
    }
  }
  std::vector<float> rank1;
  for (float value : rank0) rank1.push_back(2 * value);
  const std::vector<std::vector<uint8_t>> inputs = {BytesOf(rank0), BytesOf(rank1)};
  EXPECT_EQ(ReduceReference(*layout, 0, inputs), BytesOf({0, 3, 300, 303}));
  EXPECT_EQ(ReduceReference(*layout, 1, inputs),
            BytesOf({30, 33, 60, 63, 330, 333, 360, 363}));
  ReduceLayout max = *layout;
  max.reduction = Reduction::kMin;
  EXPECT_EQ(ReduceReference(max, 1, inputs), BytesOf({10, 11, 20, 21, 110, 111, 120, 121}));
}

}  // namespace
}  // namespace ltx
