// Tests of the copy-engine pairing table: who queues which pair, drift across ops, slot reuse,
// failures and Reset. CPU only.
#include "ltx/transport/copy_engine/copy_engine_pairing.h"

#include <algorithm>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace ltx {
namespace {

constexpr absl::Duration kLong = absl::Seconds(10);

CopyEngineArrival ArrivalOf(int rank, uint64_t op) {
  CopyEngineArrival arrival;
  arrival.input = 0x1000 * (rank + 1) + op;
  arrival.announced.output_address = 0x100000 * (rank + 1) + op;
  return arrival;
}

std::vector<int> RanksOf(const std::vector<CopyEnginePartner>& partners) {
  std::vector<int> ranks;
  for (const CopyEnginePartner& partner : partners) ranks.push_back(partner.rank);
  return ranks;
}

// Reserves, publishes and pairs rank `rank`'s next op; returns the partners.
std::vector<int> Arrive(CopyEnginePairing& pairing, int rank, uint64_t expected_op) {
  const absl::StatusOr<uint64_t> op = pairing.Reserve(rank, kLong);
  EXPECT_TRUE(op.ok()) << op.status();
  EXPECT_EQ(*op, expected_op);
  const absl::StatusOr<std::vector<CopyEnginePartner>> published =
      pairing.Publish(rank, *op, ArrivalOf(rank, *op));
  EXPECT_TRUE(published.ok()) << published.status();
  const std::vector<CopyEnginePartner> partners =
      published.value_or(std::vector<CopyEnginePartner>());
  for (const CopyEnginePartner& partner : partners) {
    EXPECT_EQ(partner.arrival.input, ArrivalOf(partner.rank, *op).input);
    EXPECT_EQ(partner.arrival.announced.output_address,
              ArrivalOf(partner.rank, *op).announced.output_address);
    pairing.Paired(rank, partner.rank, *op);
  }
  return RanksOf(partners);
}

TEST(CopyEnginePairingTest, EachPairIsQueuedOnceByTheLaterRank) {
  CopyEnginePairing pairing(4);
  EXPECT_EQ(Arrive(pairing, 2, 1), (std::vector<int>{}));
  EXPECT_EQ(Arrive(pairing, 0, 1), (std::vector<int>{2}));
  EXPECT_EQ(Arrive(pairing, 3, 1), (std::vector<int>{0, 2}));
  // In turn from the next rank on.
  EXPECT_EQ(Arrive(pairing, 1, 1), (std::vector<int>{2, 3, 0}));
}

TEST(CopyEnginePairingTest, OneThreadIssuingEveryRankInEitherOrderNeverWaits) {
  constexpr int kWorld = 8;
  CopyEnginePairing pairing(kWorld);
  for (uint64_t op = 1; op <= 5 * CopyEnginePairing::kSlots; ++op) {
    const bool forward = op % 2 == 1;
    for (int i = 0; i < kWorld; ++i) {
      const int rank = forward ? i : kWorld - 1 - i;
      EXPECT_EQ(Arrive(pairing, rank, op).size(), static_cast<size_t>(i));
    }
  }
}

TEST(CopyEnginePairingTest, RanksDriftApartByUpToTheRingWithoutWaiting) {
  CopyEnginePairing pairing(2);
  // Rank 0 runs kSlots ops ahead: every op is its own, nothing to pair yet.
  for (uint64_t op = 1; op <= CopyEnginePairing::kSlots; ++op) {
    EXPECT_TRUE(Arrive(pairing, 0, op).empty());
  }
  // Rank 1 catches up and pairs every op, each with the arrival rank 0 published for it.
  for (uint64_t op = 1; op <= CopyEnginePairing::kSlots; ++op) {
    EXPECT_EQ(Arrive(pairing, 1, op), (std::vector<int>{0}));
  }
  // Now rank 1 leads.
  EXPECT_TRUE(Arrive(pairing, 1, CopyEnginePairing::kSlots + 1).empty());
  EXPECT_EQ(Arrive(pairing, 0, CopyEnginePairing::kSlots + 1), (std::vector<int>{1}));
}

TEST(CopyEnginePairingTest, ASlotIsReusedOnlyAfterEveryPeerPairedWithIt) {
  CopyEnginePairing pairing(2);
  for (uint64_t op = 1; op <= CopyEnginePairing::kSlots; ++op) Arrive(pairing, 0, op);
  // Op kSlots + 1 would reuse op 1's slot, which rank 1 has not paired with.
  const absl::Time start = absl::Now();
  const absl::StatusOr<uint64_t> blocked = pairing.Reserve(0, absl::Milliseconds(50));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(50));
  EXPECT_TRUE(absl::IsDeadlineExceeded(blocked.status())) << blocked.status();
  EXPECT_NE(blocked.status().message().find("rank 1"), absl::string_view::npos);
  // A waiting rank goes on as soon as the peer pairs with the slot.
  pairing.Reset();
  for (uint64_t op = 1; op <= CopyEnginePairing::kSlots; ++op) Arrive(pairing, 0, op);
  absl::StatusOr<uint64_t> waited = absl::UnknownError("not run");
  std::thread leader([&] { waited = pairing.Reserve(0, kLong); });
  absl::SleepFor(absl::Milliseconds(20));
  Arrive(pairing, 1, 1);
  leader.join();
  ASSERT_TRUE(waited.ok()) << waited.status();
  EXPECT_EQ(*waited, CopyEnginePairing::kSlots + 1);
}

