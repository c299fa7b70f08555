// Tests of AllGather argument validation and byte layout (ltx/collectives/allgather_layout.h):
// ComputeAllGatherLayout, CheckAllGatherBuffers, CountsDigest and AllGatherLayout::GeometryOf;
// for calls of several tensors, the count's range and overflow, the digest and each tensor's
// buffers.
#include "ltx/collectives/allgather_layout.h"

#include <cstdint>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/allgather/allgather_fp8_kernel.h"
#include "kernels/wire/fp8_slot.h"
#include "ltx/collectives/allgather_op.h"
#include "ltx/data_type.h"
#include "ltx/wire_format.h"
#include "tests/expect_invalid.h"

namespace ltx {
namespace {

// The Runtime's host checks of rank `rank`'s buffers for an AllGather of `layout`.
absl::Status CheckAllGatherBuffers(const AllGatherLayout& layout, int rank,
                                   const RankBuffers& buffers) {
  return CheckOpBuffers(AllGatherOpOf(layout), layout.world_size, rank, buffers);
}

using ::testing::HasSubstr;

AllGatherShape MakeShape(DataType dtype, int64_t batch, int64_t hidden,
                         const std::vector<int64_t>& counts) {
  AllGatherShape shape;
  shape.dtype = dtype;
  shape.batch = batch;
  shape.hidden = hidden;
  shape.token_counts = counts;
  return shape;
}

// Expects InvalidArgument whose message mentions `argument`.
TEST(ComputeLayoutTest, DerivesRowBytesTotalsPrefixesAndOutputSize) {
  const std::vector<int64_t> counts = {3, 0, 5, 1};
  const absl::StatusOr<AllGatherLayout> layout =
      ComputeAllGatherLayout(MakeShape(DataType::kBFloat16, 2, 7, counts), 4);
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->world_size, 4);
  EXPECT_EQ(layout->dtype, DataType::kBFloat16);
  EXPECT_EQ(layout->batch, 2);
  EXPECT_EQ(layout->row_bytes, 14);
  EXPECT_EQ(layout->total_tokens, 9);
  EXPECT_EQ(layout->output_bytes, 2 * 9 * 14);
  const int64_t expected_prefix[] = {0, 3, 3, 8};
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_EQ(layout->token_counts[rank], counts[rank]) << rank;
    EXPECT_EQ(layout->prefix_tokens[rank], expected_prefix[rank]) << rank;
    EXPECT_EQ(layout->InputBytes(rank), 2 * counts[rank] * 14) << rank;
  }
  EXPECT_EQ(layout->counts_digest, CountsDigest(counts));
}

TEST(ComputeLayoutTest, UsesTheElementSizeOfEachDtype) {
  const std::vector<int64_t> counts = {1};
  for (DataType dtype : kAllDataTypes) {
    const absl::StatusOr<AllGatherLayout> layout =
        ComputeAllGatherLayout(MakeShape(dtype, 1, 10, counts), 1);
    ASSERT_TRUE(layout.ok()) << layout.status();
    EXPECT_EQ(layout->row_bytes, 10 * ElementSize(dtype)) << DataTypeName(dtype);
  }
}

TEST(ComputeLayoutTest, AcceptsEightRanksWithZeroCounts) {
  const std::vector<int64_t> counts = {0, 0, 4, 0, 0, 0, 0, 2};
  const absl::StatusOr<AllGatherLayout> layout =
      ComputeAllGatherLayout(MakeShape(DataType::kFloat32, 3, 5, counts), 8);
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->row_bytes, 20);
  EXPECT_EQ(layout->total_tokens, 6);
  EXPECT_EQ(layout->output_bytes, 3 * 6 * 20);
  EXPECT_EQ(layout->prefix_tokens[7], 4);
  EXPECT_EQ(layout->InputBytes(0), 0);
}

