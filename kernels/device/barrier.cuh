// Device side of the cross-GPU protocol (kernels/PROTOCOL.md): entry mailboxes and op words,
// exit flags, store claims and their revocation, waits with deadlines on %globaltimer and slow
// checks (a peer on another path, a peer that gave up), and the error record. Every wait has a
// deadline; on expiry the first error of the GPU is written to its host-mapped record and the op
// is abandoned. Nothing traps.
#ifndef KERNELS_DEVICE_BARRIER_CUH_
#define KERNELS_DEVICE_BARRIER_CUH_

#include <cstdint>

#include "kernels/device/memory_order.cuh"
#include "kernels/wire/collective.h"
#include "kernels/wire/entry_announcement.h"
#include "kernels/wire/error_record.h"
#include "kernels/wire/signal_layout.h"

namespace ltx {

// What the waits of one op on this GPU need: where errors go, who waits, and the deadline.
struct OpContext {
  SignalRegion* local;        // This GPU's signal region.
  DeviceErrorRecord* record;  // This GPU's error record (device pointer of host-mapped memory).
  int rank;                   // This GPU's rank.
  uint64_t number;            // The op number.
  uint64_t timeout_ns;        // How long one wait may last.
  Collective collective;      // What the op is, for its error record.
};

// The collective of a kernel's parameters: their kCollective, unless an overload for a type that
// serves both collectives says otherwise.
template <typename Params>
__device__ inline Collective CollectiveOf(const Params&) {
  return Params::kCollective;
}

// The op this GPU runs next: last_op + 1, with the kernel parameters' error record, timeout and
// collective. The previous op on this GPU finished before the calling kernel started (stream
// order), so last_op is stable until the op's last block advances it.
template <typename Params>
__device__ inline OpContext NextOp(const Params& p) {
  SignalRegion* local = p.signals[p.rank];
  return {local, p.error_record, p.rank, local->last_op + 1, p.timeout_ns, CollectiveOf(p)};
}

// Where a wait stands, for its timeout record: the peer waited for and what was last seen.
struct WaitProgress {
  int peer;
  uint64_t seen;
};

// Claims this GPU's error record (the first error since the last reset wins) and, if claimed,
// publishes `error` to the host: every field with plain stores (storing_peers keeps what it
// holds), then `state` with a release store at system scope.
__device__ inline void RecordDeviceError(const OpContext& op, const DeviceErrorRecord& error) {
  if (atomicCAS(&op.local->error_claimed, 0u, 1u) != 0u) return;
  DeviceErrorRecord fields = error;
  fields.state = kRecordEmpty;  // The host reads nothing until the release below.
  fields.collective = static_cast<uint32_t>(op.collective);
  fields.storing_peers = *static_cast<volatile uint32_t*>(&op.record->storing_peers);
  *op.record = fields;
  StoreReleaseSystem(&op.record->state, kRecordWritten);
}

// Stores this rank's announcement for op `number` into slot [rank] of `target`'s mailbox, and
// `more` (the outputs of tensors 1, 2, ... of a multi-tensor op; null: none) into
// more_outputs[rank]: those first, then the op word (MailboxOpWord, with the announced
// protocol) with release semantics at system scope. Repeated stores of the same announcement
// (one per block) are harmless.
__device__ inline void PublishEntry(SignalRegion* target, int rank, uint64_t number,
                                    const EntryAnnouncement& mine,
                                    const MoreOutputs* more = nullptr) {
  MailboxSlot* slot = &target->mailbox[rank];
  if (more != nullptr) target->more_outputs[rank] = *more;
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

// Abandons the op on this GPU whose error is already recorded (or that needs none): its other
// waits stop early, its exit barrier stores no exit flags and revokes the peers' store claims.
__device__ inline void AbandonRecordedOp(const OpContext& op) {
  StoreRelaxedSystem(&op.local->abort, 1u);
}

// Abandons the op on this GPU (AbandonRecordedOp) and, unless the op was already abandoned,
// records `error`.
__device__ inline void AbandonOp(const OpContext& op, const DeviceErrorRecord& error) {
  const bool first = LoadRelaxedSystem(&op.local->abort) == 0u;
  AbandonRecordedOp(op);
  if (first) RecordDeviceError(op, error);
}

// The record of `peer` running this op on `theirs` while this rank runs it on `mine`
// (InvalidArgument naming both protocols).
__device__ inline DeviceErrorRecord ProtocolMismatchRecord(const OpContext& op, int peer,
                                                           AnnouncedProtocol mine,
                                                           AnnouncedProtocol theirs) {
  EntryAnnouncement my_side = {};
  EntryAnnouncement their_side = {};
  my_side.protocol = static_cast<uint32_t>(mine);
  their_side.protocol = static_cast<uint32_t>(theirs);
  DeviceErrorRecord error = {};
  MismatchRecord(my_side, their_side, op.rank, peer, op.number, &error);
  return error;
}

// A slow check (AwaitOrAbandon) for a path without an entry barrier (one-trip): true, with the
// mismatch in `*error`, when `peer`'s op word in this GPU's mailbox shows this very op on another
// path than `mine`: the two paths never meet, so no wait of the op could end but by its timeout.
// One single-copy-atomic load: the op number and the protocol it shows were stored together, by
// the peer's kernel of that op.
__device__ inline bool PeerTookOtherPath(const OpContext& op, int peer, AnnouncedProtocol mine,
                                         DeviceErrorRecord* error) {
  const uint64_t word = LoadRelaxedSystem(&op.local->mailbox[peer].op);
  if (MailboxOpNumber(word) != op.number || MailboxOpProtocol(word) == mine) return false;
  *error = ProtocolMismatchRecord(op, peer, mine, MailboxOpProtocol(word));
  return true;
}

// Whether `claim`, a value of this GPU's store claim word on `peer`, shows that `peer` revoked
// it for the op or a later one, i.e. gave the op up (kernels/PROTOCOL.md, store claims). Never
// without peer atomics, nor for this GPU's own rank.
__device__ inline bool ShowsRevocation(const OpContext& op, int peer, uint64_t claim) {
  return op.local->peer_atomics != 0u && peer != op.rank && claim >= StoreRevoke(op.number);
}

// A slow check (AwaitOrAbandon) for the direct path: true, with PeerGaveUpRecord at `phase` in
// `*error`, when `peer` gave the op up (ShowsRevocation, of an acquire load).
__device__ inline bool PeerGaveUp(const OpContext& op, BarrierPhase phase, int peer,
                                  DeviceErrorRecord* error) {
  if (!ShowsRevocation(op, peer, LoadAcquireSystem(&op.local->store_claim[peer]))) return false;
  *error = PeerGaveUpRecord(phase, op.rank, peer, op.number);
  return true;
}

// The slow check of a wait that has none (AwaitOrAbandon): it never gives up.
struct NoSlowCheck {
  __device__ bool operator()(DeviceErrorRecord*) const { return false; }
};

// The one poll loop of the protocol: calls `ready(&progress)` (a predicate that polls shared
// memory and may update `progress`) until it returns true, then returns true. Mostly the
// predicate itself is polled: the abort flag, `slow_check(&error)` and the clock are read every
// 32nd poll, and not at all when the first poll succeeds. Returns false when the op was
// abandoned on this GPU; when `slow_check` says the wait cannot succeed (unless one more poll of
// `ready` succeeds: what the peer did before, e.g. its exit flag, is visible by then), after
// abandoning the op and recording its `error`; or after op.timeout_ns, after abandoning the op
// and recording the timeout at `phase`. `progress` starts at {peer, 0}.
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
    DeviceErrorRecord error;
    if (slow_check(&error)) {
      if (ready(&progress)) return true;
      AbandonOp(op, error);
      return false;
    }
    const uint64_t waited_ns = GlobalTimerNs() - start_ns;
    if (waited_ns > op.timeout_ns) {
      AbandonOp(op, TimeoutRecord(phase, op.rank, progress.peer, op.number, progress.seen,
                                  waited_ns));
      return false;
    }
  }
}

