// Tests of ltx::CallLedger (ltx/call_ledger.h): call numbers per rank, interleaved copy-engine
// and kernel calls that stay aligned, the divergence a copy-engine rank notices (a peer on a
// kernel path at its call, or past it), Reset, and concurrent recording. Needs no GPU.
#include "ltx/call_ledger.h"

#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ltx/runtime_options.h"

namespace ltx {
namespace {

using ::testing::HasSubstr;

TEST(CallLedgerTest, EachRankNumbersItsCallsFromOne) {
  CallLedger ledger(2);
  EXPECT_EQ(ledger.Latest(0).number, 0u);
  EXPECT_EQ(ledger.Record(0, Protocol::kDirect), 1u);
  EXPECT_EQ(ledger.Record(0, Protocol::kCopyEngine), 2u);
  EXPECT_EQ(ledger.Record(1, Protocol::kOneTrip), 1u);
  EXPECT_EQ(ledger.Latest(0).number, 2u);
  EXPECT_EQ(ledger.Latest(0).protocol, Protocol::kCopyEngine);
  EXPECT_EQ(ledger.Latest(1).number, 1u);
  EXPECT_EQ(ledger.Latest(1).protocol, Protocol::kOneTrip);
}

TEST(CallLedgerTest, InterleavedPathsThatAgreeAreNeverADivergence) {
  CallLedger ledger(3);
  const Protocol sequence[] = {Protocol::kDirect, Protocol::kCopyEngine, Protocol::kOneTrip,
                               Protocol::kCopyEngine, Protocol::kCopyEngine};
  for (Protocol protocol : sequence) {
    // Rank 0 is first at each op; the others follow one by one.
    const uint64_t number = ledger.Record(0, protocol);
    for (int peer = 1; peer < 3; ++peer) {
      if (protocol == Protocol::kCopyEngine) {
        EXPECT_TRUE(ledger.CheckCopyEnginePeers(0, number).ok());
      }
      EXPECT_EQ(ledger.Record(peer, protocol), number);
    }
    if (protocol == Protocol::kCopyEngine) {
      for (int rank = 0; rank < 3; ++rank) {
        EXPECT_TRUE(ledger.CheckCopyEnginePeers(rank, number).ok()) << rank;
      }
    }
  }
}

TEST(CallLedgerTest, APeerOnAKernelPathAtTheSameCallIsADivergence) {
  CallLedger ledger(2);
  ledger.Record(0, Protocol::kDirect);
  ledger.Record(1, Protocol::kDirect);
  const uint64_t number = ledger.Record(0, Protocol::kCopyEngine);
  EXPECT_TRUE(ledger.CheckCopyEnginePeers(0, number).ok());  // Rank 1 has not called yet.
  ledger.Record(1, Protocol::kDirect);
  const absl::Status status = ledger.CheckCopyEnginePeers(0, number);
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("rank 0 issued call #2 on the copy engines, rank 1 on the direct kernel"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("copy_engine_min_bytes"));
}

TEST(CallLedgerTest, APeerPastTheCallTookAKernelPathForIt) {
  CallLedger ledger(2);
  ledger.Record(1, Protocol::kOneTrip);
  ledger.Record(1, Protocol::kOneTrip);
  const uint64_t number = ledger.Record(0, Protocol::kCopyEngine);
  const absl::Status status = ledger.CheckCopyEnginePeers(0, number);
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("rank 1 went on to call #2"));
}

TEST(CallLedgerTest, ResetRestartsTheNumbers) {
  CallLedger ledger(2);
  ledger.Record(0, Protocol::kDirect);
  ledger.Record(1, Protocol::kCopyEngine);
  ledger.Reset();
  EXPECT_EQ(ledger.Latest(0).number, 0u);
  EXPECT_EQ(ledger.Latest(1).number, 0u);
  EXPECT_EQ(ledger.Record(1, Protocol::kCopyEngine), 1u);
  EXPECT_TRUE(ledger.CheckCopyEnginePeers(1, 1).ok());
}

TEST(CallLedgerTest, RanksRecordConcurrently) {
  constexpr int kRanks = 4;
  constexpr uint64_t kCalls = 10000;
  CallLedger ledger(kRanks);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < kRanks; ++rank) {
    threads.emplace_back([&ledger, rank] {
      for (uint64_t call = 1; call <= kCalls; ++call) {
        EXPECT_EQ(ledger.Record(rank, call % 2 ? Protocol::kDirect : Protocol::kOneTrip), call);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int rank = 0; rank < kRanks; ++rank) EXPECT_EQ(ledger.Latest(rank).number, kCalls);
}

}  // namespace
}  // namespace ltx
