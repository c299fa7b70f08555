// RankStreams (ltx/runtime/rank_streams.h): one stream per rank of a shared GPU for each op, the
// count of the streams each rank's calls used, and one launch lock per shared GPU, on the host
// alone.
#include "ltx/runtime/rank_streams.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace ltx {
namespace {

// A stream handle for the host-side records only (never passed to CUDA).
cudaStream_t FakeStream(uintptr_t id) { return reinterpret_cast<cudaStream_t>(id * 64); }

TEST(RankStreamsTest, CoLocatedRanksOnOneStreamForOneOpAreRefused) {
  RankStreams streams({0, 1, 0});  // Ranks 0 and 2 on GPU 0, rank 1 on GPU 1.
  ASSERT_TRUE(streams.Claim(0, 1, FakeStream(1)).ok());
  const absl::Status same = streams.Claim(2, 1, FakeStream(1));
  EXPECT_EQ(same.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(same.message().find("ranks 0 and 2 share GPU 0 and pass the same stream"),
            absl::string_view::npos)
      << same;
  // Another op on that stream, or the same op on another stream, is fine.
  EXPECT_TRUE(streams.Claim(2, 2, FakeStream(1)).ok());
  EXPECT_TRUE(streams.Claim(0, 2, FakeStream(2)).ok());
  // A rank alone on its GPU is neither compared nor counted.
  EXPECT_TRUE(streams.Claim(1, 1, FakeStream(1)).ok());
  EXPECT_EQ(streams.StreamsUsed(1), 0);
}

// A rank ahead of its co-located peer (per-rank calls do not wait for each other on the host):
// the peer's call of an earlier number is compared with that call's stream, not the latest.
TEST(RankStreamsTest, ARankAheadOfItsPeerIsComparedCallByCall) {
  RankStreams streams({0, 0});
  ASSERT_TRUE(streams.Claim(0, 1, FakeStream(1)).ok());
  ASSERT_TRUE(streams.Claim(0, 2, FakeStream(1)).ok());
  ASSERT_TRUE(streams.Claim(0, 3, FakeStream(2)).ok());
  EXPECT_EQ(streams.Claim(1, 1, FakeStream(1)).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(streams.Claim(1, 2, FakeStream(3)).ok());
  EXPECT_EQ(streams.Claim(1, 3, FakeStream(2)).code(), absl::StatusCode::kInvalidArgument);
  // Calls kHistory apart no longer meet: the slot holds the later call.
  ASSERT_TRUE(streams.Claim(0, 1 + RankStreams::kHistory, FakeStream(4)).ok());
  EXPECT_TRUE(streams.Claim(1, 1, FakeStream(1)).ok());
  // After ForgetCalls (Reset) the numbers start again, with nothing to compare.
  streams.ForgetCalls();
  EXPECT_TRUE(streams.Claim(1, 3, FakeStream(2)).ok());
}

TEST(RankStreamsTest, PerThreadStreamIsNeitherComparedNorCounted) {
  RankStreams streams({0, 0});
  EXPECT_TRUE(streams.Claim(0, 1, cudaStreamPerThread).ok());
  EXPECT_TRUE(streams.Claim(1, 1, cudaStreamPerThread).ok());
  EXPECT_EQ(streams.StreamsUsed(0), 0);
}

TEST(RankStreamsTest, CountsDistinctStreamsUpToTheMostCounted) {
  RankStreams streams({0, 0});
  for (uint64_t call = 1; call <= 5; ++call) {
    ASSERT_TRUE(streams.Claim(0, call, FakeStream(1)).ok());
    ASSERT_TRUE(streams.Claim(1, call, FakeStream(100 + call)).ok());
  }
  EXPECT_EQ(streams.StreamsUsed(0), 1);
  EXPECT_EQ(streams.StreamsUsed(1), 5);
  for (uint64_t call = 6; call < 6 + 2 * RankStreams::kMostCounted; ++call) {
    ASSERT_TRUE(streams.Claim(1, call, FakeStream(100 + call)).ok());
  }
  EXPECT_EQ(streams.StreamsUsed(1), RankStreams::kMostCounted);
}

TEST(RankStreamsTest, SaysWhenACallAddsAStream) {
  RankStreams streams({0, 0});
  int now = -1;
  ASSERT_TRUE(streams.Claim(0, 1, FakeStream(1), &now).ok());
  EXPECT_EQ(now, 1);
  ASSERT_TRUE(streams.Claim(0, 2, FakeStream(1), &now).ok());
  EXPECT_EQ(now, 0);  // Used before.
  ASSERT_TRUE(streams.Claim(0, 3, FakeStream(2), &now).ok());
  EXPECT_EQ(now, 2);
}

TEST(RankStreamsTest, ForgetCallsRestartsTheNumbersAndKeepsTheCounts) {
  RankStreams streams({0, 0});
  ASSERT_TRUE(streams.Claim(0, 3, FakeStream(1)).ok());
  streams.ForgetCalls();
  // Call 3 after Reset is a new op: rank 0's call 3 of before it no longer counts.
  EXPECT_TRUE(streams.Claim(1, 3, FakeStream(1)).ok());
  EXPECT_EQ(streams.StreamsUsed(0), 1);
  EXPECT_EQ(streams.StreamsUsed(1), 1);
}

TEST(RankStreamsTest, RanksOfOneGpuShareOneLaunchLockAndARankAloneHasNone) {
  // Ranks 0, 2 and 4 on GPU 0, ranks 1 and 5 on GPU 1, rank 3 alone on GPU 2.
  RankStreams streams({0, 1, 0, 2, 0, 1});
  ASSERT_NE(streams.LaunchLock(0), nullptr);
  EXPECT_EQ(streams.LaunchLock(2), streams.LaunchLock(0));
  EXPECT_EQ(streams.LaunchLock(4), streams.LaunchLock(0));
  ASSERT_NE(streams.LaunchLock(1), nullptr);
  EXPECT_EQ(streams.LaunchLock(5), streams.LaunchLock(1));
  EXPECT_NE(streams.LaunchLock(1), streams.LaunchLock(0));
  EXPECT_EQ(streams.LaunchLock(3), nullptr);
  // The lock is a working mutex: held by one rank, the co-located rank cannot take it.
  streams.LaunchLock(0)->Lock();
  EXPECT_FALSE(streams.LaunchLock(2)->TryLock());
  EXPECT_TRUE(streams.LaunchLock(1)->TryLock());
  streams.LaunchLock(1)->Unlock();
  streams.LaunchLock(0)->Unlock();
}

TEST(RankStreamsTest, RuntimesOfOneProcessShareEachGpusLaunchLock) {
  // Two Runtimes at once: ranks {0, 0} and ranks {0, 0, 1, 1}; a third with rank 0 alone.
  RankStreams first({0, 0});
  RankStreams second({0, 0, 1, 1});
  RankStreams alone({0, 1});
  EXPECT_EQ(second.LaunchLock(0), first.LaunchLock(0));
  EXPECT_EQ(second.LaunchLock(1), first.LaunchLock(1));
  EXPECT_NE(second.LaunchLock(2), first.LaunchLock(0));
  EXPECT_EQ(alone.LaunchLock(0), nullptr);  // Alone in its Runtime: no lock, as on its own GPU.
  first.LaunchLock(0)->Lock();
  EXPECT_FALSE(second.LaunchLock(1)->TryLock());
  first.LaunchLock(0)->Unlock();
  // A Runtime made while another holds the lock of its GPU shares it.
  absl::Mutex* const kept = first.LaunchLock(0);
  {
    RankStreams third({0, 0});
    EXPECT_EQ(third.LaunchLock(0), kept);
  }
}

TEST(LaunchTurnTest, HoldsAFreeLockAndNothingForARankAlone) {
  absl::Mutex lock;
  {
    const LaunchTurn turn(&lock);
    EXPECT_TRUE(turn.held());
    EXPECT_FALSE(lock.TryLock());
  }
  EXPECT_TRUE(lock.TryLock());  // Released with the turn.
  lock.Unlock();
  const LaunchTurn alone(nullptr);
  EXPECT_FALSE(alone.held());
}

// A holder that does not let go (a launch blocked on the host) keeps a co-located rank waiting
// for the lock only `wait`, after which it launches without it.
TEST(LaunchTurnTest, GoesAheadWithoutALockHeldPastTheWait) {
  absl::Mutex lock;
  lock.Lock();
  const absl::Time start = absl::Now();
  bool held = true;
  std::thread other([&] {
    const LaunchTurn turn(&lock, absl::Milliseconds(20));
    held = turn.held();
  });
  other.join();
  const absl::Duration waited = absl::Now() - start;
  lock.Unlock();
  EXPECT_FALSE(held);
  EXPECT_GE(waited, absl::Milliseconds(20));
  EXPECT_LT(waited, absl::Seconds(5));
}

// A lock released within the wait is taken.
TEST(LaunchTurnTest, TakesALockReleasedWithinTheWait) {
  absl::Mutex lock;
  lock.Lock();
  bool held = false;
  std::thread other([&] {
    const LaunchTurn turn(&lock, absl::Seconds(10));
    held = turn.held();
  });
  absl::SleepFor(absl::Milliseconds(5));
  lock.Unlock();
  other.join();
  EXPECT_TRUE(held);
}

}  // namespace
}  // namespace ltx
