// Tests of the signal region layout (kernels/signal_layout.h): the mailbox slot embeds the entry
// announcement and keeps its op number in the same 64-byte line, after it.
#include "kernels/signal_layout.h"

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
