// The streams the ranks of a shared GPU call on, on the host: the stream of each rank's latest
// calls, so that two ranks of one GPU never pass one stream for the same op (their kernels wait
// for each other, and one stream would run them one after the other); how many distinct
// streams each rank's calls have used, which a timeout's message reports: where ranks share a
// GPU, every stream that carries work makes it likelier that two ranks' streams share a
// hardware queue; and the lock under which the ranks of one GPU enqueue their kernels, one
// rank's after another's (kernels/PROTOCOL.md, "Ranks that share a GPU").
#ifndef LTX_RUNTIME_RANK_STREAMS_H_
#define LTX_RUNTIME_RANK_STREAMS_H_

#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace ltx {

// InvalidArgument naming both ranks: ranks `rank` and `other` of GPU `device` pass the same
// stream. Thread-safe (pure).
absl::Status SameStreamError(int rank, int other, int device);

class RankStreams {
 public:
  // How many distinct streams of one rank are counted; more read as this many.
  static constexpr int kMostCounted = 64;
  // How many of a rank's latest calls keep their stream: a co-located rank's call of the same
  // number is compared with it while the two ranks are fewer calls than this apart (per-rank
  // calls never wait for each other on the host).
  static constexpr int kHistory = 64;

  // Ranks on `devices` (device ordinals in rank order); ranks that name the same device share
  // its GPU.
  explicit RankStreams(std::vector<int> devices);

  RankStreams(const RankStreams&) = delete;
  RankStreams& operator=(const RankStreams&) = delete;

  // Records that call `number` (>= 1) of `rank`, which shares its GPU, runs on `stream`, and
  // sets *streams_now (if given) to the rank's count of streams used when this call adds one
  // to it, else to 0. InvalidArgument (SameStreamError) when a co-located rank's call `number`
  // (one of its latest kHistory calls) runs on the same stream; OK, recording nothing, for a rank alone on its GPU or for
  // cudaStreamPerThread (a stream per thread, which the Runtime's checks refuse or resolve
  // elsewhere). Thread-safe.
  absl::Status Claim(int rank, uint64_t number, cudaStream_t stream,
                     int* streams_now = nullptr);

  // Forgets every rank's calls (Reset numbers the calls from 1 again); the streams used
  // stay counted, since a stream that carried work still counts. Thread-safe.
  void ForgetCalls();

  // The distinct streams `rank`'s calls have used since creation (at most kMostCounted; 0 for a
  // rank alone on its GPU). Thread-safe.
  int StreamsUsed(int rank) const;

  // The lock that `rank` takes (LaunchTurn) while it enqueues an op's kernels where it shares its
  // GPU, the same for every rank of that GPU and for the co-located ranks of every other
  // Runtime of the process on that GPU, so that they do not enqueue at the same time; nullptr
  // for a rank alone on its GPU. Lives as long as the process; thread-safe.
  absl::Mutex* LaunchLock(int rank) const;

 private:
  struct Call {
    uint64_t number = 0;  // 0: none since creation or ForgetCalls.
    cudaStream_t stream = nullptr;
  };
  struct Rank {
    std::array<Call, kHistory> calls;  // Call n at n % kHistory.
    absl::flat_hash_set<cudaStream_t> used;  // At most kMostCounted.
  };

  // Set at construction and never changed, so read without mu_: each rank's device, its
  // co-located ranks (empty for a rank alone, whose calls take no lock here), and its GPU's
  // launch lock (shared by the co-located ranks of that GPU in every Runtime of the process;
  // nullptr for a rank alone).
  const std::vector<int> devices_;
  std::vector<std::vector<int>> co_located_;
  std::vector<absl::Mutex*> launch_locks_;

  mutable absl::Mutex mu_;
  std::vector<Rank> ranks_ ABSL_GUARDED_BY(mu_);
};

// One op's turn at a GPU's launch lock (RankStreams::LaunchLock): holds the lock from
// construction to destruction if it can be taken within `wait`, and otherwise lets the op
// launch without it. A launch can block on the host (a stream's queue of pending launches is
// full behind a kernel that waits for a co-located rank), and a rank that waited for the lock
// behind it could never launch the op that kernel waits for: so the lock only ever orders
// launches that return promptly, and never makes a wait for a peer longer. Not copyable; the
// thread that constructs it destroys it.
class LaunchTurn {
 public:
  // How long a launch waits for the lock before it goes ahead without it: launches take
  // microseconds (a stream's first one, or a kernel's, somewhat longer), so a holder past this
  // is blocked; and a rank that waits this long once, where a launch is blocked, loses little
  // beside the collectives' timeouts (seconds).
  static constexpr absl::Duration kWait = absl::Milliseconds(20);

  // Takes `lock` (nullptr: nothing to take) within `wait`.
  explicit LaunchTurn(absl::Mutex* lock, absl::Duration wait = kWait);
  ~LaunchTurn();

  LaunchTurn(const LaunchTurn&) = delete;
  LaunchTurn& operator=(const LaunchTurn&) = delete;

  // Whether this turn holds the lock.
  bool held() const { return held_ != nullptr; }

 private:
  absl::Mutex* held_ = nullptr;  // The lock, while held.
};

}  // namespace ltx

#endif  // LTX_RUNTIME_RANK_STREAMS_H_