TEST(ComputeLayoutTest, AcceptsAnAllZeroCountVector) {
  const std::vector<int64_t> counts = {0, 0};
  const absl::StatusOr<AllGatherLayout> layout =
      ComputeAllGatherLayout(MakeShape(DataType::kUint8, 1, 3, counts), 2);
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->total_tokens, 0);
  EXPECT_EQ(layout->output_bytes, 0);
}

TEST(ComputeLayoutTest, RejectsWorldSizeOutsideOneToEight) {
  const std::vector<int64_t> none;
  ExpectInvalid(ComputeAllGatherLayout(MakeShape(DataType::kBFloat16, 1, 8, none), 0),
                "world_size");
  const std::vector<int64_t> nine(9, 1);
  ExpectInvalid(ComputeAllGatherLayout(MakeShape(DataType::kBFloat16, 1, 8, nine), 9),
                "world_size");
  ExpectInvalid(ComputeAllGatherLayout(MakeShape(DataType::kBFloat16, 1, 8, none), -1),
                "world_size");
}

TEST(ComputeLayoutTest, RejectsUnknownDtype) {
  const std::vector<int64_t> counts = {1, 1};
  ExpectInvalid(ComputeAllGatherLayout(MakeShape(static_cast<DataType>(99), 1, 8, counts), 2),
                "dtype");
  ExpectInvalid(ComputeAllGatherLayout(MakeShape(static_cast<DataType>(0), 1, 8, counts), 2),
                "dtype");
}

TEST(ComputeLayoutTest, RejectsBatchBelowOne) {
  const std::vector<int64_t> counts = {1, 1};
  ExpectInvalid(ComputeAllGatherLayout(MakeShape(DataType::kBFloat16, 0, 8, counts), 2), "batch");
  ExpectInvalid(ComputeAllGatherLayout(MakeShape(DataType::kBFloat16, -3, 8, counts), 2), "batch");
}

TEST(ComputeLayoutTest, RejectsHiddenBelowOne) {
  const std::vector<int64_t> counts = {1, 1};
  ExpectInvalid(ComputeAllGatherLayout(MakeShape(DataType::kBFloat16, 1, 0, counts), 2), "hidden");
  ExpectInvalid(ComputeAllGatherLayout(MakeShape(DataType::kBFloat16, 1, -1, counts), 2), "hidden");
}

TEST(ComputeLayoutTest, RejectsCountVectorOfTheWrongLength) {
  const std::vector<int64_t> three = {1, 2, 3};
  ExpectInvalid(ComputeAllGatherLayout(MakeShape(DataType::kBFloat16, 1, 8, three), 2),
                "token_counts");
  ExpectInvalid(ComputeAllGatherLayout(MakeShape(DataType::kBFloat16, 1, 8, three), 4),
                "token_counts");
  const std::vector<int64_t> none;
  ExpectInvalid(ComputeAllGatherLayout(MakeShape(DataType::kBFloat16, 1, 8, none), 1),
                "token_counts");
}

TEST(ComputeLayoutTest, RejectsANegativeCountAndNamesItsRank) {
  const std::vector<int64_t> counts = {1, 2, -1, 4};
  const absl::StatusOr<AllGatherLayout> layout =
      ComputeAllGatherLayout(MakeShape(DataType::kBFloat16, 1, 8, counts), 4);
  ExpectInvalid(layout, "token_counts");
  EXPECT_THAT(std::string(layout.status().message()), HasSubstr("[2]"));
}

TEST(ComputeLayoutTest, RejectsCountsWhoseSumOverflows) {
  const int64_t max = std::numeric_limits<int64_t>::max();
  const std::vector<int64_t> wraps = {max, 1};
  ExpectInvalid(ComputeAllGatherLayout(MakeShape(DataType::kUint8, 1, 1, wraps), 2),
                "token_counts");
  const std::vector<int64_t> too_big = {int64_t{1} << 62, 1};
  ExpectInvalid(ComputeAllGatherLayout(MakeShape(DataType::kUint8, 1, 1, too_big), 2),
                "token_counts");
}

