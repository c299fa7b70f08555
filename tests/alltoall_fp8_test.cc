// GPU tests of the Ulysses all-to-all with FP8 on the wire (AllToAllShape::wire = kFp8E4M3):
// random bytes through the all-to-all harness (guarded, poisoned outputs), every rank's output
// compared bit for bit with the host reference (tools/testing/alltoall_harness.h: each head
// vector from a peer decoded from its codes and scale, the rank's own piece exact). bf16 and
// fp16, both directions, head sizes from the least (8) up and no multiple of 4, uneven and zero
// token counts, uneven head splits with a rank without heads and with the largest group (256
// heads), batch > 1, misaligned inputs, outputs or both (the element paths), round trips, both
// call styles; a Stop between the exchange and the decode; what the wire refuses. On the rank
// layout of the environment (ranks may share GPUs).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "ltx/runtime.h"
#include "tools/testing/alltoall_harness.h"
#include "tools/testing/gpu_fixture.h"
#include "tools/testing/rank_threads.h"
#include "tools/testing/split_rank_calls.h"
#include "tools/testing/test_ranks.h"
#include "tools/testing/token_counts.h"

namespace ltx {
namespace {

constexpr int64_t kCapacity = int64_t{8} << 20;

// A Runtime and an all-to-all harness on the rank layout of the environment.
class AllToAllFp8Fixture : public ::testing::Test {
 protected:
  void SetUp() override {
    LTX_REQUIRE_RANKS(2);
    const std::vector<int> devices = TestRankDevices(2);
    RuntimeOptions options;
    options.devices = devices;
    absl::StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Create(options);
    ASSERT_TRUE(runtime.ok()) << runtime.status();
    runtime_ = std::move(*runtime);
    absl::StatusOr<std::unique_ptr<AllToAllHarness>> harness =
        AllToAllHarness::Create(devices, kCapacity, kCapacity, /*seed=*/20261202);
    ASSERT_TRUE(harness.ok()) << harness.status();
    harness_ = std::move(*harness);
  }

  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<AllToAllHarness> harness_;
};

class AllToAllFp8Test : public AllToAllFp8Fixture,
                        public ::testing::WithParamInterface<CallStyle> {
 protected:
  int world() const { return runtime_->world_size(); }

  // Runs the harness's current case in the test's call style, waits, and verifies it.
  absl::Status RunCurrent() {
    const AllToAllShape shape = harness_->current_case().Shape();
    absl::Status status;
    if (GetParam() == CallStyle::kPerRankThreads) {
      status = RunOnRankThreads(world(), [&](int rank) {
        return runtime_->AllToAllRank(rank, shape, harness_->Buffers(rank));
      });
      if (status.ok()) status = runtime_->Synchronize(kTestWait);
    } else {
      status = runtime_->AllToAllAndWait(shape, harness_->AllBuffers(), kTestWait);
    }
    if (status.ok()) status = harness_->Verify();
    return status;
  }

  // Prepares `c` (FP8 on the wire) and runs it.
  absl::Status Run(AllToAllCase c) {
    c.wire = WireFormat::kFp8E4M3;
    const absl::Status prepared = harness_->Prepare(c);
    if (!prepared.ok()) return prepared;
    return RunCurrent();
  }
};

TEST_P(AllToAllFp8Test, EveryDtypeDirectionAndHeadSize) {
  for (DataType dtype : {DataType::kBFloat16, DataType::kFloat16}) {
    for (AllToAllDirection direction :
         {AllToAllDirection::kSeqToHeads, AllToAllDirection::kHeadsToSeq}) {
      // 10: vectors that are no multiple of 4 elements (the encode's element path, the decode's
      // units across vectors).
      for (int64_t head_dim : {8, 10, 12, 64, 128, 200}) {
        AllToAllCase c;
        c.dtype = dtype;
        c.direction = direction;
        c.heads = 2 * world();
        c.head_dim = head_dim;
        c.token_counts = UnevenCounts(world(), 5);
        const absl::Status status = Run(c);
        ASSERT_TRUE(status.ok()) << c.ToString() << ": " << status;
      }
    }
  }
}

TEST_P(AllToAllFp8Test, UnevenAndZeroCountsSplitsBatchesAndMisalignment) {
  for (AllToAllDirection direction :
       {AllToAllDirection::kSeqToHeads, AllToAllDirection::kHeadsToSeq}) {
    AllToAllCase c;
    c.direction = direction;
    c.heads = 3 * world();
    c.head_dim = 64;
    c.batch = 2;
    for (const std::vector<int64_t>& counts : ZeroTokenPatterns(world(), 3, 17)) {
      c.token_counts = counts;
      const absl::Status status = Run(c);
      ASSERT_TRUE(status.ok()) << c.ToString() << ": " << status;
    }
    // A rank without heads, one with many; misaligned by whole elements (the element paths).
    c.token_counts = UnevenCounts(world(), 7);
    c.head_counts.assign(world(), 3);
    c.head_counts[world() / 2] = 0;
    c.head_counts[0] = 6;
    for (const auto& [input, output] : {std::pair{2, 6}, std::pair{0, 2}, std::pair{6, 0}}) {
      c.input_misalignment = input;
      c.output_misalignment = output;
      const absl::Status status = Run(c);
      ASSERT_TRUE(status.ok()) << c.ToString() << ": " << status;
    }
  }
}

// A rank's group at the most heads a run carries (256 scales in the receiving warp's shared
// memory), beside a rank with few.
TEST_P(AllToAllFp8Test, TheLargestHeadGroup) {
  for (AllToAllDirection direction :
       {AllToAllDirection::kSeqToHeads, AllToAllDirection::kHeadsToSeq}) {
    AllToAllCase c;
    c.direction = direction;
    c.head_dim = 8;
    c.head_counts.assign(world(), 1);
    c.head_counts[world() - 1] = 256;
    c.heads = world() - 1 + 256;
    c.token_counts = UnevenCounts(world(), 3);
    const absl::Status status = Run(c);
    ASSERT_TRUE(status.ok()) << c.ToString() << ": " << status;
  }
}

// The way back moves the decoded head vectors again: their own reference, bit for bit.
TEST_P(AllToAllFp8Test, RoundTripsDecodeTwice) {
  AllToAllCase c;
  c.heads = 4 * world();
  c.head_dim = 128;
  c.token_counts = UnevenCounts(world(), 33);
  for (int round = 0; round < 3; ++round) {
    ASSERT_TRUE(Run(c).ok());
    ASSERT_TRUE(harness_->PrepareInverse().ok());
    const absl::Status back = RunCurrent();
    ASSERT_TRUE(back.ok()) << "round " << round << ": " << back;
  }
}

INSTANTIATE_TEST_SUITE_P(CallStyles, AllToAllFp8Test,
                         ::testing::Values(CallStyle::kCoordinated, CallStyle::kPerRankThreads));

// A Stop of the Runtime after an op's exchange, before its decode: the op passed its exit
// barrier, so every run is in and the decode still runs; the output is whole (no codes left).
// Each rank's call is captured and split at the decode kernel, so that the Stop lands in
// between.
TEST_F(AllToAllFp8Fixture, AStopAfterTheExchangeStillDecodes) {
  const int world = runtime_->world_size();
  AllToAllCase c;
  c.heads = 2 * world;
  c.head_dim = 64;
  c.token_counts = UnevenCounts(world, 5);
  c.wire = WireFormat::kFp8E4M3;
  ASSERT_TRUE(harness_->Prepare(c).ok());
  const AllToAllShape shape = c.Shape();
  const std::vector<RankBuffers> buffers = harness_->AllBuffers();
  SplitRankCalls split;
  const absl::Status captured =
      split.Capture(runtime_->devices(), buffers, "AllToAllFp8DecodeKernel", [&](int rank) {
        return runtime_->AllToAllRank(rank, shape, buffers[rank]);
      });
  ASSERT_TRUE(captured.ok()) << captured;
  ASSERT_TRUE(split.LaunchBefore().ok());
  ASSERT_TRUE(harness_->SynchronizeStreams().ok());
  EXPECT_EQ(runtime_->Stop(absl::CancelledError("stopped by the test")).code(),
            absl::StatusCode::kCancelled);
  for (int device : runtime_->devices()) {  // The abort flags are set before the decode starts.
    ASSERT_EQ(cudaSetDevice(device), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
  ASSERT_TRUE(split.LaunchKernel().ok());
  ASSERT_TRUE(harness_->SynchronizeStreams().ok());
  const absl::Status verified = harness_->Verify();
  EXPECT_TRUE(verified.ok()) << verified;
  ASSERT_TRUE(runtime_->Reset(kTestWait).ok());
  ASSERT_TRUE(harness_->Prepare(c).ok());
  EXPECT_TRUE(runtime_->AllToAllAndWait(shape, harness_->AllBuffers(), kTestWait).ok());
  EXPECT_TRUE(harness_->Verify().ok());
}

// What the FP8 wire does not carry is refused before any launch, alike on every rank, and the
// Runtime stays usable: fp32, head vectors below 8 elements, the one-trip protocol.
TEST_F(AllToAllFp8Fixture, RefusesWhatTheWireCannotCarryAndStaysUsable) {
  const int world = runtime_->world_size();
  AllToAllCase c;
  c.heads = world;
  c.head_dim = 64;
  c.token_counts = UnevenCounts(world, 3);
  ASSERT_TRUE(harness_->Prepare(c).ok());
  AllToAllShape shape = c.Shape();
  shape.wire = WireFormat::kFp8E4M3;
  shape.dtype = DataType::kFloat32;
  EXPECT_EQ(runtime_->AllToAllAndWait(shape, harness_->AllBuffers(), kTestWait).code(),
            absl::StatusCode::kInvalidArgument);
  shape.dtype = DataType::kBFloat16;
  shape.head_dim = 4;
  EXPECT_EQ(runtime_->AllToAllAndWait(shape, harness_->AllBuffers(), kTestWait).code(),
            absl::StatusCode::kInvalidArgument);
  shape.head_dim = 64;
  CallOptions one_trip;
  one_trip.protocol = Protocol::kOneTrip;
  EXPECT_EQ(runtime_->AllToAllAndWait(shape, harness_->AllBuffers(), kTestWait, one_trip).code(),
            absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(runtime_->status().ok()) << runtime_->status();
  c.wire = WireFormat::kFp8E4M3;
  ASSERT_TRUE(harness_->Prepare(c).ok());
  EXPECT_TRUE(runtime_->AllToAllAndWait(c.Shape(), harness_->AllBuffers(), kTestWait).ok());
  EXPECT_TRUE(harness_->Verify().ok());
}

}  // namespace
}  // namespace ltx
