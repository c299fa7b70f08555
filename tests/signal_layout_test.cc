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

}  // namespace
}  // namespace ltx
