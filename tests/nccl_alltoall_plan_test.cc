// Tests of the NCCL side of the ltx_alltoall benchmark (tools/ltx_alltoall/nccl_alltoall.h): the
// plan of every rank (permute pieces and per-peer transfers) simulated on host memory, in the
// order the GPUs run it, gives every rank the output of the host reference, byte-exact, and
// every send matches its receive in size; where every piece is equal (even tokens and heads),
// EqualPieceBytes says so and one ncclAlltoAll's semantics over the plans gives it too.
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/alltoall/alltoall_plan.h"
#include "ltx/collectives/alltoall_layout.h"
#include "tools/ltx_alltoall/nccl_alltoall.h"
#include "tools/testing/alltoall_harness.h"

namespace ltx {
namespace {

// The permute on the host: every row of every piece, as the permute kernel copies it.
void Permute(const PermuteParams& params) {
  for (int i = 0; i < params.piece_count; ++i) {
    const Piece& piece = params.pieces[i];
    for (int64_t row = 0; row < piece.rows; ++row) {
      std::memcpy(
          static_cast<uint8_t*>(params.dst) + RowOffset(piece.dst, piece.rows_per_slice, row),
          static_cast<const uint8_t*>(params.src) + RowOffset(piece.src, piece.rows_per_slice, row),
          piece.run_bytes);
    }
  }
}

// The grouped send/recv on the host: rank r's send to p lands in p's receive from r.
void Transfer(const std::vector<NcclRankPlan>& plans) {
  const int world = static_cast<int>(plans.size());
  for (int r = 0; r < world; ++r) {
    for (int p = 0; p < world; ++p) {
      const tools::NcclPeerBytes& send = plans[r].peers[p];
      const tools::NcclPeerBytes& recv = plans[p].peers[r];
      ASSERT_EQ(send.send_bytes, recv.recv_bytes) << r << " -> " << p;
      if (send.send_bytes > 0) std::memcpy(recv.recv, send.send, send.send_bytes);
    }
  }
}

// One ncclAlltoAll per rank on the host, as NCCL defines it: rank r's piece p, at
// send + p * bytes, lands in rank p's receive at recv + r * bytes.
void TransferAsOneAlltoAll(const std::vector<NcclRankPlan>& plans, size_t bytes) {
  const int world = static_cast<int>(plans.size());
  for (int r = 0; r < world; ++r) {
    for (int p = 0; p < world; ++p) {
      std::memcpy(static_cast<uint8_t*>(plans[p].peers[0].recv) + r * bytes,
                  static_cast<const uint8_t*>(plans[r].peers[0].send) + p * bytes, bytes);
    }
  }
}

bool AllEqual(const std::vector<int64_t>& values) {
  for (int64_t value : values) {
    if (value != values[0]) return false;
  }
  return true;
}

void SimulateAndCompare(AllToAllDirection direction, const std::vector<int64_t>& counts,
                        int64_t heads, int64_t head_dim, std::mt19937* random,
                        const std::vector<int64_t>& head_counts = {}) {
  SCOPED_TRACE(testing::Message() << "direction " << static_cast<int>(direction) << " world "
                                  << counts.size() << " heads " << heads << " split "
                                  << head_counts.size());
  AllToAllShape shape;
  shape.dtype = DataType::kFloat16;
  shape.heads = heads;
  shape.head_dim = head_dim;
  shape.token_counts = counts;
  shape.direction = direction;
  shape.head_counts = head_counts;
  const int world = static_cast<int>(counts.size());
  const absl::StatusOr<AllToAllLayout> layout = ComputeAllToAllLayout(shape, world);
  ASSERT_TRUE(layout.ok()) << layout.status();
  std::vector<std::vector<uint8_t>> inputs(world), outputs(world), staging(world);
  std::vector<NcclRankPlan> plans;
  for (int r = 0; r < world; ++r) {
    inputs[r].resize(layout->InputBytes(r));
    for (uint8_t& byte : inputs[r]) byte = static_cast<uint8_t>((*random)());
    outputs[r].assign(layout->OutputBytes(r), 0xEE);
    staging[r].resize(NcclStagingBytes(*layout, r));
    RankBuffers buffers;
    buffers.input = inputs[r].data();
    buffers.output = outputs[r].data();
    plans.push_back(PlanNcclRank(*layout, r, buffers, staging[r].data()));
  }
  const bool equal = AllEqual(counts) && AllEqual(head_counts) && heads % world == 0;
  // One ncclAlltoAll serves the shape when every rank's pieces are equal, the same on every rank
  // (a rank with nothing to move has equal pieces of 0 bytes on its own).
  bool one_alltoall = EqualPieceBytes(plans[0].peers).value_or(0) > 0;
  for (int r = 0; r < world; ++r) {
    one_alltoall =
        one_alltoall && EqualPieceBytes(plans[r].peers) == EqualPieceBytes(plans[0].peers);
  }
  EXPECT_EQ(one_alltoall, equal);
  const bool permute_first = direction == AllToAllDirection::kSeqToHeads;
  if (permute_first) {
    for (const NcclRankPlan& plan : plans) Permute(plan.permute);
  }
  if (equal) {
    TransferAsOneAlltoAll(plans, *EqualPieceBytes(plans[0].peers));
  } else {
    Transfer(plans);
  }
  if (!permute_first) {
    for (const NcclRankPlan& plan : plans) Permute(plan.permute);
  }
  const std::vector<std::vector<uint8_t>> expected = AllToAllReference(*layout, inputs);
  for (int r = 0; r < world; ++r) EXPECT_EQ(outputs[r], expected[r]) << "rank " << r;
}

TEST(NcclAllToAllPlanTest, TransfersAndPermutesGiveTheReferenceOutput) {
  std::mt19937 random(3);
  for (AllToAllDirection direction :
       {AllToAllDirection::kSeqToHeads, AllToAllDirection::kHeadsToSeq}) {
    SimulateAndCompare(direction, {5}, 3, 4, &random);
    SimulateAndCompare(direction, {4, 4}, 4, 8, &random);
    SimulateAndCompare(direction, {6, 6, 6, 6}, 8, 5, &random);
    SimulateAndCompare(direction, {3, 3, 3, 3, 3, 3, 3, 3}, 16, 4, &random,
                       {2, 2, 2, 2, 2, 2, 2, 2});
    SimulateAndCompare(direction, {3, 0, 7, 1}, 8, 3, &random);
    SimulateAndCompare(direction, {2, 9, 0, 4, 1, 6, 3, 5}, 16, 5, &random);
    SimulateAndCompare(direction, {4, 3}, 5, 8, &random, {3, 2});
    SimulateAndCompare(direction, {3, 0, 7, 1}, 7, 3, &random, {2, 0, 4, 1});
    SimulateAndCompare(direction, {3, 5, 2}, 3, 4, &random, {0, 0, 3});
  }
}

}  // namespace
}  // namespace ltx
