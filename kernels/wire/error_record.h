// The error record: what went wrong in an op, as the device writes it into host-mapped pinned
// memory (one record per GPU) and the host decodes it (ltx/runtime/device_error.h). The builders
// below are the only places records are filled, on the device and on the host (the copy-engine
// transport reports disagreement with the same record). Protocol: kernels/PROTOCOL.md.
#ifndef KERNELS_WIRE_ERROR_RECORD_H_
#define KERNELS_WIRE_ERROR_RECORD_H_

#include <cstdint>

#include "kernels/wire/entry_announcement.h"
#include "kernels/wire/host_device.h"

namespace ltx {

// What went wrong.
enum class DeviceErrorKind : uint32_t {
  kNone = 0,
  kTimeout = 1,   // A wait passed its deadline.
  kMismatch = 2,  // A peer's arguments disagree with this rank's.
  kPeerGaveUp = 3,  // A peer gave up the op (its own record says why) before this rank stored
                    // into its output, or while this rank waited for it.
};

// Where in the protocol a wait timed out.
enum class BarrierPhase : uint32_t {
  kEntry = 0,  // Direct path: waiting for a peer's entry mailbox.
  kExit = 1,   // Direct path: waiting for a peer's exit flag.
  kData = 2,   // One-trip path: waiting for a peer's lines.
};

// Values of DeviceErrorRecord::state. The device writes every other field first and `state`
// last, with a release store at system scope; the host reads `state` and then, after an acquire
// fence, the fields.
inline constexpr uint32_t kRecordEmpty = 0;
inline constexpr uint32_t kRecordWritten = 1;

// Written by the device at most once between resets (the first error of the GPU wins).
struct DeviceErrorRecord {
  uint32_t state;      // kRecordEmpty or kRecordWritten; written last.
  uint32_t kind;       // DeviceErrorKind
  uint32_t phase;      // BarrierPhase (timeouts)
  uint32_t field;      // MismatchField (mismatches)
  uint32_t collective;  // Collective (kernels/wire/collective.h) of the op; 0 when not known.
  int32_t rank;        // The rank that recorded the error.
  int32_t peer;        // The peer waited for, or the peer that disagreed.
  uint64_t op;         // Op number (1 for the first op after a reset).
  uint64_t expected;   // Timeout: the op number waited for. Mismatch: this rank's value.
  uint64_t seen;       // Timeout: the op number last seen. Mismatch: the peer's value.
  uint64_t waited_ns;  // Timeout: how long the wait lasted.
  // Not part of the first error: written when this GPU gives up an op, bit s set when rank s
  // had claimed its stores into this GPU's output and had not finished them (it may still be
  // storing until its kernel ends). Kept by later records.
  uint32_t storing_peers;
};

// The record of `rank` that waited `waited_ns` at `phase` for `peer` in op `op` and last saw
// `seen` there (an op number; for one-trip lines the line's flag). `state` is kRecordEmpty.
// Thread-safe (pure).
LTX_HOST_DEVICE inline DeviceErrorRecord TimeoutRecord(BarrierPhase phase, int rank, int peer,
                                                       uint64_t op, uint64_t seen,
                                                       uint64_t waited_ns) {
  DeviceErrorRecord record = {};
  record.kind = static_cast<uint32_t>(DeviceErrorKind::kTimeout);
  record.phase = static_cast<uint32_t>(phase);
  record.rank = rank;
  record.peer = peer;
  record.op = op;
  record.expected = op;
  record.seen = seen;
  record.waited_ns = waited_ns;
  return record;
}

// The record of `rank`, which found at `phase` of op `op` that `peer` had given up the op.
// `state` is kRecordEmpty. Thread-safe (pure).
LTX_HOST_DEVICE inline DeviceErrorRecord PeerGaveUpRecord(BarrierPhase phase, int rank, int peer,
                                                          uint64_t op) {
  DeviceErrorRecord record = {};
  record.kind = static_cast<uint32_t>(DeviceErrorKind::kPeerGaveUp);
  record.phase = static_cast<uint32_t>(phase);
  record.rank = rank;
  record.peer = peer;
  record.op = op;
  record.expected = op;
  return record;
}

// Compares `peer`'s announcement `theirs` with `rank`'s own (`mine`) for op `op`. When they
// disagree (FindMismatch) fills `*record` with the mismatch record (first differing field, both
// values; `state` kRecordEmpty) and returns true; when they agree returns false and leaves
// `*record` untouched. Thread-safe (pure).
LTX_HOST_DEVICE inline bool MismatchRecord(const EntryAnnouncement& mine,
                                           const EntryAnnouncement& theirs, int rank, int peer,
                                           uint64_t op, DeviceErrorRecord* record) {
  uint64_t my_value = 0;
  uint64_t their_value = 0;
  const MismatchField field = FindMismatch(mine, theirs, &my_value, &their_value);
  if (field == MismatchField::kNone) return false;
  *record = DeviceErrorRecord{};
  record->kind = static_cast<uint32_t>(DeviceErrorKind::kMismatch);
  record->field = static_cast<uint32_t>(field);
  record->rank = rank;
  record->peer = peer;
  record->op = op;
  record->expected = my_value;
  record->seen = their_value;
  return true;
}

// The record of `peer` announcing op `op` with its output at `announced` while `rank` captured
// its copies into `peer`'s output at `captured` (a CUDA graph replayed against a peer's graph
// or call on other buffers). Thread-safe (pure).
LTX_HOST_DEVICE inline DeviceErrorRecord OutputMismatchRecord(int rank, int peer, uint64_t op,
                                                              uint64_t captured,
                                                              uint64_t announced) {
  DeviceErrorRecord record = {};
  record.kind = static_cast<uint32_t>(DeviceErrorKind::kMismatch);
  record.field = static_cast<uint32_t>(MismatchField::kOutputAddress);
  record.rank = rank;
  record.peer = peer;
  record.op = op;
  record.expected = captured;
  record.seen = announced;
  return record;
}

}  // namespace ltx

#endif  // KERNELS_WIRE_ERROR_RECORD_H_
