// Tests of the error record builders (kernels/wire/error_record.h), which the kernels and the
// copy-engine transport share.
#include "kernels/wire/error_record.h"

#include "gtest/gtest.h"
#include "kernels/wire/entry_announcement.h"

namespace ltx {
namespace {

EntryAnnouncement Announcement() {
  return MakeEntryAnnouncement(/*output_address=*/0x1000, /*dtype=*/1, /*row_bytes=*/8192,
                               /*batch=*/2, /*total_tokens=*/40, /*counts_digest=*/0xabcdef,
                               AnnouncedProtocol::kDirect, /*generation=*/0);
}

TEST(TimeoutRecordTest, FillsEveryTimeoutField) {
  const DeviceErrorRecord record =
      TimeoutRecord(BarrierPhase::kExit, /*rank=*/2, /*peer=*/3, /*op=*/1042, /*seen=*/1041,
                    /*waited_ns=*/10000000000ull);
  EXPECT_EQ(record.state, kRecordEmpty);
  EXPECT_EQ(record.kind, static_cast<uint32_t>(DeviceErrorKind::kTimeout));
  EXPECT_EQ(record.phase, static_cast<uint32_t>(BarrierPhase::kExit));
  EXPECT_EQ(record.field, static_cast<uint32_t>(MismatchField::kNone));
  EXPECT_EQ(record.rank, 2);
  EXPECT_EQ(record.peer, 3);
  EXPECT_EQ(record.op, 1042u);
  EXPECT_EQ(record.expected, 1042u);
  EXPECT_EQ(record.seen, 1041u);
  EXPECT_EQ(record.waited_ns, 10000000000ull);
}

TEST(PeerGaveUpRecordTest, FillsKindPhaseRanksAndOp) {
  const DeviceErrorRecord record = PeerGaveUpRecord(BarrierPhase::kExit, 3, 5, 77);
  EXPECT_EQ(record.state, kRecordEmpty);
  EXPECT_EQ(record.kind, static_cast<uint32_t>(DeviceErrorKind::kPeerGaveUp));
  EXPECT_EQ(record.phase, static_cast<uint32_t>(BarrierPhase::kExit));
  EXPECT_EQ(record.rank, 3);
  EXPECT_EQ(record.peer, 5);
  EXPECT_EQ(record.op, 77u);
  EXPECT_EQ(record.storing_peers, 0u);
}

TEST(MismatchRecordTest, AgreeingAnnouncementsLeaveTheRecordUntouched) {
  EntryAnnouncement theirs = Announcement();
  theirs.output_address = 0x2000;  // Every rank has its own output.
  DeviceErrorRecord record = {};
  record.rank = 77;
  EXPECT_FALSE(MismatchRecord(Announcement(), theirs, 1, 6, 7, &record));
  EXPECT_EQ(record.rank, 77);
  EXPECT_EQ(record.kind, static_cast<uint32_t>(DeviceErrorKind::kNone));
}

TEST(MismatchRecordTest, NamesTheFieldTheRanksAndBothValues) {
  EntryAnnouncement theirs = Announcement();
  theirs.row_bytes = 4096;
  DeviceErrorRecord record = {};
  record.waited_ns = 5;  // Overwritten: the whole record is built.
  ASSERT_TRUE(MismatchRecord(Announcement(), theirs, /*rank=*/1, /*peer=*/6, /*op=*/7, &record));
  EXPECT_EQ(record.state, kRecordEmpty);
  EXPECT_EQ(record.kind, static_cast<uint32_t>(DeviceErrorKind::kMismatch));
  EXPECT_EQ(record.field, static_cast<uint32_t>(MismatchField::kRowBytes));
  EXPECT_EQ(record.rank, 1);
  EXPECT_EQ(record.peer, 6);
  EXPECT_EQ(record.op, 7u);
  EXPECT_EQ(record.expected, 8192u);
  EXPECT_EQ(record.seen, 4096u);
  EXPECT_EQ(record.waited_ns, 0u);
}

}  // namespace
}  // namespace ltx
