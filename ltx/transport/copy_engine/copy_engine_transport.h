// The copy-engine transport: it moves what each rank sends each rank (an AllGather's shard, an
// all-to-all's piece) into every output with the GPUs' copy engines. With peer access the
// copies run over NVLink (Protocol::kCopyEngine on the peer-store Runtime, and its large eager
// AllGathers by default: the copy engines outrun SM stores there); without it the driver stages
// them through host memory (Transport::kCopyEngine). It knows no collective: each call brings
// its announcement and the planner of its copies (ltx/transport/copy_engine/copy_engine_call.h),
// and each copy into an output is one strided copy (ltx/transport/copy_engine/strided_copy.h).
//
// No call waits on the host for another rank's call (kernels/PROTOCOL.md, the copy-engine
// protocol). For op n of rank r:
//
//   1. Entry: r records its entry event of op n on its stream (one of a ring of events,
//      ltx/transport/copy_engine/copy_engine_pairing.h), queues the copy of its own part into its
//      own output there, and publishes {input, announcement (output, shape)} in the pairing table.
//   2. Pairs: for each peer q that published op n before r, r compares the announcements and
//      queues both copies of the pair, as r's planner plans them (the announcements agree, so
//      q's planner would plan the same): r's part for q into q's output on the copy stream
//      (r -> q) of r's GPU, q's part for r into r's output on the copy stream (q -> r) of q's
//      GPU, each after both ranks' entry events (the source's input is written, the target's
//      output is free), each followed by stream memory writes of n into the target's
//      `received[source]` and the source's `sent[target]` flags
//      (kernels/wire/copy_engine_signals.h). For the peers that arrive after r, they do the same.
//   3. Exit: r's stream gets a one-thread kernel (kernels/copy_engine/copy_engine_exit_kernel.h)
//   that waits,
//      with the call's timeout, until every flag into and out of r shows n: r's output is
//      complete and nobody reads its input any more. Only then does r's stream go on.
//
// The exit kernel of a rank reads only its GPU's memory (kernels/wire/copy_engine_signals.h): its
// abort flag and error claim, and, when the GPUs have peer access, its completion flags, which
// the peers' copy streams write over NVLink. Without peer access the flags are host-mapped.
//
// Why the copy streams cannot deadlock: the stream (s -> t) carries the copies of the pair
// {s, t} only, in op order (the pair's op n + 1 is paired only after both ranks' op n calls
// returned, and one of them queued op n's copies). Op n's copies wait only for entry events of
// op n, which follow the exit kernels of op n - 1 on the ranks' streams, which wait only for
// op n - 1's copies, queued before them. Every exit kernel has a deadline, so even a rank that
// never comes ends every wait.
//
// Errors: a rank that never calls leaves the others' exit kernels waiting for its flags: they
// record DeadlineExceeded (phase exit) in their error records, and no copy into or out of the
// missing rank is queued. Ranks that disagree: the rank that pairs them returns
// InvalidArgument (the kernels' MismatchRecord) and queues nothing for that pair; its caller
// makes the error visible and sets every rank's abort flag (Abandon), so the waiting exit
// kernels stop. A rank that calls after a peer's device gave up queues nothing with it.
//
// Copies queued before a failure still run (a queued copy cannot be recalled): each is marked
// in host-mapped memory right after it is queued (CopyEngineHostSignals::queued), and an exit
// kernel whose op was given up still waits, up to the timeout, for the marked copies of its op
// before its stream goes on. Abandon sets the abort flags only once no call is queueing a pair
// (after a failure none starts), so the marks it races with are final. Two cases stay open: a
// copy whose source rank's stream is held by other work for longer than that extra timeout
// lands later, and a call that pairs with a peer within microseconds of that peer's exit kernel
// timing out may queue copies the peer no longer waits for. Reset waits for every copy stream.
//
// The calls cannot be captured into a CUDA graph (the pairing happens on the host at call time);
// captured copy-engine calls on the peer-store transport take
// ltx/transport/copy_engine/copy_engine_graph.h instead.
#ifndef LTX_TRANSPORT_COPY_ENGINE_COPY_ENGINE_TRANSPORT_H_
#define LTX_TRANSPORT_COPY_ENGINE_COPY_ENGINE_TRANSPORT_H_

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cudaTypedefs.h>

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/optional.h"
#include "kernels/wire/copy_engine_signals.h"
#include "kernels/wire/error_record.h"
#include "kernels/wire/signal_layout.h"
#include "ltx/cuda/kept_blocks.h"
#include "ltx/rank_buffers.h"
#include "ltx/transport/copy_engine/copy_engine_call.h"
#include "ltx/transport/copy_engine/copy_engine_pairing.h"

