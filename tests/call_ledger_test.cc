// Tests of ltx::CallLedger (ltx/runtime/call_ledger.h): call numbers per rank, interleaved
// copy-engine and kernel calls that agree, the disagreement either side of a pair notices
// (whichever records second), one-trip against direct left to the device, the history limit, Reset,
// and concurrent recording. Needs no GPU.
#include "ltx/runtime/call_ledger.h"

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
  EXPECT_EQ(ledger.Record(0, Protocol::kDirect), 1u);
  EXPECT_EQ(ledger.Record(0, Protocol::kCopyEngine), 2u);
  EXPECT_EQ(ledger.Record(1, Protocol::kOneTrip), 1u);
}

TEST(CallLedgerTest, LatestCallIsTheNewestRecordPastTheHistory) {
  CallLedger ledger(3);
  EXPECT_EQ(ledger.LatestCall(0), 0u);
  for (int call = 0; call < CallLedger::kHistory + 5; ++call) ledger.Record(0, Protocol::kDirect);
  ledger.Record(1, Protocol::kOneTrip);
  EXPECT_EQ(ledger.LatestCall(0), static_cast<uint64_t>(CallLedger::kHistory + 5));
  EXPECT_EQ(ledger.LatestCall(1), 1u);
  EXPECT_EQ(ledger.LatestCall(2), 0u);
  ledger.Reset();
  EXPECT_EQ(ledger.LatestCall(0), 0u);
}

TEST(CallLedgerTest, RanksOnTheSamePathsAgreeWhateverTheOrder) {
  CallLedger ledger(3);
  const Protocol sequence[] = {Protocol::kDirect, Protocol::kCopyEngine, Protocol::kOneTrip,
                               Protocol::kCopyEngine, Protocol::kCopyEngine, Protocol::kDirect};
  for (Protocol protocol : sequence) {
    for (int rank : {2, 0, 1}) {
      const uint64_t number = ledger.Record(rank, protocol);
      EXPECT_TRUE(ledger.Check(rank, number, protocol).ok()) << rank;
    }
  }
}

TEST(CallLedgerTest, OneTripAgainstDirectIsLeftToTheDevice) {
  CallLedger ledger(2);
  ledger.Record(0, Protocol::kDirect);
  const uint64_t number = ledger.Record(1, Protocol::kOneTrip);
  EXPECT_TRUE(ledger.Check(1, number, Protocol::kOneTrip).ok());
}

TEST(CallLedgerTest, WhicheverRecordsSecondSeesTheOtherKindOfPath) {
  for (bool copy_engine_first : {true, false}) {
    CallLedger ledger(2);
    ledger.Record(0, Protocol::kDirect);
    ledger.Record(1, Protocol::kDirect);
    const int first = copy_engine_first ? 0 : 1;
    const Protocol first_protocol = copy_engine_first ? Protocol::kCopyEngine : Protocol::kDirect;
    const Protocol second_protocol = copy_engine_first ? Protocol::kDirect : Protocol::kCopyEngine;
    const uint64_t number = ledger.Record(first, first_protocol);
    EXPECT_TRUE(ledger.Check(first, number, first_protocol).ok()) << "the peer has not called";
    EXPECT_EQ(ledger.Record(1 - first, second_protocol), number);
    const absl::Status status = ledger.Check(1 - first, number, second_protocol);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr("call #2"));
    EXPECT_THAT(std::string(status.message()), HasSubstr("copy_engine"));
    EXPECT_THAT(std::string(status.message()), HasSubstr("direct"));
    EXPECT_THAT(std::string(status.message()), HasSubstr("disagree on the protocol"));
    // The first one, looking again, sees it too.
    EXPECT_FALSE(ledger.Check(first, number, first_protocol).ok());
  }
}

TEST(CallLedgerTest, APeerFurtherAheadThanTheHistoryIsNotChecked) {
  CallLedger ledger(2);
  for (int call = 0; call <= CallLedger::kHistory; ++call) ledger.Record(1, Protocol::kDirect);
  const uint64_t number = ledger.Record(0, Protocol::kCopyEngine);
  EXPECT_EQ(number, 1u);
  EXPECT_TRUE(ledger.Check(0, number, Protocol::kCopyEngine).ok());
}

TEST(CallLedgerTest, ResetRestartsTheNumbersAndForgetsThePaths) {
  CallLedger ledger(2);
  ledger.Record(0, Protocol::kDirect);
  ledger.Reset();
  EXPECT_EQ(ledger.Record(1, Protocol::kCopyEngine), 1u);
  EXPECT_TRUE(ledger.Check(1, 1, Protocol::kCopyEngine).ok());
  EXPECT_EQ(ledger.Record(0, Protocol::kCopyEngine), 1u);
}

TEST(CallLedgerTest, RanksRecordConcurrently) {
  constexpr int kRanks = 4;
  constexpr uint64_t kCalls = 10000;
  CallLedger ledger(kRanks);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < kRanks; ++rank) {
    threads.emplace_back([&ledger, rank] {
      for (uint64_t call = 1; call <= kCalls; ++call) {
        const Protocol protocol = call % 3 == 0 ? Protocol::kCopyEngine : Protocol::kDirect;
        EXPECT_EQ(ledger.Record(rank, protocol), call);
        EXPECT_TRUE(ledger.Check(rank, call, protocol).ok());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
}

}  // namespace
}  // namespace ltx
