// Faults and load on real GPUs: a rank that never joins (also the last of eight, named by every
// caller), a late rank, ranks that disagree on the arguments (on the copy engines for the
// all-to-all too; also one rank of eight), a straggler after Reset and a graph of an
// earlier reset generation, a captured copy-engine call whose ranks disagree on one output (every
// rank fails), a rejected per-rank call (the peers' waits end at once), ranks on different paths
// for the same op, per-call timeouts, host-side waits that time out, recovery with Reset, many
// calls with random shapes and device subsets, per-rank callers with random delays, Runtime churn
// and two Runtimes at once. Each fault asserts the Status code and what its message names, and
// that no byte outside the outputs changed.
#include <cuda_runtime_api.h>
#include <dirent.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ltx/runtime.h"
#include "tools/testing/allgather_harness.h"
#include "tools/testing/alltoall_harness.h"
#include "tools/testing/gpu_fixture.h"
#include "tools/testing/rank_threads.h"

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

std::vector<int> AllButLast(int world) { return RankIndices(world - 1); }

// The peer-store transport (the tests force kernel protocols) and `timeout`.
RuntimeOptions WithTimeout(absl::Duration timeout) {
  RuntimeOptions options = OnPeerStores();
  options.timeout = timeout;
  return options;
}

// One collective's calls on a Runtime with a harness over its GPUs, as the fault tests drive
// them: the AllGather of SmallCase, or an all-to-all case of the same size.
class FaultTarget {
 public:
  virtual ~FaultTarget() = default;
  virtual Runtime& runtime() = 0;
  // Prepares the case (fresh inputs, poisoned outputs) and enqueues it in `style` on `ranks`
  // (every rank if empty), without waiting; with `rank1_disagrees` (per-rank calls), rank 1
  // passes a shape that disagrees with the others' and whose output fits in theirs. Returns
  // the first launch error.
  virtual absl::Status Launch(CallStyle style, const CallOptions& call,
                              const std::vector<int>& ranks, bool rank1_disagrees) = 0;
  virtual absl::Status Verify() = 0;
  virtual absl::Status VerifyGuards() = 0;
  // What the InvalidArgument of a disagreement names.
  virtual std::string disagreement() const = 0;
};

// The AllGather of SmallCase on a GpuFixture (not owned); rank 1 disagrees on the row size.
class AllGatherTarget : public FaultTarget {
 public:
  explicit AllGatherTarget(GpuFixture* f) : f_(f) {}
  Runtime& runtime() override { return *f_->runtime; }
  absl::Status Launch(CallStyle style, const CallOptions& call, const std::vector<int>& ranks,
                      bool rank1_disagrees) override {
    const AllGatherCase good = SmallCase(f_->runtime->world_size());
    if (!rank1_disagrees) return LaunchCase(*f_, good, style, call, ranks);
    AllGatherCase bad = good;
    bad.hidden = good.hidden / 2;
    const absl::Status prepared = f_->harness->Prepare(good);
    if (!prepared.ok()) return prepared;
    return RunOnRankThreads(f_->runtime->world_size(), [&](int rank) {
      return f_->runtime->AllGatherRank(rank, (rank == 1 ? bad : good).Shape(),
                                        f_->harness->Buffers(rank), call);
    });
  }
  absl::Status Verify() override { return f_->harness->Verify(); }
  absl::Status VerifyGuards() override { return f_->harness->VerifyGuards(); }
  std::string disagreement() const override { return "row size in bytes"; }

 private:
  GpuFixture* f_;
};

// An all-to-all (sequence -> heads, batch 2, uneven counts, two heads per rank) on its own
// Runtime and harness; rank 1 disagrees on the head split (one of its heads moved to rank 0).
class AllToAllTarget : public FaultTarget {
 public:
  // Null after a (reported) failure.
  static std::unique_ptr<AllToAllTarget> Create(std::vector<int> devices, RuntimeOptions options) {
    options.devices = devices;
    absl::StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Create(options);
    EXPECT_TRUE(runtime.ok()) << runtime.status();
    absl::StatusOr<std::unique_ptr<AllToAllHarness>> harness =
        AllToAllHarness::Create(devices, kCapacity, kCapacity, /*seed=*/devices.size() * 31);
    EXPECT_TRUE(harness.ok()) << harness.status();
    if (!runtime.ok() || !harness.ok()) return nullptr;
    return std::unique_ptr<AllToAllTarget>(
        new AllToAllTarget(std::move(*runtime), std::move(*harness)));
  }
  Runtime& runtime() override { return *runtime_; }
  absl::Status Launch(CallStyle style, const CallOptions& call, const std::vector<int>& ranks,
                      bool rank1_disagrees) override {
    const absl::Status prepared = harness_->Prepare(good_);
    if (!prepared.ok()) return prepared;
    if (style == CallStyle::kCoordinated) {
      return runtime_->AllToAll(good_.Shape(), harness_->AllBuffers(), call).status();
    }
    const std::vector<int> callers = ranks.empty() ? RankIndices(world()) : ranks;
    return RunOnRankThreads(static_cast<int>(callers.size()), [&](int i) {
      const int rank = callers[i];
      const bool bad = rank1_disagrees && rank == 1;
      return runtime_->AllToAllRank(rank, (bad ? bad_ : good_).Shape(), harness_->Buffers(rank),
                                    call);
    });
  }
  absl::Status Verify() override { return harness_->Verify(); }
  absl::Status VerifyGuards() override { return harness_->VerifyGuards(); }
  std::string disagreement() const override { return "(digest)"; }

