// Tests of ltx::HostRendezvous (ltx/host_rendezvous.h): every rank reads every value, a late
// rank within the timeout, a missing rank (every rank gets the same error, naming it), a fast
// rank one op ahead of a slow one, meetings out of order, Reset (also of a waiting rank), a
// custom error, Fail, a watch that gives up, and many threads over many ops. Needs no GPU.
#include "ltx/host_rendezvous.h"

#include <atomic>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ltx {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int kEntry = 0;
constexpr int kExit = 1;
constexpr absl::Duration kLong = absl::Seconds(30);

// The value rank `rank` brings to (op, phase) in these tests.
int64_t ValueOf(uint64_t op, int phase, int rank) {
  return static_cast<int64_t>(op) * 100 + phase * 10 + rank;
}

std::vector<int64_t> ValuesOf(uint64_t op, int phase, int ranks) {
  std::vector<int64_t> values;
  for (int rank = 0; rank < ranks; ++rank) values.push_back(ValueOf(op, phase, rank));
  return values;
}

HostRendezvous<int64_t> MakeRendezvous(int ranks, absl::Duration spin = absl::ZeroDuration()) {
  return HostRendezvous<int64_t>(ranks, {"entry", "exit"}, spin);
}

// Runs `body(rank)` on one thread per rank and joins them.
template <typename Body>
void OnEveryRank(int ranks, Body body) {
  std::vector<std::thread> threads;
  for (int rank = 0; rank < ranks; ++rank) threads.emplace_back(body, rank);
  for (std::thread& thread : threads) thread.join();
}

// Rank `rank` meets at (op, phase) with its test value; returns the values it read.
absl::Status MeetWithValue(HostRendezvous<int64_t>& rendezvous, int rank, uint64_t op, int phase,
                           absl::Duration timeout, std::vector<int64_t>* all = nullptr) {
  std::vector<int64_t> ignored;
  std::vector<int64_t>& values = all != nullptr ? *all : ignored;
  values.assign(rendezvous.ranks(), -1);
  return rendezvous.Meet(rank, op, phase, ValueOf(op, phase, rank), absl::MakeSpan(values),
                         timeout);
}

// Every rank goes through every phase of op `op`, expecting success.
void MeetOnce(HostRendezvous<int64_t>& rendezvous, uint64_t op) {
  OnEveryRank(rendezvous.ranks(), [&](int rank) {
    for (int phase : {kEntry, kExit}) {
      EXPECT_TRUE(MeetWithValue(rendezvous, rank, op, phase, kLong).ok());
    }
  });
}

TEST(HostRendezvousTest, EveryRankReadsEveryValueInRankOrder) {
  constexpr int kRanks = 4;
  HostRendezvous<int64_t> rendezvous = MakeRendezvous(kRanks, absl::Milliseconds(1));
  std::vector<std::vector<int64_t>> seen(kRanks);
  OnEveryRank(kRanks, [&](int rank) {
    for (int phase : {kEntry, kExit}) {
      const absl::Status status = MeetWithValue(rendezvous, rank, 1, phase, kLong, &seen[rank]);
      EXPECT_TRUE(status.ok()) << status;
      EXPECT_EQ(seen[rank], ValuesOf(1, phase, kRanks));
    }
  });
  EXPECT_TRUE(rendezvous.failure().ok());
}

TEST(HostRendezvousTest, ARankMayReadNoValues) {
  HostRendezvous<int64_t> rendezvous = MakeRendezvous(2);
  OnEveryRank(2,
              [&](int rank) { EXPECT_TRUE(rendezvous.Meet(rank, 1, kEntry, 7, {}, kLong).ok()); });
}

