// A peer that comes late, after the others gave the op up: no rank may store into an output
// whose owner already returned the op's error. Rank 0 calls; the last rank's call waits on its
// stream behind a kernel that runs three times the timeout. Once rank 0 has given the op up
// and its stream moved on, its output is refilled; when the late rank's kernel has run too,
// the refill must be intact. Also: the error names the ranks still running, and Reset recovers.
// The same promise for a peer whose grid is only partly resident when the owner times out at
// exit, and for copy-engine calls captured into CUDA graphs whose ranks have different timeouts;
// there the error names the peers that had claimed the owner's output.
// And a peer late by less than the timeout, among four ranks or more: on the direct and one-trip
// kernels and on the copy engines, in both call styles, every rank's op completes byte-exact.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ltx/runtime.h"
#include "tests/busy_kernel.h"
#include "tools/testing/allgather_harness.h"
#include "tools/testing/gpu_fixture.h"
#include "tools/testing/rank_threads.h"

namespace ltx {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr absl::Duration kTimeout = absl::Milliseconds(300);
constexpr uint8_t kRefill = 0x5a;

// Polls the Runtime until it reports an error (at most `limit`).
absl::Status AwaitError(Runtime& runtime, absl::Duration limit) {
  const absl::Time deadline = absl::Now() + limit;
  absl::Status status = runtime.status();
  while (status.ok() && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
    status = runtime.status();
  }
  return status;
}

// The number of bytes of `bytes` that differ from `value`.
int64_t CountOtherThan(const std::vector<uint8_t>& bytes, uint8_t value) {
  int64_t other = 0;
  for (uint8_t byte : bytes) other += byte != value ? 1 : 0;
  return other;
}

// The number of the `bytes` bytes of device memory at `address` that differ from `value` (read
// in chunks).
int64_t CountDeviceBytesOtherThan(const void* address, int64_t bytes, uint8_t value) {
  constexpr int64_t kChunk = int64_t{64} << 20;
  std::vector<uint8_t> chunk(std::min(bytes, kChunk));
  int64_t other = 0;
  for (int64_t offset = 0; offset < bytes; offset += kChunk) {
    const int64_t size = std::min(kChunk, bytes - offset);
    chunk.resize(size);
    EXPECT_EQ(cudaMemcpy(chunk.data(), static_cast<const uint8_t*>(address) + offset, size,
                         cudaMemcpyDefault),
              cudaSuccess);
    other += CountOtherThan(chunk, value);
  }
  return other;
}

// One device allocation and one stream of a rank, released at the end of the test.
struct RankMemory {
  int device = 0;
  void* input = nullptr;
  void* output = nullptr;
  cudaStream_t stream = nullptr;
  ~RankMemory() {
    cudaSetDevice(device);
    if (stream != nullptr) cudaStreamDestroy(stream);
    cudaFree(input);
    cudaFree(output);
  }
};

class LatePeerTest : public ::testing::TestWithParam<Protocol> {};

TEST_P(LatePeerTest, StoresNothingIntoAnOutputWhoseOwnerGaveUp) {
  LTX_REQUIRE_RANKS(2);
  const int world = TestWorldSize(2);
  const int late = world - 1;
  RuntimeOptions options = OnPeerStores();
  options.timeout = kTimeout;
  GpuFixture f = MakeGpuFixture(TestDevices(world), options);
  ASSERT_NE(f.runtime, nullptr);
  AllGatherCase c;
  c.hidden = 2048;
  for (int rank = 0; rank < world; ++rank) c.token_counts.push_back(5 + rank);
  CallOptions call;
  call.protocol = GetParam();
  ASSERT_TRUE(RunAndVerify(f, c, CallStyle::kPerRankThreads, call).ok());
  ASSERT_TRUE(f.harness->Prepare(c).ok());

  // Every rank calls from its own thread; the late rank's kernel waits on its stream behind a
  // busy kernel three times as long as the timeout.
  const RankBuffers late_buffers = f.harness->Buffers(late);
  ASSERT_EQ(cudaSetDevice(f.runtime->devices()[late]), cudaSuccess);
  ASSERT_EQ(LaunchBusyKernel(absl::ToInt64Nanoseconds(3 * kTimeout), late_buffers.stream),
            cudaSuccess);
  std::vector<absl::Status> launched(world);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world; ++rank) {
    threads.emplace_back([&, rank] {
      launched[rank] = f.runtime->AllGatherRank(rank, c.Shape(), f.harness->Buffers(rank), call);
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const absl::Status& status : launched) ASSERT_TRUE(status.ok()) << status;

  // Rank 0 gives the op up after the timeout; its stream moves on, and the caller reuses its
  // output while the late rank has not even started the op.
  const absl::Status error = AwaitError(*f.runtime, 10 * kTimeout);
  EXPECT_EQ(error.code(), absl::StatusCode::kDeadlineExceeded) << error;
  const RankBuffers first = f.harness->Buffers(0);
  ASSERT_EQ(cudaSetDevice(f.runtime->devices()[0]), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(first.stream), cudaSuccess);
  const int64_t output_bytes = f.harness->layout().output_bytes;
  ASSERT_EQ(cudaMemsetAsync(first.output, kRefill, output_bytes, first.stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(first.stream), cudaSuccess);

  // While the late rank runs, the Runtime says so (and, as it never began storing, not that it
  // may store into anyone's output).
  const absl::Status running = f.runtime->Synchronize(absl::Milliseconds(1));
  EXPECT_EQ(running.code(), absl::StatusCode::kDeadlineExceeded) << running;
  EXPECT_THAT(std::string(running.message()), HasSubstr(absl::StrCat(late, " still running")));
  EXPECT_THAT(std::string(running.message()), Not(HasSubstr("may still be storing")));
  EXPECT_FALSE(f.runtime->Reset(absl::Milliseconds(1)).ok()) << "Reset while a rank runs";

  // Once every stream has finished, rank 0's output still holds the refill.
  const absl::Status finished = f.runtime->Synchronize(absl::Seconds(30));
  EXPECT_THAT(std::string(finished.message()), Not(HasSubstr("still running"))) << finished;
  std::vector<uint8_t> output(output_bytes);
  ASSERT_EQ(cudaMemcpy(output.data(), first.output, output_bytes, cudaMemcpyDefault),
            cudaSuccess);
  EXPECT_EQ(CountOtherThan(output, kRefill), 0)
      << "a peer stored into rank 0's output after rank 0 had given the op up";
  EXPECT_TRUE(f.harness->VerifyGuards().ok());

  ASSERT_TRUE(f.runtime->Reset(absl::Seconds(10)).ok());
  const absl::Status again = RunAndVerify(f, c, CallStyle::kPerRankThreads, call);
  EXPECT_TRUE(again.ok()) << again;
}

INSTANTIATE_TEST_SUITE_P(Protocols, LatePeerTest,
                         ::testing::Values(Protocol::kDirect, Protocol::kOneTrip),
                         [](const ::testing::TestParamInfo<Protocol>& info) {
                           return ProtocolName(info.param);
                         });

// A peer whose grid is only partly resident: compute on another stream holds all SMs of its GPU
// but one per rank there, so the blocks of rank 1 (a shard of 4 GiB) become resident a few at a
// time, while rank 0 (one block, one token, a 20 ms timeout) has stored its part and times out
// at exit waiting for rank 1's exit flag. Rank 0 revokes rank 1's store claims whatever its
// other exit waits saw: rank 1's blocks that become resident afterwards store nothing into rank
// 0's output, which the caller refilled once rank 0's stream moved on, and the error names rank
// 1 as having begun storing there.
TEST(PartlyResidentPeerTest, StoresNothingIntoAnOutputWhoseOwnerTimedOutAtExit) {
  LTX_REQUIRE_RANKS(2);
  constexpr absl::Duration kOwnerTimeout = absl::Milliseconds(20);
  constexpr absl::Duration kBusyFor = absl::Seconds(5);
  constexpr int64_t kHidden = 8192;                  // bf16: rows of 16 KiB.
  constexpr int64_t kPeerTokens = int64_t{1} << 18;  // 4 GiB.
  const std::vector<int> devices = TestDevices(2);
  RuntimeOptions options = OnPeerStores();
  options.devices = devices;
  absl::StatusOr<std::unique_ptr<Runtime>> created = Runtime::Create(options);
  ASSERT_TRUE(created.ok()) << created.status();
  Runtime& runtime = **created;
  const std::vector<int64_t> counts = {1, kPeerTokens};
  AllGatherShape shape;
  shape.hidden = kHidden;
  shape.token_counts = counts;
  const int64_t row_bytes = kHidden * 2;
  const int64_t output_bytes = (counts[0] + counts[1]) * row_bytes;
  RankMemory memory[2];
  std::vector<RankBuffers> buffers(2);
  for (int rank = 0; rank < 2; ++rank) {
    RankMemory& m = memory[rank];
    m.device = devices[rank];
    ASSERT_EQ(cudaSetDevice(m.device), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&m.input, counts[rank] * row_bytes), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&m.output, output_bytes), cudaSuccess);
    ASSERT_EQ(cudaStreamCreateWithFlags(&m.stream, cudaStreamNonBlocking), cudaSuccess);
    buffers[rank] = RankBuffers{m.input, m.output, m.stream};
  }

  // Compute beside rank 1: every SM of its GPU but one per rank there.
  int sms = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, devices[1]), cudaSuccess);
  const int ranks_there = static_cast<int>(std::count(devices.begin(), devices.end(), devices[1]));
  ASSERT_EQ(cudaSetDevice(devices[1]), cudaSuccess);
  cudaStream_t busy = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&busy, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(LaunchBusySms(absl::ToInt64Nanoseconds(kBusyFor), sms - ranks_there, busy),
            cudaSuccess);
  absl::SleepFor(absl::Milliseconds(50));  // The busy blocks are resident by now.

  CallOptions owner;
  owner.protocol = Protocol::kDirect;
  owner.blocks = 1;
  owner.timeout = kOwnerTimeout;
  CallOptions peer;
  peer.protocol = Protocol::kDirect;
  ASSERT_TRUE(runtime.AllGatherRank(0, shape, buffers[0], owner).ok());
  ASSERT_TRUE(runtime.AllGatherRank(1, shape, buffers[1], peer).ok());

  const absl::Status error = AwaitError(runtime, absl::Seconds(2));
  EXPECT_EQ(error.code(), absl::StatusCode::kDeadlineExceeded) << error;
  EXPECT_THAT(std::string(error.message()), HasSubstr("at exit for rank 1"));
  // Rank 0's stream moved on. The blocks of rank 1 that claimed before the revocation store a
  // few tens of megabytes each: give them time to end, then reuse the output.
  ASSERT_EQ(cudaSetDevice(devices[0]), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(buffers[0].stream), cudaSuccess);
  absl::SleepFor(absl::Milliseconds(20));
  ASSERT_EQ(cudaMemsetAsync(buffers[0].output, kRefill, output_bytes, buffers[0].stream),
            cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(buffers[0].stream), cudaSuccess);

  const absl::Status finished = runtime.Synchronize(kTestWait);
  EXPECT_EQ(finished.code(), absl::StatusCode::kDeadlineExceeded) << finished;
  EXPECT_THAT(std::string(finished.message()), HasSubstr("rank 1 into rank 0's output"));
  EXPECT_EQ(CountDeviceBytesOtherThan(buffers[0].output, output_bytes, kRefill), 0)
      << "rank 1 stored into rank 0's output after rank 0 had given the op up";
  ASSERT_EQ(cudaSetDevice(devices[1]), cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(busy), cudaSuccess);
  cudaStreamDestroy(busy);
}

