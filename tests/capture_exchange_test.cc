// Tests of the capture-time exchange of output addresses for copy-engine calls captured into
// CUDA graphs: both arrival orders, timeouts, disagreeing shapes, several calls, failure and
// Reset. CPU only.
#include "ltx/transport/copy_engine/capture_exchange.h"

#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "kernels/wire/entry_announcement.h"

namespace ltx {
namespace {

constexpr absl::Duration kLong = absl::Seconds(10);

EntryAnnouncement Of(int rank, uint64_t call, int64_t total_tokens = 12) {
  return MakeEntryAnnouncement(0x100000 * (rank + 1) + call, /*dtype=*/1, /*row_bytes=*/256,
                               /*batch=*/1, total_tokens, /*counts_digest=*/0xabc,
                               AnnouncedProtocol::kCopyEngine, /*generation=*/0);
}

// Runs Exchange for call `call` of every rank in `order`, each on its own thread started in
// that order, and returns the results by rank.
std::vector<absl::StatusOr<std::vector<uint64_t>>> ExchangeAll(CaptureExchange& exchange,
                                                               const std::vector<int>& order,
                                                               uint64_t call) {
  std::vector<absl::StatusOr<std::vector<uint64_t>>> results(order.size());
  std::vector<std::thread> threads;
  for (int rank : order) {
    threads.emplace_back(
        [&, rank] { results[rank] = exchange.Exchange(rank, Of(rank, call), kLong); });
    absl::SleepFor(absl::Milliseconds(5));
  }
  for (std::thread& thread : threads) thread.join();
  return results;
}

void ExpectAddresses(const std::vector<absl::StatusOr<std::vector<uint64_t>>>& results,
                     uint64_t call) {
  for (size_t rank = 0; rank < results.size(); ++rank) {
    ASSERT_TRUE(results[rank].ok()) << results[rank].status();
    ASSERT_EQ(results[rank]->size(), results.size());
    for (size_t peer = 0; peer < results.size(); ++peer) {
      EXPECT_EQ((*results[rank])[peer], Of(static_cast<int>(peer), call).output_address);
    }
  }
}

TEST(CaptureExchangeTest, EveryRankLearnsEveryOutputInEitherOrder) {
  CaptureExchange exchange(3);
  ExpectAddresses(ExchangeAll(exchange, {0, 1, 2}, 1), 1);
  ExpectAddresses(ExchangeAll(exchange, {2, 1, 0}, 2), 2);
  ExpectAddresses(ExchangeAll(exchange, {1, 2, 0}, 3), 3);
  EXPECT_EQ(exchange.HeldCalls(), 0);
}

TEST(CaptureExchangeTest, OneRankAlone) {
  CaptureExchange exchange(1);
  const absl::StatusOr<std::vector<uint64_t>> outputs = exchange.Exchange(0, Of(0, 1), kLong);
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  EXPECT_EQ(*outputs, std::vector<uint64_t>{Of(0, 1).output_address});
}

TEST(CaptureExchangeTest, SeveralCallsPerRankPairByTheirNumber) {
  constexpr int kCalls = 5;
  CaptureExchange exchange(2);
  std::vector<std::vector<uint64_t>> seen(2);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 2; ++rank) {
    threads.emplace_back([&, rank] {
      for (uint64_t call = 1; call <= kCalls; ++call) {
        const absl::StatusOr<std::vector<uint64_t>> outputs =
            exchange.Exchange(rank, Of(rank, call), kLong);
        ASSERT_TRUE(outputs.ok()) << outputs.status();
        seen[rank].push_back((*outputs)[1 - rank]);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int rank = 0; rank < 2; ++rank) {
    ASSERT_EQ(seen[rank].size(), static_cast<size_t>(kCalls));
    for (uint64_t call = 1; call <= kCalls; ++call) {
      EXPECT_EQ(seen[rank][call - 1], Of(1 - rank, call).output_address);
    }
  }
  EXPECT_EQ(exchange.HeldCalls(), 0);
}

TEST(CaptureExchangeTest, AMissingRankIsDeadlineExceededNamingIt) {
  CaptureExchange exchange(3);
  std::thread peer(
      [&] { ASSERT_FALSE(exchange.Exchange(1, Of(1, 1), absl::Milliseconds(300)).ok()); });
  const absl::Time start = absl::Now();
  const absl::StatusOr<std::vector<uint64_t>> outputs =
      exchange.Exchange(0, Of(0, 1), absl::Milliseconds(200));
  const absl::Duration waited = absl::Now() - start;
  peer.join();
  ASSERT_EQ(outputs.status().code(), absl::StatusCode::kDeadlineExceeded) << outputs.status();
  EXPECT_NE(outputs.status().message().find("rank(s) 2 did not capture"), std::string::npos)
      << outputs.status();
  EXPECT_GE(waited, absl::Milliseconds(200));
  EXPECT_LT(waited, absl::Seconds(2));
  // The late rank finds both announcements and completes the call; it is then forgotten.
  EXPECT_TRUE(exchange.Exchange(2, Of(2, 1), kLong).ok());
  EXPECT_EQ(exchange.HeldCalls(), 0);
}

TEST(CaptureExchangeTest, DisagreeingShapesAreInvalidArgumentOnEveryRank) {
  CaptureExchange exchange(2);
  absl::Status other;
  std::thread peer(
      [&] { other = exchange.Exchange(1, Of(1, 1, /*total_tokens=*/13), kLong).status(); });
  const absl::Status mine = exchange.Exchange(0, Of(0, 1), kLong).status();
  peer.join();
  EXPECT_EQ(mine.code(), absl::StatusCode::kInvalidArgument) << mine;
  EXPECT_EQ(other.code(), absl::StatusCode::kInvalidArgument) << other;
  EXPECT_NE(mine.message().find("total token count"), std::string::npos) << mine;
  EXPECT_NE(mine.message().find("call #1"), std::string::npos) << mine;
}

TEST(CaptureExchangeTest, FailEndsWaitsUntilReset) {
  CaptureExchange exchange(2);
  absl::Status waiting;
  std::thread rank0([&] { waiting = exchange.Exchange(0, Of(0, 1), kLong).status(); });
  absl::SleepFor(absl::Milliseconds(20));
  exchange.Fail(absl::InvalidArgumentError("ranks disagree"));
  rank0.join();
  EXPECT_EQ(waiting.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(exchange.Exchange(1, Of(1, 1), kLong).status().code(),
            absl::StatusCode::kInvalidArgument);
  exchange.Reset();
  EXPECT_EQ(exchange.HeldCalls(), 0);
  ExpectAddresses(ExchangeAll(exchange, {1, 0}, 1), 1);
}

}  // namespace
}  // namespace ltx
