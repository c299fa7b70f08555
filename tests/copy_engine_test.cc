// GPU tests of the copy-engine protocol's per-rank calls, on the copy-engine transport and as
// Protocol::kCopyEngine on the peer-store transport: one host thread issuing every rank's calls
// (which must never wait for each other), ranks drifting apart by many ops, a rank that never
// calls, ops abandoned with their copies queued, a call that fails after it published while an
// earlier pair of its op is queued (three ranks or more), and a stuck peer; and of copy-engine
// calls captured into CUDA graphs on the peer-store transport: replays byte-exact, drifting
// replays, a rank that never replays or never captures, a kernel against the copy engines,
// Reset. Random data, outputs poisoned before every call, byte-exact checks, on at least two
// ranks of the layout.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/protocols/copy_plan.h"
#include "ltx/runtime.h"
#include "tests/busy_kernel.h"
#include "tools/testing/allgather_harness.h"
#include "tools/testing/gpu_fixture.h"
#include "tools/testing/harness_ring.h"

namespace ltx {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kShardBytes = 64 * kMiB;

// The case of `bytes` per rank in bf16 (hidden 4096), batch 1.
AllGatherCase CaseOf(int world, int64_t bytes) {
  AllGatherCase c;
  c.dtype = DataType::kBFloat16;
  c.hidden = 4096;
  c.token_counts.assign(world, bytes / (c.hidden * 2));
  return c;
}

// Every rank's calls run on the copy engines: the copy-engine transport, or Protocol::kCopyEngine
// on the peer-store transport.
class CopyEngineRankCallTest : public ::testing::TestWithParam<Transport> {
 protected:
  void SetUp() override { SetUpRanks(2); }

  // The Runtime and harness on the layout's ranks, at least `min_ranks` of them.
  void SetUpRanks(int min_ranks) {
    LTX_REQUIRE_RANKS(min_ranks);
    RuntimeOptions options;
    options.devices = TestRankDevices(min_ranks);
    LTX_SKIP_WHERE_COPY_ENGINES_REFUSED(options.devices);
    world_ = static_cast<int>(options.devices.size());
    options.transport = GetParam();
    options.timeout = absl::Seconds(2);
    absl::StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Create(options);
    ASSERT_TRUE(runtime.ok()) << runtime.status();
    runtime_ = std::move(*runtime);
    absl::StatusOr<std::unique_ptr<AllGatherHarness>> harness = AllGatherHarness::Create(
        options.devices, kShardBytes, world_ * kShardBytes, /*seed=*/4242 + world_);
    ASSERT_TRUE(harness.ok()) << harness.status();
    harness_ = std::move(*harness);
    call_.protocol = Protocol::kCopyEngine;
  }

