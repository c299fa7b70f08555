// The copy-engine pairing table: slots per rank and op, pairing under one short lock.
#include "ltx/transport/copy_engine/copy_engine_pairing.h"

#include <utility>

#include "absl/strings/str_format.h"

namespace ltx {

CopyEnginePairing::CopyEnginePairing(int ranks)
    : ranks_(ranks),
      all_ranks_(static_cast<uint32_t>((uint64_t{1} << ranks) - 1)),
      slots_(static_cast<size_t>(ranks) * kSlots),
      next_op_(ranks, 1) {}

CopyEnginePairing::Slot& CopyEnginePairing::SlotOfRank(int rank, uint64_t op) {
  return slots_[static_cast<size_t>(rank) * kSlots + SlotOf(op)];
}

int CopyEnginePairing::Unpaired(int rank, const Slot& slot) const {
  if (slot.op == 0) return -1;
  const uint32_t missing = all_ranks_ & ~slot.paired & ~(uint32_t{1} << rank);
  for (int peer = 0; peer < ranks_; ++peer) {
    if (missing & (uint32_t{1} << peer)) return peer;
  }
  return -1;
}

absl::StatusOr<uint64_t> CopyEnginePairing::Reserve(int rank, absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  if (!failure_.ok()) return failure_;
  const uint64_t op = next_op_[rank]++;
  const Slot& slot = SlotOfRank(rank, op);
  const uint64_t generation = generation_;
  auto settled = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return generation_ != generation || !failure_.ok() || Unpaired(rank, slot) < 0;
  };
  mu_.AwaitWithTimeout(absl::Condition(&settled), timeout);
  if (generation_ != generation) return absl::AbortedError("Reset ran during the call");
  if (!failure_.ok()) return failure_;
  const int peer = Unpaired(rank, slot);
  if (peer >= 0) {
    return absl::DeadlineExceededError(absl::StrFormat(
        "copy-engine op #%d: rank %d waited %s for rank %d to reach op #%d: it runs %d ops ahead "
        "(copy-engine transport)",
        op, rank, absl::FormatDuration(timeout), peer, slot.op, kSlots));
  }
  return op;
}

absl::StatusOr<std::vector<CopyEnginePartner>> CopyEnginePairing::Publish(
    int rank, uint64_t op, const CopyEngineArrival& mine) {
  absl::MutexLock lock(&mu_);
  if (!failure_.ok()) return failure_;
  Slot& slot = SlotOfRank(rank, op);
  slot.op = op;
  slot.arrival = mine;
  slot.paired = 0;
  std::vector<CopyEnginePartner> partners;
  for (int step = 1; step < ranks_; ++step) {
    const int peer = (rank + step) % ranks_;
    const Slot& theirs = SlotOfRank(peer, op);
    if (theirs.op == op) partners.push_back({peer, theirs.arrival});
  }
  pairs_being_queued_ += static_cast<int>(partners.size());
  return partners;
}

void CopyEnginePairing::Paired(int rank, int partner, uint64_t op) {
  absl::MutexLock lock(&mu_);
  Slot& mine = SlotOfRank(rank, op);
  Slot& theirs = SlotOfRank(partner, op);
  if (mine.op == op) mine.paired |= uint32_t{1} << partner;
  if (theirs.op == op) theirs.paired |= uint32_t{1} << rank;
  if (pairs_being_queued_ > 0) --pairs_being_queued_;
}

void CopyEnginePairing::Fail(absl::Status error) {
  absl::MutexLock lock(&mu_);
  if (failure_.ok()) failure_ = std::move(error);
}

absl::Status CopyEnginePairing::AwaitPairsQueued(absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  auto queued = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return pairs_being_queued_ == 0; };
  if (mu_.AwaitWithDeadline(absl::Condition(&queued), deadline)) return absl::OkStatus();
  return absl::DeadlineExceededError(
      absl::StrFormat("%d copy-engine pair(s) still being queued", pairs_being_queued_));
}

absl::Status CopyEnginePairing::failure() const {
  absl::MutexLock lock(&mu_);
  return failure_;
}

void CopyEnginePairing::Reset() {
  absl::MutexLock lock(&mu_);
  for (Slot& slot : slots_) slot = Slot();
  for (uint64_t& op : next_op_) op = 1;
  failure_ = absl::OkStatus();
  pairs_being_queued_ = 0;
  ++generation_;
}

}  // namespace ltx
