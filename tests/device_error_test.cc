// Tests of device error decoding (ltx/runtime/device_error.h): reading a record from host-mapped
// memory and turning timeouts and argument mismatches into absl::Status messages.
#include "ltx/runtime/device_error.h"

#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/wire/collective.h"
#include "kernels/wire/entry_announcement.h"
#include "kernels/wire/error_record.h"
#include "ltx/data_type.h"

namespace ltx {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A published timeout of rank 2 waiting 10 s for rank 3 in AllGather op 1042.
DeviceErrorRecord PublishedTimeout(BarrierPhase phase) {
  DeviceErrorRecord record = TimeoutRecord(phase, /*rank=*/2, /*peer=*/3, /*op=*/1042,
                                           /*seen=*/1041, /*waited_ns=*/10000000000ull);
  record.state = kRecordWritten;
  record.collective = static_cast<uint32_t>(Collective::kAllGather);
  return record;
}

// A published mismatch of rank 1 with rank 6 in AllGather op 7 on `field`.
DeviceErrorRecord PublishedMismatch(MismatchField field, uint64_t mine, uint64_t theirs) {
  DeviceErrorRecord record = {};
  record.state = kRecordWritten;
  record.collective = static_cast<uint32_t>(Collective::kAllGather);
  record.kind = static_cast<uint32_t>(DeviceErrorKind::kMismatch);
  record.field = static_cast<uint32_t>(field);
  record.rank = 1;
  record.peer = 6;
  record.op = 7;
  record.expected = mine;
  record.seen = theirs;
  return record;
}

TEST(ReadDeviceErrorTest, EmptyRecordReadsAsNothing) {
  DeviceErrorRecord record = {};
  EXPECT_FALSE(ReadDeviceError(&record).has_value());
  // Fields without the written state are not published yet.
  record.kind = static_cast<uint32_t>(DeviceErrorKind::kTimeout);
  record.rank = 4;
  EXPECT_FALSE(ReadDeviceError(&record).has_value());
}

TEST(ReadDeviceErrorTest, WrittenRecordReadsBackEveryField) {
  DeviceErrorRecord record = PublishedTimeout(BarrierPhase::kExit);
  record.field = 3;
  const absl::optional<DeviceErrorRecord> read = ReadDeviceError(&record);
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->state, kRecordWritten);
  EXPECT_EQ(read->kind, static_cast<uint32_t>(DeviceErrorKind::kTimeout));
  EXPECT_EQ(read->phase, static_cast<uint32_t>(BarrierPhase::kExit));
  EXPECT_EQ(read->field, 3u);
  EXPECT_EQ(read->rank, 2);
  EXPECT_EQ(read->peer, 3);
  EXPECT_EQ(read->op, 1042u);
  EXPECT_EQ(read->expected, 1042u);
  EXPECT_EQ(read->seen, 1041u);
  EXPECT_EQ(read->waited_ns, 10000000000ull);
}

TEST(DeviceErrorToStatusTest, ExitTimeoutIsDeadlineExceededNamingOpRanksAndPhase) {
  const absl::Status status = DeviceErrorToStatus(PublishedTimeout(BarrierPhase::kExit));
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  const std::string message(status.message());
  EXPECT_THAT(message, HasSubstr("all_gather #1042"));
  EXPECT_THAT(message, HasSubstr("rank 2"));
  EXPECT_THAT(message, HasSubstr("waited 10s "));
  EXPECT_THAT(message, HasSubstr("at exit"));
  EXPECT_THAT(message, HasSubstr("for rank 3"));
  EXPECT_THAT(message, HasSubstr("op #1041"));
}

TEST(DeviceErrorToStatusTest, EntryTimeoutSaysAtEntry) {
  const absl::Status status = DeviceErrorToStatus(PublishedTimeout(BarrierPhase::kEntry));
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("at entry"));
}

TEST(DeviceErrorToStatusTest, TimeoutOnAPeerThatRanNoOpSaysSo) {
  DeviceErrorRecord record = PublishedTimeout(BarrierPhase::kEntry);
  record.op = 1;
  record.seen = 0;
  record.waited_ns = 1500000;
  const absl::Status status = DeviceErrorToStatus(record);
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("no op yet"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("1.5ms"));
}

