// Tests of all-to-all argument validation and byte layout (ltx/collectives/alltoall_layout.h):
// ComputeAllToAllLayout and CheckAllToAllBuffers.
#include "ltx/collectives/alltoall_layout.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ltx/collectives/allgather_layout.h"
#include "ltx/collectives/alltoall_op.h"
#include "ltx/data_type.h"
#include "tests/expect_invalid.h"

namespace ltx {
namespace {

// The Runtime's host checks of rank `rank`'s buffers for an all-to-all of `layout`.
absl::Status CheckAllToAllBuffers(const AllToAllLayout& layout, int rank,
                                  const RankBuffers& buffers) {
  return CheckOpBuffers(AllToAllOpOf(layout), layout.world_size, rank, buffers);
}

using ::testing::HasSubstr;

AllToAllShape MakeShape(int64_t batch, int64_t heads, int64_t head_dim,
                        const std::vector<int64_t>& counts,
                        AllToAllDirection direction = AllToAllDirection::kSeqToHeads,
                        DataType dtype = DataType::kBFloat16,
                        const std::vector<int64_t>& head_counts = {}) {
  AllToAllShape shape;
  shape.dtype = dtype;
  shape.batch = batch;
  shape.heads = heads;
  shape.head_dim = head_dim;
  shape.token_counts = counts;
  shape.direction = direction;
  shape.head_counts = head_counts;
  return shape;
}

// The shape with head split `head_counts`, in direction `direction`, bf16.
AllToAllShape SplitShape(int64_t heads, const std::vector<int64_t>& counts,
                         const std::vector<int64_t>& head_counts,
                         AllToAllDirection direction = AllToAllDirection::kSeqToHeads) {
  return MakeShape(2, heads, 3, counts, direction, DataType::kBFloat16, head_counts);
}

TEST(ComputeAllToAllLayoutTest, SeqToHeadsDerivesGeometryAndBufferSizes) {
  const std::vector<int64_t> counts = {3, 0, 5, 1};
  const absl::StatusOr<AllToAllLayout> layout =
      ComputeAllToAllLayout(MakeShape(2, 8, 3, counts), 4);
  ASSERT_TRUE(layout.ok()) << layout.status();
  const AllToAllGeometry& g = layout->geometry;
  EXPECT_EQ(g.heads_to_seq, 0);
  EXPECT_EQ(g.world_size, 4);
  EXPECT_EQ(g.batch, 2);
  EXPECT_EQ(g.total_tokens, 9);
  EXPECT_EQ(g.token_bytes, 8 * 3 * 2);
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_EQ(layout->head_counts[rank], 2);
    EXPECT_EQ(g.group_bytes[rank], 2 * 3 * 2);
    EXPECT_EQ(g.group_offsets[rank], rank * 2 * 3 * 2);
  }
  EXPECT_EQ(g.prefix_tokens[2], 3);
  EXPECT_EQ(g.prefix_tokens[3], 8);
  EXPECT_EQ(layout->InputBytes(0), 2 * 3 * 48);
  EXPECT_EQ(layout->InputBytes(1), 0);
  for (int rank = 0; rank < 4; ++rank) EXPECT_EQ(layout->OutputBytes(rank), 2 * 9 * 12);
}

TEST(ComputeAllToAllLayoutTest, HeadsToSeqSwapsInputAndOutputSizes) {
  const std::vector<int64_t> counts = {3, 0, 5, 1};
  const absl::StatusOr<AllToAllLayout> forward =
      ComputeAllToAllLayout(MakeShape(2, 8, 3, counts), 4);
  const absl::StatusOr<AllToAllLayout> inverse =
      ComputeAllToAllLayout(MakeShape(2, 8, 3, counts, AllToAllDirection::kHeadsToSeq), 4);
  ASSERT_TRUE(forward.ok() && inverse.ok());
  EXPECT_EQ(inverse->geometry.heads_to_seq, 1);
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_EQ(inverse->InputBytes(rank), forward->OutputBytes(rank));
    EXPECT_EQ(inverse->OutputBytes(rank), forward->InputBytes(rank));
  }
}