TEST(HostRendezvousTest, OneRankMeetsAlone) {
  HostRendezvous<int64_t> rendezvous = MakeRendezvous(1);
  for (uint64_t op = 1; op <= 5; ++op) {
    std::vector<int64_t> values;
    ASSERT_TRUE(MeetWithValue(rendezvous, 0, op, kEntry, absl::Milliseconds(1), &values).ok());
    EXPECT_THAT(values, ElementsAre(ValueOf(op, kEntry, 0)));
    ASSERT_TRUE(MeetWithValue(rendezvous, 0, op, kExit, absl::Milliseconds(1)).ok());
  }
}

TEST(HostRendezvousTest, LateRankWithinTheTimeout) {
  constexpr int kRanks = 3;
  HostRendezvous<int64_t> rendezvous = MakeRendezvous(kRanks);
  std::vector<absl::Status> results(kRanks);
  std::vector<std::vector<int64_t>> seen(kRanks);
  OnEveryRank(kRanks, [&](int rank) {
    if (rank == 2) absl::SleepFor(absl::Milliseconds(200));
    results[rank] = MeetWithValue(rendezvous, rank, 1, kEntry, absl::Seconds(10), &seen[rank]);
  });
  for (int rank = 0; rank < kRanks; ++rank) {
    EXPECT_TRUE(results[rank].ok()) << results[rank];
    EXPECT_EQ(seen[rank], ValuesOf(1, kEntry, kRanks));
  }
}

TEST(HostRendezvousTest, MissingRankFailsEveryRankWithTheSameErrorNamingIt) {
  constexpr int kRanks = 3;
  HostRendezvous<int64_t> rendezvous = MakeRendezvous(kRanks);
  MeetOnce(rendezvous, 1);
  // Op 2: rank 2 does not come in time.
  std::vector<absl::Status> results(kRanks - 1);
  const absl::Time start = absl::Now();
  OnEveryRank(kRanks - 1, [&](int rank) {
    results[rank] = MeetWithValue(rendezvous, rank, 2, kEntry, absl::Milliseconds(200));
  });
  const absl::Duration took = absl::Now() - start;
  EXPECT_GE(took, absl::Milliseconds(200));
  EXPECT_LT(took, absl::Seconds(10));
  EXPECT_EQ(results[0].code(), absl::StatusCode::kDeadlineExceeded) << results[0];
  EXPECT_EQ(results[0], results[1]);
  const std::string message(results[0].message());
  EXPECT_THAT(message, HasSubstr("op 2: rank "));
  EXPECT_THAT(message, HasSubstr("waited 200ms at entry for rank 2"));
  EXPECT_THAT(message, HasSubstr("rank 2 last met at op 1, exit"));
  EXPECT_EQ(rendezvous.failure(), results[0]);

  // The latecomer, and every later meeting of any rank, gets the same error at once.
  const absl::Time late = absl::Now();
  EXPECT_EQ(MeetWithValue(rendezvous, 2, 2, kEntry, kLong), results[0]);
  EXPECT_EQ(MeetWithValue(rendezvous, 0, 2, kExit, kLong), results[0]);
  EXPECT_EQ(MeetWithValue(rendezvous, 1, 3, kEntry, kLong), results[0]);
  EXPECT_LT(absl::Now() - late, absl::Seconds(1));
}

TEST(HostRendezvousTest, MissingRankThatNeverMetIsNamed) {
  HostRendezvous<int64_t> rendezvous = MakeRendezvous(2);
  const absl::Status status = MeetWithValue(rendezvous, 0, 1, kEntry, absl::Milliseconds(10));
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(status.message(),
            "op 1: rank 0 waited 10ms at entry for rank 1 (rank 1 has not met yet)");
}