TEST(ComputeLayoutTest, RejectsHiddenWhoseRowSizeOverflows) {
  const std::vector<int64_t> counts = {1};
  ExpectInvalid(
      ComputeAllGatherLayout(MakeShape(DataType::kFloat32, 1, int64_t{1} << 62, counts), 1),
      "hidden");
  ExpectInvalid(
      ComputeAllGatherLayout(
          MakeShape(DataType::kFloat32, 1, std::numeric_limits<int64_t>::max(), counts), 1),
      "hidden");
}

TEST(ComputeLayoutTest, RejectsOutputsLargerThanTwoToTheSixtyTwoBytes) {
  const std::vector<int64_t> counts = {int64_t{1} << 30, int64_t{1} << 30};
  const absl::StatusOr<AllGatherLayout> layout =
      ComputeAllGatherLayout(MakeShape(DataType::kUint8, 1, int64_t{1} << 40, counts), 2);
  ExpectInvalid(layout, "overflows");
  EXPECT_THAT(std::string(layout.status().message()), HasSubstr("2^62"));

  // The batch multiply overflows although one slice fits.
  const std::vector<int64_t> one = {int64_t{1} << 20};
  ExpectInvalid(ComputeAllGatherLayout(
                    MakeShape(DataType::kUint8, int64_t{1} << 30, int64_t{1} << 20, one), 1),
                "batch");
}

TEST(ComputeLayoutTest, AcceptsAnOutputOfExactlyTwoToTheSixtyTwoBytes) {
  const std::vector<int64_t> counts = {int64_t{1} << 20};
  const absl::StatusOr<AllGatherLayout> layout = ComputeAllGatherLayout(
      MakeShape(DataType::kUint8, int64_t{1} << 2, int64_t{1} << 40, counts), 1);
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->output_bytes, int64_t{1} << 62);
}

TEST(ValidateRankBuffersTest, NullInputWithBytesToSendIsInvalid) {
  const std::vector<int64_t> counts = {2, 0};
  const absl::StatusOr<AllGatherLayout> layout =
      ComputeAllGatherLayout(MakeShape(DataType::kBFloat16, 1, 4, counts), 2);
  ASSERT_TRUE(layout.ok()) << layout.status();
  char output[64];
  RankBuffers buffers;
  buffers.input = nullptr;
  buffers.output = output;
  const absl::Status status = CheckAllGatherBuffers(*layout, 0, buffers);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("input"));
}

// Rank 1's input in place in its output: 2 ranks of 3 and 5 tokens, 4 bytes per row.
TEST(ValidateRankBuffersTest, AnInputInPlaceAtTheRanksOwnTokensIsFine) {
  const std::vector<int64_t> counts = {3, 5};
  const absl::StatusOr<AllGatherLayout> layout =
      ComputeAllGatherLayout(MakeShape(DataType::kBFloat16, 1, 2, counts), 2);
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->InPlaceOffset(0), 0);
  EXPECT_EQ(layout->InPlaceOffset(1), 3 * 4);
  char output[32];
  RankBuffers buffers;
  buffers.output = output;
  buffers.input = output + 3 * 4;
  EXPECT_TRUE(CheckAllGatherBuffers(*layout, 1, buffers).ok());
  EXPECT_TRUE(IsInPlace(buffers, layout->InPlaceOffset(1)));
  buffers.input = output;
  EXPECT_TRUE(CheckAllGatherBuffers(*layout, 0, buffers).ok());
  EXPECT_FALSE(IsInPlace(buffers, layout->InPlaceOffset(1)));
}

