// Device side of the cross-GPU protocol (kernels/PROTOCOL.md): entry mailboxes, exit flags,
// waits with deadlines on %globaltimer, and the error record. Every wait has a deadline; on
// expiry the first error of the GPU is written to its host-mapped record and the op is
// abandoned. Nothing traps.
#ifndef LTX_KERNELS_BARRIER_CUH_
#define LTX_KERNELS_BARRIER_CUH_

#include <cstdint>

#include "kernels/entry_announcement.h"
#include "kernels/error_record.h"
#include "kernels/memory_order.cuh"
#include "kernels/signal_layout.h"

namespace ltx {

// What the waits of one op on this GPU need: where errors go, who waits, and the deadline.
struct OpContext {
  SignalRegion* local;        // This GPU's signal region.
  DeviceErrorRecord* record;  // This GPU's error record (device pointer of host-mapped memory).
  int rank;                   // This GPU's rank.
  uint64_t number;            // The op number.
  uint64_t timeout_ns;        // How long one wait may last.
};

// Where a wait stands, for its timeout record: the peer waited for and what was last seen.
struct WaitProgress {
  int peer;
  uint64_t seen;
};

// Claims this GPU's error record (the first error since the last reset wins) and, if claimed,
// publishes `error` to the host: every field with plain stores, then `state` with a release
// store at system scope.
__device__ inline void RecordDeviceError(const OpContext& op, const DeviceErrorRecord& error) {
  if (atomicCAS(&op.local->error_claimed, 0u, 1u) != 0u) return;
  DeviceErrorRecord fields = error;
  fields.state = kRecordEmpty;  // The host reads nothing until the release below.
  *op.record = fields;
  StoreReleaseSystem(&op.record->state, kRecordWritten);
}

// Stores this rank's announcement for op `number` into slot [rank] of `target`'s mailbox:
// announcement first, then the op word (MailboxOpWord, with the announced protocol) with
// release semantics at system scope. Repeated stores of the same announcement (one per block)
// are harmless.
__device__ inline void PublishEntry(SignalRegion* target, int rank, uint64_t number,
                                    const EntryAnnouncement& mine) {
  MailboxSlot* slot = &target->mailbox[rank];
  slot->announcement = mine;
  StoreReleaseSystem(&slot->op,
                     MailboxOpWord(number, static_cast<AnnouncedProtocol>(mine.protocol)));
}

// Stores only the op word of op `number` on `protocol` into slot [rank] of `target`'s mailbox
// (relaxed, system scope: no fence, so it costs the sender nothing): what a path that needs no
// entry barrier tells its peers, so that one on another path notices (kernels/PROTOCOL.md).
__device__ inline void PublishOpWord(SignalRegion* target, int rank, uint64_t number,
                                     AnnouncedProtocol protocol) {
  StoreRelaxedSystem(&target->mailbox[rank].op, MailboxOpWord(number, protocol));
}

// Records that `peer` runs this op on `theirs` while this rank runs it on `mine`
// (InvalidArgument naming both protocols), and abandons the op on this GPU: the two paths never
// meet, so no wait of the op could end but by its timeout.
__device__ inline void AbandonOnProtocolMismatch(const OpContext& op, int peer,
                                                 AnnouncedProtocol mine, AnnouncedProtocol theirs) {
  EntryAnnouncement my_side = {};
  EntryAnnouncement their_side = {};
  my_side.protocol = static_cast<uint32_t>(mine);
  their_side.protocol = static_cast<uint32_t>(theirs);
  DeviceErrorRecord error;
  if (MismatchRecord(my_side, their_side, op.rank, peer, op.number, &error)) {
    RecordDeviceError(op, error);
  }
  StoreRelaxedSystem(&op.local->abort, 1u);
}

// The slow check of a wait for `peer` on a path without an entry barrier (one-trip): true, after
// recording the mismatch and abandoning the op, when `peer`'s op word in this GPU's mailbox shows
// this very op on another path than `mine`. One single-copy-atomic load: the op number and the
// protocol it shows were stored together, by the peer's kernel of that op.
__device__ inline bool PeerTookOtherPath(const OpContext& op, int peer, AnnouncedProtocol mine) {
  const uint64_t word = LoadRelaxedSystem(&op.local->mailbox[peer].op);
  if (MailboxOpNumber(word) != op.number || MailboxOpProtocol(word) == mine) return false;
  AbandonOnProtocolMismatch(op, peer, mine, MailboxOpProtocol(word));
  return true;
}

// The slow check of a wait that has none (AwaitOrAbandon): it never gives up.
struct NoSlowCheck {
  __device__ bool operator()() const { return false; }
};

// Abandons the op on this GPU (so that its other waits stop early) and records a timeout of a
// wait that started at `start_ns`, unless the op was already abandoned.
__device__ inline void AbandonAfterTimeout(const OpContext& op, BarrierPhase phase,
                                           const WaitProgress& progress, uint64_t start_ns) {
  const bool first = LoadRelaxedSystem(&op.local->abort) == 0u;
  StoreRelaxedSystem(&op.local->abort, 1u);
  if (!first) return;
  RecordDeviceError(op, TimeoutRecord(phase, op.rank, progress.peer, op.number, progress.seen,
                                      GlobalTimerNs() - start_ns));
}

// The one poll loop of the protocol: calls `ready(&progress)` (a predicate that polls shared
// memory and may update `progress`) until it returns true, then returns true. Mostly the
// predicate itself is polled: the abort flag, `slow_check()` and the clock are read every 32nd
// poll, and not at all when the first poll succeeds. Returns false when the op was abandoned on
// this GPU, when `slow_check()` returns true (it has recorded why and abandoned the op), or
// after op.timeout_ns, when it abandons the op and records the timeout at `phase`
// (AbandonAfterTimeout). `progress` starts at {peer, 0}.
template <typename Ready, typename SlowCheck = NoSlowCheck>
__device__ inline bool AwaitOrAbandon(const OpContext& op, BarrierPhase phase, int peer,
                                      const Ready& ready,
                                      const SlowCheck& slow_check = SlowCheck()) {
  constexpr uint32_t kPollsPerCheck = 32;
  WaitProgress progress = {peer, 0};
  if (ready(&progress)) return true;
  const uint64_t start_ns = GlobalTimerNs();
  for (uint32_t polls = 1;; ++polls) {
    if (ready(&progress)) return true;
    if (polls % kPollsPerCheck != 0) continue;
    if (LoadRelaxedSystem(&op.local->abort) != 0u) return false;
    if (slow_check()) return false;
    if (GlobalTimerNs() - start_ns > op.timeout_ns) break;
  }
  AbandonAfterTimeout(op, phase, progress, start_ns);
  return false;
}

// Waits at `phase` until `peer`'s `flag` shows op.number or later (acquire, system scope);
// false when it timed out or the op was abandoned (AwaitOrAbandon).
__device__ inline bool AwaitFlag(const OpContext& op, BarrierPhase phase, int peer,
                                 const uint64_t* flag) {
  return AwaitOrAbandon(op, phase, peer, [flag, &op](WaitProgress* progress) {
    progress->seen = LoadAcquireSystem(flag);
    return progress->seen >= op.number;
  });
}

// Checks `theirs` (from `peer`) against this rank's announcement; on disagreement records
// InvalidArgument (MismatchRecord; without abandoning the op) and returns false.
__device__ inline bool AgreesOrRecordMismatch(const OpContext& op, int peer,
                                              const EntryAnnouncement& mine,
                                              const EntryAnnouncement& theirs) {
  DeviceErrorRecord error;
  if (!MismatchRecord(mine, theirs, op.rank, peer, op.number, &error)) return true;
  RecordDeviceError(op, error);
  return false;
}

}  // namespace ltx

#endif  // LTX_KERNELS_BARRIER_CUH_