TEST(HostRendezvousTest, TheFirstRankToGiveUpReleasesTheOthersAtOnce) {
  constexpr int kRanks = 3;
  HostRendezvous<int64_t> rendezvous = MakeRendezvous(kRanks, absl::Milliseconds(1));
  std::vector<absl::Status> results(kRanks - 1);
  std::vector<absl::Duration> took(kRanks - 1);
  OnEveryRank(kRanks - 1, [&](int rank) {
    const absl::Time start = absl::Now();
    const absl::Duration timeout = rank == 0 ? absl::Milliseconds(100) : kLong;
    results[rank] = MeetWithValue(rendezvous, rank, 1, kEntry, timeout);
    took[rank] = absl::Now() - start;
  });
  EXPECT_EQ(results[0].code(), absl::StatusCode::kDeadlineExceeded) << results[0];
  EXPECT_EQ(results[1], results[0]);
  EXPECT_THAT(std::string(results[1].message()), HasSubstr("rank 0 waited 100ms"));
  EXPECT_LT(took[1], absl::Seconds(10)) << "the patient rank waited " << took[1];
}

TEST(HostRendezvousTest, AMeetingThatCompletedStandsWhenALaterOneFails) {
  HostRendezvous<int64_t> rendezvous = MakeRendezvous(2);
  MeetOnce(rendezvous, 1);
  ASSERT_FALSE(MeetWithValue(rendezvous, 0, 2, kEntry, absl::Milliseconds(10)).ok());
  // Rank 1's previous meetings are not undone; its next one fails.
  EXPECT_EQ(rendezvous.NextOp(1), 2u);
  EXPECT_EQ(MeetWithValue(rendezvous, 1, 2, kEntry, kLong).code(),
            absl::StatusCode::kDeadlineExceeded);
}

TEST(HostRendezvousTest, FastRankOnTheNextOpWhileTheSlowOneIsOnThePrevious) {
  HostRendezvous<int64_t> rendezvous = MakeRendezvous(2);
  constexpr uint64_t kOps = 7;  // More ops than kept at a time: slots are reused.
  std::vector<std::vector<int64_t>> seen(2);
  OnEveryRank(2, [&](int rank) {
    for (uint64_t op = 1; op <= kOps; ++op) {
      for (int phase : {kEntry, kExit}) {
        // Rank 1 dawdles after each exit: rank 0 is then already waiting at the next entry,
        // with its value for the next op stored, while rank 1 is still in the previous op.
        ASSERT_TRUE(MeetWithValue(rendezvous, rank, op, phase, kLong, &seen[rank]).ok());
        ASSERT_EQ(seen[rank], ValuesOf(op, phase, 2)) << "rank " << rank << " op " << op;
        if (rank == 1 && phase == kExit) absl::SleepFor(absl::Milliseconds(20));
      }
    }
  });
  EXPECT_EQ(rendezvous.NextOp(0), kOps + 1);
  EXPECT_EQ(rendezvous.NextOp(1), kOps + 1);
}

TEST(HostRendezvousTest, MeetingsOutOfOrderAndBadArgumentsAreRefused) {
  HostRendezvous<int64_t> rendezvous = MakeRendezvous(2);
  absl::Status status = MeetWithValue(rendezvous, 0, 2, kEntry, kLong);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("rank 0 arrived at op 2, entry, but its next meeting is op 1, entry"));
  status = MeetWithValue(rendezvous, 0, 1, kExit, kLong);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
  EXPECT_EQ(MeetWithValue(rendezvous, 2, 1, kEntry, kLong).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MeetWithValue(rendezvous, -1, 1, kEntry, kLong).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MeetWithValue(rendezvous, 0, 1, 2, kLong).code(), absl::StatusCode::kInvalidArgument);
  std::vector<int64_t> too_few(1);
  EXPECT_EQ(rendezvous.Meet(0, 1, kEntry, 1, absl::MakeSpan(too_few), kLong).code(),
            absl::StatusCode::kInvalidArgument);
  // None of these counted as a meeting, nor as a failure.
  EXPECT_EQ(rendezvous.NextOp(0), 1u);
  EXPECT_EQ(rendezvous.NextOp(2), 0u);
  EXPECT_TRUE(rendezvous.failure().ok());
  MeetOnce(rendezvous, 1);
}