 private:
  static constexpr int64_t kCapacity = int64_t{4} << 20;

  AllToAllTarget(std::unique_ptr<Runtime> runtime, std::unique_ptr<AllToAllHarness> harness)
      : runtime_(std::move(runtime)), harness_(std::move(harness)) {
    good_.batch = 2;
    good_.heads = 2 * world();
    good_.head_dim = 32;
    for (int rank = 0; rank < world(); ++rank) good_.token_counts.push_back(3 + rank);
    bad_ = good_;
    bad_.head_counts.assign(world(), 2);
    bad_.head_counts[0] = 3;
    bad_.head_counts[1] = 1;
  }
  int world() const { return runtime_->world_size(); }

  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<AllToAllHarness> harness_;
  AllToAllCase good_;
  AllToAllCase bad_;
};

// After a failed op: new work is refused, Reset recovers, and the next call is byte-exact.
void ExpectRefusedThenRecovered(FaultTarget& target) {
  const absl::Status refused = target.Launch(CallStyle::kCoordinated, {}, {}, false);
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition) << refused;
  EXPECT_THAT(std::string(refused.message()), HasSubstr("Reset"));
  ASSERT_TRUE(target.runtime().Reset(absl::Seconds(30)).ok());
  EXPECT_TRUE(target.runtime().status().ok());
  for (CallStyle style : {CallStyle::kCoordinated, CallStyle::kPerRankThreads}) {
    absl::Status status = target.Launch(style, {}, {}, false);
    if (status.ok()) status = target.runtime().Synchronize(kTestWait);
    if (status.ok()) status = target.Verify();
    EXPECT_TRUE(status.ok()) << status;
  }
}
void ExpectRefusedThenRecovered(GpuFixture& f) {
  AllGatherTarget target(&f);
  ExpectRefusedThenRecovered(target);
}

class ProtocolFaultTest : public ::testing::TestWithParam<Protocol> {
 protected:
  void SetUp() override {
    if (GetParam() == Protocol::kCopyEngine) {
      LTX_SKIP_WHERE_COPY_ENGINES_REFUSED(TestRankDevices(2));
    }
  }
  CallOptions call() const {
    CallOptions call;
    call.protocol = GetParam();
    return call;
  }
};

// On `world` ranks of the layout with a Runtime timeout of `timeout`, every rank but the last
// calls AllGatherRank on `protocol` and the last never does: within the timeout and a second,
// Synchronize reports DeadlineExceeded naming the missing rank as the one waited for, by the
// first caller and, as having reported errors too, by every other caller; no byte outside the
// outputs changed, new work is refused, and after Reset every rank is byte-exact again.
void ExpectMissingLastRankTimesOutAndResetRecovers(int world, absl::Duration timeout,
                                                   Protocol protocol) {
  GpuFixture f = MakeGpuFixture(TestDevices(world), WithTimeout(timeout));
  ASSERT_NE(f.runtime, nullptr);
  CallOptions call;
  call.protocol = protocol;
  ASSERT_TRUE(RunAndVerify(f, SmallCase(world), CallStyle::kPerRankThreads, call).ok());

  const absl::Time start = absl::Now();
  ASSERT_TRUE(
      LaunchCase(f, SmallCase(world), CallStyle::kPerRankThreads, call, AllButLast(world)).ok());
  const absl::Status status = f.runtime->Synchronize(absl::Seconds(30));
  const absl::Duration took = absl::Now() - start;
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("all_gather #2"));
  EXPECT_THAT(std::string(status.message()),
              HasSubstr(absl::StrCat(
                  protocol == Protocol::kOneTrip ? "for data from" : "at entry for", " rank ",
                  world - 1, " (its flag showed")));
  if (world > 2) {
    std::vector<int> others = AllButLast(world);
    others.erase(others.begin());
    EXPECT_THAT(std::string(status.message()),
                HasSubstr(absl::StrCat("(rank(s) ", absl::StrJoin(others, ", "),
                                       " also reported errors)")));
  }
  EXPECT_GE(took, timeout);
  EXPECT_LT(took, timeout + absl::Seconds(1)) << "detected after " << took;
  EXPECT_EQ(f.runtime->status().code(), absl::StatusCode::kDeadlineExceeded);
  const absl::Status guards = f.harness->VerifyGuards();
  EXPECT_TRUE(guards.ok()) << guards;
  ExpectRefusedThenRecovered(f);
}

TEST_P(ProtocolFaultTest, RankThatNeverJoinsTimesOutAndResetRecovers) {
  LTX_REQUIRE_RANKS(2);
  ExpectMissingLastRankTimesOutAndResetRecovers(TestWorldSize(2), absl::Seconds(1), GetParam());
}