  // Calls `ranks`, in that order, from this thread, for op `c` (already prepared).
  absl::Status CallInOrder(const AllGatherCase& c, const std::vector<int>& ranks) {
    for (int rank : ranks) {
      const absl::Status status =
          runtime_->AllGatherRank(rank, c.Shape(), harness_->Buffers(rank), call_);
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }

  // One op of `c` from fresh data and poisoned outputs, called in `order`, byte-exact.
  void ExpectOneOpByteExact(const AllGatherCase& c, const std::vector<int>& order) {
    ASSERT_TRUE(harness_->Prepare(c).ok());
    ASSERT_TRUE(CallInOrder(c, order).ok());
    const absl::Status status = runtime_->Synchronize(kTestWait);
    ASSERT_TRUE(status.ok()) << status;
    const absl::Status verified = harness_->Verify();
    EXPECT_TRUE(verified.ok()) << verified;
  }

  // Every rank's output bytes.
  std::vector<std::vector<uint8_t>> ReadOutputs() {
    std::vector<std::vector<uint8_t>> outputs;
    for (int rank = 0; rank < world_; ++rank) {
      std::vector<uint8_t> bytes(harness_->layout().output_bytes);
      EXPECT_EQ(cudaMemcpy(bytes.data(), harness_->Buffers(rank).output, bytes.size(),
                           cudaMemcpyDefault),
                cudaSuccess);
      outputs.push_back(std::move(bytes));
    }
    return outputs;
  }

  // Holds every rank's stream with a busy kernel (`late` for `late_for`, every other rank for
  // `for_each`), so that the calls that follow are queued before any of their copies runs.
  void HoldStreams(absl::Duration for_each, int late = -1, absl::Duration late_for = {}) {
    for (int rank = 0; rank < world_; ++rank) {
      ASSERT_EQ(cudaSetDevice(runtime_->devices()[rank]), cudaSuccess);
      ASSERT_EQ(LaunchBusyKernel(absl::ToInt64Nanoseconds(rank == late ? late_for : for_each),
                                 harness_->Buffers(rank).stream),
                cudaSuccess);
    }
  }

  // Asserts that every rank's stream is still busy: the calls were queued before anything ran.
  void ExpectStreamsStillHeld() {
    for (int rank = 0; rank < world_; ++rank) {
      ASSERT_EQ(cudaStreamQuery(harness_->Buffers(rank).stream), cudaErrorNotReady)
          << "rank " << rank << "'s GPU finished its busy kernel before the calls were queued";
    }
  }

  // Queues a fill of every rank's output with `stamp` on the rank's stream.
  void StampOutputs(uint8_t stamp) {
    for (int rank = 0; rank < world_; ++rank) {
      ASSERT_EQ(cudaSetDevice(runtime_->devices()[rank]), cudaSuccess);
      ASSERT_EQ(cudaMemsetAsync(harness_->Buffers(rank).output, stamp,
                                harness_->layout().output_bytes, harness_->Buffers(rank).stream),
                cudaSuccess);
    }
  }

  // Expects every byte of every rank's output to be `stamp` (the streams must be idle).
  void ExpectOutputsHold(uint8_t stamp, const std::string& what) {
    const std::vector<std::vector<uint8_t>> outputs = ReadOutputs();
    for (int rank = 0; rank < world_; ++rank) {
      const int64_t overwritten =
          std::count_if(outputs[rank].begin(), outputs[rank].end(),
                        [stamp](uint8_t byte) { return byte != stamp; });
      EXPECT_EQ(overwritten, 0) << "rank " << rank << ": " << what;
    }
  }

  int world_ = 0;
  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<AllGatherHarness> harness_;
  CallOptions call_;
};

std::vector<int> Ascending(int world) { return RankIndices(world); }

std::vector<int> Descending(int world) {
  std::vector<int> ranks;
  for (int rank = world - 1; rank >= 0; --rank) ranks.push_back(rank);
  return ranks;
}

TEST_P(CopyEngineRankCallTest, OneThreadIssuesEveryRankAt64MiBInEitherOrder) {
  const AllGatherCase c = CaseOf(world_, kShardBytes);
  for (const std::vector<int>& order : {Ascending(world_), Descending(world_)}) {
    for (int repeat = 0; repeat < 3; ++repeat) {
      SCOPED_TRACE(absl::StrCat("first rank ", order[0], ", repeat ", repeat));
      ASSERT_TRUE(harness_->Prepare(c).ok());  // Fresh data, poisoned outputs.
      const absl::Time start = absl::Now();
      ASSERT_TRUE(CallInOrder(c, order).ok());
      // No call waited for a later one (that would take the 2 s timeout).
      EXPECT_LT(absl::Now() - start, absl::Milliseconds(500));
      const absl::Status status = runtime_->Synchronize(kTestWait);
      ASSERT_TRUE(status.ok()) << status;
      const absl::Status verified = harness_->Verify();
      EXPECT_TRUE(verified.ok()) << verified;
    }
  }
}

// In each round one rank runs many ops ahead of the others (up to the pairing ring), then the
// others catch up in turns, without any host synchronisation; every op has its own buffers with
// fresh random data, and each is checked byte-exact once the round is over.
TEST_P(CopyEngineRankCallTest, RanksDriftApartWithoutHostSynchronisation) {
  constexpr int kLead = 12;
  constexpr int kRounds = 20;
  const AllGatherCase c = CaseOf(world_, kMiB);
  absl::StatusOr<HarnessRing<AllGatherHarness>> ring = HarnessRing<AllGatherHarness>::Create(
      runtime_->devices(), kLead, kMiB, world_ * kMiB, /*seed=*/77 + world_);
  ASSERT_TRUE(ring.ok()) << ring.status();
  for (int round = 0; round < kRounds; ++round) {
    const int leader = round % world_;
    for (int op = 0; op < kLead; ++op) ASSERT_TRUE(ring->slot(op).Prepare(c).ok());
    const auto call = [&](int op, int rank) {
      return runtime_->AllGatherRank(rank, c.Shape(), ring->Buffers(op, rank), call_);
    };
    for (int op = 0; op < kLead; ++op) ASSERT_TRUE(call(op, leader).ok());
    for (int op = 0; op < kLead; ++op) {
      for (int rank : Descending(world_)) {
        if (rank != leader) {
          ASSERT_TRUE(call(op, rank).ok());
        }
      }
    }
    const absl::Status status = runtime_->Synchronize(kTestWait);
    ASSERT_TRUE(status.ok()) << status;
    for (int op = 0; op < kLead; ++op) {
      const absl::Status verified = ring->Verify(op);
      ASSERT_TRUE(verified.ok()) << "round " << round << ", op " << op << ": " << verified;
    }
  }
  // And a fresh op after the drift, from poisoned outputs.
  ExpectOneOpByteExact(c, Ascending(world_));
}

// A rank that never calls: the others' calls return at once, their streams give up after the
// timeout with DeadlineExceeded, and nothing of the missing rank lands anywhere (its output and
// its shard in every output keep their poison). Reset recovers.
TEST_P(CopyEngineRankCallTest, MissingRankTimesOutOnTheDeviceAndTouchesNothing) {
  const int missing = world_ - 1;
  const AllGatherCase c = CaseOf(world_, 4 * kMiB);
  ASSERT_TRUE(harness_->Prepare(c).ok());
  const std::vector<std::vector<uint8_t>> before = ReadOutputs();
  const absl::Time start = absl::Now();
  std::vector<int> present = Ascending(world_);
  present.pop_back();
  ASSERT_TRUE(CallInOrder(c, present).ok());
  const absl::Status status = runtime_->Synchronize(kTestWait);
  const absl::Duration took = absl::Now() - start;
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("all_gather #1"));
  EXPECT_THAT(std::string(status.message()), HasSubstr(absl::StrCat("for rank ", missing)));
  EXPECT_LT(took, absl::Seconds(2) + absl::Seconds(1)) << "detected after " << took;
  ASSERT_TRUE(harness_->SynchronizeStreams().ok());
  const std::vector<std::vector<uint8_t>> after = ReadOutputs();
  EXPECT_TRUE(after[missing] == before[missing]) << "the missing rank's output changed";
  const ShardGeometry shard = harness_->layout().GeometryOf(missing);
  for (int rank = 0; rank < missing; ++rank) {
    for (int64_t b = 0; b < shard.batch; ++b) {
      const int64_t offset = b * shard.output_batch_stride + shard.output_offset;
      EXPECT_TRUE(std::equal(before[rank].begin() + offset,
                             before[rank].begin() + offset + shard.shard_bytes,
                             after[rank].begin() + offset))
          << "rank " << rank << " received a shard of the missing rank";
    }
  }
  // The late call is refused; Reset recovers.
  EXPECT_FALSE(CallInOrder(c, {missing}).ok());
  ASSERT_TRUE(runtime_->Reset(kTestWait).ok());
  ExpectOneOpByteExact(c, Descending(world_));
}

// Ops queued far ahead of the GPUs, then one on which the ranks disagree: the failure abandons
// the ops still waiting on the GPUs, whose copies are queued and cannot be recalled. Each
// stream goes on past an op only once that op's queued copies have landed, so a memset queued
// on every rank's stream after the calls is the last write into its output.
TEST_P(CopyEngineRankCallTest, QueuedCopiesLandBeforeAbandonedStreamsGoOn) {
  constexpr int kQueuedOps = 8;
  constexpr uint8_t kStamp = 0x5a;
  const AllGatherCase c = CaseOf(world_, 16 * kMiB);
  ASSERT_TRUE(harness_->Prepare(c).ok());
  // Hold every GPU, so that the host queues every op (and the failure) before any copy runs.
  ASSERT_NO_FATAL_FAILURE(HoldStreams(absl::Milliseconds(200)));
  for (int op = 0; op < kQueuedOps; ++op) ASSERT_TRUE(CallInOrder(c, Ascending(world_)).ok());
  AllGatherCase disagreeing = c;
  disagreeing.token_counts.back() /= 2;
  absl::Status failed;
  for (int rank = 0; rank < world_; ++rank) {
    const AllGatherShape shape = rank == world_ - 1 ? disagreeing.Shape() : c.Shape();
    const absl::Status status =
        runtime_->AllGatherRank(rank, shape, harness_->Buffers(rank), call_);
    if (failed.ok()) failed = status;
  }
  EXPECT_EQ(failed.code(), absl::StatusCode::kInvalidArgument) << failed;
  // Else the ops ran before the failure and the test shows nothing.
  ASSERT_NO_FATAL_FAILURE(ExpectStreamsStillHeld());
  ASSERT_NO_FATAL_FAILURE(StampOutputs(kStamp));
  EXPECT_EQ(runtime_->Synchronize(kTestWait).code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(runtime_->Reset(kTestWait).ok());  // Waits for every copy stream.
  ASSERT_TRUE(harness_->SynchronizeStreams().ok());  // And for the memsets.
  ExpectOutputsHold(kStamp, "bytes a copy stored after the stream went on");
  // The Runtime works again.
  ExpectOneOpByteExact(c, Ascending(world_));
}

// A peer whose stream other work holds far beyond the timeout, with many ops queued with it:
// the other rank's stream waits for the first op's flags, then once more for its queued copies,
// and then passes every later op at once (the peer is marked stuck), instead of waiting one
// more timeout per op. DeadlineExceeded; Reset recovers once the peer is free.
TEST_P(CopyEngineRankCallTest, AStuckPeerCostsOneExtraTimeoutNotOnePerOp) {
  constexpr int kQueuedOps = 8;
  constexpr absl::Duration kTimeout = absl::Milliseconds(300);
  constexpr absl::Duration kStuckFor = absl::Seconds(4);
  const AllGatherCase c = CaseOf(world_, kMiB);
  ASSERT_TRUE(harness_->Prepare(c).ok());
  const int stuck = world_ - 1;
  ASSERT_EQ(cudaSetDevice(runtime_->devices()[stuck]), cudaSuccess);
  ASSERT_EQ(LaunchBusyKernel(absl::ToInt64Nanoseconds(kStuckFor), harness_->Buffers(stuck).stream),
            cudaSuccess);
  CallOptions call = call_;
  call.timeout = kTimeout;
  const absl::Time start = absl::Now();
  for (int op = 0; op < kQueuedOps; ++op) {
    for (int rank : Ascending(world_)) {
      ASSERT_TRUE(runtime_->AllGatherRank(rank, c.Shape(), harness_->Buffers(rank), call).ok());
    }
  }
  ASSERT_EQ(cudaSetDevice(runtime_->devices()[0]), cudaSuccess);
  while (cudaStreamQuery(harness_->Buffers(0).stream) == cudaErrorNotReady &&
         absl::Now() - start < kStuckFor) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  const absl::Duration released = absl::Now() - start;
  // Two timeouts and a margin; one more timeout per op would take 2.7 s.
  EXPECT_LT(released, 2 * kTimeout + absl::Milliseconds(500))
      << "rank 0's stream went on after " << released;
  EXPECT_EQ(runtime_->Synchronize(kTestWait).code(), absl::StatusCode::kDeadlineExceeded);
  ASSERT_TRUE(runtime_->Reset(kTestWait).ok());
  ExpectOneOpByteExact(c, Descending(world_));
}

std::string TransportTestName(const ::testing::TestParamInfo<Transport>& info) {
  return info.param == Transport::kCopyEngine ? "CopyEngineTransport" : "PeerStoreTransport";
}

INSTANTIATE_TEST_SUITE_P(Transports, CopyEngineRankCallTest,
                         ::testing::Values(Transport::kCopyEngine, Transport::kPeerStores),
                         TransportTestName);

// The copy-engine calls of three ranks or more.
class CopyEngineDrainTest : public CopyEngineRankCallTest {
 protected:
  void SetUp() override { SetUpRanks(3); }
};

// A call that fails after it published, while an earlier pair of its op is queued. Every rank
// but the last calls first, from this thread: they pair with each other and queue their copies,
// which wait behind busy kernels on the ranks' streams (rank `late`'s for longest). Then the last
// rank calls with fewer tokens of its own: it publishes, finds the disagreement while pairing
// with rank 0, and fails, naming itself; the Runtime aborts the op. Each other rank's exit
// kernel, aborted, still waits for the copies queued into its output and out of its input (those
// from and to rank `late` land only when its busy kernel ends), so no byte lands in an output
// once its stream has gone on: a stamp queued on every stream right after the calls is intact
// once the streams are idle, and a fresh fill written after Synchronize returned is intact a
// timeout later. Reset recovers.
TEST_P(CopyEngineDrainTest, CallThatFailsAfterPublishingDrainsTheQueuedPairs) {
  constexpr absl::Duration kHeld = absl::Milliseconds(200);
  constexpr absl::Duration kLateHeld = absl::Milliseconds(600);  // Below the 2 s timeout.
  constexpr uint8_t kStamp = 0x3c;
  constexpr uint8_t kRefill = 0xc3;
  const int failing = world_ - 1;
  const AllGatherCase c = CaseOf(world_, 4 * kMiB);
  AllGatherCase fewer = c;
  fewer.token_counts[failing] /= 2;  // Its own shard stays inside its output.
  std::vector<int> pairing = Ascending(world_);
  pairing.pop_back();
  for (int late : {0, 1}) {
    SCOPED_TRACE(absl::StrCat("rank ", late, " held longest"));
    ASSERT_TRUE(harness_->Prepare(c).ok());
    ASSERT_NO_FATAL_FAILURE(HoldStreams(kHeld, late, kLateHeld));
    ASSERT_TRUE(CallInOrder(c, pairing).ok());
    const absl::Status failed =
        runtime_->AllGatherRank(failing, fewer.Shape(), harness_->Buffers(failing), call_);
    EXPECT_EQ(failed.code(), absl::StatusCode::kInvalidArgument) << failed;
    EXPECT_THAT(std::string(failed.message()), HasSubstr(absl::StrCat("rank ", failing, " has")));
    ASSERT_NO_FATAL_FAILURE(ExpectStreamsStillHeld());
    ASSERT_NO_FATAL_FAILURE(StampOutputs(kStamp));
    const absl::Status status = runtime_->Synchronize(kTestWait);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr(absl::StrCat("rank ", failing, " has")));
    ASSERT_TRUE(harness_->SynchronizeStreams().ok());
    ExpectOutputsHold(kStamp, "bytes a copy stored after the stream went on");
    ASSERT_NO_FATAL_FAILURE(StampOutputs(kRefill));
    ASSERT_TRUE(harness_->SynchronizeStreams().ok());
    absl::SleepFor(runtime_->options().timeout);
    ExpectOutputsHold(kRefill, "bytes a copy stored after Synchronize returned");
    ASSERT_TRUE(runtime_->Reset(kTestWait).ok());
  }
  ExpectOneOpByteExact(c, Ascending(world_));
}

INSTANTIATE_TEST_SUITE_P(Transports, CopyEngineDrainTest,
                         ::testing::Values(Transport::kCopyEngine, Transport::kPeerStores),
                         TransportTestName);

// ------------------------------------------------------------------ captured copy-engine calls

constexpr absl::Duration kGraphTimeout = absl::Seconds(1);

// A Runtime on the layout's ranks, at least two (peer stores, a short timeout), and calls on the
// copy engines.
class CopyEngineGraphTest : public ::testing::Test {
 protected:
  void SetUp() override {
    LTX_REQUIRE_RANKS(2);
    world_ = TestWorldSize(2);
    LTX_SKIP_WHERE_COPY_ENGINES_REFUSED(TestDevices(world_));
    RuntimeOptions options;
    options.timeout = kGraphTimeout;
    f_ = MakeGpuFixture(TestDevices(world_), options);
    ASSERT_NE(f_.runtime, nullptr);
    call_.protocol = Protocol::kCopyEngine;
  }

