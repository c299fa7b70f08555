// The memory that GPUs of one Runtime share to coordinate a collective: each GPU's signal
// region (entry mailboxes and exit flags that peers store into, plus this GPU's own epoch and
// block counters), and the error record the device writes into host-mapped pinned memory.
//
// Both the host runtime (allocation, clearing, decoding errors) and the kernels use these
// definitions, so they are plain standard-layout structs with fixed-width fields.
#ifndef LTX_KERNELS_SIGNAL_LAYOUT_H_
#define LTX_KERNELS_SIGNAL_LAYOUT_H_

#include <cstdint>

#include "kernels/host_device.h"

namespace ltx {

// Largest number of GPUs one Runtime spans (one NVLink/NVSwitch node).
inline constexpr int kMaxWorldSize = 8;

// What rank `s` tells rank `t` at the entry of an op: stored by `s` into slot [s] of `t`'s
// mailbox. The payload fields are stored first; `epoch` is stored last with release semantics
// at system scope, so a reader that acquires `epoch >= e` sees the payload of op `e`.
struct alignas(64) MailboxSlot {
  uint64_t output_address;  // s's output buffer, a pointer valid on s's GPU (and its peers).
  uint64_t counts_digest;   // Digest of the token-count vector as s sees it.
  int64_t total_tokens;     // Sum of the token counts as s sees it.
  int64_t row_bytes;        // hidden * element size.
  int64_t batch;
  int32_t dtype;            // ltx::DataType as an integer.
  int32_t reserved;
  uint64_t epoch;           // Op number this entry belongs to; stored last (release).
};

// One per GPU, in that GPU's device memory. Peers store into `mailbox` and `exit_flag` over
// NVLink; the other fields are touched only by this GPU's own kernels and by Runtime::Reset.
struct SignalRegion {
  MailboxSlot mailbox[kMaxWorldSize];
  // exit_flag[s] >= e once rank s finished storing op e's data into this GPU's output.
  alignas(64) uint64_t exit_flag[kMaxWorldSize];
  // Epoch of the last op this GPU's kernel ran; the kernel of the next op uses it + 1.
  alignas(64) uint64_t last_epoch;
  // Blocks of the running op that have finished storing (last-block-done counter).
  uint32_t blocks_done;
  // Non-zero once an error was claimed for this GPU's record (first error wins).
  uint32_t error_claimed;
  // Non-zero once a wait timed out: the op is abandoned and other waits stop early.
  uint32_t abort;
};

// What went wrong on the device, as recorded in the error record.
enum class DeviceErrorKind : uint32_t {
  kNone = 0,
  kTimeout = 1,   // A barrier wait passed its deadline.
  kMismatch = 2,  // A peer's arguments disagree with this rank's.
};

// Where in the protocol a wait timed out.
enum class BarrierPhase : uint32_t {
  kEntry = 0,  // Direct path: waiting for a peer's entry mailbox.
  kExit = 1,   // Direct path: waiting for a peer's exit flag.
  kData = 2,   // One-trip path: waiting for a peer's data lines.
};

// The argument two ranks disagreed on.
enum class MismatchField : uint32_t {
  kNone = 0,
  kDtype = 1,
  kRowBytes = 2,
  kBatch = 3,
  kTotalTokens = 4,
  kCounts = 5,
};

// Host-mapped pinned memory, one per GPU, written by the device at most once between resets.
// The device claims it with SignalRegion::error_claimed, writes every field, makes them
// visible at system scope, and only then sets `state` to kRecordWritten.
inline constexpr uint32_t kRecordEmpty = 0;
inline constexpr uint32_t kRecordWritten = 1;

struct DeviceErrorRecord {
  uint32_t state;     // kRecordEmpty or kRecordWritten; written last.
  uint32_t kind;      // DeviceErrorKind
  uint32_t phase;     // BarrierPhase (timeouts)
  uint32_t field;     // MismatchField (mismatches)
  int32_t rank;       // The rank that recorded the error.
  int32_t peer;       // The peer waited for, or the peer that disagreed.
  uint64_t epoch;     // Op number.
  uint64_t expected;  // Timeout: the epoch waited for. Mismatch: this rank's value.
  uint64_t seen;      // Timeout: the value last seen. Mismatch: the peer's value.
  uint64_t waited_ns; // Timeout: how long the wait lasted.
};

// What a rank announces at the entry of an op; ranks check each other's against their own.
struct EntryAnnouncement {
  uint64_t output_address;
  uint64_t counts_digest;
  int64_t total_tokens;
  int64_t row_bytes;
  int64_t batch;
  int32_t dtype;
};

// Compares a peer's announcement with this rank's; returns the first field that differs (and
// both values), or MismatchField::kNone.
LTX_HOST_DEVICE inline MismatchField FindMismatch(const EntryAnnouncement& mine,
                                                  const EntryAnnouncement& theirs,
                                                  uint64_t* my_value, uint64_t* their_value) {
  struct Check {
    MismatchField field;
    uint64_t mine;
    uint64_t theirs;
  };
  const Check checks[] = {
      {MismatchField::kDtype, static_cast<uint64_t>(mine.dtype),
       static_cast<uint64_t>(theirs.dtype)},
      {MismatchField::kRowBytes, static_cast<uint64_t>(mine.row_bytes),
       static_cast<uint64_t>(theirs.row_bytes)},
      {MismatchField::kBatch, static_cast<uint64_t>(mine.batch),
       static_cast<uint64_t>(theirs.batch)},
      {MismatchField::kTotalTokens, static_cast<uint64_t>(mine.total_tokens),
       static_cast<uint64_t>(theirs.total_tokens)},
      {MismatchField::kCounts, mine.counts_digest, theirs.counts_digest},
  };
  for (const Check& check : checks) {
    if (check.mine != check.theirs) {
      *my_value = check.mine;
      *their_value = check.theirs;
      return check.field;
    }
  }
  return MismatchField::kNone;
}

}  // namespace ltx

#endif  // LTX_KERNELS_SIGNAL_LAYOUT_H_