TEST(ComputeAllToAllLayoutTest, UnevenSplitSizesEachRanksHeadGroup) {
  const std::vector<int64_t> counts = {3, 0, 5, 1};
  const std::vector<int64_t> split = {3, 0, 1, 3};
  const absl::StatusOr<AllToAllLayout> layout =
      ComputeAllToAllLayout(SplitShape(7, counts, split), 4);
  const absl::StatusOr<AllToAllLayout> inverse =
      ComputeAllToAllLayout(SplitShape(7, counts, split, AllToAllDirection::kHeadsToSeq), 4);
  ASSERT_TRUE(layout.ok()) << layout.status();
  ASSERT_TRUE(inverse.ok()) << inverse.status();
  const AllToAllGeometry& g = layout->geometry;
  EXPECT_EQ(g.token_bytes, 7 * 3 * 2);
  const int64_t offsets[] = {0, 3, 3, 4};  // Heads before each rank's group.
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_EQ(layout->head_counts[rank], split[rank]);
    EXPECT_EQ(g.group_bytes[rank], split[rank] * 3 * 2);
    EXPECT_EQ(g.group_offsets[rank], offsets[rank] * 3 * 2);
    // [batch, S, head_counts[rank], head_dim] on the heads side; rank 1's is empty.
    EXPECT_EQ(layout->OutputBytes(rank), 2 * 9 * split[rank] * 3 * 2);
    EXPECT_EQ(layout->InputBytes(rank), 2 * counts[rank] * 7 * 3 * 2);
    EXPECT_EQ(inverse->InputBytes(rank), layout->OutputBytes(rank));
    EXPECT_EQ(inverse->OutputBytes(rank), layout->InputBytes(rank));
  }
}

TEST(ComputeAllToAllLayoutTest, AnExplicitEvenSplitIsTheDefaultOne) {
  const std::vector<int64_t> counts = {3, 0, 5, 1};
  const absl::StatusOr<AllToAllLayout> implicit =
      ComputeAllToAllLayout(SplitShape(8, counts, {}), 4);
  const absl::StatusOr<AllToAllLayout> explicit_split =
      ComputeAllToAllLayout(SplitShape(8, counts, {2, 2, 2, 2}), 4);
  ASSERT_TRUE(implicit.ok() && explicit_split.ok());
  EXPECT_EQ(implicit->digest, explicit_split->digest);
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_EQ(implicit->geometry.group_bytes[rank], explicit_split->geometry.group_bytes[rank]);
    EXPECT_EQ(implicit->geometry.group_offsets[rank], explicit_split->geometry.group_offsets[rank]);
    EXPECT_EQ(implicit->OutputBytes(rank), explicit_split->OutputBytes(rank));
  }
}

TEST(ComputeAllToAllLayoutTest, UsesTheElementSizeOfEachDtype) {
  const std::vector<int64_t> counts = {4};
  for (DataType dtype : kAllDataTypes) {
    const absl::StatusOr<AllToAllLayout> layout =
        ComputeAllToAllLayout(MakeShape(1, 2, 5, counts, AllToAllDirection::kSeqToHeads, dtype), 1);
    ASSERT_TRUE(layout.ok()) << layout.status();
    EXPECT_EQ(layout->geometry.token_bytes, 10 * ElementSize(dtype));
  }
}

