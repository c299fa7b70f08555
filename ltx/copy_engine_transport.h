// The copy-engine transport: it moves each rank's shard into every output with the GPUs' copy
// engines. With peer access the copies run over NVLink (Protocol::kCopyEngine on the
// peer-store Runtime, and its large eager calls by default: the copy engines outrun SM stores
// there); without it the driver stages them through host memory (Transport::kCopyEngine). A
// shard goes into each output as one strided copy (ltx/shard_copy.h). The barrier is made of
// CUDA events and a host rendezvous (ltx/host_rendezvous.h) instead of peer stores:
//
//   1. Entry: each rank records an entry event on its stream and meets the other ranks' calls
//      of the same op on the host (bounded by the timeout); there the arguments are compared.
//   2. It copies its shard into its own output on a side stream, and into the peers' outputs
//      on its stream, each after that peer's entry event (the peer's earlier work on its output
//      is done). The peers are taken in turn from the next rank on, so that at each step every
//      GPU sends to one peer and receives from another. The side stream is joined back.
//   3. Exit: it records a "copied" event, meets the other ranks again (telling them whether all
//      its copies were queued), and its stream waits for every rank's "copied" event. When the
//      stream passes that point its output is complete.
//
// What an error leaves behind:
//   - At entry (a rank missing, ranks that disagree): no rank queues any copy of the op, so
//     every output is untouched.
//   - A rank that cannot queue one of its copies still takes part in the exit, so every rank's
//     stream waits for all the copies that were queued, and every rank returns the error.
//   - A rank missing at the exit: each rank's stream still waits for the copies of every rank
//     that had recorded them, and a rank still queuing when the op was given up queues no
//     more. Copies it had already queued may land in a peer's output after that peer's error
//     was returned; they are ordered before that rank's own `done` event, so once every rank's
//     `done` has completed (Runtime::Reset waits for it), nothing of the op is in flight.
//
// Unlike the peer-store path, a per-rank call waits on the host for the other ranks' calls of
// the same op, and the calls cannot be captured into a CUDA graph.
#ifndef LTX_COPY_ENGINE_TRANSPORT_H_
#define LTX_COPY_ENGINE_TRANSPORT_H_

#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "kernels/signal_layout.h"
#include "ltx/allgather_spec.h"
#include "ltx/host_rendezvous.h"

namespace ltx {

class CopyEngineTransport {
 public:
  // Creates the per-rank side streams and events on each of `devices` (rank order). A rank
  // that waits for the others at the rendezvous polls for up to `spin` before it sleeps. The
  // calling thread's current device is restored. Errors: as CUDA reports them.
  static absl::StatusOr<std::unique_ptr<CopyEngineTransport>> Create(
      const std::vector<int>& devices, absl::Duration spin);
  ~CopyEngineTransport();

  CopyEngineTransport(const CopyEngineTransport&) = delete;
  CopyEngineTransport& operator=(const CopyEngineTransport&) = delete;

  // Where a rank's call stands among all its calls through the Runtime (ltx/call_ledger.h).
  struct CallOrder {
    // The call's number: every rank numbers its calls alike, so ranks that meet at this op
    // with different numbers took different paths for some op.
    uint64_t number = 0;
    // Polled while the rank waits for the others (RendezvousWatch): a non-OK status, e.g. a
    // peer that issued this call on a kernel path, fails the op for every rank.
    RendezvousWatch watch;
  };

  // Enqueues rank `rank`'s part of its next op on `buffers.stream`, which must not be capturing
  // a CUDA graph; the calling thread's current device must be the rank's. Blocks until every
  // rank has called for this op (twice briefly; see the file comment), at most `timeout` each
  // time. Whatever it returns, everything it queued is ordered on `buffers.stream` (the side
  // stream is joined back), and `done`, when not null, is recorded there after it: once `done`
  // completes, nothing this call queued is in flight.
  // Errors, the same on every rank where the op fails for all: DeadlineExceeded naming the op,
  // the phase and the missing rank; InvalidArgument when ranks disagree on the shape (naming
  // both values) or meet with different call numbers, or the status of `order.watch`; the CUDA
  // error of a rank that could not queue its copies (naming it); other CUDA errors of this
  // rank's calls. After an error, every later call fails with it until Reset. Thread-safe
  // across ranks; each rank calls from one thread at a time.
  absl::Status Enqueue(int rank, const CallOrder& order, const AllGatherLayout& layout,
                       const RankBuffers& buffers, absl::Duration timeout, cudaEvent_t done);

  // Forgets every op in progress, the failure, and restarts the op numbers at 1. No rank may
  // be inside Enqueue, and the streams must have passed every `done` of earlier calls.
  void Reset();

 private:
  // The first CUDA call of a rank's copies that failed (cudaSuccess: none), and the rank
  // whose output it was for.
  struct CopyFailure {
    int32_t error = cudaSuccess;
    int32_t target = -1;
  };
  // What a rank brings to the meetings of an op.
  struct Arrival {
    uint64_t call = 0;                 // Entry: CallOrder::number.
    EntryAnnouncement announced = {};  // Entry: its output and its view of the shape.
    CopyFailure failed_copy;           // Exit: whether all its copies were queued.
  };
  // Per rank: the side stream that copies into the rank's own output, the events that fork it
  // from the rank's stream and join it back (used only by the rank's own calls), and the entry
  // and "copied" events that the peers' streams wait for. One of each suffices: a rank records
  // its entry event for op n + 1 only after every peer has left the exit of op n, and its
  // "copied" event only after every peer has reached the entry of op n + 1.
  struct RankEvents {
    cudaStream_t side = nullptr;
    cudaEvent_t fork = nullptr;
    cudaEvent_t join = nullptr;
    cudaEvent_t entry = nullptr;
    cudaEvent_t copied = nullptr;
  };
  using Outputs = std::array<void*, kMaxWorldSize>;

  CopyEngineTransport(std::vector<int> devices, absl::Duration spin);
  absl::Status CreateRankEvents(int rank);

  // Step 1: records the entry event, meets the others and checks that they agree; returns
  // every rank's output.
  absl::StatusOr<Outputs> Enter(int rank, uint64_t op, const CallOrder& order,
                                const AllGatherLayout& layout, const RankBuffers& buffers,
                                absl::Duration timeout);
  // Step 2: queues the copies into every output; stops early if the op has been given up.
  CopyFailure QueueCopies(int rank, const AllGatherLayout& layout, const RankBuffers& buffers,
                          const Outputs& outputs);
  // Step 3: records the "copied" event, meets the others, and orders every rank's copies
  // before the rest of the stream.
  absl::Status Leave(int rank, uint64_t op, const CallOrder& order, const RankBuffers& buffers,
                     CopyFailure mine, absl::Duration timeout);

  const std::vector<int> devices_;
  // The smallest cudaDevAttrMaxPitch of the GPUs; lowered by Create.
  int64_t max_pitch_ = std::numeric_limits<int64_t>::max();
  // Set by Create; then only each rank's own calls touch its fork and join.
  std::vector<RankEvents> rank_events_;
  HostRendezvous<Arrival> rendezvous_;
};

}  // namespace ltx

#endif  // LTX_COPY_ENGINE_TRANSPORT_H_