// Eight ranks (shared GPUs where there are fewer) and a short timeout: ranks 0..6 call, rank 7
// never does, and each of the seven callers gives the op up on its own, waiting for rank 7.
TEST_P(ProtocolFaultTest, MissingRankAmongEightIsNamedByEveryCaller) {
  LTX_REQUIRE_RANKS(8);
  const std::vector<int> devices = TestRankDevices(8);
  if (GetParam() == Protocol::kCopyEngine) LTX_SKIP_WHERE_COPY_ENGINES_REFUSED(devices);
  ExpectMissingLastRankTimesOutAndResetRecovers(static_cast<int>(devices.size()),
                                                absl::Milliseconds(300), GetParam());
}

// Copy-engine calls of either collective, on the copy-engine transport and as
// Protocol::kCopyEngine on the peer-store transport: a rank that never joins (DeadlineExceeded
// within the timeout and a second), then ranks that disagree (InvalidArgument).
enum class FaultCollective { kAllGather, kAllToAll };
class CopyEngineFaultTest
    : public ::testing::TestWithParam<std::tuple<Transport, FaultCollective>> {};

TEST_P(CopyEngineFaultTest, TimesOutDisagreesAndRecovers) {
  LTX_REQUIRE_RANKS(2);
  LTX_SKIP_WHERE_COPY_ENGINES_REFUSED(TestRankDevices(2));
  const int world = TestWorldSize(2);
  const absl::Duration timeout = absl::Milliseconds(500);
  RuntimeOptions options = WithTimeout(timeout);
  options.transport = std::get<0>(GetParam());
  GpuFixture gather;
  std::unique_ptr<FaultTarget> target;
  if (std::get<1>(GetParam()) == FaultCollective::kAllGather) {
    gather = MakeGpuFixture(TestDevices(world), options);
    if (gather.runtime != nullptr) target = std::make_unique<AllGatherTarget>(&gather);
  } else {
    target = AllToAllTarget::Create(TestDevices(world), options);
  }
  ASSERT_NE(target, nullptr);
  CallOptions call;
  call.protocol = Protocol::kCopyEngine;
  ASSERT_TRUE(target->Launch(CallStyle::kPerRankThreads, call, {}, false).ok());
  ASSERT_TRUE(target->runtime().Synchronize(kTestWait).ok());
  ASSERT_TRUE(target->Verify().ok());

  // A rank that never joins: the others' calls return, and their exit kernels give up.
  const absl::Time start = absl::Now();
  ASSERT_TRUE(target->Launch(CallStyle::kPerRankThreads, call, AllButLast(world), false).ok());
  absl::Status status = target->runtime().Synchronize(kTestWait);
  const absl::Duration took = absl::Now() - start;
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  EXPECT_THAT(std::string(status.message()),
              HasSubstr(std::get<1>(GetParam()) == FaultCollective::kAllGather ? "all_gather #2"
                                                                               : "all_to_all #2"));
  EXPECT_THAT(std::string(status.message()),
              HasSubstr(absl::StrCat("at exit for rank ", world - 1)));
  EXPECT_LT(took, timeout + absl::Seconds(1)) << "detected after " << took;
  EXPECT_TRUE(target->VerifyGuards().ok());
  ExpectRefusedThenRecovered(*target);

  // Ranks that disagree: InvalidArgument on every rank, naming the field. The rank that pairs
  // the two returns the error; a rank that arrived before it returned OK, one after it
  // FailedPrecondition.
  const absl::Status launched = target->Launch(CallStyle::kPerRankThreads, call, {}, true);
  EXPECT_TRUE(launched.ok() || absl::IsInvalidArgument(launched) ||
              absl::IsFailedPrecondition(launched))
      << launched;
  status = target->runtime().Synchronize(kTestWait);
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr(target->disagreement()));
  EXPECT_TRUE(target->VerifyGuards().ok());
  ExpectRefusedThenRecovered(*target);
}

TEST(FaultTest, LateRankWithinTheTimeoutSucceeds) {
  LTX_REQUIRE_RANKS(2);
  const int world = TestWorldSize(2);
  const absl::Duration timeout = absl::Seconds(2);
  GpuFixture f = MakeGpuFixture(TestDevices(world), WithTimeout(timeout));
  ASSERT_NE(f.runtime, nullptr);
  const AllGatherCase c = SmallCase(world);
  ASSERT_TRUE(LaunchCase(f, c, CallStyle::kPerRankThreads, {}, AllButLast(world)).ok());
  absl::SleepFor(timeout / 2);
  ASSERT_TRUE(f.runtime->AllGatherRank(world - 1, c.Shape(), f.harness->Buffers(world - 1)).ok());
  const absl::Status status = f.runtime->Synchronize(absl::Seconds(30));
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_TRUE(f.harness->Verify().ok());
}