TEST(ValidateRankBuffersTest, AnInputThatOverlapsTheOutputElsewhereIsInvalid) {
  const std::vector<int64_t> counts = {3, 5};
  const absl::StatusOr<AllGatherLayout> layout =
      ComputeAllGatherLayout(MakeShape(DataType::kBFloat16, 1, 2, counts), 2);
  ASSERT_TRUE(layout.ok()) << layout.status();
  char memory[80];
  RankBuffers buffers;
  buffers.output = memory + 24;  // 32 bytes; rank 1's tokens at 24 + 12.
  for (int offset : {10, 20, 24, 30, 54}) {  // 20 bytes that overlap, not at rank 1's tokens.
    buffers.input = memory + offset;
    const absl::Status status = CheckAllGatherBuffers(*layout, 1, buffers);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << offset;
    EXPECT_THAT(std::string(status.message()), HasSubstr("overlaps the output")) << offset;
    EXPECT_THAT(std::string(status.message()), HasSubstr("starts exactly 12 bytes")) << offset;
  }
  // Touching is not overlapping: the input ends where the output begins, or begins at its end.
  buffers.input = memory + 4;
  EXPECT_TRUE(CheckAllGatherBuffers(*layout, 1, buffers).ok());
  buffers.input = memory + 56;
  EXPECT_TRUE(CheckAllGatherBuffers(*layout, 1, buffers).ok());
}

TEST(ValidateRankBuffersTest, WithSeveralBatchSlicesNoInputIsInPlace) {
  const std::vector<int64_t> counts = {3, 5};
  const absl::StatusOr<AllGatherLayout> layout =
      ComputeAllGatherLayout(MakeShape(DataType::kBFloat16, 2, 2, counts), 2);
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->InPlaceOffset(1), kNotInPlace);
  char output[64];
  RankBuffers buffers;
  buffers.output = output;
  buffers.input = output + 3 * 4;
  const absl::Status status = CheckAllGatherBuffers(*layout, 1, buffers);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("no in-place form"));
}

TEST(ValidateRankBuffersTest, NullInputOfAZeroTokenRankIsFine) {
  const std::vector<int64_t> counts = {2, 0};
  const absl::StatusOr<AllGatherLayout> layout =
      ComputeAllGatherLayout(MakeShape(DataType::kBFloat16, 1, 4, counts), 2);
  ASSERT_TRUE(layout.ok()) << layout.status();
  char output[64];
  RankBuffers buffers;
  buffers.input = nullptr;
  buffers.output = output;
  EXPECT_TRUE(CheckAllGatherBuffers(*layout, 1, buffers).ok());
}

TEST(ValidateRankBuffersTest, NullOutputForANonEmptyOutputIsInvalid) {
  const std::vector<int64_t> counts = {2, 0};
  const absl::StatusOr<AllGatherLayout> layout =
      ComputeAllGatherLayout(MakeShape(DataType::kBFloat16, 1, 4, counts), 2);
  ASSERT_TRUE(layout.ok()) << layout.status();
  const char input[64] = {};
  RankBuffers buffers;
  buffers.input = input;
  buffers.output = nullptr;
  for (int rank : {0, 1}) {
    const absl::Status status = CheckAllGatherBuffers(*layout, rank, buffers);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr("output"));
  }
}

TEST(ValidateRankBuffersTest, NullBuffersForAnEmptyOutputAreFine) {
  const std::vector<int64_t> counts = {0, 0};
  const absl::StatusOr<AllGatherLayout> layout =
      ComputeAllGatherLayout(MakeShape(DataType::kBFloat16, 1, 4, counts), 2);
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_TRUE(CheckAllGatherBuffers(*layout, 0, RankBuffers()).ok());
  EXPECT_TRUE(CheckAllGatherBuffers(*layout, 1, RankBuffers()).ok());
}

TEST(CountsDigestTest, EqualVectorsHaveEqualDigests) {
  const std::vector<int64_t> a = {5, 0, 7};
  const std::vector<int64_t> b = {5, 0, 7};
  EXPECT_EQ(CountsDigest(a), CountsDigest(b));
}

TEST(CountsDigestTest, PermutedCountsHaveDifferentDigests) {
  const std::vector<int64_t> a = {1, 2, 3};
  const std::vector<int64_t> b = {2, 1, 3};
  const std::vector<int64_t> c = {3, 2, 1};
  EXPECT_NE(CountsDigest(a), CountsDigest(b));
  EXPECT_NE(CountsDigest(a), CountsDigest(c));
  EXPECT_NE(CountsDigest(b), CountsDigest(c));
}