TEST(DeviceErrorToStatusTest, PeerThatGaveUpIsAbortedNamingBothRanks) {
  DeviceErrorRecord record = PeerGaveUpRecord(BarrierPhase::kEntry, /*rank=*/1, /*peer=*/0,
                                              /*op=*/9);
  record.state = kRecordWritten;
  const absl::Status status = DeviceErrorToStatus(record);
  EXPECT_EQ(status.code(), absl::StatusCode::kAborted) << status;
  const std::string message(status.message());
  EXPECT_THAT(message, HasSubstr("#9"));
  EXPECT_THAT(message, HasSubstr("rank 1 stopped at entry"));
  EXPECT_THAT(message, HasSubstr("rank 0 had given the op up"));
  EXPECT_THAT(message, Not(HasSubstr("stored nothing")))
      << "other blocks of rank 1 may have claimed and stored before rank 0 gave up";
}

TEST(DeviceErrorToStatusTest, RowBytesMismatchIsInvalidArgumentNamingBothValuesAndRanks) {
  const absl::Status status =
      DeviceErrorToStatus(PublishedMismatch(MismatchField::kRowBytes, 8192, 4096));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  const std::string message(status.message());
  EXPECT_THAT(message, HasSubstr("all_gather #7"));
  EXPECT_THAT(message, HasSubstr("row size"));
  EXPECT_THAT(message, HasSubstr("rank 1 has 8192"));
  EXPECT_THAT(message, HasSubstr("rank 6 has 4096"));
}

TEST(DeviceErrorToStatusTest, DtypeMismatchPrintsDtypeNames) {
  const absl::Status status = DeviceErrorToStatus(
      PublishedMismatch(MismatchField::kDtype, static_cast<uint64_t>(DataType::kBFloat16),
                        static_cast<uint64_t>(DataType::kFloat32)));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  const std::string message(status.message());
  EXPECT_THAT(message, HasSubstr("dtype"));
  EXPECT_THAT(message, HasSubstr("rank 1 has bf16"));
  EXPECT_THAT(message, HasSubstr("rank 6 has fp32"));
}

TEST(DeviceErrorToStatusTest, OtherMismatchesNameTheirArgument) {
  EXPECT_THAT(
      std::string(DeviceErrorToStatus(PublishedMismatch(MismatchField::kBatch, 2, 3)).message()),
      HasSubstr("batch"));
  EXPECT_THAT(
      std::string(
          DeviceErrorToStatus(PublishedMismatch(MismatchField::kTotalTokens, 10, 12)).message()),
      HasSubstr("total token count"));
  const absl::Status counts =
      DeviceErrorToStatus(PublishedMismatch(MismatchField::kCounts, 0xabc, 0xdef));
  EXPECT_EQ(counts.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(counts.message()), HasSubstr("token_counts"));
  EXPECT_THAT(std::string(counts.message()), HasSubstr("0xabc"));
  EXPECT_THAT(std::string(counts.message()), HasSubstr("0xdef"));
}

TEST(DeviceErrorToStatusTest, OutputMismatchNamesBothAddressesInHex) {
  DeviceErrorRecord record = OutputMismatchRecord(/*rank=*/0, /*peer=*/1, /*op=*/9,
                                                  /*captured=*/0x7f0000, /*announced=*/0x7f1000);
  record.state = kRecordWritten;
  record.collective = static_cast<uint32_t>(Collective::kAllGather);
  const absl::Status status = DeviceErrorToStatus(record);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  const std::string message(status.message());
  EXPECT_THAT(message, HasSubstr("all_gather #9"));
  EXPECT_THAT(message, HasSubstr("output address"));
  EXPECT_THAT(message, HasSubstr("rank 0 has 0x7f0000"));
  EXPECT_THAT(message, HasSubstr("rank 1 has 0x7f1000"));
}

TEST(DeviceErrorToStatusTest, UnknownKindIsInternal) {
  DeviceErrorRecord record = PublishedTimeout(BarrierPhase::kExit);
  record.kind = 77;
  const absl::Status status = DeviceErrorToStatus(record);
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("77"));
  record.kind = static_cast<uint32_t>(DeviceErrorKind::kNone);
  EXPECT_EQ(DeviceErrorToStatus(record).code(), absl::StatusCode::kInternal);
}