TEST(ComputeAllToAllLayoutTest, DigestSeparatesDirectionShapeCountsAndAllGather) {
  const std::vector<int64_t> counts = {3, 5};
  const std::vector<int64_t> other_counts = {5, 3};
  auto digest = [](const AllToAllShape& shape) {
    absl::StatusOr<AllToAllLayout> layout = ComputeAllToAllLayout(shape, 2);
    return layout.ok() ? layout->digest : 0;
  };
  const uint64_t base = digest(MakeShape(1, 4, 8, counts));
  EXPECT_NE(base, 0u);
  EXPECT_EQ(base, digest(MakeShape(1, 4, 8, counts)));
  EXPECT_NE(base, digest(MakeShape(1, 4, 8, counts, AllToAllDirection::kHeadsToSeq)));
  EXPECT_NE(base, digest(MakeShape(1, 2, 16, counts)));
  EXPECT_NE(base, digest(MakeShape(1, 4, 8, other_counts)));
  EXPECT_NE(base, CountsDigest(counts));
  // Head splits: ranks that split the heads differently disagree.
  auto split = [&](const std::vector<int64_t>& head_counts) {
    return digest(MakeShape(1, 4, 8, counts, AllToAllDirection::kSeqToHeads, DataType::kBFloat16,
                            head_counts));
  };
  EXPECT_EQ(base, split({2, 2}));
  EXPECT_NE(base, split({3, 1}));
  EXPECT_NE(split({3, 1}), split({1, 3}));
  EXPECT_NE(split({4, 0}), split({0, 4}));
  // Tensor counts: ranks that move different numbers of tensors disagree.
  auto tensors = [&](int32_t count) {
    AllToAllShape shape = MakeShape(1, 4, 8, counts);
    shape.tensors = count;
    return digest(shape);
  };
  EXPECT_EQ(base, tensors(1));
  EXPECT_NE(base, tensors(3));
  EXPECT_NE(tensors(2), tensors(3));
}

TEST(ComputeAllToAllLayoutTest, RejectsEveryBadArgumentByName) {
  const std::vector<int64_t> two = {1, 2};
  const std::vector<int64_t> negative = {1, -2};
  ExpectInvalid(ComputeAllToAllLayout(MakeShape(1, 3, 8, two), 2), "heads");
  ExpectInvalid(ComputeAllToAllLayout(MakeShape(1, 0, 8, two), 2), "heads");
  ExpectInvalid(ComputeAllToAllLayout(MakeShape(1, 4, 0, two), 2), "head_dim");
  ExpectInvalid(ComputeAllToAllLayout(MakeShape(0, 4, 8, two), 2), "batch");
  ExpectInvalid(ComputeAllToAllLayout(MakeShape(1, 4, 8, two), 4), "token_counts");
  ExpectInvalid(ComputeAllToAllLayout(MakeShape(1, 4, 8, negative), 2), "token_counts[1]");
  ExpectInvalid(ComputeAllToAllLayout(MakeShape(1, 4, 8, two), 9), "world_size");
  ExpectInvalid(
      ComputeAllToAllLayout(MakeShape(1, 4, 8, two, static_cast<AllToAllDirection>(7)), 2),
      "direction");
  for (int32_t tensors : {0, -1, kMaxTensors + 1}) {
    AllToAllShape shape = MakeShape(1, 4, 8, two);
    shape.tensors = tensors;
    ExpectInvalid(ComputeAllToAllLayout(shape, 2), "tensors must be in [1, 4]");
  }
  ExpectInvalid(
      ComputeAllToAllLayout(
          MakeShape(1, 4, 8, two, AllToAllDirection::kSeqToHeads, static_cast<DataType>(99)), 2),
      "dtype");
}

