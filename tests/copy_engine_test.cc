// GPU tests of the copy-engine protocol's per-rank calls, on the copy-engine transport and as
// Protocol::kCopyEngine on the peer-store transport: one host thread issuing every rank's calls
// (which must never wait for each other), ranks drifting apart by many ops, and a rank that
// never calls. Random data, outputs poisoned before every call, byte-exact checks. Skips, with
// the reason, without two GPUs.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/copy_plan.h"
#include "ltx/runtime.h"
#include "tools/testing/allgather_harness.h"
#include "tools/testing/gpu_fixture.h"

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
  void SetUp() override {
    world_ = VisibleGpuCount();
    if (world_ < 2) return;
    RuntimeOptions options;
    options.devices = FirstDevices(world_);
    options.transport = GetParam();
    options.timeout = absl::Seconds(2);
    absl::StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Create(options);
    ASSERT_TRUE(runtime.ok()) << runtime.status();
    runtime_ = std::move(*runtime);
    absl::StatusOr<std::unique_ptr<AllGatherHarness>> harness = AllGatherHarness::Create(
        FirstDevices(world_), kShardBytes, world_ * kShardBytes, /*seed=*/4242 + world_);
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

  int world_ = 0;
  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<AllGatherHarness> harness_;
  CallOptions call_;
};

std::vector<int> Ascending(int world) { return FirstDevices(world); }

std::vector<int> Descending(int world) {
  std::vector<int> ranks;
  for (int rank = world - 1; rank >= 0; --rank) ranks.push_back(rank);
  return ranks;
}

TEST_P(CopyEngineRankCallTest, OneThreadIssuesEveryRankAt64MiBInEitherOrder) {
  LTX_REQUIRE_GPUS(2);
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

// Rank 0 runs many ops ahead of the others (up to the pairing ring), then the others catch up
// in turns, without any host synchronisation; the last op is checked byte-exact.
TEST_P(CopyEngineRankCallTest, RanksDriftApartWithoutHostSynchronisation) {
  LTX_REQUIRE_GPUS(2);
  constexpr int kLead = 12;
  constexpr int kRounds = 20;
  const AllGatherCase c = CaseOf(world_, kMiB);
  ASSERT_TRUE(harness_->Prepare(c).ok());
  for (int round = 0; round < kRounds; ++round) {
    const int leader = round % world_;
    for (int op = 0; op < kLead; ++op) ASSERT_TRUE(CallInOrder(c, {leader}).ok());
    for (int op = 0; op < kLead; ++op) {
      for (int rank : Descending(world_)) {
        if (rank != leader) {
          ASSERT_TRUE(CallInOrder(c, {rank}).ok());
        }
      }
    }
  }
  const absl::Status status = runtime_->Synchronize(kTestWait);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_TRUE(harness_->Verify().ok());
  // And a fresh op after the drift, from poisoned outputs.
  ASSERT_TRUE(harness_->Prepare(c).ok());
  ASSERT_TRUE(CallInOrder(c, Ascending(world_)).ok());
  ASSERT_TRUE(runtime_->Synchronize(kTestWait).ok());
  EXPECT_TRUE(harness_->Verify().ok());
}

// A rank that never calls: the others' calls return at once, their streams give up after the
// timeout with DeadlineExceeded, and nothing of the missing rank lands anywhere (its output and
// its shard in every output keep their poison). Reset recovers.
TEST_P(CopyEngineRankCallTest, MissingRankTimesOutOnTheDeviceAndTouchesNothing) {
  LTX_REQUIRE_GPUS(2);
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
  ASSERT_TRUE(harness_->Prepare(c).ok());
  ASSERT_TRUE(CallInOrder(c, Descending(world_)).ok());
  ASSERT_TRUE(runtime_->Synchronize(kTestWait).ok());
  EXPECT_TRUE(harness_->Verify().ok());
}

INSTANTIATE_TEST_SUITE_P(Transports, CopyEngineRankCallTest,
                         ::testing::Values(Transport::kCopyEngine, Transport::kPeerStores),
                         [](const ::testing::TestParamInfo<Transport>& info) {
                           return info.param == Transport::kCopyEngine ? "CopyEngineTransport"
                                                                       : "PeerStoreTransport";
                         });

}  // namespace
}  // namespace ltx
