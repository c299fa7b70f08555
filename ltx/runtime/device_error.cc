// Decoding of device error records.
#include "ltx/runtime/device_error.h"

#include <atomic>
#include <cstring>

#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "kernels/wire/collective.h"
#include "ltx/data_type.h"
#include "ltx/runtime_options.h"

namespace ltx {
namespace {

static_assert(static_cast<int>(AnnouncedProtocol::kDirect) == static_cast<int>(Protocol::kDirect) &&
                  static_cast<int>(AnnouncedProtocol::kOneTrip) ==
                      static_cast<int>(Protocol::kOneTrip) &&
                  static_cast<int>(AnnouncedProtocol::kCopyEngine) ==
                      static_cast<int>(Protocol::kCopyEngine),
              "announced protocols carry the values of ltx::Protocol");

const char* FieldName(MismatchField field) {
  switch (field) {
    case MismatchField::kDtype:
      return "dtype";
    case MismatchField::kRowBytes:
      return "row size in bytes (hidden, or heads * head_dim, times the element size)";
    case MismatchField::kBatch:
      return "batch";
    case MismatchField::kTotalTokens:
      return "total token count";
    case MismatchField::kCounts:
      return "op kind, shape (tensor count included) and token_counts vector (digest)";
    case MismatchField::kGeneration:
      return "reset generation (a call issued before Runtime::Reset, e.g. a CUDA graph captured "
             "then, met one issued after it)";
    case MismatchField::kProtocol:
      return "protocol (shapes on two sides of a size threshold, or different "
             "CallOptions::protocol)";
    case MismatchField::kOutputAddress:
      return "output address of the second rank (a CUDA graph replayed with a peer's graph or "
             "call on other buffers; the first rank's value is what it captured)";
    case MismatchField::kNone:
      break;
  }
  return "unknown field";
}

// The collective and number of the op of `record`, e.g. "all_to_all #7".
std::string OpName(const DeviceErrorRecord& record) {
  return absl::StrFormat("%s #%d", CollectiveName(static_cast<Collective>(record.collective)),
                         record.op);
}

std::string FieldValue(MismatchField field, uint64_t value) {
  if (field == MismatchField::kDtype) {
    return DataTypeName(static_cast<DataType>(static_cast<int32_t>(value)));
  }
  if (field == MismatchField::kCounts || field == MismatchField::kOutputAddress) {
    return absl::StrFormat("%#x", value);
  }
  if (field == MismatchField::kProtocol) {
    return ProtocolName(static_cast<Protocol>(static_cast<int>(value)));
  }
  return absl::StrFormat("%d", static_cast<int64_t>(value));
}

}  // namespace

absl::optional<DeviceErrorRecord> ReadDeviceError(const DeviceErrorRecord* record) {
  const volatile DeviceErrorRecord* shared = record;
  if (shared->state != kRecordWritten) return absl::nullopt;
  std::atomic_thread_fence(std::memory_order_acquire);
  // Every field was written before `state` (release on the device) and none changes after it.
  DeviceErrorRecord copy;
  std::memcpy(&copy, record, sizeof(copy));
  return copy;
}

absl::Status DeviceErrorToStatus(const DeviceErrorRecord& record) {
  switch (static_cast<DeviceErrorKind>(record.kind)) {
    case DeviceErrorKind::kTimeout: {
      const char* phase = "at exit for";
      switch (static_cast<BarrierPhase>(record.phase)) {
        case BarrierPhase::kEntry:
          phase = "at entry for";
          break;
        case BarrierPhase::kExit:
          break;
        case BarrierPhase::kData:
          phase = "for data from";
          break;
      }
      const std::string seen =
          record.seen == 0 ? std::string("no op yet") : absl::StrFormat("op #%d", record.seen);
      return absl::DeadlineExceededError(absl::StrFormat(
          "%s: rank %d waited %s %s rank %d (its flag showed %s)", OpName(record), record.rank,
          absl::FormatDuration(absl::Nanoseconds(static_cast<int64_t>(record.waited_ns))), phase,
          record.peer, seen));
    }
    case DeviceErrorKind::kMismatch: {
      const auto field = static_cast<MismatchField>(record.field);
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: ranks disagree on the %s: rank %d has %s, rank %d has %s", OpName(record),
          FieldName(field), record.rank, FieldValue(field, record.expected), record.peer,
          FieldValue(field, record.seen)));
    }
    case DeviceErrorKind::kPeerGaveUp:
      return absl::AbortedError(absl::StrFormat(
          "%s: rank %d stopped %s: rank %d had given the op up (its own error says "
          "why, and names the peers that may have stored into its output after that)",
          OpName(record), record.rank,
          static_cast<BarrierPhase>(record.phase) == BarrierPhase::kEntry ? "at entry" : "at exit",
          record.peer));
    case DeviceErrorKind::kNone:
      break;
  }
  return absl::InternalError(absl::StrFormat("device error record of rank %d has unknown kind %d",
                                             record.rank, record.kind));
}

}  // namespace ltx