// The FP8 wire: the layout keeps it and the digest tells it apart; bf16 and fp16 only, head
// vectors of at least 8 elements, at most 256 heads in any rank's group, known formats only.
TEST(ComputeAllToAllLayoutTest, Fp8WireIsKeptDigestedAndItsLimitsRefusedByName) {
  const std::vector<int64_t> two = {1, 2};
  AllToAllShape shape = MakeShape(1, 4, 8, two);
  const absl::StatusOr<AllToAllLayout> native = ComputeAllToAllLayout(shape, 2);
  ASSERT_TRUE(native.ok()) << native.status();
  shape.wire = WireFormat::kFp8E4M3;
  const absl::StatusOr<AllToAllLayout> fp8 = ComputeAllToAllLayout(shape, 2);
  ASSERT_TRUE(fp8.ok()) << fp8.status();
  EXPECT_EQ(fp8->wire, WireFormat::kFp8E4M3);
  EXPECT_NE(fp8->digest, native->digest);
  shape.dtype = DataType::kFloat16;
  EXPECT_TRUE(ComputeAllToAllLayout(shape, 2).ok());
  shape.dtype = DataType::kFloat32;
  ExpectInvalid(ComputeAllToAllLayout(shape, 2), "bf16 or fp16 head vectors, not fp32");
  shape.dtype = DataType::kBFloat16;
  shape.head_dim = 7;
  ExpectInvalid(ComputeAllToAllLayout(shape, 2), "head_dim >= 8");
  shape.head_dim = 8;
  const std::vector<int64_t> wide = {1, 257};
  AllToAllShape split = SplitShape(258, two, wide);
  split.head_dim = 8;
  split.wire = WireFormat::kFp8E4M3;
  ExpectInvalid(ComputeAllToAllLayout(split, 2), "rank 1's group has 257");
  const std::vector<int64_t> widest = {2, 256};
  split.heads = 258;
  split.head_counts = widest;
  EXPECT_TRUE(ComputeAllToAllLayout(split, 2).ok());
  shape.wire = static_cast<WireFormat>(5);
  ExpectInvalid(ComputeAllToAllLayout(shape, 2), "wire: unknown value 5");
}

TEST(ComputeAllToAllLayoutTest, RejectsEveryBadHeadSplitByName) {
  const std::vector<int64_t> two = {1, 2};
  ExpectInvalid(ComputeAllToAllLayout(SplitShape(3, two, {}), 2), "head_counts must give");
  ExpectInvalid(ComputeAllToAllLayout(SplitShape(3, two, {3}), 2), "head_counts has 1 entries");
  ExpectInvalid(ComputeAllToAllLayout(SplitShape(3, two, {1, 1, 1}), 2),
                "head_counts has 3 entries");
  ExpectInvalid(ComputeAllToAllLayout(SplitShape(3, two, {4, -1}), 2),
                "head_counts[1] = -1 is negative");
  ExpectInvalid(ComputeAllToAllLayout(SplitShape(3, two, {1, 1}), 2), "must sum to heads (3)");
  ExpectInvalid(ComputeAllToAllLayout(SplitShape(3, two, {2, 2}), 2), "must sum to heads (3)");
  const int64_t big = std::numeric_limits<int64_t>::max();
  ExpectInvalid(ComputeAllToAllLayout(SplitShape(3, two, {big, big}), 2), "must sum to heads");
  // Zero heads on every rank but one, and a split of heads not divisible by the world size.
  EXPECT_TRUE(ComputeAllToAllLayout(SplitShape(3, two, {0, 3}), 2).ok());
  EXPECT_TRUE(ComputeAllToAllLayout(SplitShape(5, {1, 2, 3}, {2, 2, 1}), 3).ok());
}

TEST(ComputeAllToAllLayoutTest, RejectsOverflow) {
  const std::vector<int64_t> two = {1, 2};
  const std::vector<int64_t> huge = {std::numeric_limits<int64_t>::max() / 2, 1 << 20};
  const int64_t big = std::numeric_limits<int64_t>::max() / 4;
  ExpectInvalid(ComputeAllToAllLayout(MakeShape(1, 2, big, two), 2), "heads * head_dim");
  ExpectInvalid(ComputeAllToAllLayout(MakeShape(16, 2, int64_t{1} << 54, two,
                                                AllToAllDirection::kSeqToHeads, DataType::kFloat32),
                                      2),
                "overflows");
  ExpectInvalid(ComputeAllToAllLayout(MakeShape(1, 2, 8, huge), 2), "token_counts");
  ExpectInvalid(ComputeAllToAllLayout(MakeShape(big, 2, 8, two), 2), "overflows");
  // A gathered sequence of 2^61 bytes fits one tensor, not four.
  const std::vector<int64_t> tokens = {256, 256};
  AllToAllShape shape = MakeShape(int64_t{1} << 48, 2, 8, tokens, AllToAllDirection::kSeqToHeads,
                                  DataType::kUint8);
  EXPECT_TRUE(ComputeAllToAllLayout(shape, 2).ok());
  shape.tensors = 4;
  ExpectInvalid(ComputeAllToAllLayout(shape, 2), "4 tensors");
}