namespace ltx {

class CopyEngineTransport {
 public:
  // Creates the copy and control streams, entry events and signals of each of `devices` (rank
  // order). With `peer_access` (every pair of `devices` has it enabled), each rank's completion
  // flags live in its GPU's memory, else in host-mapped memory. The calling thread's current
  // device is restored. Errors: as CUDA reports them; FailedPrecondition without a CUDA driver
  // that has stream memory operations.
  static absl::StatusOr<std::unique_ptr<CopyEngineTransport>> Create(
      const std::vector<int>& devices, bool peer_access);
  // Sets every abort flag and waits (a few seconds at most) for the copy streams; gives the
  // host-mapped and device signals back to the process for the next Runtime (never freed: that
  // would wait for the whole GPU), or leaks them if a copy stream is still busy or after
  // KeepMemoryAtExit.
  ~CopyEngineTransport();

  CopyEngineTransport(const CopyEngineTransport&) = delete;
  CopyEngineTransport& operator=(const CopyEngineTransport&) = delete;

  // Enqueues rank `rank`'s part of its next op, `call` (announcement and planner), on
  // `buffers.stream` (see the file comment), which must not be capturing a CUDA graph; the calling
  // thread's current device must be the rank's. Never waits for other ranks' calls, except while
  // this rank runs CopyEnginePairing::kSlots ops ahead of a peer (then at most `timeout`). `done`,
  // when not null, is recorded on `buffers.stream` after everything the call queued there, on
  // errors too. Errors: InvalidArgument when this rank pairs with a peer whose announcement
  // disagrees (another collective, shape or reset generation; naming both values); a peer's device
  // error when its device already gave up; the CUDA error of a call that failed (naming the ranks);
  // DeadlineExceeded from the slot wait. Every later call fails with a failure until Reset; the
  // peers' exit kernels of the op keep waiting until the caller, having made the error visible to
  // every rank (so that a peer whose exit kernel stops reports it), calls Abandon. Once the call
  // published its part, its exit kernel is queued even when the call fails. Errors the
  // devices record (timeouts of the exit kernels) are read with ReadError. Thread-safe across
  // ranks; each rank calls from one thread at a time.
  absl::Status Enqueue(int rank, const CopyEngineCall& call, const RankBuffers& buffers,
                       absl::Duration timeout, cudaEvent_t done);

  // The error rank `rank`'s exit kernel recorded since the last Reset, if any. Safe while
  // kernels run. Thread-safe.
  absl::optional<DeviceErrorRecord> ReadError(int rank) const;

  // Records `error` (not OK) as the failure of every later call, as a failed Enqueue does, then
  // sets every rank's abort flag (a stream memory write on the rank's control stream, which
  // never waits for anything): running and later exit kernels stop waiting for copies that were
  // never queued, until Reset. In between it waits (at most a second) until no call is queueing
  // a pair's copies, so that those kernels know every copy of their op that was. Thread-safe.
  void Abandon(const absl::Status& error);

  // The smallest cudaDevAttrMaxPitch of the GPUs (SmallestMaxPitch), for the strided copies of
  // any call on them. Thread-safe.
  int64_t max_pitch() const { return max_pitch_; }

  // Makes the destructor leak the signals instead of giving them back: an exit kernel may still
  // read them. Not thread-safe.
  void KeepMemoryAtExit() { free_signals_ = false; }

  // Waits until every copy stream is idle, at most until `deadline`. Then zeroes every signal,
  // flag and error record and forgets every op and the failure (op numbers restart at 1). No
  // rank may be inside Enqueue or Abandon, and the ranks' streams must have passed every exit
  // kernel. Errors: DeadlineExceeded naming a busy copy stream (nothing is reset); CUDA errors.
  absl::Status Reset(absl::Time deadline);