  // Uneven counts with an empty shard (rank 1), `batch` slices.
  AllGatherCase UnevenCase(int64_t batch) const {
    AllGatherCase c;
    c.dtype = DataType::kBFloat16;
    c.batch = batch;
    c.hidden = 1024;
    for (int rank = 0; rank < world_; ++rank) c.token_counts.push_back(rank == 1 ? 0 : 37 + rank);
    return c;
  }

  // Captures every rank's call of `c` (prepared) from one thread per rank, except `skipped`.
  absl::Status CaptureAll(CapturedRankCalls& graphs, const AllGatherCase& c,
                          const CallOptions& call, int skipped = -1) {
    const std::vector<RankBuffers> buffers = f_.harness->AllBuffers();
    return graphs.Capture(f_.runtime->devices(), buffers, [&](int rank) {
      if (rank == skipped) return absl::OkStatus();
      return f_.runtime->AllGatherRank(rank, c.Shape(), buffers[rank], call);
    });
  }

  // Every rank's output bytes.
  std::vector<std::vector<uint8_t>> ReadOutputs() {
    std::vector<std::vector<uint8_t>> outputs;
    for (int rank = 0; rank < world_; ++rank) {
      std::vector<uint8_t> bytes(f_.harness->layout().output_bytes);
      EXPECT_EQ(cudaMemcpy(bytes.data(), f_.harness->Buffers(rank).output, bytes.size(),
                           cudaMemcpyDefault),
                cudaSuccess);
      outputs.push_back(std::move(bytes));
    }
    return outputs;
  }