TEST(HostRendezvousTest, ResetForgetsTheFailureAndTheOpNumbers) {
  HostRendezvous<int64_t> rendezvous = MakeRendezvous(2);
  MeetOnce(rendezvous, 1);
  MeetOnce(rendezvous, 2);
  ASSERT_FALSE(MeetWithValue(rendezvous, 0, 3, kEntry, absl::Milliseconds(10)).ok());
  rendezvous.Reset();
  EXPECT_TRUE(rendezvous.failure().ok());
  EXPECT_EQ(rendezvous.NextOp(0), 1u);
  EXPECT_EQ(rendezvous.NextOp(1), 1u);
  MeetOnce(rendezvous, 1);
  EXPECT_EQ(rendezvous.NextOp(0), 2u);
}

TEST(HostRendezvousTest, ResetReleasesAWaitingRankWithAborted) {
  HostRendezvous<int64_t> rendezvous = MakeRendezvous(2);
  absl::Status waited;
  std::thread waiter([&] { waited = MeetWithValue(rendezvous, 0, 1, kEntry, kLong); });
  absl::SleepFor(absl::Milliseconds(100));
  rendezvous.Reset();
  waiter.join();
  EXPECT_EQ(waited.code(), absl::StatusCode::kAborted) << waited;
  EXPECT_THAT(std::string(waited.message()), HasSubstr("Reset ran while rank 0 waited at entry"));
  EXPECT_TRUE(rendezvous.failure().ok());
  MeetOnce(rendezvous, 1);
}

TEST(HostRendezvousTest, FailReleasesTheWaitingRanksAndStandsUntilReset) {
  HostRendezvous<int64_t> rendezvous = MakeRendezvous(3);
  std::vector<absl::Status> results(2);
  const absl::Time start = absl::Now();
  std::thread failer([&] {
    absl::SleepFor(absl::Milliseconds(50));
    rendezvous.Fail(absl::InternalError("rank 2 could not start"));
    rendezvous.Fail(absl::UnknownError("a later failure does not replace the first"));
  });
  OnEveryRank(2,
              [&](int rank) { results[rank] = MeetWithValue(rendezvous, rank, 1, kEntry, kLong); });
  failer.join();
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  for (const absl::Status& result : results) {
    EXPECT_EQ(result, absl::InternalError("rank 2 could not start"));
  }
  EXPECT_EQ(MeetWithValue(rendezvous, 2, 1, kEntry, kLong), results[0]);
  rendezvous.Reset();
  MeetOnce(rendezvous, 1);
}

TEST(HostRendezvousTest, AWatchThatFailsGivesUpTheOpForEveryRankAtOnce) {
  HostRendezvous<int64_t> rendezvous = MakeRendezvous(3);
  std::atomic<bool> diverged{false};
  const RendezvousWatch watch = [&diverged]() -> absl::Status {
    if (!diverged.load()) return absl::OkStatus();
    return absl::InvalidArgumentError("rank 2 took another path");
  };
  std::vector<absl::Status> results(2);
  const absl::Time start = absl::Now();
  std::thread diverger([&] {
    absl::SleepFor(absl::Milliseconds(50));
    diverged.store(true);
  });
  OnEveryRank(2, [&](int rank) {
    results[rank] = rendezvous.Meet(rank, 1, kEntry, ValueOf(1, kEntry, rank), {}, kLong,
                                    rank == 0 ? watch : nullptr);
  });
  diverger.join();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  for (const absl::Status& result : results) {
    EXPECT_EQ(result, absl::InvalidArgumentError("rank 2 took another path"));
  }
  EXPECT_EQ(rendezvous.failure(), results[0]);
  rendezvous.Reset();
  MeetOnce(rendezvous, 1);
}

