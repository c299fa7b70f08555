// The host rendezvous: arrivals, values and bounded waits under one lock.
#include "ltx/host_rendezvous.h"

#include <algorithm>
#include <cstring>
#include <thread>
#include <utility>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"

namespace ltx {

absl::Status RendezvousMissToStatus(const RendezvousMiss& miss) {
  const std::string last = miss.missing_last_op == 0
                               ? absl::StrFormat("rank %d has not met yet", miss.missing)
                               : absl::StrFormat("rank %d last met at op %d, %s", miss.missing,
                                                 miss.missing_last_op, miss.missing_last_phase);
  return absl::DeadlineExceededError(
      absl::StrFormat("op %d: rank %d waited %s at %s for rank %d (%s)", miss.op, miss.rank,
                      absl::FormatDuration(miss.timeout), miss.phase_name, miss.missing, last));
}

UntypedHostRendezvous::UntypedHostRendezvous(int ranks, std::vector<std::string> phases,
                                             size_t value_bytes, absl::Duration spin,
                                             RendezvousMissDescriber describe)
    : ranks_(ranks),
      phases_(std::move(phases)),
      value_bytes_(value_bytes),
      spin_(spin),
      describe_(std::move(describe)) {
  absl::MutexLock lock(&mu_);
  // Each rank starts as if it had just left the last phase of op 0.
  positions_.assign(std::max(ranks_, 0), Position{0, static_cast<int>(phases_.size()) - 1});
  for (Slot& slot : slots_) {
    slot.phases_arrived.assign(positions_.size(), 0);
    slot.values.assign(phases_.size() * positions_.size() * value_bytes_, 0);
  }
}

absl::Status UntypedHostRendezvous::Meet(int rank, uint64_t op, int phase, const void* mine,
                                         void* all, size_t all_count, absl::Duration timeout,
                                         const RendezvousWatch& watch) {
  const absl::Status arguments = CheckArguments(rank, phase, all_count);
  if (!arguments.ok()) return arguments;
  absl::MutexLock lock(&mu_);
  if (!failure_.ok()) return failure_;
  const absl::Status in_order = CheckInOrder(rank, op, phase);
  if (!in_order.ok()) return in_order;
  const Slot& slot = Arrive(rank, op, phase, mine);
  const absl::Status met = AwaitAll(slot, rank, phase, timeout, watch);
  if (met.ok() && all_count > 0) {
    std::memcpy(all, &slot.values[phase * ranks_ * value_bytes_], ranks_ * value_bytes_);
  }
  return met;
}

uint64_t UntypedHostRendezvous::NextOp(int rank) const {
  if (rank < 0 || rank >= ranks_) return 0;
  absl::MutexLock lock(&mu_);
  return positions_[rank].op + 1;
}

absl::Status UntypedHostRendezvous::failure() const {
  absl::MutexLock lock(&mu_);
  return failure_;
}

void UntypedHostRendezvous::Fail(absl::Status error) {
  absl::MutexLock lock(&mu_);
  if (failure_.ok()) failure_ = std::move(error);
}

void UntypedHostRendezvous::Reset() {
  absl::MutexLock lock(&mu_);
  std::fill(positions_.begin(), positions_.end(),
            Position{0, static_cast<int>(phases_.size()) - 1});
  for (Slot& slot : slots_) {
    slot.op = 0;
    std::fill(slot.phases_arrived.begin(), slot.phases_arrived.end(), 0);
  }
  failure_ = absl::OkStatus();
  ++generation_;
}

absl::Status UntypedHostRendezvous::CheckArguments(int rank, int phase, size_t all_count) const {
  if (rank < 0 || rank >= ranks_) {
    return absl::InvalidArgumentError(
        absl::StrFormat("rendezvous: rank %d is outside [0, %d)", rank, ranks_));
  }
  if (phase < 0 || phase >= static_cast<int>(phases_.size())) {
    return absl::InvalidArgumentError(
        absl::StrFormat("rendezvous: phase %d is outside [0, %d)", phase, phases_.size()));
  }
  if (all_count != 0 && all_count != static_cast<size_t>(ranks_)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "rendezvous: room for %d values, but %d ranks meet (0 reads none)", all_count, ranks_));
  }
  return absl::OkStatus();
}

