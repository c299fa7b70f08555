// A meeting point on the host for the ranks of a collective, reused op after op. For every op
// number and every phase of an op, each rank brings a value and waits, bounded by a timeout,
// until every rank has brought its own; then each reads them all.
//
// A rank that gives up (its wait timed out, or it calls Fail) fails the op for everyone: the
// ranks still waiting return at once with the same error, and so does every later meeting,
// until Reset (after a rank went missing the ranks' op numbers are no longer in step, so no
// later op could pair up correctly).
//
// Ranks meet at every phase of every op, in order: op 1 phase 0, op 1 phase 1, ..., op 2
// phase 0, and so on. A rank therefore runs at most one op ahead of the slowest rank (it cannot
// leave phase 0 of op n + 1 before every rank has left op n), so the values of two ops at a
// time are all that is kept.
#ifndef LTX_HOST_RENDEZVOUS_H_
#define LTX_HOST_RENDEZVOUS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

namespace ltx {

// A meeting that did not complete in time.
struct RendezvousMiss {
  uint64_t op = 0;  // The op number of the meeting.
  int phase = 0;    // Its phase, and the phase's name.
  std::string phase_name;
  int rank = 0;     // The rank that gave up.
  int missing = 0;  // The lowest rank that had not arrived.
  // Where `missing` met last: its op number (0: nowhere since creation or Reset) and phase.
  uint64_t missing_last_op = 0;
  std::string missing_last_phase;
  absl::Duration timeout;  // How long `rank` was willing to wait.
};

// The default error of a miss: DeadlineExceeded, e.g.
//   "op 7: rank 0 waited 1s at entry for rank 2 (rank 2 last met at op 6, exit)".
absl::Status RendezvousMissToStatus(const RendezvousMiss& miss);

// Turns a miss into the error that every rank of the op returns. Called with the rendezvous's
// lock held: it must not call back into the rendezvous.
using RendezvousMissDescriber = absl::AnyInvocable<absl::Status(const RendezvousMiss&) const>;

// Polled while a rank waits at a meeting (every kRendezvousWatchPeriod): a non-OK status gives
// the op up for every rank with that status, as a miss would. Called with the rendezvous's lock
// held: it must be quick and must not call back into the rendezvous. Null: nothing to poll.
using RendezvousWatch = std::function<absl::Status()>;
inline constexpr absl::Duration kRendezvousWatchPeriod = absl::Milliseconds(1);

// The rendezvous with values of `value_bytes` opaque bytes; HostRendezvous below types them.
class UntypedHostRendezvous {
 public:
  // `ranks` ranks meet at each of `phases` (their names, in the order every op goes through
  // them). A rank that waits polls for up to `spin` before it sleeps on the lock.
  UntypedHostRendezvous(int ranks, std::vector<std::string> phases, size_t value_bytes,
                        absl::Duration spin, RendezvousMissDescriber describe);

  UntypedHostRendezvous(const UntypedHostRendezvous&) = delete;
  UntypedHostRendezvous& operator=(const UntypedHostRendezvous&) = delete;

  // Rank `rank` arrives at phase `phase` of op `op` with the `value_bytes` bytes at `mine` and
  // waits, at most `timeout`, for every rank to arrive there; then copies every rank's value, in
  // rank order, to `all` (`all_count` values; 0 to read none, else the number of ranks). While
  // it waits it polls `watch` (if not null).
  // Errors: InvalidArgument for a rank, phase or `all_count` out of range; FailedPrecondition
  // when (op, phase) does not follow the rank's previous meeting (ops count from 1 after
  // creation and Reset; nothing is recorded); the recorded failure (a miss's error, see
  // RendezvousMissDescriber, or Fail's) when this rank gives up after `timeout`, or when any
  // rank gave up since the last Reset, before or while this one waits; the status of `watch`
  // when it is not OK (recorded as the failure); Aborted when Reset runs
  // while the rank waits. A meeting that completed is OK even if a rank gave up on a later one
  // meanwhile. Thread-safe; each rank calls from one thread at a time.
  absl::Status Meet(int rank, uint64_t op, int phase, const void* mine, void* all, size_t all_count,
                    absl::Duration timeout, const RendezvousWatch& watch = nullptr)
      ABSL_LOCKS_EXCLUDED(mu_);

