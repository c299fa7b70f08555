// Calls made while the GPUs run other work: the first call of each kernel protocol must not wait
// on the host for the GPU to become idle (the Runtime loads its kernels when it is created), and
// the results are right once the GPUs are free again; with an SM budget of one block, calls
// complete beside compute that holds every other SM.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "ltx/runtime.h"
#include "tests/busy_kernel.h"
#include "tools/testing/gpu_fixture.h"

namespace ltx {
namespace {

constexpr absl::Duration kBusyFor = absl::Seconds(2);
constexpr absl::Duration kFirstCallLimit = absl::Milliseconds(50);

// Creates a Runtime over the layout's ranks, makes every rank's GPU busy with a kernel on a stream
// of its own, and then times each rank's first per-rank call of `protocol` (from its own thread).
void ExpectFirstCallIsQuick(Protocol protocol) {
  LTX_REQUIRE_RANKS(2);
  const int world = TestWorldSize(2);
  GpuFixture f = MakeGpuFixture(TestDevices(world), OnPeerStores());
  ASSERT_NE(f.runtime, nullptr);
  AllGatherCase c;
  c.hidden = 1024;
  c.token_counts.assign(world, 3);
  ASSERT_TRUE(f.harness->Prepare(c).ok());

  std::vector<cudaStream_t> busy(world, nullptr);
  for (int rank = 0; rank < world; ++rank) {
    ASSERT_EQ(cudaSetDevice(f.runtime->devices()[rank]), cudaSuccess);
    ASSERT_EQ(cudaStreamCreateWithFlags(&busy[rank], cudaStreamNonBlocking), cudaSuccess);
    ASSERT_EQ(LaunchBusyKernel(absl::ToInt64Nanoseconds(kBusyFor), busy[rank]), cudaSuccess);
  }
  CallOptions call;
  call.protocol = protocol;
  std::vector<absl::Duration> took(world);
  std::vector<absl::Status> results(world);
  std::vector<std::thread> threads;
  const AllGatherShape shape = c.Shape();
  for (int rank = 0; rank < world; ++rank) {
    threads.emplace_back([&, rank] {
      const absl::Time start = absl::Now();
      results[rank] = f.runtime->AllGatherRank(rank, shape, f.harness->Buffers(rank), call);
      took[rank] = absl::Now() - start;
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int rank = 0; rank < world; ++rank) {
    EXPECT_TRUE(results[rank].ok()) << results[rank];
    EXPECT_LT(took[rank], kFirstCallLimit)
        << "rank " << rank << "'s first call waited " << absl::FormatDuration(took[rank])
        << " on the host while its GPU was busy";
  }
  EXPECT_TRUE(f.runtime->Synchronize(kTestWait).ok());
  EXPECT_TRUE(f.harness->Verify().ok());
  for (int rank = 0; rank < world; ++rank) {
    cudaSetDevice(f.runtime->devices()[rank]);
    EXPECT_EQ(cudaStreamSynchronize(busy[rank]), cudaSuccess);
    cudaStreamDestroy(busy[rank]);
  }
}

TEST(BusyGpuTest, FirstDirectCallDoesNotWaitForTheGpu) {
  ExpectFirstCallIsQuick(Protocol::kDirect);
}

TEST(BusyGpuTest, FirstOneTripCallDoesNotWaitForTheGpu) {
  ExpectFirstCallIsQuick(Protocol::kOneTrip);
}

// Runs `protocol` with a budget of one block per rank while a kernel on another stream of every
// GPU holds all SMs but one per rank on that GPU: the op must finish, right, while that kernel
// still runs.
void ExpectOneBlockBesideCompute(Protocol protocol, int64_t hidden) {
  LTX_REQUIRE_RANKS(2);
  const int world = TestWorldSize(2);
  RuntimeOptions options = OnPeerStores();
  options.max_blocks = 1;
  GpuFixture f = MakeGpuFixture(TestDevices(world), options);
  ASSERT_NE(f.runtime, nullptr);
  const std::vector<int> devices = f.runtime->devices();
  const std::vector<int> gpus = DistinctDevices(devices);
  AllGatherCase c;
  c.hidden = hidden;
  for (int rank = 0; rank < world; ++rank) c.token_counts.push_back(7 + rank);
  ASSERT_TRUE(f.harness->Prepare(c).ok());

  std::vector<cudaStream_t> busy(gpus.size(), nullptr);
  for (size_t i = 0; i < gpus.size(); ++i) {
    int sms = 0;
    ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, gpus[i]), cudaSuccess);
    const int ranks_here = static_cast<int>(std::count(devices.begin(), devices.end(), gpus[i]));
    ASSERT_EQ(cudaSetDevice(gpus[i]), cudaSuccess);
    ASSERT_EQ(cudaStreamCreateWithFlags(&busy[i], cudaStreamNonBlocking), cudaSuccess);
    ASSERT_EQ(LaunchBusySms(absl::ToInt64Nanoseconds(kBusyFor), sms - ranks_here, busy[i]),
              cudaSuccess);
  }
  absl::SleepFor(absl::Milliseconds(50));  // The busy blocks are resident by now.
  CallOptions call;
  call.protocol = protocol;
  const absl::Time start = absl::Now();
  const absl::Status launched = LaunchCase(f, c, CallStyle::kPerRankThreads, call);
  ASSERT_TRUE(launched.ok()) << launched;
  ASSERT_TRUE(f.harness->SynchronizeStreams().ok());
  const absl::Duration took = absl::Now() - start;
  EXPECT_LT(took, kBusyFor / 2) << "the op waited for the compute kernel to end";
  for (size_t i = 0; i < gpus.size(); ++i) {
    cudaSetDevice(gpus[i]);
    EXPECT_EQ(cudaStreamQuery(busy[i]), cudaErrorNotReady)
        << "GPU " << gpus[i] << "'s compute kernel ended before the op did";
  }
  EXPECT_TRUE(f.runtime->Synchronize(kTestWait).ok());
  const absl::Status verified = f.harness->Verify();
  EXPECT_TRUE(verified.ok()) << verified;
  for (size_t i = 0; i < gpus.size(); ++i) {
    cudaSetDevice(gpus[i]);
    EXPECT_EQ(cudaStreamSynchronize(busy[i]), cudaSuccess);
    cudaStreamDestroy(busy[i]);
  }
}

TEST(BusyGpuTest, OneTripWithOneBlockBesideCompute) {
  ExpectOneBlockBesideCompute(Protocol::kOneTrip, 1024);
}

TEST(BusyGpuTest, DirectWithOneBlockBesideCompute) {
  ExpectOneBlockBesideCompute(Protocol::kDirect, 65536);
}

}  // namespace
}  // namespace ltx