TEST(CountsDigestTest, TrailingZeroChangesTheDigest) {
  const std::vector<int64_t> a = {1, 2};
  const std::vector<int64_t> b = {1, 2, 0};
  EXPECT_NE(CountsDigest(a), CountsDigest(b));
  const std::vector<int64_t> empty;
  const std::vector<int64_t> zero = {0};
  EXPECT_NE(CountsDigest(empty), CountsDigest(zero));
}

TEST(GeometryOfTest, MatchesTheLayoutFormula) {
  const std::vector<int64_t> counts = {3, 0, 5, 1};
  const absl::StatusOr<AllGatherLayout> layout =
      ComputeAllGatherLayout(MakeShape(DataType::kFloat16, 3, 11, counts), 4);
  ASSERT_TRUE(layout.ok()) << layout.status();
  const int64_t row = 22;
  const int64_t total = 9;
  const int64_t prefix[] = {0, 3, 3, 8};
  for (int rank = 0; rank < 4; ++rank) {
    const ShardGeometry g = layout->GeometryOf(rank);
    EXPECT_EQ(g.batch, 3) << rank;
    EXPECT_EQ(g.shard_bytes, counts[rank] * row) << rank;
    EXPECT_EQ(g.output_batch_stride, total * row) << rank;
    EXPECT_EQ(g.output_offset, prefix[rank] * row) << rank;
    EXPECT_EQ(FlatShardBytes(g), layout->InputBytes(rank)) << rank;
  }
}

// ---------------------------------------------------------------------------------------------
// Several tensors in one op

TEST(ComputeLayoutTest, TheTensorCountIsInRangeAndInTheDigest) {
  const std::vector<int64_t> counts = {3, 0, 5};
  auto layout_of = [&](int32_t tensors) {
    AllGatherShape shape = MakeShape(DataType::kBFloat16, 2, 8, counts);
    shape.tensors = tensors;
    return ComputeAllGatherLayout(shape, 3);
  };
  for (int32_t tensors : {0, -1, kMaxTensors + 1}) {
    ExpectInvalid(layout_of(tensors), "tensors must be in [1, 4]");
  }
  const absl::StatusOr<AllGatherLayout> one = layout_of(1);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->tensors, 1);
  // Ranks that gather different numbers of tensors disagree on the digest; the counts' own
  // digest, which the other collectives build on, stays the count vector's.
  uint64_t digests[kMaxTensors] = {};
  for (int32_t tensors = 1; tensors <= kMaxTensors; ++tensors) {
    const absl::StatusOr<AllGatherLayout> layout = layout_of(tensors);
    ASSERT_TRUE(layout.ok()) << layout.status();
    EXPECT_EQ(layout->tensors, tensors);
    EXPECT_EQ(layout->counts_digest, CountsDigest(counts));
    EXPECT_EQ(layout->output_bytes, one->output_bytes);  // Each tensor's.
    digests[tensors - 1] = layout->digest;
    for (int32_t other = 1; other < tensors; ++other) {
      EXPECT_NE(digests[other - 1], layout->digest) << other << " vs " << tensors;
    }
  }
}

TEST(ComputeLayoutTest, AllTensorsTogetherStayBelowTwoToTheSixtyTwoBytes) {
  const std::vector<int64_t> counts = {int64_t{1} << 20};
  AllGatherShape shape =
      MakeShape(DataType::kUint8, int64_t{1} << 1, int64_t{1} << 40, counts);  // 2^61 bytes.
  shape.tensors = 2;
  EXPECT_TRUE(ComputeAllGatherLayout(shape, 1).ok());
  shape.tensors = 3;
  ExpectInvalid(ComputeAllGatherLayout(shape, 1), "3 tensors");
}

