// The streams the ranks of a shared GPU call on (ltx/runtime/rank_streams.h).
#include "ltx/runtime/rank_streams.h"

#include <algorithm>
#include <memory>
#include <thread>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"

namespace ltx {

absl::Status SameStreamError(int rank, int other, int device) {
  return absl::InvalidArgumentError(absl::StrFormat(
      "ranks %d and %d share GPU %d and pass the same stream: their kernels, which wait for each "
      "other, would run one after the other; give each rank a stream of its own",
      std::min(rank, other), std::max(rank, other), device));
}

namespace {

// The launch lock of GPU `device` for this process: every Runtime's co-located ranks of that GPU
// take the same one, for CUDA's launches into one GPU's context collide alike whichever Runtime
// makes them. One per device ordinal, made at its first use and kept for the process. Thread-safe.
absl::Mutex* ProcessLaunchLock(int device) {
  static absl::Mutex registry_mu(absl::kConstInit);
  // Under registry_mu; never destroyed, for a Runtime may outlive static destruction.
  static auto* const locks = new absl::flat_hash_map<int, std::unique_ptr<absl::Mutex>>();
  absl::MutexLock lock(&registry_mu);
  std::unique_ptr<absl::Mutex>& mutex = (*locks)[device];
  if (mutex == nullptr) mutex = std::make_unique<absl::Mutex>();
  return mutex.get();
}

}  // namespace

RankStreams::RankStreams(std::vector<int> devices)
    : devices_(std::move(devices)),
      co_located_(devices_.size()),
      launch_locks_(devices_.size()),
      ranks_(devices_.size()) {
  for (size_t rank = 0; rank < devices_.size(); ++rank) {
    for (size_t other = 0; other < devices_.size(); ++other) {
      if (other != rank && devices_[other] == devices_[rank]) {
        co_located_[rank].push_back(static_cast<int>(other));
      }
    }
    if (!co_located_[rank].empty()) launch_locks_[rank] = ProcessLaunchLock(devices_[rank]);
  }
}

absl::Status RankStreams::Claim(int rank, uint64_t number, cudaStream_t stream,
                                int* streams_now) {
  if (streams_now != nullptr) *streams_now = 0;
  if (co_located_[rank].empty() || stream == cudaStreamPerThread) return absl::OkStatus();
  absl::MutexLock lock(&mu_);
  Rank& r = ranks_[rank];
  r.calls[number % kHistory] = Call{number, stream};
  if (static_cast<int>(r.used.size()) < kMostCounted && r.used.insert(stream).second &&
      streams_now != nullptr) {
    *streams_now = static_cast<int>(r.used.size());
  }
  for (int other : co_located_[rank]) {
    const Rank& o = ranks_[other];
    const Call& same_number = o.calls[number % kHistory];
    if (same_number.number == number && same_number.stream == stream) {
      return SameStreamError(rank, other, devices_[rank]);
    }
  }
  return absl::OkStatus();
}

void RankStreams::ForgetCalls() {
  absl::MutexLock lock(&mu_);
  for (Rank& r : ranks_) r.calls.fill(Call{});
}

int RankStreams::StreamsUsed(int rank) const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(ranks_[rank].used.size());
}

absl::Mutex* RankStreams::LaunchLock(int rank) const { return launch_locks_[rank]; }

LaunchTurn::LaunchTurn(absl::Mutex* lock, absl::Duration wait) {
  if (lock == nullptr) return;
  const absl::Time until = absl::Now() + wait;
  for (;;) {
    if (lock->TryLock()) {
      held_ = lock;
      return;
    }
    if (absl::Now() >= until) return;
    std::this_thread::yield();
  }
}

LaunchTurn::~LaunchTurn() {
  if (held_ != nullptr) held_->Unlock();
}

}  // namespace ltx