// Copy-engine calls captured into CUDA graphs, with per-call timeouts that differ: rank 0 (200
// ms) gives the op up waiting for rank 2, which starts late, behind a kernel of 1 s on its
// stream; rank 1 (5 s) claimed its stores into rank 0's output at entry and waits for rank 2
// too. When rank 2 arrives, rank 1 reads its claim again before it opens its copies and finds it
// revoked: rank 0's output, refilled once rank 0's stream moved on, stays intact, and the error
// names rank 1 as having claimed it (no event of the Runtime sees graph replays).
TEST(CapturedLatePeerTest, CopyEnginesStoreNothingIntoAnOutputWhoseOwnerGaveUp) {
  LTX_REQUIRE_RANKS(3);
  constexpr absl::Duration kLateBy = absl::Seconds(1);
  GpuFixture f = MakeGpuFixture(TestDevices(3), OnPeerStores());
  ASSERT_NE(f.runtime, nullptr);
  const std::vector<int> devices = f.runtime->devices();
  AllGatherCase c;
  c.hidden = 2048;
  for (int rank = 0; rank < 3; ++rank) c.token_counts.push_back(5 + rank);
  ASSERT_TRUE(f.harness->Prepare(c).ok());
  const std::vector<RankBuffers> buffers = f.harness->AllBuffers();
  CapturedRankCalls graphs;
  const absl::Status captured = graphs.Capture(devices, buffers, [&](int rank) {
    CallOptions call;
    call.protocol = Protocol::kCopyEngine;
    call.timeout = rank == 0 ? absl::Milliseconds(200) : absl::Seconds(5);
    return f.runtime->AllGatherRank(rank, c.Shape(), buffers[rank], call);
  });
  ASSERT_TRUE(captured.ok()) << captured;

  ASSERT_EQ(cudaSetDevice(devices[2]), cudaSuccess);
  ASSERT_EQ(LaunchBusyKernel(absl::ToInt64Nanoseconds(kLateBy), buffers[2].stream), cudaSuccess);
  ASSERT_TRUE(graphs.Replay(devices, buffers).ok());
  const absl::Status error = AwaitError(*f.runtime, kLateBy / 2);
  EXPECT_EQ(error.code(), absl::StatusCode::kDeadlineExceeded) << error;
  EXPECT_THAT(std::string(error.message()), HasSubstr("at entry for rank 2"));
  ASSERT_EQ(cudaSetDevice(devices[0]), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(buffers[0].stream), cudaSuccess);
  const int64_t output_bytes = f.harness->layout().output_bytes;
  ASSERT_EQ(cudaMemsetAsync(buffers[0].output, kRefill, output_bytes, buffers[0].stream),
            cudaSuccess);

  ASSERT_TRUE(f.harness->SynchronizeStreams().ok());
  const absl::Status status = f.runtime->status();
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("rank 1 into rank 0's output"));
  EXPECT_EQ(CountDeviceBytesOtherThan(buffers[0].output, output_bytes, kRefill), 0)
      << "rank 1's copies ran into rank 0's output after rank 0 had given the op up";
  EXPECT_TRUE(f.harness->VerifyGuards().ok());
  ASSERT_TRUE(f.runtime->Reset(kTestWait).ok());
  const absl::Status again = RunAndVerify(f, c, CallStyle::kPerRankThreads);
  EXPECT_TRUE(again.ok()) << again;
}