TEST(CheckAllToAllBuffersTest, NamesTheRankAndTheNullPointer) {
  const std::vector<int64_t> counts = {0, 4};
  const absl::StatusOr<AllToAllLayout> layout =
      ComputeAllToAllLayout(MakeShape(1, 2, 8, counts), 2);
  ASSERT_TRUE(layout.ok());
  int dummy = 0;
  RankBuffers buffers;
  buffers.output = &dummy;
  // Rank 0 sends nothing: a null input is fine.
  EXPECT_TRUE(CheckAllToAllBuffers(*layout, 0, buffers).ok());
  absl::Status status = CheckAllToAllBuffers(*layout, 1, buffers);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("rank 1: input is null"));
  buffers.input = &dummy;
  buffers.output = nullptr;
  status = CheckAllToAllBuffers(*layout, 1, buffers);
  EXPECT_THAT(std::string(status.message()), HasSubstr("rank 1: output is null"));
  EXPECT_THAT(std::string(CheckAllToAllBuffers(*layout, 2, buffers).message()),
              HasSubstr("outside"));
}

TEST(CheckAllToAllBuffersTest, ARankWithoutHeadsMayPassANullOutput) {
  const std::vector<int64_t> counts = {3, 4};
  const absl::StatusOr<AllToAllLayout> layout = ComputeAllToAllLayout(
      MakeShape(1, 2, 8, counts, AllToAllDirection::kSeqToHeads, DataType::kBFloat16, {2, 0}), 2);
  ASSERT_TRUE(layout.ok()) << layout.status();
  int dummy = 0;
  RankBuffers buffers;
  buffers.input = &dummy;
  EXPECT_TRUE(CheckAllToAllBuffers(*layout, 1, buffers).ok());
  EXPECT_FALSE(CheckAllToAllBuffers(*layout, 0, buffers).ok());
}

TEST(CheckAllToAllBuffersTest, AnInputThatOverlapsTheOutputIsInvalid) {
  const std::vector<int64_t> counts = {2, 2};
  const absl::StatusOr<AllToAllLayout> layout =
      ComputeAllToAllLayout(MakeShape(1, 2, 8, counts), 2);
  ASSERT_TRUE(layout.ok()) << layout.status();
  char memory[1024];
  RankBuffers buffers;
  buffers.output = memory;
  buffers.input = memory + 16;
  const absl::Status status = CheckAllToAllBuffers(*layout, 0, buffers);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("no in-place form"));
  buffers.input = memory + layout->OutputBytes(0);
  EXPECT_TRUE(CheckAllToAllBuffers(*layout, 0, buffers).ok());
}

