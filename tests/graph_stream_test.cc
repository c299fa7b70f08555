// Embedding tests on real GPUs: per-rank calls captured into CUDA graphs and replayed with new
// data in the same buffers (every replay verified, both protocols), and calls on the kinds of
// streams servers use (legacy default, blocking, non-blocking) ordered with events.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ltx/cuda/cuda_status.h"
#include "ltx/runtime.h"
#include "tools/testing/allgather_harness.h"
#include "tools/testing/gpu_fixture.h"

namespace ltx {
namespace {

class GraphReplayTest : public ::testing::TestWithParam<Protocol> {};

TEST_P(GraphReplayTest, ThousandReplaysWithNewDataEveryOneVerified) {
  LTX_REQUIRE_RANKS(2);
  const int world = TestWorldSize(2);
  GpuFixture f = MakeGpuFixture(TestDevices(world), OnPeerStores());
  ASSERT_NE(f.runtime, nullptr);
  AllGatherCase c;
  c.dtype = DataType::kBFloat16;
  c.batch = 2;
  c.hidden = GetParam() == Protocol::kOneTrip ? 200 : 2048;
  for (int rank = 0; rank < world; ++rank) c.token_counts.push_back(rank == 1 ? 0 : 9 + rank);
  ASSERT_TRUE(f.harness->Prepare(c).ok());
  CallOptions call;
  call.protocol = GetParam();
  CapturedRankCalls graphs;
  const std::vector<RankBuffers> buffers = f.harness->AllBuffers();
  ASSERT_TRUE(graphs.CaptureAllGather(*f.runtime, c.Shape(), buffers, call).ok());
  for (int replay = 0; replay < 1000; ++replay) {
    ASSERT_TRUE(f.harness->RefreshInputs().ok());
    ASSERT_TRUE(graphs.Replay(f.runtime->devices(), buffers).ok());
    const absl::Status status = f.harness->Verify();
    ASSERT_TRUE(status.ok()) << "replay " << replay << ": " << status;
  }
  // Eager calls interleave with the replays: the op numbers on the device stay in step.
  EXPECT_TRUE(RunAndVerify(f, c, CallStyle::kPerRankThreads, call).ok());
  ASSERT_TRUE(graphs.Replay(f.runtime->devices(), buffers).ok());
  EXPECT_TRUE(f.harness->Verify().ok());
  EXPECT_TRUE(f.runtime->status().ok());
}

INSTANTIATE_TEST_SUITE_P(Protocols, GraphReplayTest,
                         ::testing::Values(Protocol::kDirect, Protocol::kOneTrip),
                         [](const ::testing::TestParamInfo<Protocol>& info) {
                           return info.param == Protocol::kDirect ? "Direct" : "OneTrip";
                         });

// Copy-engine calls cannot be captured on the copy-engine transport (on the peer-store transport
// they can: tests/copy_engine_test.cc). The refusal of a per-rank call stops the Runtime (a rank
// cannot know that its peers refused alike); Reset makes it usable.
TEST(GraphReplayTest, CopyEngineTransportRefusesCapture) {
  LTX_REQUIRE_RANKS(2);
  LTX_SKIP_WHERE_COPY_ENGINES_REFUSED(TestRankDevices(2));
  {
    RuntimeOptions options;
    options.transport = Transport::kCopyEngine;
    GpuFixture f = MakeGpuFixture(TestRankDevices(2), options);
    ASSERT_NE(f.runtime, nullptr);
    AllGatherCase c;
    c.hidden = 64;
    c.token_counts.assign(f.runtime->world_size(), 4);
    ASSERT_TRUE(f.harness->Prepare(c).ok());
    CallOptions call;
    call.protocol = Protocol::kCopyEngine;
    CapturedRankCalls graphs;
    const absl::Status status =
        graphs.CaptureAllGather(*f.runtime, c.Shape(), f.harness->AllBuffers(), call);
    // The first rank's refusal stops the Runtime; a rank whose call comes after it finds it
    // stopped (FailedPrecondition naming the error).
    EXPECT_TRUE(absl::IsUnimplemented(status) || absl::IsFailedPrecondition(status)) << status;
    EXPECT_EQ(f.runtime->status().code(), absl::StatusCode::kUnimplemented) << f.runtime->status();
    ASSERT_TRUE(f.runtime->Reset(kTestWait).ok());
    EXPECT_TRUE(RunAndVerify(f, c, CallStyle::kPerRankThreads, call).ok());
  }
}

// With copy_engine_min_bytes reached, eager calls take the copy engines and captured calls
// the kernels; replays and eager calls interleave on the same buffers.
TEST(GraphReplayTest, AutoCapturesKernelsWhereEagerCallsTakeTheCopyEngines) {
  LTX_REQUIRE_RANKS(2);
  RuntimeOptions options;
  options.copy_engine_min_bytes = 1;
  GpuFixture f = MakeGpuFixture(TestRankDevices(2), options);
  ASSERT_NE(f.runtime, nullptr);
  AllGatherCase c;
  c.hidden = 3000;
  for (int rank = 0; rank < f.runtime->world_size(); ++rank) c.token_counts.push_back(5 + rank);
  ASSERT_TRUE(f.harness->Prepare(c).ok());
  const std::vector<RankBuffers> buffers = f.harness->AllBuffers();
  CapturedRankCalls graphs;
  ASSERT_TRUE(graphs.CaptureAllGather(*f.runtime, c.Shape(), buffers, CallOptions()).ok());
  for (int round = 0; round < 50; ++round) {
    ASSERT_TRUE(f.harness->RefreshInputs().ok());
    ASSERT_TRUE(graphs.Replay(f.runtime->devices(), buffers).ok());
    absl::Status status = f.harness->Verify();
    ASSERT_TRUE(status.ok()) << "replay " << round << ": " << status;
    status = RunAndVerify(f, c, round % 2 ? CallStyle::kCoordinated : CallStyle::kPerRankThreads);
    ASSERT_TRUE(status.ok()) << "eager call " << round << ": " << status;
  }
  EXPECT_TRUE(f.runtime->status().ok());
}

// Per-rank calls on `streams` (one per rank), with the input produced on another stream and
// handed over with an event, and the output consumed on a third stream after an event.
absl::Status RunOnStreams(GpuFixture& f, const AllGatherCase& c,
                          const std::vector<cudaStream_t>& streams) {
  const int world = f.runtime->world_size();
  absl::Status status = f.harness->Prepare(c);
  if (!status.ok()) return status;
  std::vector<absl::Status> results(world);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world; ++rank) {
    threads.emplace_back([&, rank] {
      cudaSetDevice(f.runtime->devices()[rank]);
      RankBuffers buffers = f.harness->Buffers(rank);
      // The harness stream plays the producer: its work (already finished) is ordered before
      // the collective by an event, as a server orders a compute stream before it.
      cudaEvent_t produced = nullptr;
      absl::Status s = CudaStatus(cudaEventCreateWithFlags(&produced, cudaEventDisableTiming),
                                  "cudaEventCreate");
      if (s.ok()) s = CudaStatus(cudaEventRecord(produced, buffers.stream), "cudaEventRecord");
      if (s.ok()) s = CudaStatus(cudaStreamWaitEvent(streams[rank], produced, 0), "WaitEvent");
      const cudaStream_t producer = buffers.stream;
      buffers.stream = streams[rank];
      if (s.ok()) s = f.runtime->AllGatherRank(rank, c.Shape(), buffers);
      // The consumer (the harness stream, which Verify synchronises) waits for the collective.
      if (s.ok()) s = CudaStatus(cudaEventRecord(produced, streams[rank]), "cudaEventRecord");
      if (s.ok()) s = CudaStatus(cudaStreamWaitEvent(producer, produced, 0), "WaitEvent");
      if (produced != nullptr) cudaEventDestroy(produced);
      results[rank] = s;
    });
  }
  for (auto& thread : threads) thread.join();
  for (const absl::Status& result : results) {
    if (!result.ok()) return result;
  }
  return f.harness->Verify();
}

// The legacy default stream serves a rank whose GPU hosts no other rank; where ranks share a
// GPU it cannot tell them apart, and the Runtime refuses it (InvalidArgument; Reset recovers).
TEST(StreamTest, LegacyBlockingAndNonBlockingStreamsOrderedWithEvents) {
  LTX_REQUIRE_RANKS(2);
  const int world = TestWorldSize(2);
  RuntimeOptions options;
  options.timeout = absl::Seconds(2);  // Ranks that launched beside a refused one give up soon.
  GpuFixture f = MakeGpuFixture(TestDevices(world), options);
  ASSERT_NE(f.runtime, nullptr);
  const std::vector<int> devices = f.runtime->devices();
  AllGatherCase c;
  c.dtype = DataType::kFloat16;
  c.batch = 1;
  for (int rank = 0; rank < world; ++rank) c.token_counts.push_back(5 + 2 * rank);
  std::vector<cudaStream_t> legacy(world, nullptr);
  std::vector<cudaStream_t> blocking(world, nullptr);
  std::vector<cudaStream_t> non_blocking(world, nullptr);
  for (int rank = 0; rank < world; ++rank) {
    cudaSetDevice(devices[rank]);
    ASSERT_EQ(cudaStreamCreate(&blocking[rank]), cudaSuccess);
    ASSERT_EQ(cudaStreamCreateWithFlags(&non_blocking[rank], cudaStreamNonBlocking), cudaSuccess);
  }
  for (int64_t hidden : {64, 20000}) {  // one-trip and direct
    c.hidden = hidden;
    for (const auto* streams : {&legacy, &blocking, &non_blocking}) {
      const absl::Status status = RunOnStreams(f, c, *streams);
      if (streams == &legacy && RanksShareGpus(devices)) {
        // A call after the refusal of another rank's is refused as the Runtime is stopped.
        EXPECT_TRUE(absl::IsInvalidArgument(status) || absl::IsFailedPrecondition(status))
            << status;
        EXPECT_EQ(f.runtime->status().code(), absl::StatusCode::kInvalidArgument);
        ASSERT_TRUE(f.runtime->Reset(kTestWait).ok());
      } else {
        EXPECT_TRUE(status.ok()) << "hidden " << hidden << ": " << status;
      }
    }
  }
  for (int rank = 0; rank < world; ++rank) {
    cudaStreamDestroy(blocking[rank]);
    cudaStreamDestroy(non_blocking[rank]);
  }
}

}  // namespace
}  // namespace ltx