// A late peer within the timeout, parameterized by protocol (kernels and copy engines).
class LatePeerWithinTheTimeoutTest : public ::testing::TestWithParam<Protocol> {
 protected:
  void SetUp() override {
    if (GetParam() == Protocol::kCopyEngine) {
      LTX_SKIP_WHERE_COPY_ENGINES_REFUSED(TestRankDevices(4));
    }
  }
};

// Four ranks or more, rank 2 late: its call waits on its stream behind a busy kernel of 200 ms
// (launched before any rank calls), well within the 5 s timeout. The other ranks wait for it on
// their GPUs; every rank's op completes without error and byte-exact, in both call styles.
TEST_P(LatePeerWithinTheTimeoutTest, EveryRankCompletesByteExact) {
  LTX_REQUIRE_RANKS(4);
  constexpr int kLate = 2;
  constexpr absl::Duration kBusyFor = absl::Milliseconds(200);
  RuntimeOptions options = OnPeerStores();
  options.timeout = absl::Seconds(5);
  GpuFixture f = MakeGpuFixture(TestRankDevices(4), options);
  ASSERT_NE(f.runtime, nullptr);
  const int world = f.runtime->world_size();
  AllGatherCase c;
  c.dtype = DataType::kBFloat16;
  c.batch = 2;
  c.hidden = 1024;
  for (int rank = 0; rank < world; ++rank) c.token_counts.push_back(rank == 1 ? 0 : 9 + 2 * rank);
  CallOptions call;
  call.protocol = GetParam();
  for (CallStyle style : {CallStyle::kPerRankThreads, CallStyle::kCoordinated}) {
    SCOPED_TRACE(style == CallStyle::kCoordinated ? "coordinated" : "per-rank threads");
    ASSERT_TRUE(f.harness->Prepare(c).ok());  // Before the busy kernel: Prepare waits for the GPUs.
    const RankBuffers late = f.harness->Buffers(kLate);
    ASSERT_EQ(cudaSetDevice(f.runtime->devices()[kLate]), cudaSuccess);
    const absl::Time start = absl::Now();
    ASSERT_EQ(LaunchBusyKernel(absl::ToInt64Nanoseconds(kBusyFor), late.stream), cudaSuccess);
    absl::Status status;
    if (style == CallStyle::kCoordinated) {
      absl::StatusOr<CollectiveHandle> handle =
          f.runtime->AllGather(c.Shape(), f.harness->AllBuffers(), call);
      status = handle.ok() ? handle->Wait(kTestWait) : handle.status();
    } else {
      status = RunOnRankThreads(world, [&](int rank) {
        return f.runtime->AllGatherRank(rank, c.Shape(), f.harness->Buffers(rank), call);
      });
      if (status.ok()) status = f.runtime->Synchronize(kTestWait);
    }
    const absl::Duration took = absl::Now() - start;
    EXPECT_TRUE(status.ok()) << status;
    EXPECT_GE(took, kBusyFor) << "the op did not wait for the late rank";
    const absl::Status verified = f.harness->Verify();
    EXPECT_TRUE(verified.ok()) << verified;
  }
}

INSTANTIATE_TEST_SUITE_P(Protocols, LatePeerWithinTheTimeoutTest,
                         ::testing::Values(Protocol::kDirect, Protocol::kOneTrip,
                                           Protocol::kCopyEngine),
                         [](const ::testing::TestParamInfo<Protocol>& info) {
                           return ProtocolName(info.param);
                         });

}  // namespace
}  // namespace ltx