TEST(HostRendezvousTest, ACustomDescriberMakesEveryRanksError) {
  HostRendezvous<int64_t> rendezvous(
      3, {"entry", "exit"}, absl::ZeroDuration(), [](const RendezvousMiss& miss) {
        return absl::UnavailableError(
            absl::StrCat("op=", miss.op, " phase=", miss.phase, "/", miss.phase_name,
                         " rank=", miss.rank, " missing=", miss.missing,
                         " last=", miss.missing_last_op, "/", miss.missing_last_phase));
      });
  OnEveryRank(
      3, [&](int rank) { EXPECT_TRUE(MeetWithValue(rendezvous, rank, 1, kEntry, kLong).ok()); });
  // Ranks 0 and 2 reach the exit; rank 1 does not.
  std::vector<absl::Status> results(3);
  OnEveryRank(3, [&](int rank) {
    if (rank == 1) return;
    results[rank] = MeetWithValue(rendezvous, rank, 1, kExit, absl::Milliseconds(50));
  });
  EXPECT_EQ(results[0].code(), absl::StatusCode::kUnavailable) << results[0];
  EXPECT_EQ(results[2], results[0]);
  EXPECT_THAT(std::string(results[0].message()), HasSubstr("op=1 phase=1/exit rank="));
  EXPECT_THAT(std::string(results[0].message()), HasSubstr("missing=1 last=1/entry"));
}

TEST(HostRendezvousTest, ADescriberThatReturnsOkStillFailsTheOp) {
  HostRendezvous<int64_t> rendezvous(2, {"entry"}, absl::ZeroDuration(),
                                     [](const RendezvousMiss&) { return absl::OkStatus(); });
  const absl::Status status = MeetWithValue(rendezvous, 0, 1, kEntry, absl::Milliseconds(1));
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal) << status;
}

// Values of a struct type travel whole.
struct Announcement {
  uint64_t address;
  int32_t rows;
  int16_t kind;
};

TEST(HostRendezvousTest, StructValuesTravelWhole) {
  HostRendezvous<Announcement> rendezvous(3, {"entry"}, absl::ZeroDuration());
  std::vector<std::vector<Announcement>> seen(3, std::vector<Announcement>(3));
  OnEveryRank(3, [&](int rank) {
    const Announcement mine = {0x1000u * (rank + 1), rank * 7, static_cast<int16_t>(-rank)};
    ASSERT_TRUE(rendezvous.Meet(rank, 1, 0, mine, absl::MakeSpan(seen[rank]), kLong).ok());
  });
  for (const auto& values : seen) {
    for (int t = 0; t < 3; ++t) {
      EXPECT_EQ(values[t].address, 0x1000u * (t + 1));
      EXPECT_EQ(values[t].rows, t * 7);
      EXPECT_EQ(values[t].kind, -t);
    }
  }
}

// Many ranks over many ops, with random pauses, polling or sleeping: every meeting completes
// and every rank reads exactly the values of its own (op, phase).
TEST(HostRendezvousTest, ManyThreadsOverManyOps) {
  constexpr int kRanks = 8;
  constexpr uint64_t kOps = 400;
  for (absl::Duration spin : {absl::ZeroDuration(), absl::Microseconds(50)}) {
    HostRendezvous<int64_t> rendezvous = MakeRendezvous(kRanks, spin);
    std::vector<int> wrong(kRanks, 0);
    OnEveryRank(kRanks, [&](int rank) {
      std::mt19937 random(rank);
      std::vector<int64_t> values;
      for (uint64_t op = rendezvous.NextOp(rank); op <= kOps; op = rendezvous.NextOp(rank)) {
        for (int phase : {kEntry, kExit}) {
          if (random() % 16 == 0) absl::SleepFor(absl::Microseconds(random() % 200));
          const absl::Status status = MeetWithValue(rendezvous, rank, op, phase, kLong, &values);
          if (!status.ok() || values != ValuesOf(op, phase, kRanks)) ++wrong[rank];
        }
      }
    });
    EXPECT_THAT(wrong, ::testing::Each(0)) << "spin " << spin;
    EXPECT_TRUE(rendezvous.failure().ok());
  }
}

}  // namespace
}  // namespace ltx