// Rank `disagreeing` calls with `bad` while every other rank calls with `good`, each from its
// own thread; all must fail with InvalidArgument naming `field` and the disagreeing rank, touch
// nothing outside the outputs, and recover after Reset. (A rank that calls after the
// disagreement was already recorded gets the error from its call instead of launching.)
void ExpectMismatchDetected(const AllGatherCase& good, const AllGatherCase& bad,
                            const std::string& field, const CallOptions& call,
                            int disagreeing = 1) {
  const int world = static_cast<int>(good.token_counts.size());
  GpuFixture f = MakeGpuFixture(TestDevices(world), WithTimeout(absl::Seconds(2)));
  ASSERT_NE(f.runtime, nullptr);
  ASSERT_TRUE(f.harness->Prepare(good).ok());
  std::vector<absl::Status> launches(world);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world; ++rank) {
    threads.emplace_back([&, rank] {
      const AllGatherShape shape = rank == disagreeing ? bad.Shape() : good.Shape();
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
  EXPECT_THAT(std::string(status.message()), HasSubstr(absl::StrCat("rank ", disagreeing)));
  const absl::Status guards = f.harness->VerifyGuards();
  EXPECT_TRUE(guards.ok()) << guards;
  ExpectRefusedThenRecovered(f);
}

INSTANTIATE_TEST_SUITE_P(
    TransportsAndCollectives, CopyEngineFaultTest,
    ::testing::Combine(::testing::Values(Transport::kCopyEngine, Transport::kPeerStores),
                       ::testing::Values(FaultCollective::kAllGather, FaultCollective::kAllToAll)),
    [](const ::testing::TestParamInfo<std::tuple<Transport, FaultCollective>>& info) {
      return absl::StrCat(
          std::get<0>(info.param) == Transport::kCopyEngine ? "CopyEngineTransport"
                                                             : "PeerStoreTransport",
          std::get<1>(info.param) == FaultCollective::kAllGather ? "AllGather" : "AllToAll");
    });

TEST_P(ProtocolFaultTest, RanksThatDisagreeOnTheCountsFail) {
  LTX_REQUIRE_RANKS(2);
  const AllGatherCase good = SmallCase(TestWorldSize(2));
  AllGatherCase bad = good;
  std::swap(bad.token_counts[0], bad.token_counts[1]);  // Same total, other split.
  ExpectMismatchDetected(good, bad, "token_counts", call());
}

TEST_P(ProtocolFaultTest, RanksThatDisagreeOnTheRowSizeFail) {
  LTX_REQUIRE_RANKS(2);
  const AllGatherCase good = SmallCase(TestWorldSize(2));
  AllGatherCase bad = good;
  bad.hidden = good.hidden / 2;
  ExpectMismatchDetected(good, bad, "row size in bytes", call());
}

TEST_P(ProtocolFaultTest, RanksThatDisagreeOnTheDtypeFail) {
  LTX_REQUIRE_RANKS(2);
  const AllGatherCase good = SmallCase(TestWorldSize(2));
  AllGatherCase bad = good;
  bad.dtype = DataType::kFloat16;  // Same element size as bf16.
  ExpectMismatchDetected(good, bad, "dtype: rank", call());
}

// Eight ranks (shared GPUs where there are fewer), of which only rank 5 disagrees: on the row
// size (a smaller hidden, so that its own shard, which it stores by its own view, stays inside
// its output), then on the token counts (its view swaps the counts of ranks 5 and 6: the same
// total). Every rank's op fails with InvalidArgument naming rank 5, nothing outside the outputs
// changes, and after Reset an op of every rank is byte-exact.
TEST_P(ProtocolFaultTest, OneRankAmongEightThatDisagreesFailsTheOp) {
  LTX_REQUIRE_RANKS(8);
  const AllGatherCase good = SmallCase(static_cast<int>(TestRankDevices(8).size()));
  AllGatherCase smaller_rows = good;
  smaller_rows.hidden = good.hidden - 8;
  ExpectMismatchDetected(good, smaller_rows, "row size in bytes", call(), /*disagreeing=*/5);
  AllGatherCase other_counts = good;
  std::swap(other_counts.token_counts[5], other_counts.token_counts[6]);
  ExpectMismatchDetected(good, other_counts, "token_counts", call(), /*disagreeing=*/5);
}

INSTANTIATE_TEST_SUITE_P(Protocols, ProtocolFaultTest,
                         ::testing::Values(Protocol::kDirect, Protocol::kOneTrip),
                         [](const ::testing::TestParamInfo<Protocol>& info) {
                           return info.param == Protocol::kDirect ? "Direct" : "OneTrip";
                         });

// ---------------------------------------------------------------------------------------------
// Reset generations: a straggler from before a Reset, and a graph captured before it.

// Every rank's output bytes of the harness's current case.
std::vector<std::vector<uint8_t>> ReadOutputs(GpuFixture& f) {
  std::vector<std::vector<uint8_t>> outputs;
  for (int rank = 0; rank < f.runtime->world_size(); ++rank) {
    std::vector<uint8_t> bytes(f.harness->layout().output_bytes);
    EXPECT_EQ(
        cudaMemcpy(bytes.data(), f.harness->Buffers(rank).output, bytes.size(), cudaMemcpyDefault),
        cudaSuccess);
    outputs.push_back(std::move(bytes));
  }
  return outputs;
}

TEST(GenerationTest, StragglerAfterResetIsAbortedAndTouchesNothing) {
  LTX_REQUIRE_RANKS(2);
  GpuFixture f = MakeGpuFixture(TestDevices(2), WithTimeout(absl::Milliseconds(200)));
  ASSERT_NE(f.runtime, nullptr);
  const AllGatherCase c = SmallCase(2);
  const uint64_t stale = f.runtime->generation();
  CallOptions call;
  call.generation = stale;
  // Rank 0 calls the op; rank 1 is late for it, so rank 0 times out and the Runtime is reset.
  ASSERT_TRUE(LaunchCase(f, c, CallStyle::kPerRankThreads, call, {0}).ok());
  const absl::Status timed_out = f.runtime->Synchronize(kTestWait);
  EXPECT_EQ(timed_out.code(), absl::StatusCode::kDeadlineExceeded) << timed_out;
  ASSERT_TRUE(f.runtime->Reset(kTestWait).ok());
  EXPECT_EQ(f.runtime->generation(), stale + 1);

  // The late rank calls now, with the generation of its step: dropped, nothing launched.
  ASSERT_TRUE(f.harness->Prepare(c).ok());
  const std::vector<std::vector<uint8_t>> before = ReadOutputs(f);
  const absl::Status late = f.runtime->AllGatherRank(1, c.Shape(), f.harness->Buffers(1), call);
  EXPECT_EQ(late.code(), absl::StatusCode::kAborted) << late;
  EXPECT_THAT(std::string(late.message()),
              HasSubstr(absl::StrCat("rank 1: call issued for reset generation ", stale,
                                     ", but the Runtime was Reset since (now ", stale + 1, ")")));
  EXPECT_TRUE(f.runtime->status().ok()) << f.runtime->status();
  ASSERT_TRUE(f.harness->SynchronizeStreams().ok());
  EXPECT_TRUE(ReadOutputs(f) == before) << "the dropped call changed an output";

  // Every rank in the new generation: byte-exact.
  call.generation = f.runtime->generation();
  for (CallStyle style : {CallStyle::kPerRankThreads, CallStyle::kCoordinated}) {
    const absl::Status status = RunAndVerify(f, c, style, call);
    EXPECT_TRUE(status.ok()) << status;
  }
}

TEST_P(ProtocolFaultTest, GraphCapturedBeforeResetDisagreesWithAFreshCall) {
  LTX_REQUIRE_RANKS(2);
  GpuFixture f = MakeGpuFixture(TestDevices(2), WithTimeout(absl::Seconds(5)));
  ASSERT_NE(f.runtime, nullptr);
  const AllGatherCase c = SmallCase(2);
  ASSERT_TRUE(f.harness->Prepare(c).ok());
  const RankBuffers rank0 = f.harness->Buffers(0);
  CapturedRankCalls stale;
  const auto capture_rank0 = [&](int) {
    return f.runtime->AllGatherRank(0, c.Shape(), rank0, call());
  };
  ASSERT_TRUE(stale.Capture({0}, {rank0}, capture_rank0).ok());
  ASSERT_TRUE(f.runtime->Reset(kTestWait).ok());
  // Rank 0 replays its graph of generation 0; rank 1 calls in generation 1.
  const absl::Time start = absl::Now();
  ASSERT_TRUE(stale.Replay({0}, {rank0}).ok());
  ASSERT_TRUE(f.runtime->AllGatherRank(1, c.Shape(), f.harness->Buffers(1), call()).ok());
  ASSERT_TRUE(f.harness->SynchronizeStreams().ok());
  const absl::Duration took = absl::Now() - start;
  const absl::Status status = f.runtime->status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("ranks disagree on the reset generation"));
  EXPECT_LT(took, absl::Seconds(1));
  EXPECT_TRUE(f.harness->VerifyGuards().ok());
  ExpectRefusedThenRecovered(f);
}

// Copy-engine calls captured into CUDA graphs, where rank 1 replays a graph captured with another
// output than the one rank 0 captured for it: rank 0 finds the output mismatch and opens none of
// its copies, so rank 1's output lacks rank 0's part. Rank 0 abandons the op, so rank 1 cannot
// finish it as if complete: it reports an error too, long before the timeout.
TEST(CapturedCopyEngineFaultTest, OneSidedOutputMismatchFailsEveryRank) {
  LTX_REQUIRE_RANKS(2);
  GpuFixture f = MakeGpuFixture(TestDevices(2), WithTimeout(absl::Seconds(5)));
  ASSERT_NE(f.runtime, nullptr);
  const std::vector<int> devices = f.runtime->devices();
  const AllGatherCase c = SmallCase(2);
  ASSERT_TRUE(f.harness->Prepare(c).ok());
  const std::vector<RankBuffers> buffers = f.harness->AllBuffers();
  CallOptions call;
  call.protocol = Protocol::kCopyEngine;
  CapturedRankCalls captured;
  ASSERT_TRUE(captured.CaptureAllGather(*f.runtime, c.Shape(), buffers, call).ok());
  void* other_output = nullptr;
  ASSERT_EQ(cudaSetDevice(devices[1]), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&other_output, f.harness->layout().output_bytes), cudaSuccess);
  std::vector<RankBuffers> moved = buffers;
  moved[1].output = other_output;
  CapturedRankCalls captured_moved;
  ASSERT_TRUE(captured_moved.CaptureAllGather(*f.runtime, c.Shape(), moved, call).ok());

  const absl::Time start = absl::Now();
  ASSERT_TRUE(captured.Replay(devices, buffers, {0}).ok());
  ASSERT_TRUE(captured_moved.Replay(devices, moved, {1}).ok());
  ASSERT_TRUE(f.harness->SynchronizeStreams().ok());
  const absl::Duration took = absl::Now() - start;
  ASSERT_EQ(cudaSetDevice(devices[1]), cudaSuccess);
  EXPECT_EQ(cudaFree(other_output), cudaSuccess);
  const absl::Status status = f.runtime->status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("output address"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("(rank(s) 1 also reported errors)"))
      << "rank 1 finished the op without rank 0's part";
  EXPECT_LT(took, absl::Seconds(1));
  EXPECT_TRUE(f.harness->VerifyGuards().ok());
  ExpectRefusedThenRecovered(f);
}

