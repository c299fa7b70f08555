// Tests of the entry announcement (kernels/wire/entry_announcement.h): its builder, its size, and
// the host/device argument comparison that detects ranks disagreeing on an op (the reset generation
// and the protocol first, then the shape).
#include "kernels/wire/entry_announcement.h"

#include "gtest/gtest.h"

namespace ltx {
namespace {

EntryAnnouncement Announcement() {
  return MakeEntryAnnouncement(/*output_address=*/0x1000, /*dtype=*/1, /*row_bytes=*/8192,
                               /*batch=*/2, /*total_tokens=*/40, /*counts_digest=*/0xabcdef,
                               AnnouncedProtocol::kDirect, /*generation=*/3);
}

TEST(MakeEntryAnnouncementTest, PutsEveryArgumentInItsField) {
  const EntryAnnouncement a = Announcement();
  EXPECT_EQ(a.output_address, 0x1000u);
  EXPECT_EQ(a.dtype, 1);
  EXPECT_EQ(a.row_bytes, 8192);
  EXPECT_EQ(a.batch, 2);
  EXPECT_EQ(a.total_tokens, 40);
  EXPECT_EQ(a.counts_digest, 0xabcdefu);
  EXPECT_EQ(a.protocol, static_cast<uint32_t>(AnnouncedProtocol::kDirect));
  EXPECT_EQ(a.generation, 3u);
}

TEST(EntryAnnouncementTest, IsMadeOfAlignedEightByteWords) {
  // The direct kernel loads a peer's announcement word by word (LoadRelaxedSystemWords).
  static_assert(sizeof(EntryAnnouncement) % 8 == 0, "whole 8-byte words");
  static_assert(alignof(EntryAnnouncement) == 8, "8-byte aligned");
  // With the op word it fills one 64-byte mailbox line.
  static_assert(sizeof(EntryAnnouncement) == 56, "seven words");
  SUCCEED();
}

TEST(FindMismatchTest, EqualAnnouncementsAgreeWhateverTheOutputAddress) {
  EntryAnnouncement theirs = Announcement();
  theirs.output_address = 0x2000;  // Every rank has its own output.
  uint64_t mine_value = 7;
  uint64_t their_value = 7;
  EXPECT_EQ(FindMismatch(Announcement(), theirs, &mine_value, &their_value), MismatchField::kNone);
}

TEST(FindMismatchTest, NamesTheFirstDifferingFieldWithBothValues) {
  struct Case {
    void (*change)(EntryAnnouncement*);
    MismatchField field;
    uint64_t theirs;
  };
  const Case cases[] = {
      {[](EntryAnnouncement* a) { a->dtype = 2; }, MismatchField::kDtype, 2},
      {[](EntryAnnouncement* a) { a->row_bytes = 4096; }, MismatchField::kRowBytes, 4096},
      {[](EntryAnnouncement* a) { a->batch = 3; }, MismatchField::kBatch, 3},
      {[](EntryAnnouncement* a) { a->total_tokens = 41; }, MismatchField::kTotalTokens, 41},
      {[](EntryAnnouncement* a) { a->counts_digest = 0x123; }, MismatchField::kCounts, 0x123},
      {[](EntryAnnouncement* a) { a->generation = 4; }, MismatchField::kGeneration, 4},
      {[](EntryAnnouncement* a) { a->protocol = 2; }, MismatchField::kProtocol, 2},
  };
  for (const Case& c : cases) {
    EntryAnnouncement theirs = Announcement();
    c.change(&theirs);
    uint64_t mine_value = 0;
    uint64_t their_value = 0;
    EXPECT_EQ(FindMismatch(Announcement(), theirs, &mine_value, &their_value), c.field);
    EXPECT_EQ(their_value, c.theirs);
    EXPECT_NE(mine_value, their_value);
  }
}

TEST(FindMismatchTest, GenerationIsReportedFirstThenTheProtocol) {
  // A CUDA graph captured before a Reset, replayed against a call issued after it: whatever
  // else differs, the generation is the reason.
  EntryAnnouncement theirs = Announcement();
  theirs.generation = 2;
  theirs.protocol = static_cast<uint32_t>(AnnouncedProtocol::kOneTrip);
  theirs.row_bytes = 4096;
  uint64_t mine_value = 0;
  uint64_t their_value = 0;
  EXPECT_EQ(FindMismatch(Announcement(), theirs, &mine_value, &their_value),
            MismatchField::kGeneration);
  EXPECT_EQ(mine_value, 3u);
  EXPECT_EQ(their_value, 2u);
  theirs.generation = 3;
  EXPECT_EQ(FindMismatch(Announcement(), theirs, &mine_value, &their_value),
            MismatchField::kProtocol);
  EXPECT_EQ(mine_value, static_cast<uint64_t>(AnnouncedProtocol::kDirect));
  EXPECT_EQ(their_value, static_cast<uint64_t>(AnnouncedProtocol::kOneTrip));
}

TEST(FindMismatchTest, DtypeIsReportedBeforeTheRowSize) {
  EntryAnnouncement theirs = Announcement();
  theirs.dtype = 3;
  theirs.row_bytes = 16384;
  uint64_t mine_value = 0;
  uint64_t their_value = 0;
  EXPECT_EQ(FindMismatch(Announcement(), theirs, &mine_value, &their_value), MismatchField::kDtype);
}

}  // namespace
}  // namespace ltx