// A layout of three tensors of 2 x 2 tokens x 2 heads x 8 bf16 elements (64 bytes each way per
// rank), and rank 0's buffers for it: each tensor's input and output 64 bytes apart in `memory`.
class ThreeTensorBuffersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    AllToAllShape shape = MakeShape(1, 2, 8, counts_);
    shape.tensors = 3;
    absl::StatusOr<AllToAllLayout> layout = ComputeAllToAllLayout(shape, 2);
    ASSERT_TRUE(layout.ok()) << layout.status();
    layout_ = *layout;
    ASSERT_EQ(layout_.tensors, 3);
    ASSERT_EQ(layout_.InputBytes(0), 64);
    ASSERT_EQ(layout_.OutputBytes(0), 64);
    buffers_.input = memory_;
    buffers_.output = memory_ + 64;
    for (int tensor = 1; tensor < 3; ++tensor) {
      buffers_.more_inputs[tensor - 1] = memory_ + 128 * tensor;
      buffers_.more_outputs[tensor - 1] = memory_ + 128 * tensor + 64;
    }
  }

  // CheckAllToAllBuffers of rank 0's buffers; expects InvalidArgument saying `what` unless
  // `what` is null (then OK).
  void Expect(const char* what) {
    const absl::Status status = CheckAllToAllBuffers(layout_, 0, buffers_);
    if (what == nullptr) {
      EXPECT_TRUE(status.ok()) << status;
      return;
    }
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr(what));
  }

  const std::vector<int64_t> counts_ = {2, 2};
  AllToAllLayout layout_;
  char memory_[1024] = {};
  RankBuffers buffers_;
};

TEST_F(ThreeTensorBuffersTest, SeparateBuffersAreValidAndInputsMayBeShared) {
  Expect(nullptr);
  // Inputs are only read: two tensors may send the same input.
  buffers_.more_inputs[1] = buffers_.input;
  Expect(nullptr);
}

TEST_F(ThreeTensorBuffersTest, NamesTheNullPointerOfEachTensor) {
  buffers_.more_inputs[1] = nullptr;
  Expect("rank 0: more_inputs[1] is null but the input holds 64 bytes");
  buffers_.more_inputs[1] = memory_ + 256;
  buffers_.more_outputs[0] = nullptr;
  Expect("rank 0: more_outputs[0] is null but the output holds 64 bytes");
}

TEST_F(ThreeTensorBuffersTest, ATensorsInputThatOverlapsItsOwnOutputIsInvalid) {
  buffers_.more_inputs[0] = memory_ + 128 + 64 + 8;
  Expect("the more_inputs[0] (64 bytes) overlaps the more_outputs[0]");
}

TEST_F(ThreeTensorBuffersTest, AnInputThatOverlapsAnotherTensorsOutputIsInvalid) {
  buffers_.more_inputs[1] = memory_ + 64 + 32;  // Inside tensor 0's output.
  Expect("the more_inputs[1] overlaps the output of another tensor");
  buffers_.more_inputs[1] = memory_ + 256;
  buffers_.input = memory_ + 128 + 64;  // Tensor 1's output.
  Expect("the input overlaps the more_outputs[0] of another tensor");
}

TEST_F(ThreeTensorBuffersTest, OutputsThatOverlapAreInvalid) {
  buffers_.more_inputs[1] = memory_ + 512;
  buffers_.more_outputs[1] = memory_ + 128 + 64 + 16;
  Expect("the more_outputs[0] overlaps the more_outputs[1] of another tensor");
  buffers_.more_outputs[1] = buffers_.output;
  Expect("the output overlaps the more_outputs[1] of another tensor");
}

TEST_F(ThreeTensorBuffersTest, PointersPastTheTensorCountMustBeNull) {
  buffers_.more_outputs[2] = memory_ + 512;
  Expect("more_inputs[2] or more_outputs[2] is set, but the call moves 3 tensor(s)");
  // A one-tensor call (the AllGather's, or an all-to-all with tensors = 1) with more set.
  const absl::StatusOr<AllToAllLayout> single =
      ComputeAllToAllLayout(MakeShape(1, 2, 8, counts_), 2);
  ASSERT_TRUE(single.ok()) << single.status();
  buffers_.more_outputs[2] = nullptr;
  const absl::Status status = CheckAllToAllBuffers(*single, 0, buffers_);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("more_inputs[0] or more_outputs[0] is set"));
}

}  // namespace
}  // namespace ltx