TEST(CopyEnginePairingTest, ThePartnerArrivalIsTheOneOfTheSameOp) {
  CopyEnginePairing pairing(3);
  Arrive(pairing, 0, 1);
  Arrive(pairing, 0, 2);
  Arrive(pairing, 1, 1);  // Checks the arrival of rank 0's op 1, not op 2.
  EXPECT_EQ(Arrive(pairing, 2, 1), (std::vector<int>{0, 1}));
  EXPECT_EQ(Arrive(pairing, 2, 2), (std::vector<int>{0}));
  EXPECT_EQ(Arrive(pairing, 1, 2), (std::vector<int>{2, 0}));
}

TEST(CopyEnginePairingTest, FailureStopsWaitersAndLaterCallsUntilReset) {
  CopyEnginePairing pairing(2);
  for (uint64_t op = 1; op <= CopyEnginePairing::kSlots; ++op) Arrive(pairing, 0, op);
  absl::StatusOr<uint64_t> waited = absl::UnknownError("not run");
  std::thread leader([&] { waited = pairing.Reserve(0, kLong); });
  absl::SleepFor(absl::Milliseconds(20));
  pairing.Fail(absl::InvalidArgumentError("first"));
  pairing.Fail(absl::InternalError("second"));
  leader.join();
  EXPECT_TRUE(absl::IsInvalidArgument(waited.status())) << waited.status();
  EXPECT_TRUE(absl::IsInvalidArgument(pairing.Reserve(1, kLong).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(pairing.failure()));
  pairing.Reset();
  EXPECT_TRUE(pairing.failure().ok());
  EXPECT_TRUE(Arrive(pairing, 1, 1).empty());
  EXPECT_EQ(Arrive(pairing, 0, 1), (std::vector<int>{1}));
}

// After Fail, Publish returns the failure and pairs nothing; AwaitPairsQueued waits for pairs
// returned before the failure until their Paired.
TEST(CopyEnginePairingTest, PairsBeingQueuedAtAFailureAreAwaitedAndNoneStartsAfterIt) {
  CopyEnginePairing pairing(3);
  EXPECT_TRUE(Arrive(pairing, 0, 1).empty());
  ASSERT_TRUE(pairing.Reserve(1, kLong).ok());
  const absl::StatusOr<std::vector<CopyEnginePartner>> queueing =
      pairing.Publish(1, 1, ArrivalOf(1, 1));
  ASSERT_TRUE(queueing.ok()) << queueing.status();
  ASSERT_EQ(RanksOf(*queueing), (std::vector<int>{0}));
  pairing.Fail(absl::InvalidArgumentError("disagreement"));
  // Rank 1 still queues its pair with rank 0.
  EXPECT_TRUE(absl::IsDeadlineExceeded(
      pairing.AwaitPairsQueued(absl::Now() + absl::Milliseconds(20))));
  absl::Status awaited = absl::UnknownError("not run");
  std::thread abandoner(
      [&] { awaited = pairing.AwaitPairsQueued(absl::Now() + kLong); });
  absl::SleepFor(absl::Milliseconds(20));
  pairing.Paired(1, 0, 1);
  abandoner.join();
  EXPECT_TRUE(awaited.ok()) << awaited;
  // Rank 2 reserved before the failure: its Publish pairs with nobody and returns the failure.
  const absl::StatusOr<std::vector<CopyEnginePartner>> late =
      pairing.Publish(2, 1, ArrivalOf(2, 1));
  EXPECT_TRUE(absl::IsInvalidArgument(late.status())) << late.status();
  EXPECT_TRUE(pairing.AwaitPairsQueued(absl::Now()).ok());
}

TEST(CopyEnginePairingTest, ResetReleasesAWaiterWithAborted) {
  CopyEnginePairing pairing(2);
  for (uint64_t op = 1; op <= CopyEnginePairing::kSlots; ++op) Arrive(pairing, 0, op);
  absl::StatusOr<uint64_t> waited = absl::UnknownError("not run");
  std::thread leader([&] { waited = pairing.Reserve(0, kLong); });
  absl::SleepFor(absl::Milliseconds(20));
  pairing.Reset();
  leader.join();
  EXPECT_TRUE(absl::IsAborted(waited.status())) << waited.status();
}

TEST(CopyEnginePairingTest, OneRankPairsWithNobody) {
  CopyEnginePairing pairing(1);
  for (uint64_t op = 1; op <= 3 * CopyEnginePairing::kSlots; ++op) {
    EXPECT_TRUE(Arrive(pairing, 0, op).empty());
  }
}

TEST(CopyEnginePairingTest, ConcurrentRanksPairEveryOpExactlyOnce) {
  constexpr int kWorld = 4;
  constexpr uint64_t kOps = 2000;
  CopyEnginePairing pairing(kWorld);
  // queued[op][a][b]: how often the pair {a, b} of op was queued.
  std::vector<std::vector<int>> queued(kOps + 1, std::vector<int>(kWorld * kWorld, 0));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < kWorld; ++rank) {
    threads.emplace_back([&, rank] {
      for (uint64_t op = 1; op <= kOps; ++op) {
        const absl::StatusOr<uint64_t> reserved = pairing.Reserve(rank, kLong);
        ASSERT_TRUE(reserved.ok()) << reserved.status();
        ASSERT_EQ(*reserved, op);
        const absl::StatusOr<std::vector<CopyEnginePartner>> partners =
            pairing.Publish(rank, op, ArrivalOf(rank, op));
        ASSERT_TRUE(partners.ok()) << partners.status();
        for (const CopyEnginePartner& partner : *partners) {
          ASSERT_EQ(partner.arrival.input, ArrivalOf(partner.rank, op).input);
          const int low = std::min(rank, partner.rank);
          const int high = std::max(rank, partner.rank);
          ++queued[op][low * kWorld + high];  // Only the later rank of the pair gets here.
          pairing.Paired(rank, partner.rank, op);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (uint64_t op = 1; op <= kOps; ++op) {
    for (int a = 0; a < kWorld; ++a) {
      for (int b = a + 1; b < kWorld; ++b) EXPECT_EQ(queued[op][a * kWorld + b], 1);
    }
  }
}

}  // namespace
}  // namespace ltx