// Waits at `phase` until `peer`'s `flag` shows op.number or later (acquire, system scope);
// false when it timed out, the op was abandoned, or `peer` gave the op up (PeerGaveUp).
__device__ inline bool AwaitFlag(const OpContext& op, BarrierPhase phase, int peer,
                                 const uint64_t* flag) {
  return AwaitOrAbandon(
      op, phase, peer,
      [flag, &op](WaitProgress* progress) {
        progress->seen = LoadAcquireSystem(flag);
        return progress->seen >= op.number;
      },
      [&op, phase, peer](DeviceErrorRecord* error) { return PeerGaveUp(op, phase, peer, error); });
}

// Claims this GPU's right to store op.number's data into `target`'s output (atomic max on
// store_claim[target]). False when `target` already revoked it: it gave the op up, and nothing
// may be stored into its output. Always true without peer atomics.
// Acquire only: the stores it guards come after it, and it must not wait for the thread's
// entry stores over NVLink to land first (a release would, on every block's critical path).
__device__ inline bool ClaimStores(const OpContext& op, int target) {
  if (op.local->peer_atomics == 0u) return true;
  return AtomicMaxAcquireSystem(&op.local->store_claim[target], StoreClaim(op.number)) <=
         StoreClaim(op.number);
}

// Whether this GPU still holds its claim on `target`'s output (ClaimStores) for the op, `claim`
// being the claim word as loaded after the waits and before the stores it guards: false, after
// abandoning the op with PeerGaveUpRecord at entry, when `target` revoked it since (it gave the
// op up while this GPU waited). Always true for this GPU's own output and without peer atomics.
// The load may be relaxed: a value read before the revocation (in the word's order) means the
// revocation reads this GPU's claim and reports it, whenever the stores land.
__device__ inline bool HoldsClaim(const OpContext& op, int target, uint64_t claim) {
  if (!ShowsRevocation(op, target, claim)) return true;
  AbandonOp(op, PeerGaveUpRecord(BarrierPhase::kEntry, op.rank, target, op.number));
  return false;
}

// Run when this GPU gave up op.number, for each peer `source` (whose signal region is
// `source_region`): revokes `source`'s store claim for the op, so that it stores nothing into
// this GPU's output from then on, and so that, if it waits for this GPU, it learns that the op
// was given up (PeerGaveUp). Returns true when `source` had claimed before the revocation and
// has not finished storing (its exit flag): it may still be storing into this GPU's output until
// its kernel ends. Without peer atomics nothing can be revoked, and every unfinished source is
// reported.
// Acquire and release: a source that reads the revocation (acquire) also sees what this GPU did
// before it (its exit flags, its entry), so its one more poll finds them (kernels/PROTOCOL.md).
__device__ inline bool RevokeStores(const OpContext& op, int source, SignalRegion* source_region) {
  const bool claimed = op.local->peer_atomics == 0u ||
                       AtomicMaxAcqRelSystem(&source_region->store_claim[op.rank],
                                             StoreRevoke(op.number)) == StoreClaim(op.number);
  return claimed && LoadAcquireSystem(&op.local->exit_flag[source]) < op.number;
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

#endif  // KERNELS_DEVICE_BARRIER_CUH_