  // The op number that `rank` is to start next: one past the op of its latest meeting (1 after
  // creation or Reset); 0 for a rank out of range. Thread-safe.
  uint64_t NextOp(int rank) const ABSL_LOCKS_EXCLUDED(mu_);

  // The error of the rank that gave up, or OK while no rank has since the last Reset.
  // Thread-safe.
  absl::Status failure() const ABSL_LOCKS_EXCLUDED(mu_);

  // Gives up on behalf of a rank that cannot go on (for example one that failed before it could
  // arrive): ranks waiting in Meet, and every later meeting until Reset, return `error` (not
  // OK). A failure already recorded stands. Thread-safe.
  void Fail(absl::Status error) ABSL_LOCKS_EXCLUDED(mu_);

  // Forgets every meeting, value, op number and failure. Ranks waiting in Meet return Aborted.
  // Thread-safe.
  void Reset() ABSL_LOCKS_EXCLUDED(mu_);

  int ranks() const { return ranks_; }

 private:
  // Where a rank met last.
  struct Position {
    uint64_t op = 0;
    int phase = 0;
  };
  // The arrivals and values of one op.
  struct Slot {
    uint64_t op = 0;
    std::vector<int> phases_arrived;    // Per rank: how many phases of `op` it reached.
    std::vector<unsigned char> values;  // [phase][rank][value_bytes]
  };
  // Two ops at a time: see the file comment.
  static constexpr int kSlots = 2;

  absl::Status CheckArguments(int rank, int phase, size_t all_count) const;
  absl::Status CheckInOrder(int rank, uint64_t op, int phase) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Records the arrival of `rank` at (op, phase) with its value.
  Slot& Arrive(int rank, uint64_t op, int phase, const void* mine)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool AllArrived(const Slot& slot, int phase) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Waits until every rank of `slot` reached `phase`; see Meet for the errors.
  absl::Status AwaitAll(const Slot& slot, int rank, int phase, absl::Duration timeout,
                        const RendezvousWatch& watch) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Waits until `settled` holds or `deadline` passes: polls, releasing the lock between polls,
  // until `spin_until`, then sleeps. Returns whether `settled` holds.
  bool AwaitSettled(const absl::Condition& settled, absl::Time spin_until, absl::Time deadline)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Records that `rank` gave up on `slot` at `phase` and returns the error all ranks return.
  absl::Status GiveUp(const Slot& slot, int rank, int phase, absl::Duration timeout)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string PhaseName(int phase) const;

  const int ranks_;
  const std::vector<std::string> phases_;
  const size_t value_bytes_;
  const absl::Duration spin_;
  const RendezvousMissDescriber describe_;
  mutable absl::Mutex mu_;
  std::vector<Position> positions_ ABSL_GUARDED_BY(mu_);
  std::array<Slot, kSlots> slots_ ABSL_GUARDED_BY(mu_);
  absl::Status failure_ ABSL_GUARDED_BY(mu_);
  // Advanced by Reset, so that waiters from before it notice.
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
};

// The rendezvous with values of type `Value` (trivially copyable: values are copied as bytes).
// Each call has the contract of the UntypedHostRendezvous call of the same name.
template <typename Value>
class HostRendezvous {
 public:
  static_assert(std::is_trivially_copyable<Value>::value, "HostRendezvous copies values as bytes");

  HostRendezvous(int ranks, std::vector<std::string> phases, absl::Duration spin,
                 RendezvousMissDescriber describe = RendezvousMissToStatus)
      : untyped_(ranks, std::move(phases), sizeof(Value), spin, std::move(describe)) {}

  // `all` is empty (read no values) or has one element per rank.
  absl::Status Meet(int rank, uint64_t op, int phase, const Value& mine, absl::Span<Value> all,
                    absl::Duration timeout, const RendezvousWatch& watch = nullptr) {
    return untyped_.Meet(rank, op, phase, &mine, all.data(), all.size(), timeout, watch);
  }
  uint64_t NextOp(int rank) const { return untyped_.NextOp(rank); }
  absl::Status failure() const { return untyped_.failure(); }
  void Fail(absl::Status error) { untyped_.Fail(std::move(error)); }
  void Reset() { untyped_.Reset(); }
  int ranks() const { return untyped_.ranks(); }

 private:
  UntypedHostRendezvous untyped_;
};

}  // namespace ltx

#endif  // LTX_HOST_RENDEZVOUS_H_
