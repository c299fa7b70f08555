// The copy-engine path of the AllGather. Each rank's shard reaches every output through
// cudaMemcpyPeerAsync: over NVLink where peer access is enabled (Protocol::kCopyEngine, and
// large eager calls by default: the copy engines outrun SM stores there), staged by the driver
// through host memory where the GPUs cannot reach each other (Transport::kCopyEngine). The
// barrier is made of CUDA events instead of peer stores:
//
//   1. Entry: each rank records an event on its stream and meets the other ranks' calls of the
//      same op on the host (bounded by the timeout); there the arguments are compared.
//   2. It copies its shard into its own output on a side stream, and into the peers' outputs
//      on its stream, each after that peer's entry event (the peer's earlier work on its output
//      is done). The peers are taken in turn from the next rank on, so that at each step every
//      GPU sends to one peer and receives from another.
//   3. Exit: it records a "copied" event, meets the other ranks again, and its stream waits for
//      every peer's "copied" event. When the stream passes that point its output is complete.
//
// Unlike the peer-store path, a per-rank call waits on the host for the other ranks' calls of
// the same op, and the calls cannot be captured into a CUDA graph.
#ifndef LTX_COPY_ENGINE_TRANSPORT_H_
#define LTX_COPY_ENGINE_TRANSPORT_H_

#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "kernels/signal_layout.h"
#include "ltx/allgather_spec.h"

namespace ltx {

class CopyEngineTransport {
 public:
  // Creates the per-rank events and side streams on each of `devices` (rank order). A rank
  // that waits for the others at a rendezvous polls for up to `spin` before it sleeps. The
  // calling thread's current device is restored. Errors: as CUDA reports them.
  static absl::StatusOr<std::unique_ptr<CopyEngineTransport>> Create(
      const std::vector<int>& devices, absl::Duration spin);
  ~CopyEngineTransport();

  CopyEngineTransport(const CopyEngineTransport&) = delete;
  CopyEngineTransport& operator=(const CopyEngineTransport&) = delete;

  // Enqueues rank `rank`'s part of the next op on `buffers.stream`, which must not be capturing
  // a CUDA graph; the calling thread's current device must be the rank's. Blocks until every
  // rank has called for this op (twice briefly; see the file comment), at most `timeout` each
  // time. Errors: DeadlineExceeded naming the op, the phase and the missing rank;
  // InvalidArgument when ranks disagree on the shape (on every rank, naming both values); CUDA
  // errors. After an error the op table is inconsistent until Reset. Thread-safe across ranks.
  absl::Status Enqueue(int rank, const AllGatherLayout& layout, const RankBuffers& buffers,
                       absl::Duration timeout);

  // Forgets every op in progress and restarts the op count. No rank may be inside Enqueue.
  void Reset();

 private:
  // What every rank contributes to one op, in one of a few slots reused round-robin.
  struct Arrival {
    // The rank's output and its view of the shape, compared across ranks at entry.
    EntryAnnouncement announced = {};
    bool entered = false;
    bool copied = false;
  };
  struct Slot {
    uint64_t op = 0;  // The op these arrivals belong to.
    // The timeout of the first rank that gave up on the op: the other ranks stop waiting, do
    // not copy into its output, and return the same error.
    absl::Status gave_up;
    std::array<Arrival, kMaxWorldSize> arrivals;
    std::array<cudaEvent_t, kMaxWorldSize> entry_events = {};
    std::array<cudaEvent_t, kMaxWorldSize> copied_events = {};
  };
  static constexpr int kSlots = 4;

  CopyEngineTransport(std::vector<int> devices, absl::Duration spin);
  // Per rank: the side stream that copies into the rank's own output, and the events that fork
  // it from the rank's stream and join it back. Used only by the rank's own Enqueue calls.
  struct LocalCopy {
    cudaStream_t stream = nullptr;
    cudaEvent_t fork = nullptr;
    cudaEvent_t join = nullptr;
  };

  // Waits until every rank of `slot` has `phase` set for `op`. DeadlineExceeded, naming the
  // rank waited for, after `timeout` or when another rank gave up on the op first.
  absl::Status AwaitAll(Slot& slot, uint64_t op, int rank, bool Arrival::*phase,
                        absl::Duration timeout, const char* phase_name)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::vector<int> devices_;
  const absl::Duration spin_;
  std::vector<LocalCopy> local_copies_;
  absl::Mutex mu_;
  std::array<uint64_t, kMaxWorldSize> next_op_ ABSL_GUARDED_BY(mu_) = {};
  std::array<Slot, kSlots> slots_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ltx

#endif  // LTX_COPY_ENGINE_TRANSPORT_H_