absl::Status UntypedHostRendezvous::CheckInOrder(int rank, uint64_t op, int phase) const {
  const Position& last = positions_[rank];
  const bool op_done = last.phase + 1 == static_cast<int>(phases_.size());
  const uint64_t next_op = op_done ? last.op + 1 : last.op;
  const int next_phase = op_done ? 0 : last.phase + 1;
  if (op == next_op && phase == next_phase) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrFormat(
      "rendezvous: rank %d arrived at op %d, %s, but its next meeting is op %d, %s (ranks meet "
      "at every phase of every op, in order)",
      rank, op, PhaseName(phase), next_op, PhaseName(next_phase)));
}

UntypedHostRendezvous::Slot& UntypedHostRendezvous::Arrive(int rank, uint64_t op, int phase,
                                                           const void* mine) {
  positions_[rank] = {op, phase};
  Slot& slot = slots_[op % kSlots];
  if (slot.op != op) {
    // The first rank at op `op`: the slot's previous op, two before, is over for every rank.
    slot.op = op;
    std::fill(slot.phases_arrived.begin(), slot.phases_arrived.end(), 0);
  }
  std::memcpy(&slot.values[(phase * ranks_ + rank) * value_bytes_], mine, value_bytes_);
  slot.phases_arrived[rank] = phase + 1;
  return slot;
}

bool UntypedHostRendezvous::AllArrived(const Slot& slot, int phase) const {
  return std::all_of(slot.phases_arrived.begin(), slot.phases_arrived.end(),
                     [phase](int arrived) { return arrived > phase; });
}

absl::Status UntypedHostRendezvous::AwaitAll(const Slot& slot, int rank, int phase,
                                             absl::Duration timeout,
                                             const RendezvousWatch& watch) {
  const uint64_t generation = generation_;
  absl::Status watched;
  auto settled = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return generation_ != generation || !failure_.ok() || AllArrived(slot, phase) || !watched.ok();
  };
  const absl::Condition condition(&settled);
  const absl::Time start = absl::Now();
  const absl::Time deadline = start + timeout;
  const absl::Time spin_until = start + std::min(spin_, timeout);
  // Without a watch one wait suffices; with one, waits of a watch period between its polls.
  while (!AwaitSettled(condition, spin_until,
                       watch ? std::min(deadline, absl::Now() + kRendezvousWatchPeriod)
                             : deadline) &&
         watch && absl::Now() < deadline) {
    watched = watch();
  }
  if (generation_ != generation) {
    return absl::AbortedError(absl::StrFormat("rendezvous: Reset ran while rank %d waited at %s",
                                              rank, PhaseName(phase)));
  }
  // A meeting that completed stands, even if some rank has given up on a later one since.
  if (AllArrived(slot, phase)) return absl::OkStatus();
  if (!failure_.ok()) return failure_;
  if (!watched.ok()) {
    failure_ = watched;
    return failure_;
  }
  return GiveUp(slot, rank, phase, timeout);
}

bool UntypedHostRendezvous::AwaitSettled(const absl::Condition& settled, absl::Time spin_until,
                                         absl::Time deadline) {
  // Ranks usually arrive within microseconds of each other, and a sleeping thread takes tens
  // of microseconds to wake: poll first.
  while (!settled.Eval() && absl::Now() < std::min(spin_until, deadline)) {
    mu_.Unlock();
    std::this_thread::yield();
    mu_.Lock();
  }
  if (settled.Eval()) return true;
  return mu_.AwaitWithDeadline(settled, deadline);
}

absl::Status UntypedHostRendezvous::GiveUp(const Slot& slot, int rank, int phase,
                                           absl::Duration timeout) {
  RendezvousMiss miss;
  miss.op = slot.op;
  miss.phase = phase;
  miss.phase_name = PhaseName(phase);
  miss.rank = rank;
  while (miss.missing < ranks_ && slot.phases_arrived[miss.missing] > phase) ++miss.missing;
  const Position& last = positions_[miss.missing];
  miss.missing_last_op = last.op;
  miss.missing_last_phase = PhaseName(last.phase);
  miss.timeout = timeout;
  failure_ = describe_(miss);
  if (failure_.ok()) {
    failure_ = absl::InternalError("rendezvous: the describer of a miss returned OK");
  }
  return failure_;
}

std::string UntypedHostRendezvous::PhaseName(int phase) const {
  if (phase >= 0 && phase < static_cast<int>(phases_.size())) return phases_[phase];
  return absl::StrFormat("phase %d", phase);
}

}  // namespace ltx