TEST(DeviceErrorToStatusTest, OneTripDataTimeoutSaysItWaitedForData) {
  DeviceErrorRecord record = TimeoutRecord(BarrierPhase::kData, /*rank=*/0, /*peer=*/3,
                                           /*op=*/7, /*seen=*/6, /*waited_ns=*/1000000000);
  record.state = kRecordWritten;
  record.collective = static_cast<uint32_t>(Collective::kAllToAll);
  const absl::Status status = DeviceErrorToStatus(record);
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(status.message(),
            "all_to_all #7: rank 0 waited 1s for data from rank 3 (its flag showed op #6)");
}

TEST(DeviceErrorToStatusTest, ReductionsAreNamed) {
  DeviceErrorRecord record = PeerGaveUpRecord(BarrierPhase::kExit, /*rank=*/1, /*peer=*/0,
                                              /*op=*/4);
  record.state = kRecordWritten;
  record.collective = static_cast<uint32_t>(Collective::kAllReduce);
  EXPECT_THAT(std::string(DeviceErrorToStatus(record).message()),
              ::testing::StartsWith("all_reduce #4: "));
  record.collective = static_cast<uint32_t>(Collective::kReduceScatter);
  EXPECT_THAT(std::string(DeviceErrorToStatus(record).message()),
              ::testing::StartsWith("reduce_scatter #4: "));
}

TEST(DeviceErrorToStatusTest, MismatchFromTheSharedBuilderReadsAsTheKernelsDo) {
  const EntryAnnouncement mine =
      MakeEntryAnnouncement(0x1000, 1, 8192, 2, 40, 0xabc, AnnouncedProtocol::kDirect, 0);
  const EntryAnnouncement theirs =
      MakeEntryAnnouncement(0x2000, 1, 8192, 3, 40, 0xabc, AnnouncedProtocol::kDirect, 0);
  DeviceErrorRecord record;
  ASSERT_TRUE(MismatchRecord(mine, theirs, /*rank=*/1, /*peer=*/0, /*op=*/5, &record));
  // The builder leaves the collective to whoever publishes the record.
  const absl::Status unnamed = DeviceErrorToStatus(record);
  EXPECT_EQ(unnamed.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(unnamed.message(), "op #5: ranks disagree on the batch: rank 1 has 2, rank 0 has 3");
  record.collective = static_cast<uint32_t>(Collective::kAllGather);
  EXPECT_EQ(DeviceErrorToStatus(record).message(),
            "all_gather #5: ranks disagree on the batch: rank 1 has 2, rank 0 has 3");
}

TEST(DeviceErrorToStatusTest, GenerationMismatchSaysWhatDiffered) {
  const EntryAnnouncement mine =
      MakeEntryAnnouncement(0x1000, 1, 8192, 2, 40, 0xabc, AnnouncedProtocol::kOneTrip, 3);
  // A stale graph: the shape differs too, but the generation is what is reported.
  const EntryAnnouncement theirs =
      MakeEntryAnnouncement(0x2000, 1, 4096, 2, 40, 0xabc, AnnouncedProtocol::kOneTrip, 4);
  DeviceErrorRecord record;
  ASSERT_TRUE(MismatchRecord(mine, theirs, /*rank=*/0, /*peer=*/1, /*op=*/1, &record));
  const absl::Status status = DeviceErrorToStatus(record);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              ::testing::HasSubstr("ranks disagree on the reset generation"));
  EXPECT_THAT(std::string(status.message()), ::testing::EndsWith("rank 0 has 3, rank 1 has 4"));
}

TEST(DeviceErrorToStatusTest, ProtocolMismatchNamesBothProtocols) {
  const EntryAnnouncement mine =
      MakeEntryAnnouncement(0, 1, 8192, 2, 40, 0xabc, AnnouncedProtocol::kDirect, 0);
  const EntryAnnouncement theirs =
      MakeEntryAnnouncement(0, 1, 8192, 2, 40, 0xabc, AnnouncedProtocol::kOneTrip, 0);
  DeviceErrorRecord record;
  ASSERT_TRUE(MismatchRecord(mine, theirs, /*rank=*/1, /*peer=*/0, /*op=*/9, &record));
  record.collective = static_cast<uint32_t>(Collective::kAllToAll);
  const absl::Status status = DeviceErrorToStatus(record);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              ::testing::StartsWith("all_to_all #9: ranks disagree on the protocol"));
  EXPECT_THAT(std::string(status.message()),
              ::testing::EndsWith("rank 1 has direct, rank 0 has one_trip"));
}

}  // namespace
}  // namespace ltx
