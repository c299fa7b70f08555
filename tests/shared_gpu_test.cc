// Ranks that share a GPU (kernels/PROTOCOL.md, "Ranks that share a GPU"): eight ranks on one GPU
// run every protocol the Runtime serves them in both call styles (the copy engines are refused
// where their streams outnumber the GPU's hardware queues), with the default block budget, after compute that
// holds most SMs, with budgets and early start that would not fit if the Runtime did not cap
// them; and stream choices that would serialise co-located ranks are refused. (busy_gpu_test
// runs one block per rank beside compute on whatever rank layout the tests are given.)
#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ltx/runtime.h"
#include "tests/busy_kernel.h"
#include "tools/testing/alltoall_harness.h"
#include "tools/testing/gpu_fixture.h"
#include "tools/testing/rank_threads.h"
#include "tools/testing/test_ranks.h"
#include "tools/testing/visible_gpus.h"

namespace ltx {
namespace {

using ::testing::HasSubstr;

constexpr int kRanks = 8;
constexpr absl::Duration kBusyFor = absl::Seconds(2);

// kRanks ranks on GPU 0: these tests are about ranks that share one GPU, whatever the layout
// switch says.
std::vector<int> RanksOnGpuZero(int ranks = kRanks) { return std::vector<int>(ranks, 0); }

// Uneven counts with a zero, one per rank.
AllGatherCase UnevenGather(int world, int64_t hidden) {
  AllGatherCase c;
  c.dtype = DataType::kBFloat16;
  c.batch = 2;
  c.hidden = hidden;
  for (int rank = 0; rank < world; ++rank) c.token_counts.push_back(rank == 2 ? 0 : 3 + rank);
  return c;
}

// An all-to-all over `world` ranks with uneven head and token splits, zeros inside.
AllToAllCase UnevenAllToAll(int world, AllToAllDirection direction) {
  AllToAllCase c;
  c.dtype = DataType::kFloat32;
  c.head_dim = 24;
  c.heads = 0;
  c.direction = direction;
  for (int rank = 0; rank < world; ++rank) {
    c.head_counts.push_back(rank == world / 2 ? 0 : 1 + rank % 3);
    c.token_counts.push_back(rank == 1 ? 0 : 5 + 2 * rank);
    c.heads += c.head_counts.back();
  }
  return c;
}

// An SM count of GPU 0.
int SmCount() {
  int sms = 0;
  EXPECT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  return sms;
}

// A stream of GPU 0 with a kernel holding all SMs but `free_sms` for kBusyFor.
cudaStream_t HoldSms(int free_sms) {
  cudaStream_t stream = nullptr;
  EXPECT_EQ(cudaSetDevice(0), cudaSuccess);
  EXPECT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  EXPECT_EQ(LaunchBusySms(absl::ToInt64Nanoseconds(kBusyFor), SmCount() - free_sms, stream),
            cudaSuccess);
  absl::SleepFor(absl::Milliseconds(50));  // The busy blocks are resident by now.
  return stream;
}

void Release(cudaStream_t busy) {
  EXPECT_EQ(cudaStreamSynchronize(busy), cudaSuccess);
  cudaStreamDestroy(busy);
}

// Whether `status` is the refusal of the copy engines for eight ranks on one GPU (more copy
// streams than hardware queues), after which a coordinated call left the Runtime usable and a
// per-rank call stopped it (a rank cannot know that its peers refused alike); then makes it
// usable again.
void ExpectCopyEnginesRefused(const absl::Status& status, Runtime& runtime, CallStyle style) {
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("hardware queues"));
  if (style == CallStyle::kCoordinated) {
    EXPECT_TRUE(runtime.status().ok()) << runtime.status();
  } else {
    EXPECT_EQ(runtime.status().code(), absl::StatusCode::kUnimplemented) << runtime.status();
    const absl::Status reset = runtime.Reset(kTestWait);
    EXPECT_TRUE(reset.ok()) << reset;
  }
}

// Every protocol the Runtime serves for eight ranks on one GPU; the copy engines, where it
// refuses them (CopyEnginesFitQueues), are refused before anything is launched.
TEST(SharedGpuTest, EightRanksGatherOnEveryProtocolInBothStyles) {
  if (VisibleGpuCount() == 0) LTX_SKIP_GPU_TEST("needs a GPU, none is visible");
  GpuFixture f = MakeGpuFixture(RanksOnGpuZero());
  ASSERT_NE(f.runtime, nullptr);
  const bool copy_engines = CopyEnginesServe(RanksOnGpuZero());
  for (Protocol protocol : {Protocol::kOneTrip, Protocol::kDirect, Protocol::kCopyEngine}) {
    for (CallStyle style : {CallStyle::kCoordinated, CallStyle::kPerRankThreads}) {
      for (int64_t hidden : {int64_t{8}, int64_t{4096}}) {
        CallOptions call;
        call.protocol = protocol;
        const AllGatherCase c = UnevenGather(kRanks, hidden);
        if (protocol == Protocol::kCopyEngine && !copy_engines) {
          ASSERT_TRUE(f.harness->Prepare(c).ok());
          ExpectCopyEnginesRefused(
              style == CallStyle::kCoordinated
                  ? f.runtime->AllGather(c.Shape(), f.harness->AllBuffers(), call).status()
                  : f.runtime->AllGatherRank(0, c.Shape(), f.harness->Buffers(0), call),
              *f.runtime, style);
          continue;
        }
        const absl::Status status = RunAndVerify(f, c, style, call);
        EXPECT_TRUE(status.ok()) << ProtocolName(protocol) << " " << c.ToString() << ": "
                                 << status;
      }
    }
  }
}

TEST(SharedGpuTest, EightRanksAllToAllOnEveryProtocolWithRoundTrips) {
  if (VisibleGpuCount() == 0) LTX_SKIP_GPU_TEST("needs a GPU, none is visible");
  RuntimeOptions options;
  options.devices = RanksOnGpuZero();
  absl::StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Create(options);
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  absl::StatusOr<std::unique_ptr<AllToAllHarness>> harness =
      AllToAllHarness::Create(options.devices, int64_t{4} << 20, int64_t{4} << 20, /*seed=*/88);
  ASSERT_TRUE(harness.ok()) << harness.status();
  const bool copy_engines = CopyEnginesServe(options.devices);
  for (Protocol protocol : {Protocol::kOneTrip, Protocol::kDirect, Protocol::kCopyEngine}) {
    for (AllToAllDirection direction :
         {AllToAllDirection::kSeqToHeads, AllToAllDirection::kHeadsToSeq}) {
      CallOptions call;
      call.protocol = protocol;
      const AllToAllCase c = UnevenAllToAll(kRanks, direction);
      const absl::Status prepared = (*harness)->Prepare(c);
      ASSERT_TRUE(prepared.ok()) << c.ToString() << ": " << prepared;
      if (protocol == Protocol::kCopyEngine && !copy_engines) {
        ExpectCopyEnginesRefused(
            (*runtime)->AllToAll(c.Shape(), (*harness)->AllBuffers(), call).status(), **runtime,
            CallStyle::kCoordinated);
        continue;
      }
      absl::Status status = (*runtime)->AllToAllAndWait(c.Shape(), (*harness)->AllBuffers(),
                                                        kTestWait, call);
      if (status.ok()) status = (*harness)->Verify();
      EXPECT_TRUE(status.ok()) << ProtocolName(protocol) << " " << c.ToString() << ": " << status;
      // The way back, from each rank's own thread.
      ASSERT_TRUE((*harness)->PrepareInverse().ok());
      AllToAllShape inverse = c.Shape();
      inverse.direction = direction == AllToAllDirection::kSeqToHeads
                              ? AllToAllDirection::kHeadsToSeq
                              : AllToAllDirection::kSeqToHeads;
      status = RunOnRankThreads(kRanks, [&](int rank) {
        return (*runtime)->AllToAllRank(rank, inverse, (*harness)->Buffers(rank), call);
      });
      if (status.ok()) status = (*runtime)->Synchronize(kTestWait);
      if (status.ok()) status = (*harness)->Verify();
      EXPECT_TRUE(status.ok()) << ProtocolName(protocol) << " round trip of " << c.ToString()
                               << ": " << status;
    }
  }
}

// Every rank's grid at the default budget cannot fit on the few SMs the compute kernel leaves:
// the ops finish once it ends, well within the timeout, byte-exact.
TEST(SharedGpuTest, EightRanksFinishAfterComputeHoldingMostSms) {
  if (VisibleGpuCount() == 0) LTX_SKIP_GPU_TEST("needs a GPU, none is visible");
  GpuFixture f = MakeGpuFixture(RanksOnGpuZero());
  ASSERT_NE(f.runtime, nullptr);
  for (Protocol protocol : {Protocol::kOneTrip, Protocol::kDirect}) {
    const cudaStream_t busy = HoldSms(/*free_sms=*/2);
    CallOptions call;
    call.protocol = protocol;
    const AllGatherCase c = UnevenGather(kRanks, protocol == Protocol::kDirect ? 65536 : 1024);
    const absl::Status status = RunAndVerify(f, c, CallStyle::kPerRankThreads, call);
    EXPECT_TRUE(status.ok()) << ProtocolName(protocol) << ": " << status;
    Release(busy);
  }
}

// A budget of 1000 blocks per rank and early start: eight such grids could never be resident
// together on one GPU, so the Runtime caps the budget and starts nothing early. Many calls
// without a host synchronisation between them, each checked.
TEST(SharedGpuTest, OversizedBudgetAndEarlyStartAreMadeSafe) {
  if (VisibleGpuCount() == 0) LTX_SKIP_GPU_TEST("needs a GPU, none is visible");
  RuntimeOptions options;
  options.max_blocks = 1000;
  options.timeout = absl::Seconds(5);
  GpuFixture f = MakeGpuFixture(RanksOnGpuZero(), options);
  ASSERT_NE(f.runtime, nullptr);
  for (Protocol protocol : {Protocol::kOneTrip, Protocol::kDirect}) {
    CallOptions call;
    call.protocol = protocol;
    call.blocks = 1000;
    call.early_start = true;
    const AllGatherCase c = UnevenGather(kRanks, protocol == Protocol::kDirect ? 65536 : 2048);
    for (int round = 0; round < 5; ++round) {
      const absl::Status status = RunAndVerify(f, c, CallStyle::kPerRankThreads, call);
      ASSERT_TRUE(status.ok()) << ProtocolName(protocol) << " round " << round << ": " << status;
    }
  }
}

TEST(SharedGpuTest, StreamsThatSerialiseCoLocatedRanksAreRefused) {
  if (VisibleGpuCount() == 0) LTX_SKIP_GPU_TEST("needs a GPU, none is visible");
  GpuFixture f = MakeGpuFixture(RanksOnGpuZero(4));
  ASSERT_NE(f.runtime, nullptr);
  const AllGatherCase c = UnevenGather(4, 256);
  ASSERT_TRUE(f.harness->Prepare(c).ok());

  // Coordinated: refused before anything is launched; the Runtime stays usable.
  std::vector<RankBuffers> buffers = f.harness->AllBuffers();
  buffers[2].stream = buffers[1].stream;
  absl::Status status = f.runtime->AllGatherAndWait(c.Shape(), buffers, kTestWait);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(), HasSubstr("ranks 1 and 2 share GPU 0 and pass the same stream"));
  buffers = f.harness->AllBuffers();
  buffers[3].stream = nullptr;
  status = f.runtime->AllGatherAndWait(c.Shape(), buffers, kTestWait);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(), HasSubstr("rank 3 shares GPU 0 with other ranks"));
  buffers[3].stream = cudaStreamLegacy;
  EXPECT_EQ(f.runtime->AllGather(c.Shape(), buffers).status().code(),
            absl::StatusCode::kInvalidArgument);
  status = RunAndVerify(f, c, CallStyle::kCoordinated);
  EXPECT_TRUE(status.ok()) << status;
  // Streams may change hands between calls.
  buffers = f.harness->AllBuffers();
  std::swap(buffers[0].stream, buffers[1].stream);
  ASSERT_TRUE(f.harness->Prepare(c).ok());
  status = f.runtime->AllGatherAndWait(c.Shape(), buffers, kTestWait);
  EXPECT_TRUE(status.ok()) << status;
  ASSERT_TRUE(f.runtime->Synchronize(kTestWait).ok());
  EXPECT_TRUE(f.harness->Verify().ok());

  // Per-rank: the peers may have launched, so a refused call stops the Runtime until Reset.
  status = f.runtime->AllGatherRank(0, c.Shape(), {buffers[0].input, buffers[0].output, nullptr});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_EQ(f.runtime->status().code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(f.runtime->Reset(kTestWait).ok());
  status = RunAndVerify(f, c, CallStyle::kPerRankThreads);
  EXPECT_TRUE(status.ok()) << status;

  // Per-rank, ranks 0 and 1 of one op on one stream: whichever calls second is refused, and the
  // first one's kernel, which waits for it, is abandoned at once rather than at the timeout.
  ASSERT_TRUE(f.harness->Prepare(c).ok());
  buffers = f.harness->AllBuffers();
  buffers[1].stream = buffers[0].stream;
  std::vector<absl::Status> results(4);
  status = RunOnRankThreads(4, [&](int rank) {
    results[rank] = f.runtime->AllGatherRank(rank, c.Shape(), buffers[rank]);
    return absl::OkStatus();
  });
  const int refused = (results[0].ok() ? 0 : 1) + (results[1].ok() ? 0 : 1);
  EXPECT_EQ(refused, 1) << results[0] << "; " << results[1];
  for (int rank : {0, 1}) {
    if (!results[rank].ok()) {
      EXPECT_THAT(results[rank].message(),
                  HasSubstr("ranks 0 and 1 share GPU 0 and pass the same stream"));
    }
  }
  const absl::Time start = absl::Now();
  status = f.runtime->Synchronize(kTestWait);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_LT(absl::Now() - start, absl::Seconds(5)) << "the waiting kernel ran to its timeout";
  ASSERT_TRUE(f.runtime->Reset(kTestWait).ok());
  status = RunAndVerify(f, c, CallStyle::kPerRankThreads);
  EXPECT_TRUE(status.ok()) << status;
}

}  // namespace
}  // namespace ltx