  // Replays every rank's graph once with fresh inputs and poisoned outputs, and verifies.
  absl::Status ReplayAndVerify(CapturedRankCalls& graphs) {
    absl::Status status = f_.harness->RefreshInputs();
    if (status.ok()) status = graphs.Replay(f_.runtime->devices(), f_.harness->AllBuffers());
    if (status.ok()) status = f_.harness->Verify();
    if (status.ok()) status = f_.runtime->status();
    return status;
  }

  int world_ = 0;
  GpuFixture f_;
  CallOptions call_;
};

TEST_F(CopyEngineGraphTest, ReplaysAreByteExactForBatchOneAndThree) {
  for (int64_t batch : {1, 3}) {
    SCOPED_TRACE(absl::StrCat("batch ", batch));
    const AllGatherCase c = UnevenCase(batch);
    ASSERT_TRUE(f_.harness->Prepare(c).ok());
    CapturedRankCalls graphs;
    const absl::Status captured = CaptureAll(graphs, c, call_);
    ASSERT_TRUE(captured.ok()) << captured;
    for (int replay = 0; replay < 20; ++replay) {
      const absl::Status status = ReplayAndVerify(graphs);
      ASSERT_TRUE(status.ok()) << "replay " << replay << ": " << status;
    }
    // Eager kernel calls interleave with the replays: the op numbers stay in step.
    EXPECT_TRUE(RunAndVerify(f_, c, CallStyle::kPerRankThreads).ok());
    const absl::Status status = ReplayAndVerify(graphs);
    EXPECT_TRUE(status.ok()) << status;
  }
}

TEST_F(CopyEngineGraphTest, LargeShardsReplayByteExact) {
  AllGatherCase c = CaseOf(world_, 8 * kMiB);
  c.token_counts[0] += 3;  // Uneven.
  ASSERT_TRUE(f_.harness->Prepare(c).ok());
  CapturedRankCalls graphs;
  ASSERT_TRUE(CaptureAll(graphs, c, call_).ok());
  for (int replay = 0; replay < 5; ++replay) {
    const absl::Status status = ReplayAndVerify(graphs);
    ASSERT_TRUE(status.ok()) << "replay " << replay << ": " << status;
  }
}

// Rank 0 replays several graphs before the others start, without host synchronisation; every
// op pairs on the devices. Each graph has its own buffers, with fresh random data before each
// of two rounds, and every op is checked byte-exact.
TEST_F(CopyEngineGraphTest, OneRankReplaysAheadWithoutHostSynchronisation) {
  constexpr int kAhead = 6;
  const AllGatherCase c = UnevenCase(2);
  absl::StatusOr<HarnessRing<AllGatherHarness>> ring = HarnessRing<AllGatherHarness>::Create(
      f_.runtime->devices(), kAhead, int64_t{1} << 20, int64_t{16} << 20, /*seed=*/91);
  ASSERT_TRUE(ring.ok()) << ring.status();
  std::vector<CapturedRankCalls> graphs(kAhead);
  for (int op = 0; op < kAhead; ++op) {
    ASSERT_TRUE(ring->slot(op).Prepare(c).ok());
    ASSERT_TRUE(graphs[op]
                    .CaptureAllGather(*f_.runtime, c.Shape(), ring->AllBuffers(op), call_)
                    .ok());
  }
  std::vector<int> others = Ascending(world_);
  others.erase(others.begin());
  for (int round = 0; round < 2; ++round) {
    for (int op = 0; op < kAhead; ++op) ASSERT_TRUE(ring->slot(op).RefreshInputs().ok());
    for (int op = 0; op < kAhead; ++op) {
      ASSERT_TRUE(graphs[op].Replay(f_.runtime->devices(), ring->AllBuffers(op), {0}).ok());
    }
    absl::SleepFor(absl::Milliseconds(100));
    for (int op = 0; op < kAhead; ++op) {
      ASSERT_TRUE(graphs[op].Replay(f_.runtime->devices(), ring->AllBuffers(op), others).ok());
    }
    for (int op = 0; op < kAhead; ++op) {
      const absl::Status verified = ring->Verify(op);
      EXPECT_TRUE(verified.ok()) << "round " << round << ", graph " << op << ": " << verified;
    }
    EXPECT_TRUE(f_.runtime->status().ok()) << f_.runtime->status();
  }
}

// A rank that never replays: the others give up by the deadline with DeadlineExceeded, store
// nothing (every output keeps its poison, the present ranks' own included), and Reset recovers;
// the graphs captured before the Reset then disagree on the reset generation.
TEST_F(CopyEngineGraphTest, MissingRankTimesOutAndNothingIsStored) {
  const int missing = world_ - 1;
  const AllGatherCase c = CaseOf(world_, 4 * kMiB);
  ASSERT_TRUE(f_.harness->Prepare(c).ok());
  CapturedRankCalls graphs;
  ASSERT_TRUE(CaptureAll(graphs, c, call_).ok());
  const std::vector<std::vector<uint8_t>> before = ReadOutputs();
  std::vector<int> present = Ascending(world_);
  present.pop_back();
  const absl::Time start = absl::Now();
  ASSERT_TRUE(graphs.Replay(f_.runtime->devices(), f_.harness->AllBuffers(), present).ok());
  ASSERT_TRUE(f_.harness->SynchronizeStreams().ok());
  const absl::Duration took = absl::Now() - start;
  EXPECT_LT(took, kGraphTimeout + absl::Seconds(1)) << "gave up after " << took;
  const absl::Status status = f_.runtime->status();
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr(absl::StrCat("for rank ", missing)));
  EXPECT_TRUE(ReadOutputs() == before) << "an output changed";
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // The CUDA context lives on.

