// Faults and load on real GPUs: a rank that never joins, a late rank, ranks that disagree on
// the arguments, per-call timeouts, host-side waits that time out, recovery with Reset, many
// calls with random shapes and device subsets, per-rank callers with random delays, Runtime
// churn and two Runtimes at once. Each fault asserts the Status code and what its message
// names, and that no byte outside the outputs changed.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ltx/runtime.h"
#include "tools/testing/allgather_harness.h"
#include "tools/testing/gpu_fixture.h"

namespace ltx {
namespace {

using ::testing::HasSubstr;

AllGatherCase SmallCase(int world) {
  AllGatherCase c;
  c.dtype = DataType::kBFloat16;
  c.batch = 2;
  c.hidden = 256;
  for (int rank = 0; rank < world; ++rank) c.token_counts.push_back(3 + rank);
  return c;
}

std::vector<int> AllButLast(int world) { return FirstDevices(world - 1); }

RuntimeOptions WithTimeout(absl::Duration timeout) {
  RuntimeOptions options;
  options.timeout = timeout;
  return options;
}

// After a failed op: new work is refused, Reset recovers, and the next call is byte-exact.
void ExpectRefusedThenRecovered(GpuFixture& f) {
  const int world = f.runtime->world_size();
  const absl::Status refused = LaunchCase(f, SmallCase(world), CallStyle::kCoordinated);
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition) << refused;
  EXPECT_THAT(std::string(refused.message()), HasSubstr("Reset"));
  ASSERT_TRUE(f.runtime->Reset(absl::Seconds(30)).ok());
  EXPECT_TRUE(f.runtime->status().ok());
  for (CallStyle style : {CallStyle::kCoordinated, CallStyle::kPerRankThreads}) {
    const absl::Status status = RunAndVerify(f, SmallCase(world), style);
    EXPECT_TRUE(status.ok()) << status;
  }
}

class ProtocolFaultTest : public ::testing::TestWithParam<Protocol> {
 protected:
  CallOptions call() const {
    CallOptions call;
    call.protocol = GetParam();
    return call;
  }
};

TEST_P(ProtocolFaultTest, RankThatNeverJoinsTimesOutAndResetRecovers) {
  LTX_REQUIRE_GPUS(2);
  const int world = VisibleGpuCount();
  const absl::Duration timeout = absl::Seconds(1);
  GpuFixture f = MakeGpuFixture(FirstDevices(world), WithTimeout(timeout));
  ASSERT_NE(f.runtime, nullptr);
  ASSERT_TRUE(RunAndVerify(f, SmallCase(world), CallStyle::kPerRankThreads, call()).ok());

  const absl::Time start = absl::Now();
  ASSERT_TRUE(
      LaunchCase(f, SmallCase(world), CallStyle::kPerRankThreads, call(), AllButLast(world)).ok());
  const absl::Status status = f.runtime->Synchronize(absl::Seconds(30));
  const absl::Duration took = absl::Now() - start;
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("all_gather #2"));
  EXPECT_THAT(std::string(status.message()),
              HasSubstr(GetParam() == Protocol::kOneTrip ? "for data from" : "at entry for"));
  EXPECT_THAT(std::string(status.message()), HasSubstr(absl::StrCat("rank ", world - 1)));
  EXPECT_GE(took, timeout);
  EXPECT_LT(took, timeout + absl::Seconds(1)) << "detected after " << took;
  EXPECT_EQ(f.runtime->status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(f.harness->VerifyGuards().ok());
  ExpectRefusedThenRecovered(f);
}

// Copy-engine calls, on the copy-engine transport and as Protocol::kCopyEngine on the
// peer-store transport: a rank that never joins, then ranks that disagree.
class CopyEngineFaultTest : public ::testing::TestWithParam<Transport> {};

TEST_P(CopyEngineFaultTest, TimesOutDisagreesAndRecovers) {
  LTX_REQUIRE_GPUS(2);
  const int world = VisibleGpuCount();
  RuntimeOptions options = WithTimeout(absl::Milliseconds(500));
  options.transport = GetParam();
  CallOptions call;
  call.protocol = Protocol::kCopyEngine;
  GpuFixture f = MakeGpuFixture(FirstDevices(world), options);
  ASSERT_NE(f.runtime, nullptr);
  ASSERT_TRUE(RunAndVerify(f, SmallCase(world), CallStyle::kPerRankThreads, call).ok());

  // A rank that never joins: the others' calls return, and their exit kernels give up.
  ASSERT_TRUE(
      LaunchCase(f, SmallCase(world), CallStyle::kPerRankThreads, call, AllButLast(world)).ok());
  absl::Status status = f.runtime->Synchronize(absl::Seconds(30));
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("all_gather #2"));
  EXPECT_THAT(std::string(status.message()),
              HasSubstr(absl::StrCat("at exit for rank ", world - 1)));
  EXPECT_TRUE(f.harness->VerifyGuards().ok());
  ExpectRefusedThenRecovered(f);

