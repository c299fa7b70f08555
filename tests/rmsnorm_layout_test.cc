// The AllReduce with the fused RMSNorm epilogue on the host: ComputeAllReduceRmsNormLayout,
// CheckRmsNormBuffers, and the host reference of the GPU tests (RmsNormReference) against
// the epilogue's definition computed in double precision.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/reduce/reduce_math.h"
#include "kernels/reduce/rmsnorm_math.h"
#include "ltx/allreduce_rmsnorm.h"
#include "ltx/collectives/reduce_layout.h"
#include "ltx/collectives/reduce_op.h"
#include "ltx/data_type.h"
#include "tests/expect_invalid.h"
#include "tools/testing/reduce_reference.h"

namespace ltx {
namespace {

// The Runtime's host checks of rank `rank`'s epilogue buffers for `layout`: the epilogue's own
// checks, then the funnel's of its two tensors.
absl::Status CheckRmsNormBuffers(const ReduceLayout& layout, int rank,
                                 const RmsNormBuffers& buffers) {
  const absl::Status own = CheckRmsNormOwnBuffers(layout, rank, buffers);
  if (!own.ok()) return own;
  return CheckOpBuffers(AllReduceRmsNormOpOf(layout, {}), layout.world_size, rank,
                        RmsNormRankBuffers(buffers));
}

using ::testing::HasSubstr;

AllReduceRmsNormShape Shape(DataType dtype, int64_t rows, int64_t hidden, float eps = 1e-6f) {
  AllReduceRmsNormShape shape;
  shape.dtype = dtype;
  shape.rows = rows;
  shape.hidden = hidden;
  shape.eps = eps;
  return shape;
}

TEST(RmsNormLayoutTest, EveryRankReducesEveryRowOfHiddenElements) {
  const absl::StatusOr<ReduceLayout> layout =
      ComputeAllReduceRmsNormLayout(Shape(DataType::kBFloat16, 5, 96, 1e-5f), 3);
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->collective, Collective::kAllReduceRmsNorm);
  EXPECT_EQ(layout->hidden, 96);
  EXPECT_EQ(layout->eps, 1e-5f);
  EXPECT_EQ(layout->InputBytes(), 5 * 96 * 2);
  for (int rank = 0; rank < 3; ++rank) {
    EXPECT_EQ(layout->OutputBytes(rank), 5 * 96 * 2);
    const ReduceGeometry geometry = layout->GeometryOf(rank);
    EXPECT_EQ(geometry.slice_elements, 5 * 96);
    EXPECT_EQ(geometry.input_offset, 0);
  }
}

TEST(RmsNormLayoutTest, DigestsTellShapesEpsAndThePlainAllReduceApart) {
  const uint64_t base = ComputeAllReduceRmsNormLayout(Shape(DataType::kBFloat16, 4, 64), 2)->digest;
  EXPECT_NE(base, ComputeAllReduceRmsNormLayout(Shape(DataType::kBFloat16, 4, 32), 2)->digest);
  EXPECT_NE(base, ComputeAllReduceRmsNormLayout(Shape(DataType::kBFloat16, 2, 128), 2)->digest);
  EXPECT_NE(base,
            ComputeAllReduceRmsNormLayout(Shape(DataType::kBFloat16, 4, 64, 1e-5f), 2)->digest);
  AllReduceShape plain;
  plain.count = 4 * 64;
  EXPECT_NE(base, ComputeAllReduceLayout(plain, 2)->digest);
}

TEST(RmsNormLayoutTest, RejectsWhatCannotBeNormalised) {
  ExpectInvalid(ComputeAllReduceRmsNormLayout(Shape(DataType::kInt8, 1, 8), 2).status(),
                "cannot be reduced");
  ExpectInvalid(ComputeAllReduceRmsNormLayout(Shape(DataType::kFloat32, -1, 8), 2).status(),
                "rows must be >= 0");
  ExpectInvalid(ComputeAllReduceRmsNormLayout(Shape(DataType::kFloat32, 1, 0), 2).status(),
                "hidden must be in 1..16777216");
  ExpectInvalid(
      ComputeAllReduceRmsNormLayout(Shape(DataType::kFloat32, 1, (1 << 24) + 1), 2).status(),
      "hidden must be in");
  for (float eps : {0.0f, -1e-6f, INFINITY, NAN}) {
    ExpectInvalid(ComputeAllReduceRmsNormLayout(Shape(DataType::kFloat32, 1, 8, eps), 2).status(),
                  "eps must be positive and finite");
  }
  ExpectInvalid(
      ComputeAllReduceRmsNormLayout(Shape(DataType::kFloat32, int64_t{1} << 40, 1 << 24), 2)
          .status(),
      "overflows");
  ExpectInvalid(ComputeAllReduceRmsNormLayout(Shape(DataType::kFloat32, 1, 8), 9).status(),
                "world_size 9");
}

TEST(RmsNormLayoutTest, BuffersAreCheckedBeforeAnyLaunch) {
  const absl::StatusOr<ReduceLayout> layout =
      ComputeAllReduceRmsNormLayout(Shape(DataType::kBFloat16, 2, 16), 2);
  ASSERT_TRUE(layout.ok());
  // Each area: 2 rows of 16 bf16 = 64 bytes; the weight 32 bytes.
  alignas(16) static uint8_t memory[1024];
  RmsNormBuffers good;
  good.input = memory;
  good.output = memory + 128;
  good.residual = memory + 256;
  good.residual_out = memory + 384;
  good.weight = memory + 512;
  EXPECT_TRUE(CheckRmsNormBuffers(*layout, 0, good).ok());
  RmsNormBuffers in_place_residual = good;
  in_place_residual.residual_out = memory + 256;
  EXPECT_TRUE(CheckRmsNormBuffers(*layout, 1, in_place_residual).ok());

  RmsNormBuffers bad = good;
  bad.output = memory;
  ExpectInvalid(CheckRmsNormBuffers(*layout, 0, bad), "cannot run in place");
  bad.output = memory + 32;  // Partly over the input.
  ExpectInvalid(CheckRmsNormBuffers(*layout, 0, bad), "rank 0: input overlaps output");
  bad = good;
  bad.residual_out = memory + 16;
  ExpectInvalid(CheckRmsNormBuffers(*layout, 0, bad), "the input overlaps the residual_out");
  bad = good;
  bad.residual_out = memory + 128;
  ExpectInvalid(CheckRmsNormBuffers(*layout, 0, bad), "the output overlaps the residual_out");
  bad = good;
  bad.weight = nullptr;
  ExpectInvalid(CheckRmsNormBuffers(*layout, 0, bad), "rank 0: weight is null");
  bad = good;
  bad.weight = memory + 513;
  ExpectInvalid(CheckRmsNormBuffers(*layout, 0, bad), "weight 0x");
  bad = good;
  bad.weight = memory + 130;
  ExpectInvalid(CheckRmsNormBuffers(*layout, 0, bad), "weight overlaps output");
  bad = good;
  bad.weight = memory + 400;
  ExpectInvalid(CheckRmsNormBuffers(*layout, 0, bad), "weight overlaps residual_out");
  bad = good;
  bad.residual = nullptr;
  ExpectInvalid(CheckRmsNormBuffers(*layout, 0, bad), "rank 0: residual is null");
  bad = good;
  bad.residual_out = memory + 258;
  ExpectInvalid(CheckRmsNormBuffers(*layout, 0, bad),
                "rank 0: the residual (64 bytes) overlaps the residual_out");
  bad = good;
  bad.input = memory + 1;
  ExpectInvalid(CheckRmsNormBuffers(*layout, 0, bad), "2-byte elements");
  ExpectInvalid(CheckRmsNormBuffers(*layout, 2, good), "rank 2 is outside [0, 2)");

  // No rows: nothing is read or written, so every pointer may be null.
  const absl::StatusOr<ReduceLayout> empty =
      ComputeAllReduceRmsNormLayout(Shape(DataType::kBFloat16, 0, 16), 2);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(CheckRmsNormBuffers(*empty, 0, RmsNormBuffers{}).ok());
}

template <typename Element>
double ValueAt(const std::vector<uint8_t>& bytes, int64_t index) {
  typename Element::Bits bits;
  std::memcpy(&bits, bytes.data() + index * sizeof(bits), sizeof(bits));
  return Element::ToFloat(bits);
}

// The reference against the definition in double precision: residual_out within one rounding
// of the dtype of the exact sum (of the sum rounded to the dtype, as the AllReduce gives it),
// and the output within a few roundings of the exact RMSNorm of residual_out.
template <typename Element>
void ExpectReferenceFollowsTheDefinition(DataType dtype, double unit) {
  std::mt19937_64 random(11);
  for (const int64_t hidden : {int64_t{1}, int64_t{31}, int64_t{32}, int64_t{100}, int64_t{4096}}) {
    const int world = 3;
    const int64_t rows = 3;
    const absl::StatusOr<ReduceLayout> layout =
        ComputeAllReduceRmsNormLayout(Shape(dtype, rows, hidden, 1e-5f), world);
    ASSERT_TRUE(layout.ok());
    std::vector<std::vector<uint8_t>> inputs;
    for (int s = 0; s < world; ++s) {
      inputs.push_back(RandomReduceValues(dtype, rows * hidden, random));
    }
    const std::vector<uint8_t> residual = RandomReduceValues(dtype, rows * hidden, random);
    const std::vector<uint8_t> weight = RandomReduceValues(dtype, hidden, random);
    const RmsNormOutputs outputs = RmsNormReference(*layout, inputs, residual, weight);
    const std::vector<uint8_t> sums = ReduceReference(*layout, 0, inputs);
    for (int64_t row = 0; row < rows; ++row) {
      double squares = 0;
      for (int64_t i = 0; i < hidden; ++i) {
        const int64_t at = row * hidden + i;
        const double exact = ValueAt<Element>(sums, at) + ValueAt<Element>(residual, at);
        const double stored = ValueAt<Element>(outputs.residual_out, at);
        EXPECT_LE(std::fabs(stored - exact), unit * std::fabs(exact)) << "hidden " << hidden;
        squares += stored * stored;
      }
      const double scale = 1.0 / std::sqrt(squares / static_cast<double>(hidden) + 1e-5);
      for (int64_t i = 0; i < hidden; ++i) {
        const int64_t at = row * hidden + i;
        const double exact =
            ValueAt<Element>(outputs.residual_out, at) * scale * ValueAt<Element>(weight, i);
        const double got = ValueAt<Element>(outputs.output, at);
        EXPECT_LE(std::fabs(got - exact), 2 * unit * std::fabs(exact) + 1e-6)
            << "hidden " << hidden << " row " << row << " element " << i;
      }
    }
  }
}

TEST(RmsNormReferenceTest, FollowsTheDefinitionInEachDtype) {
  ExpectReferenceFollowsTheDefinition<BFloat16Element>(DataType::kBFloat16, 1.0 / 256);
  ExpectReferenceFollowsTheDefinition<Float16Element>(DataType::kFloat16, 1.0 / 2048);
  ExpectReferenceFollowsTheDefinition<Float32Element>(DataType::kFloat32, 1e-5);
}

TEST(RmsNormReferenceTest, ThreadsOwnSixteenByteUnitsInTurn) {
  EXPECT_EQ(RmsNormUnit<BFloat16Element>(), 8);
  EXPECT_EQ(RmsNormUnit<Float32Element>(), 4);
  EXPECT_EQ(kRmsNormWarps * kRmsNormLanes, kRmsNormThreads);
  for (int64_t i : {0, 7}) EXPECT_EQ(RmsNormThreadOf<BFloat16Element>(i), 0);
  EXPECT_EQ(RmsNormThreadOf<BFloat16Element>(8), 1);
  EXPECT_EQ(RmsNormThreadOf<Float16Element>(8 * kRmsNormThreads - 1), kRmsNormThreads - 1);
  EXPECT_EQ(RmsNormThreadOf<Float16Element>(8 * kRmsNormThreads), 0);
  EXPECT_EQ(RmsNormThreadOf<Float32Element>(4), 1);
  EXPECT_EQ(RmsNormThreadOf<Float32Element>(4 * kRmsNormThreads + 5), 1);
}

TEST(RmsNormReferenceTest, TheLanesButterflyLeavesEveryLaneTheSameSum) {
  std::mt19937_64 random(5);
  std::uniform_real_distribution<float> value(0.0f, 1000.0f);
  float lanes[kRmsNormLanes];
  for (float& lane : lanes) lane = value(random);
  for (int offset = kRmsNormLanes / 2; offset > 0; offset /= 2) {
    float combined[kRmsNormLanes];
    for (int lane = 0; lane < kRmsNormLanes; ++lane) {
      combined[lane] = CombineLanes(lanes[lane], lanes[lane ^ offset]);
    }
    std::memcpy(lanes, combined, sizeof(lanes));
  }
  for (int lane = 1; lane < kRmsNormLanes; ++lane) {
    EXPECT_EQ(BitsOfFloat(lanes[lane]), BitsOfFloat(lanes[0])) << "lane " << lane;
  }
}

TEST(RmsNormReferenceTest, NaNsComeOutCanonical) {
  const uint16_t nan = BFloat16Element::FromFloat(FloatOfBits(kCanonicalNaN));
  EXPECT_EQ(AddResidual<BFloat16Element>(0xffc1, 0x3f80), nan);  // -NaN with a payload + 1.
  EXPECT_EQ(NormedElement<BFloat16Element>(0x3f80, FloatOfBits(0xffc00001u), 0x3f80), nan);
  EXPECT_EQ(RoundCanonical<Float32Element>(FloatOfBits(0xffc00001u)), kCanonicalNaN);
}

}  // namespace
}  // namespace ltx