// A layout of three tensors of 2 ranks x 2 tokens x 8 bytes (rank 0's input 16 bytes, every
// output 32), and rank 0's buffers for it: each tensor's input and output apart in `memory_`.
class ThreeTensorGatherBuffersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    AllGatherShape shape = MakeShape(DataType::kBFloat16, 1, 4, counts_);
    shape.tensors = 3;
    absl::StatusOr<AllGatherLayout> layout = ComputeAllGatherLayout(shape, 2);
    ASSERT_TRUE(layout.ok()) << layout.status();
    layout_ = *layout;
    ASSERT_EQ(layout_.InputBytes(0), 16);
    ASSERT_EQ(layout_.output_bytes, 32);
    buffers_.input = memory_;
    buffers_.output = memory_ + 64;
    for (int tensor = 1; tensor < 3; ++tensor) {
      buffers_.more_inputs[tensor - 1] = memory_ + 128 * tensor;
      buffers_.more_outputs[tensor - 1] = memory_ + 128 * tensor + 64;
    }
  }

  // CheckAllGatherBuffers of rank `rank`'s buffers; expects InvalidArgument saying `what`
  // unless `what` is null (then OK).
  void Expect(const char* what, int rank = 0) {
    const absl::Status status = CheckAllGatherBuffers(layout_, rank, buffers_);
    if (what == nullptr) {
      EXPECT_TRUE(status.ok()) << status;
      return;
    }
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr(what));
  }

  const std::vector<int64_t> counts_ = {2, 2};
  AllGatherLayout layout_;
  char memory_[1024] = {};
  RankBuffers buffers_;
};

TEST_F(ThreeTensorGatherBuffersTest, SeparateBuffersAreValid) { Expect(nullptr); }

TEST_F(ThreeTensorGatherBuffersTest, EachTensorMayLieInPlaceInItsOwnOutput) {
  // Rank 1's tokens start 16 bytes into every output.
  buffers_.input = memory_ + 64 + 16;
  buffers_.more_inputs[1] = memory_ + 256 + 64 + 16;
  Expect(nullptr, 1);
  // Not in another tensor's output.
  buffers_.more_inputs[0] = memory_ + 64 + 16;
  Expect("the more_inputs[0] overlaps the output of another tensor", 1);
}

TEST_F(ThreeTensorGatherBuffersTest, NamesTheNullPointerOfEachTensor) {
  buffers_.more_inputs[1] = nullptr;
  Expect("rank 0: more_inputs[1] is null but the input holds 16 bytes");
  buffers_.more_inputs[1] = memory_ + 256;
  buffers_.more_outputs[0] = nullptr;
  Expect("rank 0: more_outputs[0] is null but the output holds 32 bytes");
}

TEST_F(ThreeTensorGatherBuffersTest, OverlapsAcrossTensorsAndStrayPointersAreInvalid) {
  buffers_.more_outputs[1] = memory_ + 64 + 16;  // Inside tensor 0's output.
  Expect("the output overlaps the more_outputs[1] of another tensor");
  buffers_.more_outputs[1] = memory_ + 256 + 64;
  buffers_.more_inputs[2] = memory_ + 512;  // A fourth tensor's input in a call of three.
  Expect("more_inputs[2] or more_outputs[2] is set, but the call moves 3 tensor(s)");
}

// A one-tensor AllGather refuses the other tensors' pointers.
TEST(ValidateRankBuffersTest, AnotherTensorsPointerInAOneTensorCallIsInvalid) {
  const std::vector<int64_t> counts = {2, 2};
  const absl::StatusOr<AllGatherLayout> layout =
      ComputeAllGatherLayout(MakeShape(DataType::kBFloat16, 1, 4, counts), 2);
  ASSERT_TRUE(layout.ok()) << layout.status();
  char memory[128];
  RankBuffers buffers;
  buffers.input = memory;
  buffers.output = memory + 64;
  buffers.more_outputs[0] = memory + 32;
  const absl::Status status = CheckAllGatherBuffers(*layout, 0, buffers);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("set the shape's tensors"));
}

