// The host side of the copy-engine protocol (kernels/PROTOCOL.md): a table where each rank
// publishes its part of an op and learns which peers arrived before it. Of each pair of ranks,
// the one that arrives second at op n queues both copies of the pair (after both ranks' entry
// events), so no rank ever waits on the host for another rank's call of the same op.
//
// Ranks may drift apart: each rank keeps its last kSlots ops in a ring of slots (one entry event
// each, owned by the transport). A rank reuses its slot of op n for op n + kSlots only after
// every peer has paired with it at op n (the peers no longer read the slot or wait on its
// event); until then its call waits on the host, bounded by the call's timeout. So a rank waits
// for another only when it runs kSlots ops ahead of it.
#ifndef LTX_TRANSPORT_COPY_ENGINE_COPY_ENGINE_PAIRING_H_
#define LTX_TRANSPORT_COPY_ENGINE_COPY_ENGINE_PAIRING_H_

#include <cstdint>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "kernels/wire/entry_announcement.h"

namespace ltx {

// What a rank publishes for one op.
struct CopyEngineArrival {
  EntryAnnouncement announced = {};  // Its output and its view of the shape.
  uint64_t input = 0;                // Its input's address.
};

// A peer that arrived at the op before the caller: the caller queues the pair's copies.
struct CopyEnginePartner {
  int rank = 0;
  CopyEngineArrival arrival;
};

class CopyEnginePairing {
 public:
  // How many ops a rank keeps published (and entry events per rank).
  static constexpr int kSlots = 16;

  // The slot (and entry event) of op `op`.
  static int SlotOf(uint64_t op) { return static_cast<int>(op % kSlots); }

  explicit CopyEnginePairing(int ranks);

  CopyEnginePairing(const CopyEnginePairing&) = delete;
  CopyEnginePairing& operator=(const CopyEnginePairing&) = delete;

  // Starts rank `rank`'s next op and returns its number (1 after construction and Reset). Waits
  // while the op's slot still holds op n - kSlots with a peer that has not paired with it, at
  // most `timeout`. Errors: the recorded failure (Fail), before or while it waits;
  // DeadlineExceeded naming the lowest such peer after `timeout` (nothing is recorded; the op
  // number is used up); Aborted when Reset runs while it waits. Thread-safe; each rank calls
  // from one thread at a time, and calls Publish for the op before its next Reserve.
  absl::StatusOr<uint64_t> Reserve(int rank, absl::Duration timeout) ABSL_LOCKS_EXCLUDED(mu_);

  // Publishes `mine` as rank `rank`'s arrival at op `op` (from Reserve) and returns the peers
  // that had published op `op` before, in turn from the next rank on; the caller queues each
  // pair's copies and then calls Paired for it (until then the pair counts as being queued:
  // AwaitPairsQueued). Never waits. Errors: the recorded failure (Fail); nothing is published.
  // Thread-safe.
  absl::StatusOr<std::vector<CopyEnginePartner>> Publish(int rank, uint64_t op,
                                                         const CopyEngineArrival& mine)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Records that the pair (`rank`, `partner`) of op `op` is done with both slots (the copies
  // are queued, or will never be). Called by the rank that Publish returned `partner` to.
  // Thread-safe.
  void Paired(int rank, int partner, uint64_t op) ABSL_LOCKS_EXCLUDED(mu_);

  // Records `error` (not OK) as the failure of every later call until Reset; the first failure
  // stands. Thread-safe.
  void Fail(absl::Status error) ABSL_LOCKS_EXCLUDED(mu_);

  // Waits until no pair that Publish returned awaits its Paired, at most until `deadline`. After
  // Fail, no pair is returned any more, so once this returns OK every pair whose copies will
  // ever be queued (before Reset) has been. DeadlineExceeded if pairs are still being queued at
  // `deadline`. Thread-safe.
  absl::Status AwaitPairsQueued(absl::Time deadline) ABSL_LOCKS_EXCLUDED(mu_);

  // The recorded failure, or OK. Thread-safe.
  absl::Status failure() const ABSL_LOCKS_EXCLUDED(mu_);

  // Forgets every op, slot and the failure; op numbers restart at 1. Ranks waiting in Reserve
  // return Aborted. Thread-safe.
  void Reset() ABSL_LOCKS_EXCLUDED(mu_);

  int ranks() const { return ranks_; }

 private:
  struct Slot {
    uint64_t op = 0;  // 0: never published.
    CopyEngineArrival arrival;
    uint32_t paired = 0;  // Bit s: rank s is done with this slot.
  };

  Slot& SlotOfRank(int rank, uint64_t op) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The lowest peer that has not paired with `slot`, or -1.
  int Unpaired(int rank, const Slot& slot) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int ranks_;
  const uint32_t all_ranks_;  // Bit s set for every rank s.
  mutable absl::Mutex mu_;
  std::vector<Slot> slots_ ABSL_GUARDED_BY(mu_);         // [rank][slot]
  std::vector<uint64_t> next_op_ ABSL_GUARDED_BY(mu_);  // Per rank.
  absl::Status failure_ ABSL_GUARDED_BY(mu_);
  int pairs_being_queued_ ABSL_GUARDED_BY(mu_) = 0;  // Returned by Publish, not yet Paired.
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;     // Advanced by Reset.
};

}  // namespace ltx

#endif  // LTX_TRANSPORT_COPY_ENGINE_COPY_ENGINE_PAIRING_H_