  ASSERT_TRUE(f_.runtime->Reset(kTestWait).ok());
  // Rank 0's graph of the earlier generation against the others' graphs of this one.
  CapturedRankCalls current;
  ASSERT_TRUE(CaptureAll(current, c, call_).ok());
  ASSERT_TRUE(f_.harness->RefreshInputs().ok());
  std::vector<int> others = Ascending(world_);
  others.erase(others.begin());
  ASSERT_TRUE(graphs.Replay(f_.runtime->devices(), f_.harness->AllBuffers(), {0}).ok());
  ASSERT_TRUE(current.Replay(f_.runtime->devices(), f_.harness->AllBuffers(), others).ok());
  ASSERT_TRUE(f_.harness->SynchronizeStreams().ok());
  const absl::Status stale = f_.runtime->status();
  EXPECT_EQ(stale.code(), absl::StatusCode::kInvalidArgument) << stale;
  EXPECT_THAT(std::string(stale.message()), HasSubstr("reset generation"));

  ASSERT_TRUE(f_.runtime->Reset(kTestWait).ok());
  CapturedRankCalls fresh;
  ASSERT_TRUE(f_.harness->Prepare(c).ok());
  ASSERT_TRUE(CaptureAll(fresh, c, call_).ok());
  const absl::Status recovered = ReplayAndVerify(fresh);
  EXPECT_TRUE(recovered.ok()) << recovered;
}

