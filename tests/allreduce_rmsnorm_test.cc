// GPU tests of the AllReduce with the fused residual-add + RMSNorm epilogue, in both call styles
// and captured into CUDA graphs: bf16, fp16 and fp32; rows that fill a warp, rows shorter than
// a warp and odd ones; no rows; the residual updated in place; buffers off 16-byte alignment;
// several block counts; ranks that disagree on eps; bad buffers. Random inputs per rank and
// per call (the residual and the weight the same on every rank, as a tensor-parallel layer has
// them), outputs poisoned before every call, every rank's residual_out and output compared bit
// for bit with the host reference (tools/testing/reduce_reference.h), the inputs, the residual
// (unless updated in place) and the bytes past each output checked unchanged
// (tools/testing/rmsnorm_harness.h). The ranks come from the layout switch
// (tools/testing/test_ranks.h).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ltx/runtime.h"
#include "ltx/status_macros.h"
#include "tools/testing/gpu_fixture.h"
#include "tools/testing/rank_threads.h"
#include "tools/testing/rmsnorm_harness.h"
#include "tools/testing/test_ranks.h"

namespace ltx {
namespace {

using ::testing::HasSubstr;

// Bytes of each buffer of each rank: enough for 64 rows of 8192 fp32 elements.
constexpr int64_t kCapacity = int64_t{2} << 20;

class AllReduceRmsNormTest : public ::testing::Test {
 protected:
  void SetUp() override {
    LTX_REQUIRE_RANKS(2);
    RuntimeOptions options;
    options.devices = TestRankDevices(2);
    absl::StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Create(OnPeerStores(options));
    ASSERT_TRUE(runtime.ok()) << runtime.status();
    runtime_ = std::move(*runtime);
    absl::StatusOr<std::unique_ptr<RmsNormHarness>> harness =
        RmsNormHarness::Create(runtime_->devices(), kCapacity, /*seed=*/77);
    ASSERT_TRUE(harness.ok()) << harness.status();
    harness_ = std::move(*harness);
  }