  // Ranks that disagree: InvalidArgument on every rank, naming both values.
  const AllGatherCase good = SmallCase(world);
  AllGatherCase bad = good;
  bad.hidden = good.hidden / 2;
  ASSERT_TRUE(f.harness->Prepare(good).ok());
  std::vector<absl::Status> results(world);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world; ++rank) {
    threads.emplace_back([&, rank] {
      results[rank] = f.runtime->AllGatherRank(rank, rank == 1 ? bad.Shape() : good.Shape(),
                                               f.harness->Buffers(rank), call);
    });
  }
  for (auto& thread : threads) thread.join();
  // The rank that pairs the two returns the error; a rank that arrived before it returned OK.
  for (const absl::Status& result : results) {
    EXPECT_TRUE(result.ok() || absl::IsInvalidArgument(result) ||
                absl::IsFailedPrecondition(result))
        << result;
  }
  status = f.runtime->Synchronize(absl::Seconds(30));
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("row size in bytes"));
  EXPECT_TRUE(f.harness->VerifyGuards().ok());
  ExpectRefusedThenRecovered(f);
}

TEST(FaultTest, LateRankWithinTheTimeoutSucceeds) {
  LTX_REQUIRE_GPUS(2);
  const int world = VisibleGpuCount();
  const absl::Duration timeout = absl::Seconds(2);
  GpuFixture f = MakeGpuFixture(FirstDevices(world), WithTimeout(timeout));
  ASSERT_NE(f.runtime, nullptr);
  const AllGatherCase c = SmallCase(world);
  ASSERT_TRUE(LaunchCase(f, c, CallStyle::kPerRankThreads, {}, AllButLast(world)).ok());
  absl::SleepFor(timeout / 2);
  ASSERT_TRUE(f.runtime->AllGatherRank(world - 1, c.Shape(), f.harness->Buffers(world - 1)).ok());
  const absl::Status status = f.runtime->Synchronize(absl::Seconds(30));
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_TRUE(f.harness->Verify().ok());
}

// Rank 1 calls with `bad` while every other rank calls with `good`, each from its own thread;
// all must fail with InvalidArgument naming `field`, touch nothing outside the outputs, and
// recover after Reset. (A rank that calls after the disagreement was already recorded gets the
// error from its call instead of launching.)
void ExpectMismatchDetected(const AllGatherCase& good, const AllGatherCase& bad,
                            const std::string& field, const CallOptions& call) {
  const int world = static_cast<int>(good.token_counts.size());
  GpuFixture f = MakeGpuFixture(FirstDevices(world), WithTimeout(absl::Seconds(2)));
  ASSERT_NE(f.runtime, nullptr);
  ASSERT_TRUE(f.harness->Prepare(good).ok());
  std::vector<absl::Status> launches(world);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world; ++rank) {
    threads.emplace_back([&, rank] {
      const AllGatherShape shape = rank == 1 ? bad.Shape() : good.Shape();
      launches[rank] = f.runtime->AllGatherRank(rank, shape, f.harness->Buffers(rank), call);
    });
  }
  for (auto& thread : threads) thread.join();
  // A call made after the disagreement was detected is refused instead.
  for (const absl::Status& launch : launches) {
    if (!launch.ok()) {
      EXPECT_TRUE(absl::IsInvalidArgument(launch) || absl::IsFailedPrecondition(launch)) << launch;
    }
  }
  const absl::Status status = f.runtime->Synchronize(absl::Seconds(30));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr(field));
  EXPECT_THAT(std::string(status.message()), HasSubstr("rank 1"));
  const absl::Status guards = f.harness->VerifyGuards();
  EXPECT_TRUE(guards.ok()) << guards;
  ExpectRefusedThenRecovered(f);
}

INSTANTIATE_TEST_SUITE_P(Transports, CopyEngineFaultTest,
                         ::testing::Values(Transport::kCopyEngine, Transport::kPeerStores),
                         [](const ::testing::TestParamInfo<Transport>& info) {
                           return info.param == Transport::kCopyEngine ? "CopyEngineTransport"
                                                                       : "PeerStoreTransport";
                         });