// A per-rank call that its rank rejects (a shape the layout refuses; a null output) while the
// other rank's kernel already waits for it: the Runtime stops with the rejection and tells the
// devices to give up, so the waiting kernel ends at once, not after its timeout.
TEST(FaultTest, RejectedRankCallEndsThePeersWaitAtOnce) {
  LTX_REQUIRE_RANKS(2);
  const absl::Duration timeout = absl::Seconds(5);
  GpuFixture f = MakeGpuFixture(TestDevices(2), WithTimeout(timeout));
  ASSERT_NE(f.runtime, nullptr);
  const AllGatherCase c = SmallCase(2);
  ASSERT_TRUE(f.harness->Prepare(c).ok());
  CallOptions call;
  call.protocol = Protocol::kDirect;
  for (const bool bad_shape : {true, false}) {
    SCOPED_TRACE(bad_shape ? "shape refused" : "null output");
    const absl::Time start = absl::Now();
    ASSERT_TRUE(f.runtime->AllGatherRank(0, c.Shape(), f.harness->Buffers(0), call).ok());
    AllGatherShape shape = c.Shape();
    RankBuffers buffers = f.harness->Buffers(1);
    if (bad_shape) {
      shape.hidden = 0;
    } else {
      buffers.output = nullptr;
    }
    const absl::Status rejected = f.runtime->AllGatherRank(1, shape, buffers, call);
    EXPECT_EQ(rejected.code(), absl::StatusCode::kInvalidArgument) << rejected;
    const absl::Status status = f.runtime->Synchronize(kTestWait);
    const absl::Duration took = absl::Now() - start;
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_LT(took, timeout / 5) << "rank 0's kernel waited for the rejected call until its timeout";
    ASSERT_TRUE(f.runtime->Reset(kTestWait).ok());
  }
  const absl::Status again = RunAndVerify(f, c, CallStyle::kPerRankThreads, call);
  EXPECT_TRUE(again.ok()) << again;
}

