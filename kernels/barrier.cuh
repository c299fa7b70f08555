// Device side of the cross-GPU barrier (DESIGN.md §5): entry mailboxes, exit flags, deadlines
// on %globaltimer, and the error record. Every wait has a deadline; on expiry the first error of
// the GPU is written to its host-mapped record and the op is abandoned. Nothing traps.
#ifndef LTX_KERNELS_BARRIER_CUH_
#define LTX_KERNELS_BARRIER_CUH_

#include <cstdint>

#include "kernels/memory_order.cuh"
#include "kernels/signal_layout.h"

namespace ltx {

// Claims this GPU's error record (the first error since the last reset wins) and, if claimed,
// fills it and publishes it to the host: fields first, then a system-scope fence, then `state`.
__device__ inline void RecordDeviceError(SignalRegion* local, DeviceErrorRecord* record,
                                         const DeviceErrorRecord& error) {
  if (atomicCAS(&local->error_claimed, 0u, 1u) != 0u) return;
  volatile DeviceErrorRecord* out = record;
  out->kind = error.kind;
  out->phase = error.phase;
  out->field = error.field;
  out->rank = error.rank;
  out->peer = error.peer;
  out->epoch = error.epoch;
  out->expected = error.expected;
  out->seen = error.seen;
  out->waited_ns = error.waited_ns;
  __threadfence_system();
  out->state = kRecordWritten;
}

// Stores this rank's announcement for op `epoch` into slot [rank] of `target`'s mailbox:
// payload first, then the epoch with release semantics at system scope. Repeated stores of the
// same announcement (one per block) are harmless.
__device__ inline void PublishEntry(SignalRegion* target, int rank, uint64_t epoch,
                                    const EntryAnnouncement& mine) {
  MailboxSlot* slot = &target->mailbox[rank];
  slot->output_address = mine.output_address;
  slot->counts_digest = mine.counts_digest;
  slot->total_tokens = mine.total_tokens;
  slot->row_bytes = mine.row_bytes;
  slot->batch = mine.batch;
  slot->dtype = mine.dtype;
  StoreReleaseSystem(&slot->epoch, epoch);
}

// Spins until `*flag >= target` (acquire, system scope). Returns false, with the last value
// seen, when `timeout_ns` passed since `start_ns` or when this GPU's op was already abandoned.
__device__ inline bool WaitForEpoch(const uint64_t* flag, uint64_t target, const uint32_t* abort,
                                    uint64_t start_ns, uint64_t timeout_ns, uint64_t* seen) {
  // Polls mostly the flag itself: the abort flag and the clock are read every 32nd poll.
  constexpr uint32_t kPollsPerCheck = 32;
  for (uint32_t polls = 1;; ++polls) {
    const uint64_t value = LoadAcquireSystem(flag);
    if (value >= target) return true;
    *seen = value;
    if (polls % kPollsPerCheck != 0) continue;
    if (LoadRelaxedSystem(abort) != 0u) return false;
    if (GlobalTimerNs() - start_ns > timeout_ns) return false;
  }
}

// Abandons the op on this GPU (so that its other waits stop early) and records a timeout of a
// wait that started at `start_ns`, unless the op was already abandoned.
__device__ inline void AbandonAfterTimeout(SignalRegion* local, DeviceErrorRecord* record,
                                           BarrierPhase phase, int rank, int peer,
                                           uint64_t epoch, uint64_t seen, uint64_t start_ns) {
  const bool first = LoadRelaxedSystem(&local->abort) == 0u;
  StoreRelaxedSystem(&local->abort, 1u);
  if (!first) return;
  DeviceErrorRecord error = {};
  error.kind = static_cast<uint32_t>(DeviceErrorKind::kTimeout);
  error.phase = static_cast<uint32_t>(phase);
  error.rank = rank;
  error.peer = peer;
  error.epoch = epoch;
  error.expected = epoch;
  error.seen = seen;
  error.waited_ns = GlobalTimerNs() - start_ns;
  RecordDeviceError(local, record, error);
}

// Waits at `phase` for `peer`'s flag to reach `epoch`; on failure abandons the op and records
// the timeout (AbandonAfterTimeout).
__device__ inline bool WaitOrRecordTimeout(const uint64_t* flag, uint64_t epoch,
                                           BarrierPhase phase, int rank, int peer,
                                           uint64_t timeout_ns, SignalRegion* local,
                                           DeviceErrorRecord* record) {
  const uint64_t start_ns = GlobalTimerNs();
  uint64_t seen = 0;
  if (WaitForEpoch(flag, epoch, &local->abort, start_ns, timeout_ns, &seen)) return true;
  AbandonAfterTimeout(local, record, phase, rank, peer, epoch, seen, start_ns);
  return false;
}

// Checks `theirs` (from `peer`) against this rank's announcement; on disagreement records
// InvalidArgument (without abandoning the op) and returns false.
__device__ inline bool AgreesOrRecordMismatch(const EntryAnnouncement& mine,
                                              const EntryAnnouncement& theirs, int rank, int peer,
                                              uint64_t epoch, SignalRegion* local,
                                              DeviceErrorRecord* record) {
  uint64_t my_value = 0;
  uint64_t their_value = 0;
  const MismatchField field = FindMismatch(mine, theirs, &my_value, &their_value);
  if (field == MismatchField::kNone) return true;
  DeviceErrorRecord error = {};
  error.kind = static_cast<uint32_t>(DeviceErrorKind::kMismatch);
  error.field = static_cast<uint32_t>(field);
  error.rank = rank;
  error.peer = peer;
  error.epoch = epoch;
  error.expected = my_value;
  error.seen = their_value;
  RecordDeviceError(local, record, error);
  return false;
}

}  // namespace ltx

#endif  // LTX_KERNELS_BARRIER_CUH_