TEST_P(ProtocolFaultTest, RanksThatDisagreeOnTheCountsFail) {
  LTX_REQUIRE_GPUS(2);
  const AllGatherCase good = SmallCase(VisibleGpuCount());
  AllGatherCase bad = good;
  std::swap(bad.token_counts[0], bad.token_counts[1]);  // Same total, other split.
  ExpectMismatchDetected(good, bad, "token_counts", call());
}

TEST_P(ProtocolFaultTest, RanksThatDisagreeOnTheRowSizeFail) {
  LTX_REQUIRE_GPUS(2);
  const AllGatherCase good = SmallCase(VisibleGpuCount());
  AllGatherCase bad = good;
  bad.hidden = good.hidden / 2;
  ExpectMismatchDetected(good, bad, "row size in bytes", call());
}

TEST_P(ProtocolFaultTest, RanksThatDisagreeOnTheDtypeFail) {
  LTX_REQUIRE_GPUS(2);
  const AllGatherCase good = SmallCase(VisibleGpuCount());
  AllGatherCase bad = good;
  bad.dtype = DataType::kFloat16;  // Same element size as bf16.
  ExpectMismatchDetected(good, bad, "dtype: rank", call());
}

INSTANTIATE_TEST_SUITE_P(Protocols, ProtocolFaultTest,
                         ::testing::Values(Protocol::kDirect, Protocol::kOneTrip),
                         [](const ::testing::TestParamInfo<Protocol>& info) {
                           return info.param == Protocol::kDirect ? "Direct" : "OneTrip";
                         });

TEST(FaultTest, PerCallTimeoutOverridesTheRuntimeTimeout) {
  LTX_REQUIRE_GPUS(2);
  const int world = VisibleGpuCount();
  GpuFixture f = MakeGpuFixture(FirstDevices(world), WithTimeout(absl::Seconds(60)));
  ASSERT_NE(f.runtime, nullptr);
  CallOptions call;
  call.timeout = absl::Milliseconds(300);
  const absl::Time start = absl::Now();
  ASSERT_TRUE(
      LaunchCase(f, SmallCase(world), CallStyle::kPerRankThreads, call, AllButLast(world)).ok());
  const absl::Status status = f.runtime->Synchronize(absl::Seconds(30));
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  EXPECT_THAT(std::string(status.message()), HasSubstr("waited 300"));
  ASSERT_TRUE(f.runtime->Reset(absl::Seconds(30)).ok());
}

TEST(FaultTest, HostWaitTimesOutWhenARankNeverLaunched) {
  LTX_REQUIRE_GPUS(2);
  const int world = VisibleGpuCount();
  GpuFixture f = MakeGpuFixture(FirstDevices(world), WithTimeout(absl::Seconds(3)));
  ASSERT_NE(f.runtime, nullptr);
  ASSERT_TRUE(
      LaunchCase(f, SmallCase(world), CallStyle::kPerRankThreads, {}, AllButLast(world)).ok());
  const absl::Time start = absl::Now();
  absl::Status status = f.runtime->Synchronize(absl::Milliseconds(200));
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("still running"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
  // The device then gives up by itself and says why.
  status = f.runtime->Synchronize(absl::Seconds(30));
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr(absl::StrCat("rank ", world - 1)));
  // The coordinated handle's Wait has the same host-side bound.
  ASSERT_TRUE(f.runtime->Reset(absl::Seconds(30)).ok());
  ASSERT_TRUE(f.harness->Prepare(SmallCase(world)).ok());
  auto handle = f.runtime->AllGather(SmallCase(world).Shape(), f.harness->AllBuffers());
  ASSERT_TRUE(handle.ok()) << handle.status();
  EXPECT_TRUE(handle->Wait(kTestWait).ok());
  EXPECT_TRUE(f.harness->Verify().ok());
}

TEST(FaultTest, DestroyRightAfterATimeout) {
  LTX_REQUIRE_GPUS(2);
  const int world = VisibleGpuCount();
  GpuFixture f = MakeGpuFixture(FirstDevices(world), WithTimeout(absl::Milliseconds(500)));
  ASSERT_NE(f.runtime, nullptr);
  ASSERT_TRUE(
      LaunchCase(f, SmallCase(world), CallStyle::kPerRankThreads, {}, AllButLast(world)).ok());
  f.runtime.reset();  // Kernels still waiting: the destructor must not hang or crash.
  GpuFixture again = MakeGpuFixture(FirstDevices(world));
  ASSERT_NE(again.runtime, nullptr);
  EXPECT_TRUE(RunAndVerify(again, SmallCase(world), CallStyle::kCoordinated).ok());
}