// FP8 on the wire: bf16 and fp16 rows of at least kFp8MinHidden elements (one tensor per op is
// ResolveCall's rule); the wire format is in the digest (ranks that disagree on it fail at entry)
// and rules out in place.
TEST(ComputeLayoutTest, FP8OnTheWireTakesSixteenBitRows) {
  const std::vector<int64_t> counts = {3, 0, 5};
  for (DataType dtype : {DataType::kBFloat16, DataType::kFloat16}) {
    AllGatherShape shape = MakeShape(dtype, 1, kFp8MinHidden, counts);
    const absl::StatusOr<AllGatherLayout> native = ComputeAllGatherLayout(shape, 3);
    shape.wire = WireFormat::kFp8E4M3;
    const absl::StatusOr<AllGatherLayout> fp8 = ComputeAllGatherLayout(shape, 3);
    ASSERT_TRUE(native.ok() && fp8.ok()) << fp8.status();
    EXPECT_EQ(fp8->wire, WireFormat::kFp8E4M3);
    EXPECT_NE(fp8->digest, native->digest);
    EXPECT_EQ(fp8->counts_digest, native->counts_digest);
    EXPECT_EQ(fp8->output_bytes, native->output_bytes);
    EXPECT_EQ(native->InPlaceOffset(2), 3 * native->row_bytes);
    EXPECT_EQ(fp8->InPlaceOffset(2), kNotInPlace);
  }
  AllGatherShape shape = MakeShape(DataType::kFloat32, 1, 64, counts);
  shape.wire = WireFormat::kFp8E4M3;
  ExpectInvalid(ComputeAllGatherLayout(shape, 3), "bf16 or fp16");
  shape.dtype = DataType::kBFloat16;
  shape.hidden = kFp8MinHidden - 1;
  ExpectInvalid(ComputeAllGatherLayout(shape, 3), "hidden >= 8");
  shape.hidden = 64;
  shape.wire = static_cast<WireFormat>(7);
  ExpectInvalid(ComputeAllGatherLayout(shape, 3), "wire");
}

// FP8 on the wire gives each row a team of warps that quantise it together (a power of two, one
// per kAllGatherFp8WarpElements, at most a block's), which also covers the pieces it is decoded
// in, and the op asks for blocks for the most rows a rank receives or quantises, times that.
TEST(ComputeLayoutTest, FP8OnTheWireAsksForWarpsPerRow) {
  EXPECT_EQ(AllGatherFp8WarpsPerRow(8), 1);
  EXPECT_EQ(AllGatherFp8WarpsPerRow(1024), 1);
  EXPECT_EQ(AllGatherFp8WarpsPerRow(1025), 2);
  EXPECT_EQ(AllGatherFp8WarpsPerRow(4096), 4);
  EXPECT_EQ(AllGatherFp8WarpsPerRow(5120), 8);
  EXPECT_EQ(AllGatherFp8WarpsPerRow(32768), 32);
  EXPECT_EQ(AllGatherFp8WarpsPerRow(int64_t{1} << 20), 32);
  for (int64_t hidden = kFp8MinHidden; hidden <= 40000; hidden += 37) {
    const int warps = AllGatherFp8WarpsPerRow(hidden);
    EXPECT_EQ(warps & (warps - 1), 0) << hidden;
    EXPECT_TRUE(warps == 32 || warps * kAllGatherFp8WarpElements >= hidden) << hidden;
    EXPECT_TRUE(warps == 1 || (warps / 2) * kAllGatherFp8WarpElements < hidden) << hidden;
  }
  // Counts {3, 0, 5}, batch 2: rank 1 receives 16 rows, the most; 4 warps each, 32 per block.
  const std::vector<int64_t> counts = {3, 0, 5};
  AllGatherShape shape = MakeShape(DataType::kBFloat16, 2, 4096, counts);
  shape.wire = WireFormat::kFp8E4M3;
  const absl::StatusOr<AllGatherLayout> layout = ComputeAllGatherLayout(shape, 3);
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(AllGatherOpOf(*layout).work_blocks, 2 * 8 * 4 / 32);
}

}  // namespace
}  // namespace ltx