  // Enqueues the prepared case in `style` and waits for it.
  absl::Status Run(const RmsNormCase& c, CallStyle style, const CallOptions& call = {}) {
    const std::vector<RmsNormBuffers> buffers = harness_->AllBuffers();
    if (style == CallStyle::kCoordinated) {
      return runtime_->AllReduceRmsNormAndWait(c.shape, buffers, kTestWait, call);
    }
    LTX_RETURN_IF_ERROR(RunOnRankThreads(runtime_->world_size(), [&](int rank) {
      return runtime_->AllReduceRmsNormRank(rank, c.shape, buffers[rank], call);
    }));
    return runtime_->Synchronize(kTestWait);
  }

  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<RmsNormHarness> harness_;
};

RmsNormCase Case(DataType dtype, int64_t rows, int64_t hidden, bool residual_in_place = false) {
  RmsNormCase c;
  c.shape.dtype = dtype;
  c.shape.rows = rows;
  c.shape.hidden = hidden;
  c.shape.eps = 1e-5f;
  c.residual_in_place = residual_in_place;
  return c;
}

TEST_F(AllReduceRmsNormTest, EveryDtypeAndRowShapeGivesTheReferenceBits) {
  for (DataType dtype : {DataType::kBFloat16, DataType::kFloat16, DataType::kFloat32}) {
    for (const auto& [rows, hidden] : std::vector<std::pair<int64_t, int64_t>>{
             {1, 4096}, {7, 100}, {33, 31}, {2, 1}, {64, 8192}, {0, 64}}) {
      for (bool in_place : {false, true}) {
        for (CallStyle style : {CallStyle::kCoordinated, CallStyle::kPerRankThreads}) {
          const RmsNormCase c = Case(dtype, rows, hidden, in_place);
          ASSERT_TRUE(harness_->Prepare(c).ok());
          const absl::Status status = Run(c, style);
          ASSERT_TRUE(status.ok()) << c.ToString() << ": " << status;
          const absl::Status verified = harness_->Verify();
          EXPECT_TRUE(verified.ok()) << c.ToString() << ": " << verified;
        }
      }
    }
  }
}

// Buffers off 16-byte alignment take the kernel's element path, rows of whole 16-byte units
// aligned its vector path; both give the reference's bits.
TEST_F(AllReduceRmsNormTest, MisalignedBuffersGiveTheSameBits) {
  for (DataType dtype : {DataType::kBFloat16, DataType::kFloat16, DataType::kFloat32}) {
    for (CallStyle style : {CallStyle::kCoordinated, CallStyle::kPerRankThreads}) {
      RmsNormCase c = Case(dtype, 5, 1000, /*residual_in_place=*/style == CallStyle::kCoordinated);
      c.offset = 1;
      ASSERT_TRUE(harness_->Prepare(c).ok());
      ASSERT_TRUE(Run(c, style).ok()) << c.ToString();
      const absl::Status verified = harness_->Verify();
      EXPECT_TRUE(verified.ok()) << c.ToString() << ": " << verified;
    }
  }
}

TEST_F(AllReduceRmsNormTest, EveryBlockCountGivesTheSameBits) {
  const RmsNormCase c = Case(DataType::kBFloat16, 45, 1000);
  for (int blocks : {1, 2, 3, 7, 0}) {
    CallOptions call;
    call.blocks = blocks;
    ASSERT_TRUE(harness_->Prepare(c).ok());
    ASSERT_TRUE(Run(c, CallStyle::kPerRankThreads, call).ok());
    const absl::Status verified = harness_->Verify();
    EXPECT_TRUE(verified.ok()) << blocks << " blocks: " << verified;
  }
}

TEST_F(AllReduceRmsNormTest, CapturedRankCallsReplayWithNewData) {
  const RmsNormCase c = Case(DataType::kBFloat16, 16, 2048);
  ASSERT_TRUE(harness_->Prepare(c).ok());
  const std::vector<RmsNormBuffers> buffers = harness_->AllBuffers();
  CapturedRankCalls graphs;
  ASSERT_TRUE(graphs
                  .Capture(runtime_->devices(), harness_->Streams(),
                           [&](int rank) {
                             return runtime_->AllReduceRmsNormRank(rank, c.shape, buffers[rank]);
                           })
                  .ok());
  for (int replay = 0; replay < 4; ++replay) {
    ASSERT_TRUE(harness_->Prepare(c).ok());  // The same buffers, new data.
    ASSERT_TRUE(graphs.Replay(runtime_->devices(), harness_->Streams()).ok());
    const absl::Status verified = harness_->Verify();
    EXPECT_TRUE(verified.ok()) << "replay " << replay << ": " << verified;
  }
  // Eager calls and replays share the op numbers.
  ASSERT_TRUE(harness_->Prepare(c).ok());
  ASSERT_TRUE(Run(c, CallStyle::kCoordinated).ok());
  EXPECT_TRUE(harness_->Verify().ok());
}

TEST_F(AllReduceRmsNormTest, RanksThatDisagreeOnEpsFailAndResetRecovers) {
  const RmsNormCase c = Case(DataType::kFloat16, 4, 256);
  ASSERT_TRUE(harness_->Prepare(c).ok());
  const std::vector<RmsNormBuffers> buffers = harness_->AllBuffers();
  const absl::Status launched = RunOnRankThreads(runtime_->world_size(), [&](int rank) {
    AllReduceRmsNormShape shape = c.shape;
    if (rank == 0) shape.eps = 1e-6f;
    return runtime_->AllReduceRmsNormRank(rank, shape, buffers[rank]);
  });
  EXPECT_TRUE(LaunchedOrRefusedForTheDisagreement(launched)) << launched;
  const absl::Status status = runtime_->Synchronize(kTestWait);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("all_reduce_rmsnorm #1"));
  ASSERT_TRUE(runtime_->Reset(kTestWait).ok());
  ASSERT_TRUE(harness_->Prepare(c).ok());
  ASSERT_TRUE(Run(c, CallStyle::kPerRankThreads).ok());
  EXPECT_TRUE(harness_->Verify().ok());
}

TEST_F(AllReduceRmsNormTest, BadBuffersAreRefusedBeforeAnyLaunch) {
  const RmsNormCase c = Case(DataType::kBFloat16, 4, 128);
  ASSERT_TRUE(harness_->Prepare(c).ok());
  std::vector<RmsNormBuffers> buffers = harness_->AllBuffers();
  buffers[1].output = const_cast<void*>(buffers[1].input);
  absl::Status status = runtime_->AllReduceRmsNorm(c.shape, buffers).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("rank 1: input overlaps output"));
  buffers = harness_->AllBuffers();
  buffers[0].weight = nullptr;
  status = runtime_->AllReduceRmsNorm(c.shape, buffers).status();
  EXPECT_THAT(std::string(status.message()), HasSubstr("rank 0: weight is null"));
  AllReduceRmsNormShape bad = c.shape;
  bad.eps = 0.0f;
  status = runtime_->AllReduceRmsNorm(bad, harness_->AllBuffers()).status();
  EXPECT_THAT(std::string(status.message()), HasSubstr("eps must be positive"));
  EXPECT_TRUE(runtime_->status().ok()) << runtime_->status();
  // A host pointer as the weight: refused, and nothing launched anywhere.
  std::vector<uint8_t> host(c.shape.hidden * 2);
  buffers = harness_->AllBuffers();
  buffers[0].weight = host.data();
  status = runtime_->AllReduceRmsNorm(c.shape, buffers).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("weight"));
  EXPECT_TRUE(runtime_->status().ok()) << runtime_->status();
  // A per-rank call of a rank outside the world: refused before the rank indexes anything.
  for (int rank : {-1, runtime_->world_size(), kMaxWorldSize}) {
    status = runtime_->AllReduceRmsNormRank(rank, c.shape, harness_->AllBuffers()[0]);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr("outside"));
  }
  EXPECT_TRUE(runtime_->status().ok()) << runtime_->status();
  ASSERT_TRUE(harness_->Prepare(c).ok());
  ASSERT_TRUE(Run(c, CallStyle::kCoordinated).ok());
  EXPECT_TRUE(harness_->Verify().ok());
}

}  // namespace
}  // namespace ltx