TEST(LoadTest, ManyCallsWithRandomShapesDtypesAndDeviceSubsets) {
  LTX_REQUIRE_GPUS(2);
  const int visible = VisibleGpuCount();
  std::vector<std::vector<int>> subsets;
  for (int n = 1; n <= visible; ++n) subsets.push_back(FirstDevices(n));
  std::vector<int> reversed = FirstDevices(visible);
  std::reverse(reversed.begin(), reversed.end());
  subsets.push_back(reversed);
  std::vector<GpuFixture> fixtures;
  for (const auto& devices : subsets) {
    fixtures.push_back(MakeGpuFixture(devices));
    ASSERT_NE(fixtures.back().runtime, nullptr);
  }
  std::mt19937_64 random(99);
  const int64_t hiddens[] = {1, 2, 5, 16, 48, 128, 1000, 4096};
  constexpr int kCalls = 10000;
  for (int i = 0; i < kCalls; ++i) {
    GpuFixture& f = fixtures[random() % fixtures.size()];
    AllGatherCase c;
    c.dtype = kAllDataTypes[random() % 7];
    c.batch = 1 + random() % 3;
    c.hidden = hiddens[random() % 8];
    for (int r = 0; r < f.runtime->world_size(); ++r) {
      c.token_counts.push_back(random() % 5 == 0 ? 0 : random() % 24);
    }
    c.output_misalignment = random() % 3 == 0 ? random() % 16 : 0;
    const CallStyle style = random() % 2 ? CallStyle::kCoordinated : CallStyle::kPerRankThreads;
    const absl::Status status = RunAndVerify(f, c, style);
    ASSERT_TRUE(status.ok()) << "call " << i << " " << c.ToString() << ": " << status;
  }
}

TEST(LoadTest, PerRankCallersWithRandomDelays) {
  LTX_REQUIRE_GPUS(2);
  const int world = VisibleGpuCount();
  GpuFixture f = MakeGpuFixture(FirstDevices(world));
  ASSERT_NE(f.runtime, nullptr);
  std::mt19937_64 random(7);
  for (int round = 0; round < 1000; ++round) {
    AllGatherCase c = SmallCase(world);
    c.hidden = 1 + random() % 700;
    ASSERT_TRUE(f.harness->Prepare(c).ok());
    std::vector<absl::Duration> delays;
    for (int rank = 0; rank < world; ++rank) delays.push_back(absl::Microseconds(random() % 300));
    std::vector<absl::Status> results(world);
    std::vector<std::thread> threads;
    for (int rank = 0; rank < world; ++rank) {
      threads.emplace_back([&, rank] {
        absl::SleepFor(delays[rank]);
        results[rank] = f.runtime->AllGatherRank(rank, c.Shape(), f.harness->Buffers(rank));
      });
    }
    for (auto& thread : threads) thread.join();
    for (const auto& result : results) ASSERT_TRUE(result.ok()) << result;
    ASSERT_TRUE(f.runtime->Synchronize(kTestWait).ok());
    const absl::Status status = f.harness->Verify();
    ASSERT_TRUE(status.ok()) << "round " << round << ": " << status;
  }
}

TEST(LoadTest, CreateAndDestroyARuntimeHundredTimes) {
  LTX_REQUIRE_GPUS(2);
  for (int i = 0; i < 100; ++i) {
    RuntimeOptions options;
    options.devices = FirstDevices(VisibleGpuCount());
    auto runtime = Runtime::Create(options);
    ASSERT_TRUE(runtime.ok()) << "iteration " << i << ": " << runtime.status();
  }
}

TEST(LoadTest, TwoRuntimesOverDisjointGpusAtOnce) {
  LTX_REQUIRE_GPUS(4);
  std::vector<absl::Status> results(2);
  std::vector<std::thread> threads;
  for (int half = 0; half < 2; ++half) {
    threads.emplace_back([&results, half] {
      GpuFixture f = MakeGpuFixture({2 * half, 2 * half + 1});
      if (f.runtime == nullptr) return;
      for (int i = 0; i < 300 && results[half].ok(); ++i) {
        AllGatherCase c = SmallCase(2);
        c.hidden = 64 + i;
        results[half] =
            RunAndVerify(f, c, i % 2 ? CallStyle::kCoordinated : CallStyle::kPerRankThreads);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_TRUE(results[0].ok()) << results[0];
  EXPECT_TRUE(results[1].ok()) << results[1];
}

}  // namespace
}  // namespace ltx