// ---------------------------------------------------------------------------------------------
// Ranks on different paths for the same op: InvalidArgument on every rank, long before the
// timeout.

// Ranks 0 and 1 each call `cases[rank]` with `calls[rank]` from their own thread on a Runtime
// of `options` with a 5 s timeout: the op must fail with InvalidArgument containing `what`
// within `within`, every failed call must be InvalidArgument (or FailedPrecondition, when made
// after the error was recorded), nothing outside the outputs may change, and Reset recovers.
void ExpectPathMismatchDetected(RuntimeOptions options, const std::vector<AllGatherCase>& cases,
                                const std::vector<CallOptions>& calls, const std::string& what,
                                absl::Duration within) {
  options.timeout = absl::Seconds(5);
  options.transport = Transport::kPeerStores;
  GpuFixture f = MakeGpuFixture(TestDevices(2), options);
  ASSERT_NE(f.runtime, nullptr);
  ASSERT_TRUE(f.harness->Prepare(cases[0]).ok());
  std::vector<absl::Status> launches(2);
  const absl::Time start = absl::Now();
  RunOnRankThreads(2, [&](int rank) {
    launches[rank] =
        f.runtime->AllGatherRank(rank, cases[rank].Shape(), f.harness->Buffers(rank), calls[rank]);
    return absl::OkStatus();
  }).IgnoreError();
  const absl::Status status = f.runtime->Synchronize(kTestWait);
  const absl::Duration took = absl::Now() - start;
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr(what));
  EXPECT_LT(took, within) << status;
  for (const absl::Status& launch : launches) {
    if (!launch.ok()) {
      EXPECT_TRUE(absl::IsInvalidArgument(launch) || absl::IsFailedPrecondition(launch)) << launch;
    }
  }
  EXPECT_TRUE(f.harness->VerifyGuards().ok());
  ExpectRefusedThenRecovered(f);
}

CallOptions WithProtocol(Protocol protocol) {
  CallOptions call;
  call.protocol = protocol;
  return call;
}

