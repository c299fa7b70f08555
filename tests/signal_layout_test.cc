// Tests of the signal region layout (kernels/wire/signal_layout.h): the mailbox slot embeds the
// entry announcement and keeps its op word (op number and protocol) in the same 64-byte line, after
// it.
#include "kernels/wire/signal_layout.h"

#include <cstddef>

#include "gtest/gtest.h"

namespace ltx {
namespace {

TEST(SignalLayoutTest, MailboxSlotIsOneLineWithTheOpNumberLast) {
  static_assert(sizeof(MailboxSlot) == 64, "one 64-byte line per slot");
  static_assert(alignof(MailboxSlot) == 64, "slots do not share lines");
  EXPECT_EQ(offsetof(MailboxSlot, announcement), 0u);
  EXPECT_EQ(offsetof(MailboxSlot, op), sizeof(EntryAnnouncement));
}

TEST(SignalLayoutTest, OpWordCarriesTheOpNumberAndTheProtocol) {
  for (uint64_t number : {uint64_t{1}, uint64_t{1042}, (uint64_t{1} << 56) - 1}) {
    for (AnnouncedProtocol protocol : {AnnouncedProtocol::kDirect, AnnouncedProtocol::kOneTrip,
                                       AnnouncedProtocol::kCopyEngine}) {
      const uint64_t word = MailboxOpWord(number, protocol);
      EXPECT_EQ(MailboxOpNumber(word), number);
      EXPECT_EQ(MailboxOpProtocol(word), protocol);
    }
  }
  // Cleared memory: no op, no protocol.
  EXPECT_EQ(MailboxOpNumber(0), 0u);
  EXPECT_EQ(MailboxOpProtocol(0), AnnouncedProtocol::kNone);
  // Op numbers compare as numbers whatever the protocol of the word.
  EXPECT_LT(MailboxOpNumber(MailboxOpWord(6, AnnouncedProtocol::kOneTrip)),
            MailboxOpNumber(MailboxOpWord(7, AnnouncedProtocol::kDirect)));
}

TEST(SignalLayoutTest, PeerWrittenFieldsDoNotShareLinesWithLocalCounters) {
  EXPECT_EQ(offsetof(SignalRegion, exit_flag) % 64, 0u);
  EXPECT_EQ(offsetof(SignalRegion, last_op) % 64, 0u);
  EXPECT_GE(offsetof(SignalRegion, last_op),
            offsetof(SignalRegion, exit_flag) + sizeof(uint64_t) * kMaxWorldSize);
}

TEST(SignalLayoutTest, StoreClaimsLiveOnTheirOwnLines) {
  EXPECT_EQ(offsetof(SignalRegion, store_claim) % 64, 0u);
  EXPECT_GE(offsetof(SignalRegion, last_op),
            offsetof(SignalRegion, store_claim) + sizeof(uint64_t) * kMaxWorldSize);
}

// An atomic max keeps, for one op, the revocation over the claim, and any later op over both.
TEST(SignalLayoutTest, StoreClaimValuesOrderRevocationAfterClaimAndLaterOpsAfterBoth) {
  for (uint64_t op = 1; op < 1000; op += 37) {
    EXPECT_LT(StoreClaim(op), StoreRevoke(op));
    EXPECT_LT(StoreRevoke(op), StoreClaim(op + 1));
    EXPECT_LT(StoreRevoke(op - 1), StoreClaim(op));
  }
  EXPECT_EQ(StoreClaim(0), 0u) << "a cleared word claims nothing";
}

}  // namespace
}  // namespace ltx