 private:
  // Per rank: its copy streams (to[t] copies this rank's shard into rank t's output), its
  // control stream (writes the abort flag, clears the device signals) and the ring of entry
  // events (one per pairing slot).
  struct RankStreams {
    std::array<cudaStream_t, kMaxWorldSize> to = {};
    cudaStream_t control = nullptr;
    std::array<cudaEvent_t, CopyEnginePairing::kSlots> entry = {};
  };
  // One direction of a pair at op `op`: what `source` sends `target`, from `input` into
  // `output`.
  struct Direction {
    int source = 0;
    int target = 0;
    const void* input = nullptr;
    void* output = nullptr;
  };

  CopyEngineTransport(std::vector<int> devices, PFN_cuStreamBatchMemOp_v11070 batch_mem_op,
                      PFN_cuStreamWriteValue32_v11070 write_value32);
  // Allocates each rank's device signals and points its flags at them (peer access) or at the
  // host-mapped signals; then zeroes the device signals.
  absl::Status AllocateDeviceSignals(bool peer_access);
  // Zeroes every rank's device signals, on its control stream, and waits for it.
  absl::Status ClearDeviceSignals();
  // Rank `rank`'s signals in its GPU's memory.
  CopyEngineDeviceSignals* DeviceSignals(size_t rank) const {
    return static_cast<CopyEngineDeviceSignals*>(device_blocks_[rank].address);
  }
  // Queues the writes of `op` into the flags `received` and `sent` on `stream`, after what the
  // stream holds (each write's default memory barrier orders the copies before it), in one
  // driver call (two writes cost about 3.8 µs on the host as two calls, 1.6 µs as one batch).
  absl::Status WriteFlags(int rank, cudaStream_t stream, uint64_t* received, uint64_t* sent,
                          uint64_t op);
  // Whether every copy and control stream is idle by `deadline`; the first busy one otherwise.
  absl::Status Drain(absl::Time deadline);
  absl::Status CreateRank(int rank);
  absl::Status AllocateHostSignals();
  // Steps 1 to 3 of the file comment.
  absl::Status EnqueueOp(int rank, const CopyEngineCall& call, const RankBuffers& buffers,
                         absl::Duration timeout);
  // Step 2 for one partner that published before `rank`.
  absl::Status QueuePair(int rank, const CopyEngineArrival& mine, const CopyEnginePartner& peer,
                         uint64_t op, const CopyEngineCall& call);
  // Queues one direction, as `plan` plans it, on its copy stream, switching to the source's GPU
  // and back.
  absl::Status QueueDirection(int rank, const Direction& direction, uint64_t op,
                              CopyPlanner plan);

  const std::vector<int> devices_;
  const PFN_cuStreamBatchMemOp_v11070 batch_mem_op_;
  const PFN_cuStreamWriteValue32_v11070 write_value32_;
  // The smallest cudaDevAttrMaxPitch of the GPUs (SmallestMaxPitch); set by Create.
  int64_t max_pitch_ = 0;
  std::vector<RankStreams> streams_;  // Set by Create.
  // Host-mapped, one per rank (the same address on the host and on every GPU).
  CopyEngineHostSignals* signals_ = nullptr;
  // Each rank's signals in its GPU's memory (ltx/cuda/kept_blocks.h).
  std::vector<KeptBlock> device_blocks_;
  // Each rank's completion flags: in its device signals or its host-mapped ones.
  std::vector<CopyEngineFlags*> flags_;
  // Where signals_ came from (ltx/cuda/kept_blocks.h), and the device it was acquired for.
  KeptBlock signals_block_;
  int signals_device_ = -1;
  // False when a copy or an exit kernel may still touch the signals: then they are leaked, not
  // given back.
  bool free_signals_ = true;
  CopyEnginePairing pairing_;
};

}  // namespace ltx

#endif  // LTX_TRANSPORT_COPY_ENGINE_COPY_ENGINE_TRANSPORT_H_