TEST(PathMismatchTest, OneTripAgainstDirectFailsFastOnBothRanks) {
  LTX_REQUIRE_RANKS(2);
  const AllGatherCase c = SmallCase(2);
  for (bool one_trip_first : {true, false}) {
    SCOPED_TRACE(one_trip_first ? "rank 0 one-trip" : "rank 0 direct");
    const Protocol first = one_trip_first ? Protocol::kOneTrip : Protocol::kDirect;
    const Protocol second = one_trip_first ? Protocol::kDirect : Protocol::kOneTrip;
    // Synchronize returns once both kernels ended: both gave up on the op long before the
    // timeout.
    ExpectPathMismatchDetected({}, {c, c}, {WithProtocol(first), WithProtocol(second)},
                               "ranks disagree on the protocol", absl::Seconds(1));
  }
}

TEST(PathMismatchTest, ShapesAcrossTheOneTripLimitFailFast) {
  LTX_REQUIRE_RANKS(2);
  RuntimeOptions options;
  const AllGatherCase direct = SmallCase(2);  // Largest shard: 2 * 4 * 512 = 4096 bytes.
  AllGatherCase one_trip = direct;
  one_trip.token_counts = {3, 2};  // Largest shard: 3072 bytes.
  options.one_trip_max_bytes = 3072;
  ExpectPathMismatchDetected(options, {direct, one_trip}, {CallOptions{}, CallOptions{}},
                             "ranks disagree on the protocol", absl::Seconds(1));
}

TEST(PathMismatchTest, CopyEnginesAgainstAKernelFailOnBothRanks) {
  LTX_REQUIRE_RANKS(2);
  LTX_SKIP_WHERE_COPY_ENGINES_REFUSED(TestRankDevices(2));
  const AllGatherCase c = SmallCase(2);
  const absl::Duration within = absl::Seconds(5) + absl::Seconds(1);
  for (Protocol kernel : {Protocol::kDirect, Protocol::kOneTrip}) {
    SCOPED_TRACE(ProtocolName(kernel));
    ExpectPathMismatchDetected({}, {c, c},
                               {WithProtocol(Protocol::kCopyEngine), WithProtocol(kernel)},
                               "ranks disagree on the protocol", within);
    ExpectPathMismatchDetected({}, {c, c},
                               {WithProtocol(kernel), WithProtocol(Protocol::kCopyEngine)},
                               "ranks disagree on the protocol", within);
  }
  // Shapes on two sides of copy_engine_min_bytes (where kAuto takes the copy engines: not where
  // ranks share GPUs).
  if (RanksShareGpus(TestRankDevices(2))) return;
  RuntimeOptions options;
  options.copy_engine_min_bytes = 4096;
  AllGatherCase small = c;
  small.token_counts = {3, 2};  // Largest shard 3072 bytes: a kernel.
  ExpectPathMismatchDetected(options, {c, small}, {CallOptions{}, CallOptions{}},
                             "ranks disagree on the protocol", within);
}

TEST(FaultTest, PerCallTimeoutOverridesTheRuntimeTimeout) {
  LTX_REQUIRE_RANKS(2);
  const int world = TestWorldSize(2);
  GpuFixture f = MakeGpuFixture(TestDevices(world), WithTimeout(absl::Seconds(60)));
  ASSERT_NE(f.runtime, nullptr);
  CallOptions call;
  call.timeout = absl::Milliseconds(300);
  const absl::Time start = absl::Now();
  ASSERT_TRUE(
      LaunchCase(f, SmallCase(world), CallStyle::kPerRankThreads, call, AllButLast(world)).ok());
  const absl::Status status = f.runtime->Synchronize(absl::Seconds(30));
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  // The device measures its own wait: at least the call's 300 ms, far below the Runtime's 60 s
  // (somewhat more than 300 ms where the GPU time-slices with another process's kernels).
  const std::string message(status.message());
  const size_t at = message.find("waited ");
  ASSERT_NE(at, std::string::npos) << status;
  const size_t from = at + std::string("waited ").size();
  absl::Duration waited;
  ASSERT_TRUE(absl::ParseDuration(message.substr(from, message.find(' ', from) - from), &waited))
      << status;
  EXPECT_GE(waited, absl::Milliseconds(300)) << status;
  EXPECT_LT(waited, absl::Seconds(2)) << status;
  ASSERT_TRUE(f.runtime->Reset(absl::Seconds(30)).ok());
}

TEST(FaultTest, HostWaitTimesOutWhenARankNeverLaunched) {
  LTX_REQUIRE_RANKS(2);
  const int world = TestWorldSize(2);
  GpuFixture f = MakeGpuFixture(TestDevices(world), WithTimeout(absl::Seconds(3)));
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
  LTX_REQUIRE_RANKS(2);
  const int world = TestWorldSize(2);
  GpuFixture f = MakeGpuFixture(TestDevices(world), WithTimeout(absl::Milliseconds(500)));
  ASSERT_NE(f.runtime, nullptr);
  ASSERT_TRUE(
      LaunchCase(f, SmallCase(world), CallStyle::kPerRankThreads, {}, AllButLast(world)).ok());
  f.runtime.reset();  // Kernels still waiting: the destructor must not hang or crash.
  GpuFixture again = MakeGpuFixture(TestDevices(world));
  ASSERT_NE(again.runtime, nullptr);
  EXPECT_TRUE(RunAndVerify(again, SmallCase(world), CallStyle::kCoordinated).ok());
}