// A rank that never captures: the other captures fail with DeadlineExceeded naming it, within
// the timeout and a second; the Runtime stops until Reset.
TEST_F(CopyEngineGraphTest, MissingRankAtCaptureIsDeadlineExceeded) {
  const int missing = world_ - 1;
  const AllGatherCase c = UnevenCase(1);
  ASSERT_TRUE(f_.harness->Prepare(c).ok());
  CapturedRankCalls graphs;
  const absl::Time start = absl::Now();
  const absl::Status status = CaptureAll(graphs, c, call_, missing);
  const absl::Duration took = absl::Now() - start;
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr(absl::StrCat("rank(s) ", missing)));
  EXPECT_LT(took, kGraphTimeout + absl::Seconds(1)) << took;
  EXPECT_FALSE(f_.runtime->status().ok());
  ASSERT_TRUE(f_.runtime->Reset(kTestWait).ok());
  CapturedRankCalls fresh;
  ASSERT_TRUE(CaptureAll(fresh, c, call_).ok());
  EXPECT_TRUE(ReplayAndVerify(fresh).ok());
}

// Rank 1 replays a direct kernel's graph where the others replay the copy engines' for the
// same op: INVALID_ARGUMENT naming the protocols, long before the timeout, nothing stored by
// the copy engines; Reset recovers.
TEST_F(CopyEngineGraphTest, KernelAgainstCopyEnginesIsInvalidArgument) {
  const AllGatherCase c = CaseOf(world_, kMiB);
  ASSERT_TRUE(f_.harness->Prepare(c).ok());
  CapturedRankCalls engines;
  ASSERT_TRUE(CaptureAll(engines, c, call_).ok());
  CallOptions direct;
  direct.protocol = Protocol::kDirect;
  CapturedRankCalls kernel;  // Rank 1's only; the others' graphs are empty.
  const std::vector<RankBuffers> buffers = f_.harness->AllBuffers();
  ASSERT_TRUE(kernel
                  .Capture(f_.runtime->devices(), buffers,
                           [&](int rank) {
                             return rank == 1 ? f_.runtime->AllGatherRank(rank, c.Shape(),
                                                                          buffers[rank], direct)
                                              : absl::OkStatus();
                           })
                  .ok());
  std::vector<int> others = Ascending(world_);
  others.erase(others.begin() + 1);
  const absl::Time start = absl::Now();
  ASSERT_TRUE(engines.Replay(f_.runtime->devices(), buffers, others).ok());
  ASSERT_TRUE(kernel.Replay(f_.runtime->devices(), buffers, {1}).ok());
  ASSERT_TRUE(f_.harness->SynchronizeStreams().ok());
  EXPECT_LT(absl::Now() - start, kGraphTimeout);
  const absl::Status status = f_.runtime->status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("protocol"));
  ASSERT_TRUE(f_.runtime->Reset(kTestWait).ok());
  EXPECT_TRUE(RunAndVerify(f_, c, CallStyle::kPerRankThreads, call_).ok());
}

// Capturing ranks whose shapes disagree: INVALID_ARGUMENT at capture, on every rank.
TEST_F(CopyEngineGraphTest, DisagreeingShapesAtCaptureAreInvalidArgument) {
  const AllGatherCase c = UnevenCase(1);
  AllGatherCase other = c;
  other.token_counts[0] += 1;
  ASSERT_TRUE(f_.harness->Prepare(c).ok());
  const std::vector<RankBuffers> buffers = f_.harness->AllBuffers();
  CapturedRankCalls graphs;
  const absl::Status status = graphs.Capture(f_.runtime->devices(), buffers, [&](int rank) {
    return f_.runtime->AllGatherRank(rank, (rank == 0 ? other : c).Shape(), buffers[rank], call_);
  });
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  ASSERT_TRUE(f_.runtime->Reset(kTestWait).ok());
  CapturedRankCalls fresh;
  ASSERT_TRUE(CaptureAll(fresh, c, call_).ok());
  EXPECT_TRUE(ReplayAndVerify(fresh).ok());
}

}  // namespace
}  // namespace ltx