TEST(LoadTest, ManyCallsWithRandomShapesDtypesAndDeviceSubsets) {
  LTX_REQUIRE_RANKS(2);
  const std::vector<std::vector<int>> subsets = SubLayouts(TestRankDevices(2));
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
  LTX_REQUIRE_RANKS(2);
  const int world = TestWorldSize(2);
  GpuFixture f = MakeGpuFixture(TestDevices(world));
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

// The number of entries of directory `path` (besides . and ..); -1 if it cannot be read.
int CountEntries(const char* path) {
  DIR* dir = opendir(path);
  if (dir == nullptr) return -1;
  int entries = 0;
  while (const dirent* entry = readdir(dir)) {
    if (std::string(entry->d_name) != "." && std::string(entry->d_name) != "..") ++entries;
  }
  closedir(dir);
  return entries;
}

// What a Runtime could leak: the used memory of each GPU, open file descriptors, threads.
struct HeldResources {
  std::vector<int64_t> used_bytes;  // Per GPU of the list measured.
  int descriptors = 0;
  int threads = 0;
};

HeldResources Measure(const std::vector<int>& gpus) {
  HeldResources held;
  for (int gpu : gpus) {
    size_t free_bytes = 0;
    size_t total_bytes = 0;
    EXPECT_EQ(cudaSetDevice(gpu), cudaSuccess);
    EXPECT_EQ(cudaMemGetInfo(&free_bytes, &total_bytes), cudaSuccess);
    held.used_bytes.push_back(static_cast<int64_t>(total_bytes - free_bytes));
  }
  held.descriptors = CountEntries("/proc/self/fd");  // This count's own descriptor included.
  held.threads = CountEntries("/proc/self/task");
  return held;
}

// A hundred Runtimes, created and destroyed one after another, hold nothing afterwards: device
// memory, file descriptors and threads as after the first (within a margin far below one
// Runtime's share per iteration).
TEST(LoadTest, CreateAndDestroyARuntimeHundredTimes) {
  LTX_REQUIRE_RANKS(2);
  constexpr int64_t kMemoryMargin = int64_t{16} << 20;
  constexpr int kDescriptorMargin = 4;
  constexpr int kThreadMargin = 2;
  RuntimeOptions options;
  options.devices = TestRankDevices(2);
  const std::vector<int> gpus = DistinctDevices(options.devices);
  ASSERT_TRUE(Runtime::Create(options).ok());  // What CUDA sets up once per process is set up.
  const HeldResources before = Measure(gpus);
  for (int i = 0; i < 100; ++i) {
    auto runtime = Runtime::Create(options);
    ASSERT_TRUE(runtime.ok()) << "iteration " << i << ": " << runtime.status();
  }
  const HeldResources after = Measure(gpus);
  for (size_t i = 0; i < gpus.size(); ++i) {
    EXPECT_LE(after.used_bytes[i] - before.used_bytes[i], kMemoryMargin)
        << "GPU " << gpus[i] << ": " << before.used_bytes[i] << " bytes used before, "
        << after.used_bytes[i] << " after";
  }
  EXPECT_LE(after.descriptors - before.descriptors, kDescriptorMargin)
      << before.descriptors << " file descriptors open before, " << after.descriptors << " after";
  EXPECT_LE(after.threads - before.threads, kThreadMargin)
      << before.threads << " threads before, " << after.threads << " after";
}

// Two Runtimes at once, over ranks 0, 1 and ranks 2, 3 of a four-rank layout (disjoint GPUs
// where there are four, the same GPUs where the ranks share them). Runtimes that run at once on
// one GPU split its SMs between them, so that every rank's kernel is resident at once
// (kernels/PROTOCOL.md, "Ranks that share a GPU", other Runtimes): each rank gets the SMs
// divided by the ranks of both on its GPU (no compute runs beside them here).
TEST(LoadTest, TwoRuntimesOverDisjointRanksAtOnce) {
  LTX_REQUIRE_RANKS(4);
  const std::vector<int> devices = TestDevices(4);
  RuntimeOptions options;
  for (int device : devices) {
    int sms = 0;
    ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), cudaSuccess);
    const int ranks_on_gpu = static_cast<int>(std::count(devices.begin(), devices.end(), device));
    const int share = std::max(sms / ranks_on_gpu, 1);
    options.max_blocks = options.max_blocks == 0 ? share : std::min(options.max_blocks, share);
  }
  std::vector<absl::Status> results(2);
  std::vector<std::thread> threads;
  for (int half = 0; half < 2; ++half) {
    threads.emplace_back([&results, &devices, &options, half] {
      GpuFixture f = MakeGpuFixture({devices[2 * half], devices[2 * half + 1]}, options);
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
