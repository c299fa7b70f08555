// ltx::Runtime: one process drives every GPU of a node. It owns one host thread per rank, the
// peer access between its GPUs, each GPU's signal memory and error record, and launches the
// collectives (AllGather; the Ulysses all-to-all, sequence <-> heads; AllReduce and
// ReduceScatter) on every rank with a cross-GPU barrier that times out instead of hanging.
//
//   ltx::RuntimeOptions options;
//   options.devices = {0, 1, 2, 3};
//   LTX_ASSIGN_OR_RETURN(std::unique_ptr<ltx::Runtime> runtime, ltx::Runtime::Create(options));
//   std::vector<int64_t> counts = {100, 80, 0, 120};  // Must outlive the calls that use it.
//   ltx::AllGatherShape shape{ltx::DataType::kBFloat16, /*batch=*/1, /*hidden=*/4096, counts};
//   // Coordinated call: every rank's buffers at once, from any thread.
//   LTX_RETURN_IF_ERROR(runtime->AllGatherAndWait(shape, buffers, absl::Seconds(30)));
//   // Per-rank call: from each GPU's own server thread, no host synchronisation, capturable.
//   LTX_RETURN_IF_ERROR(runtime->AllGatherRank(rank, shape, buffers[rank]));
//
// (tests/examples_test.cc compiles this example.)
//
// Ordering. Like NCCL, all ranks must issue collectives in the same order, and one rank's
// collectives must be ordered on the GPU (the same stream, or streams joined by events).
// Threads. Calls for different ranks may run at the same time on different threads; calls that
// involve the same rank (a coordinated call involves all) must not overlap on the host.
//
// Errors. Bad arguments: InvalidArgument, nothing launched. A barrier that times out on a GPU,
// or ranks whose arguments disagree (shape, op, reset generation, or path: ranks on two sides of
// the one-trip or copy-engine size threshold, or with different CallOptions::protocol), are
// recorded by the device or the host and returned by CollectiveHandle::Wait, Synchronize, or the
// next call (DeadlineExceeded / InvalidArgument); ranks on different paths fail at once, on
// every rank, instead of waiting out the timeout. From then on the Runtime refuses new work with
// FailedPrecondition until Reset().
//
// Reset generations. Reset() starts a new generation (generation()). A server that drives each
// rank from its own thread reads generation() when a step starts and passes it in
// CallOptions::generation with every call of the step: a rank thread that was late for an op
// that failed, and calls only after the Reset, then gets Aborted with nothing launched (the
// Runtime stays usable) instead of pairing its stale call with its peers' next op. The device
// also compares the generation each rank's kernel was launched in (a CUDA graph keeps the one
// it was captured in): ranks of different generations get InvalidArgument.
#ifndef LTX_RUNTIME_H_
#define LTX_RUNTIME_H_

#include <cuda_runtime_api.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "ltx/allgather_shape.h"
#include "ltx/allreduce_rmsnorm.h"
#include "ltx/allreduce_shape.h"
#include "ltx/alltoall_shape.h"
#include "ltx/data_type.h"
#include "ltx/rank_buffers.h"
#include "ltx/reduce_scatter_shape.h"
#include "ltx/reduction.h"
#include "ltx/runtime_options.h"
#include "ltx/status_macros.h"

namespace ltx {

class CallLedger;
class RankStreams;
class CaptureExchange;
struct CollectiveOp;
class CopyEngineTransport;
class PeerStoreTransport;
class RankPlacement;
class Runtime;
struct ResolvedCall;

// Completion of one coordinated call (of any collective). Movable; destroying it does not wait.
// Must not outlive the Runtime that made it.
class CollectiveHandle {
 public:
  CollectiveHandle(CollectiveHandle&&) noexcept;
  CollectiveHandle& operator=(CollectiveHandle&&) noexcept;
  ~CollectiveHandle();

  // Blocks until the op has finished on every GPU or `timeout` has passed. Returns OK when all
  // ranks finished without error; the device's error (DeadlineExceeded, InvalidArgument) if any
  // rank recorded one; DeadlineExceeded naming the ranks still running if `timeout` passed
  // first (the op may still finish: Wait again). Not thread-safe with other calls on the same
  // handle.
  absl::Status Wait(absl::Duration timeout);

 private:
  friend class Runtime;
  CollectiveHandle(Runtime* runtime, std::vector<cudaEvent_t> done);
  void Release();

  Runtime* runtime_ = nullptr;
  std::vector<cudaEvent_t> done_;  // One per rank, recorded after that rank's launch.
};

class Runtime {
 public:
  // Validates the devices, picks the transport (RuntimeOptions::transport), enables peer
  // access both ways between distinct GPUs for the peer-store transport (tolerating "already
  // enabled"), allocates each rank's signal region, staging and host-mapped error record, and
  // starts one host thread per rank. Ranks may share a GPU (RuntimeOptions::devices). Errors:
  // InvalidArgument for bad options (unknown device, more than
  // kMaxWorldSize ranks, a non-positive timeout, negative max_blocks, worker_spin,
  // one_trip_max_bytes, copy_engine_min_bytes or two_shot_min_bytes out of range);
  // FailedPrecondition when no GPU
  // is visible, when Transport::kPeerStores is asked for and a pair of GPUs lacks peer
  // access (the message lists the pairs), or when the copy-engine transport is needed for ranks
  // that share a GPU and their copy streams outnumber its hardware queues
  // (CUDA_DEVICE_MAX_CONNECTIONS; the message gives the counts); others as CUDA reports them.
  static absl::StatusOr<std::unique_ptr<Runtime>> Create(const RuntimeOptions& options);

  // Waits (bounded by the timeout plus a margin) for this Runtime's kernels, stops the threads
  // and frees all memory, also after errors. It waits for nothing else: the user's kernels on
  // the same GPUs run on (no call that synchronises a device). Memory that a kernel of this
  // Runtime may still touch is leaked rather than freed. Graph replays of captured calls are not
  // seen: they must have finished (synchronise their streams first).
  ~Runtime();

  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // The number of ranks. Thread-safe.
  int world_size() const { return static_cast<int>(ranks_.size()); }
  // CUDA device ordinal of each rank (a GPU appears once per rank on it).
  const std::vector<int>& devices() const;
  // The options the Runtime was created with. Thread-safe (fixed for its life).
  const RuntimeOptions& options() const { return options_; }
  // The transport in use: kPeerStores or kCopyEngine (never kAuto).
  Transport transport() const { return transport_; }

  // The reset generation: how many Resets have succeeded since Create (0 at first). Pass the
  // value read when a step starts as CallOptions::generation of the step's calls (see the file
  // comment). Thread-safe and lock-free (one acquire load).
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

  // Coordinated call: validates every rank's arguments, then each GPU's thread enqueues that
  // rank's part (a kernel, or copy-engine copies: see CallOptions::protocol) on
  // buffers[r].stream; returns once all are enqueued. The streams must be
  // explicit or the legacy default stream (not cudaStreamPerThread) and not capturing (capture
  // AllGatherRank calls instead); ranks that share a GPU need streams of their own (not the
  // legacy default stream, not one stream for two of them). `buffers` has one entry
  // per rank. With batch 1 a rank's input may lie in place, at its own tokens inside its output;
  // an input that overlaps its output anywhere else is InvalidArgument, and so is a buffer one
  // rank writes that shares bytes with any buffer of another rank (ranks that share a GPU; inputs
  // may be shared, as they are only read). Errors: InvalidArgument
  // (nothing enqueued on any rank), Aborted for a CallOptions::generation older than
  // generation() (nothing enqueued), FailedPrecondition after an earlier error, Unimplemented
  // for Protocol::kCopyEngine where ranks sharing a GPU would have more copy streams than it has
  // hardware queues (nothing enqueued; the message gives the counts), or the first device error
  // not yet reported. Thread-safe against
  // per-rank calls of other ranks only; the
  // caller orders its own calls.
  //
  // Several tensors in one op (AllGatherShape::tensors = n, up to kMaxTensors), as for the
  // all-to-all below: each rank passes tensor 0 as RankBuffers::input/output and tensor j as
  // more_inputs[j - 1] / more_outputs[j - 1]; every shard of every tensor goes into that
  // tensor's outputs, with one entry and one exit barrier for all. Each tensor's buffers are
  // checked as one tensor's (each may lie in place in its own output); an input that overlaps
  // another tensor's output, two outputs that overlap, or a set pointer of a tensor past n is
  // InvalidArgument. Ranks that pass different n get InvalidArgument from the device. Such
  // calls run on the direct kernel only: kAuto takes it; Protocol::kOneTrip, kCopyEngine and
  // the copy-engine transport are Unimplemented, refused alike on every rank before any launch
  // (the Runtime stays usable; a per-rank call's refusal stops it, see AllGatherRank).
  //
  // FP8 on the wire (AllGatherShape::wire) has its own limits, listed there: bf16 and fp16 rows
  // of at least 8 elements, not in place (InvalidArgument), one tensor, on its own kernels
  // (Unimplemented otherwise, refused alike on every rank; the Runtime stays usable after a
  // coordinated call's refusal and stops after a per-rank call's).
  absl::StatusOr<CollectiveHandle> AllGather(const AllGatherShape& shape,
                                            absl::Span<const RankBuffers> buffers,
                                            const CallOptions& call = {});

  // AllGather, then Wait(wait_timeout) on the handle.
  absl::Status AllGatherAndWait(const AllGatherShape& shape,
                                absl::Span<const RankBuffers> buffers,
                                absl::Duration wait_timeout, const CallOptions& call = {});

  // Per-rank call: enqueues rank `rank`'s kernel on `buffers.stream` from the calling thread,
  // with no host rendezvous and no host synchronisation, so it can be captured into a CUDA
  // graph (a captured call fixes the pointers, counts, shape and timeout; the op number lives
  // on the device, so every replay is a new op). Every rank must make the matching call. The
  // calling thread's current device is restored on return. Thread-safe across ranks.
  // Copy-engine calls (Protocol::kCopyEngine, large eager calls under kAuto where no GPU hosts
  // two ranks, and every call on the copy-engine transport) do not wait for the other ranks either (unless a rank runs 16
  // copy-engine ops ahead of a peer: then it waits, bounded by the timeout). Captured with an
  // explicit Protocol::kCopyEngine on the peer-store transport, a call records the copy
  // engines' graph (ltx/transport/copy_engine/copy_engine_graph.h): its capture exchanges output
  // addresses with the peers' captures and waits for them, at most the call's timeout, so every
  // rank must capture from its own thread, concurrently; a rank that does not: DeadlineExceeded
  // naming it, the Runtime stops and the captures must be discarded. On the copy-engine transport a
  // capture is Unimplemented, as is a copy-engine call refused for ranks that share a GPU.
  // Errors: as AllGather, plus InvalidArgument for a rank outside [0, world_size), and Aborted
  // for a CallOptions::generation older than generation() (a straggler from before a Reset:
  // nothing launched, the Runtime stays usable). Because the other ranks may already have
  // launched their part, and a rank cannot know that they refused theirs alike, any other
  // rejected call, Unimplemented included, also stops the Runtime (later calls:
  // FailedPrecondition until Reset). A call that finds a peer
  // issued the same op on the other kind of path (copy engines against a kernel) fails with
  // InvalidArgument, stops the Runtime and abandons every wait on the devices, so the peer's Wait
  // or Synchronize reports the same error at once; so does the second of two ranks of one GPU
  // that pass the same stream for the same op.
  absl::Status AllGatherRank(int rank, const AllGatherShape& shape, const RankBuffers& buffers,
                             const CallOptions& call = {});

  // The Ulysses all-to-all (see AllToAllShape): sequence -> heads or heads -> sequence, each
  // rank storing its pieces straight into every rank's output at their final positions (the
  // direct protocol: entry barrier, peer stores, exit barrier), or, for small messages, through
  // the one-trip protocol's staging (ResolveCall says when). With Protocol::kCopyEngine, and
  // on the copy-engine transport, the copy engines carry it as they carry the AllGather (one
  // strided copy per piece; the same pairing, deadlines, errors and capture rules); kAuto picks
  // them for eager calls whose largest piece reaches RuntimeOptions::copy_engine_min_bytes. The
  // three call styles are those of the AllGather,
  // with the same contracts, errors and ordering; all-to-all and AllGather ops may interleave
  // on one Runtime (every rank must issue the same sequence of ops: ranks that call different
  // ops, or different shapes, at the same op number get InvalidArgument from the device, or
  // from the rank that pairs them on the copy engines). InvalidArgument for Protocol::kOneTrip
  // when a piece exceeds the one-trip staging (512 KiB).
  //
  // Several tensors in one op (AllToAllShape::tensors = n, up to kMaxTensors: Q, K and V): each
  // rank passes tensor 0 as RankBuffers::input/output and tensor j as more_inputs[j - 1] /
  // more_outputs[j - 1]; every piece of every tensor goes into that tensor's output, with one
  // entry and one exit barrier for all. Each tensor's buffers are checked as one tensor's; an
  // input that overlaps another tensor's output, two outputs that overlap, or a set pointer of
  // a tensor past n is InvalidArgument. Ranks that pass different n get InvalidArgument from the
  // device (as for different shapes). Such calls run on the direct kernel only: kAuto takes it;
  // Protocol::kOneTrip, kCopyEngine and the copy-engine transport are Unimplemented, refused
  // alike on every rank before any launch (the Runtime stays usable; a per-rank call's refusal
  // stops it, as for AllGatherRank). FP8 on the wire
  // (AllToAllShape::wire) has its own limits, listed there, with the same error codes.
  absl::StatusOr<CollectiveHandle> AllToAll(const AllToAllShape& shape,
                                            absl::Span<const RankBuffers> buffers,
                                            const CallOptions& call = {});
  absl::Status AllToAllAndWait(const AllToAllShape& shape, absl::Span<const RankBuffers> buffers,
                               absl::Duration wait_timeout, const CallOptions& call = {});
  absl::Status AllToAllRank(int rank, const AllToAllShape& shape, const RankBuffers& buffers,
                            const CallOptions& call = {});

  // The AllReduce (see AllReduceShape): every rank's output becomes the element-wise reduction
  // of every rank's input, bitwise the same on every rank and every run (ranks combined in
  // order 0, 1, ..., fp32 accumulation for 16-bit types, one rounding at the end), whatever the
  // block count. The pull protocol (kernels/PROTOCOL.md): each rank announces its input, reads
  // every rank's input through peer pointers (the one-shot stores only into its own output,
  // below); no rank's
  // part of the op ends before every rank finished reading its input. Inputs must be device
  // memory of the rank's GPU that the peers can read (cudaMalloc memory, pool and
  // virtual-memory allocations, which the call opens to the peers; not managed memory). Two
  // paths, with the same bits: one-shot (one op, each rank reads every input whole) and
  // two-shot (two ops: a ReduceScatter of the count's chunks into their places in the output,
  // then the in-place AllGather of the chunks; each rank reads count elements, and the peers
  // store into its output, which must then be device memory open to them as the inputs are).
  // Two-shot when each rank's input holds at least RuntimeOptions::two_shot_min_bytes
  // (CallOptions::two_shot_min_bytes overrides it: every rank must pass the same), and in place
  // (input == output on a rank) at every size; every rank must then be in place (a coordinated
  // call in place on some ranks only, below the two-shot size, would take two paths: it is
  // InvalidArgument, nothing launched; per-rank calls that take different paths get
  // InvalidArgument from the device). A failed in-place call leaves
  // the buffer undefined (partly reduced): keep a copy where a step must be retried. The three
  // call styles, their contracts, errors, ordering and capture are those of the AllGather, kernel
  // calls only. Errors beside the AllGather's: InvalidArgument for a dtype other than bf16,
  // fp16 and fp32, an unknown reduction, a negative count, a buffer not aligned to the element
  // size, an input that overlaps the output other than exactly in place, managed memory as
  // input or as a two-shot output, a negative CallOptions::two_shot_min_bytes, or
  // Protocol::kOneTrip or kCopyEngine; Unimplemented on the copy-engine transport
  // (a coordinated call leaves the Runtime usable; a per-rank call's refusal stops it, as for
  // AllGatherRank). Ranks that pass different reductions or counts, or call
  // another collective at the same op, get InvalidArgument from the device.
  absl::StatusOr<CollectiveHandle> AllReduce(const AllReduceShape& shape,
                                             absl::Span<const RankBuffers> buffers,
                                             const CallOptions& call = {});
  absl::Status AllReduceAndWait(const AllReduceShape& shape,
                                absl::Span<const RankBuffers> buffers,
                                absl::Duration wait_timeout, const CallOptions& call = {});
  absl::Status AllReduceRank(int rank, const AllReduceShape& shape, const RankBuffers& buffers,
                             const CallOptions& call = {});

  // The ReduceScatter (see ReduceScatterShape), the AllGather's layout reversed: rank r's output
  // becomes the reduction over every rank of the input rows of its tokens, with the AllReduce's
  // protocol, bits, call styles, contracts and errors, but no in-place form: an input that
  // overlaps the output is InvalidArgument. Token counts as the AllGather's (uneven, zeros).
  absl::StatusOr<CollectiveHandle> ReduceScatter(const ReduceScatterShape& shape,
                                                 absl::Span<const RankBuffers> buffers,
                                                 const CallOptions& call = {});
  absl::Status ReduceScatterAndWait(const ReduceScatterShape& shape,
                                    absl::Span<const RankBuffers> buffers,
                                    absl::Duration wait_timeout, const CallOptions& call = {});
  absl::Status ReduceScatterRank(int rank, const ReduceScatterShape& shape,
                                 const RankBuffers& buffers, const CallOptions& call = {});

  // The AllReduce with the fused residual-add + RMSNorm epilogue of a decoder layer (see
  // AllReduceRmsNormShape): every rank sums the ranks' inputs as AllReduce with Reduction::kSum
  // does, then stores residual_out = sum + residual and output = RMSNorm(residual_out) * weight
  // (kernels/reduce/rmsnorm_math.h), bitwise the same on every rank and every run, whatever the
  // block count or the buffers' alignment. One op on the one-shot path at every size (each rank
  // reads every input whole; CallOptions::two_shot_min_bytes is ignored). Inputs as the
  // AllReduce's (memory the peers can read); residual, weight and the outputs are read and
  // written by their own rank only. The call styles, contracts, errors and capture are the
  // AllReduce's; errors beside them: InvalidArgument for rows < 0, hidden outside 1..2^24, eps
  // not positive and finite, an input in place in its output (residual_out == residual is the
  // in-place form), a null or misaligned weight where there are rows, or a weight that overlaps
  // an output. Ranks that pass different rows, hidden or eps, or call another collective at the
  // same op, get InvalidArgument from the device. After a failed op both outputs hold undefined
  // values, so a residual updated in place is lost with it: keep a copy where a step must be
  // retried.
  absl::StatusOr<CollectiveHandle> AllReduceRmsNorm(const AllReduceRmsNormShape& shape,
                                                    absl::Span<const RmsNormBuffers> buffers,
                                                    const CallOptions& call = {});
  absl::Status AllReduceRmsNormAndWait(const AllReduceRmsNormShape& shape,
                                       absl::Span<const RmsNormBuffers> buffers,
                                       absl::Duration wait_timeout, const CallOptions& call = {});
  absl::Status AllReduceRmsNormRank(int rank, const AllReduceRmsNormShape& shape,
                                    const RmsNormBuffers& buffers, const CallOptions& call = {});

  // Waits until every rank's last op enqueued through this Runtime has finished (bounded by
  // `timeout`) and returns the first device error, if any; DeadlineExceeded naming the busy
  // ranks if `timeout` passed. A device error with ranks still running names them too, and
  // which outputs they may still store into (a rank that started storing into a peer's output
  // before that peer gave the op up; named after it ended too, and for graph replays, which no
  // event of the Runtime follows); no other rank stores into an output of a failed op once its
  // owner gave the op up (kernels/PROTOCOL.md, store claims). On the copy engines, the
  // copies already queued for a failed op cannot be recalled: a rank's stream goes on past the
  // op once they have landed, or after one more timeout (kernels/PROTOCOL.md, the copy-engine
  // protocol's errors). Replays of captured CUDA graphs are not calls through the Runtime:
  // synchronise their streams yourself. Must not run concurrently with calls.
  absl::Status Synchronize(absl::Duration timeout);

  // The sticky error state: OK, or the error that stopped the Runtime, including device errors
  // recorded since the last call (it reads the error records); an error names the peers that
  // had begun storing into an output when its owner gave the op up (they may store there until
  // their part of the op ends), as Synchronize does. Thread-safe.
  absl::Status status();

  // Stops the Runtime with `error`, as a per-rank call that the Runtime refuses does: `error`
  // becomes the sticky error (status() and Synchronize return it; calls fail with
  // FailedPrecondition naming it until Reset), and every wait on the GPUs of an op in flight
  // ends at once, so that no rank's later call pairs with an op its peers began. For a binding
  // that refuses a rank's per-rank call before it reaches the Runtime (the C API, Python), and
  // for a server that gives up a step. Returns `error`; InvalidArgument for an OK `error`.
  // Where the Runtime had stopped already, its first error stays the one reported.
  // Thread-safe.
  absl::Status Stop(const absl::Status& error);

  // Makes the Runtime usable after an error: waits (bounded by `timeout`) until no kernel
  // launched through this Runtime runs, then clears every GPU's signal memory, staging, error
  // record and op numbers, and advances generation() by one. Returns DeadlineExceeded (and
  // stays in error, the generation unchanged) if some rank is still busy after `timeout`; a CUDA
  // error while clearing is returned and leaves the Runtime stopped (even one that was not)
  // until a Reset succeeds. Graph replays must have finished (synchronise their streams
  // first). Must not run concurrently with calls.
  absl::Status Reset(absl::Duration timeout);

 private:
  struct Rank;
  friend class CollectiveHandle;

  // `copy_engines_refused`: why the copy engines cannot serve the placement (empty: they can).
  Runtime(RuntimeOptions options, std::unique_ptr<const RankPlacement> placement,
          Transport transport, std::string copy_engines_refused);
  absl::Status Initialize();
  // OK, or the error that calls must return now (records a newly found device error).
  absl::Status CheckUsable();
  // Host checks of rank `rank`'s buffers and stream for its call resolved as `resolved`
  // (caching what CUDA said about them).
  absl::Status ValidateCall(const CollectiveOp& op, int rank, const RankBuffers& buffers,
                            const ResolvedCall& resolved);
  // A buffer of a rank that passed the CUDA checks (runtime.cc).
  struct CheckedBuffer;
  // InvalidArgument unless the `bytes` bytes at `pointer` (a rank's `name`: "input" or
  // "output") are device memory of rank `rank`'s GPU, or managed memory unless `peers_access`;
  // with `peers_access`, opens them to the peers (EnsurePeerWritable). Skipped where `*checked`
  // already covers them and the peers' access to them still holds (PeerGrantHolds); records
  // them there.
  absl::Status CheckRankMemory(int rank, const void* pointer, int64_t bytes, const char* name,
                               bool peers_access, CheckedBuffer* checked);
  // Validates `call` and resolves it for rank `rank` on `buffers`, whose stream is capturing or
  // not.
  absl::StatusOr<ResolvedCall> Resolve(int rank, const CollectiveOp& op, const RankBuffers& buffers,
                                       const CallOptions& call, bool capturing) const;
  // The host side of a per-rank call before its launch: the stream's capture status, the
  // resolution and the buffer checks.
  absl::StatusOr<ResolvedCall> PrepareRankCall(int rank, const CollectiveOp& op,
                                               const RankBuffers& buffers,
                                               const CallOptions& call);
  // What every per-rank call checks first: the rank is in range (InvalidArgument) and the
  // Runtime usable.
  absl::Status AdmitRankCall(int rank);
  // A per-rank call with `call` whose shape was rejected with `error`: the peers may already have
  // launched the op, so the Runtime stops and ends their waits on the devices (AbandonDevices).
  // Returns `error`, or AdmitRankCall's error, or CheckGeneration's for a call of an older reset
  // generation (which belongs to no op of this one: nothing stops).
  absl::Status RejectRankCall(int rank, const CallOptions& call, const absl::Status& error);
  // Enqueues rank `rank`'s part of the op (a kernel, or copy-engine copies) and, outside
  // capture, records the rank's completion; the caller's current device must be the rank's.
  // A failure stops the Runtime and ends the peers' waits for this rank (AbandonDevices).
  // Records the call in the ledger first, and refuses it (InvalidArgument, the Runtime stopped,
  // the devices' waits abandoned) when a peer took the other kind of path for it.
  absl::Status Launch(int rank, const CollectiveOp& op, const RankBuffers& buffers,
                      const ResolvedCall& call);
  // Writes call `number` of rank `rank` to the debug log (ltx/runtime/debug_log.h): every call at
  // TRACE, each distinct call of the rank once at INFO.
  void LogCall(int rank, uint64_t number, const CollectiveOp& op, const ResolvedCall& call);
  // Sets the abort flag of every wait on the devices (kernels of both transports), and ends
  // every capture's wait in the capture exchange with `error`.
  void AbandonDevices(const absl::Status& error);
  // The coordinated call of any collective: checks and resolves every rank, then has each
  // GPU's thread launch its rank.
  absl::StatusOr<CollectiveHandle> Coordinate(const CollectiveOp& op,
                                              absl::Span<const RankBuffers> buffers,
                                              const CallOptions& call);
  // The per-rank call of any collective.
  absl::Status RankCall(int rank, const CollectiveOp& op, const RankBuffers& buffers,
                        const CallOptions& call);
  // Polls `events` (one per rank, null = nothing to wait for) until all completed or the
  // deadline; then reports device errors, naming the ranks still running and which outputs
  // they may still store into.
  absl::Status WaitForEvents(absl::Span<const cudaEvent_t> events, absl::Duration timeout,
                             absl::string_view what);
  // The ranks whose store claims a GPU that gave an op up could not revoke (read from every
  // rank's error record when called): "; they may still be storing (rank 1 into rank 0's
  // output): …" for those of `busy`, "; peers had begun storing … (rank 2 into rank 0's
  // output): …" for the others (finished, or their end unknown: graph replays); "" if none.
  std::string StoringPeersNote(const std::vector<int>& busy) const;
  // Makes `error` the sticky error unless one is already set.
  void StopWith(const absl::Status& error);
  // Returns the first device error recorded on any rank, and makes it sticky.
  absl::Status CollectDeviceErrors();

  const RuntimeOptions options_;
  // The GPU of each rank, and which ranks share one.
  const std::unique_ptr<const RankPlacement> placement_;
  const Transport transport_;
  // Why the copy engines cannot serve the placement (CopyEnginesFitQueues; empty: they can).
  const std::string copy_engines_refused_;
  std::vector<std::unique_ptr<Rank>> ranks_;
  // Kernel calls (Protocol::kDirect and kOneTrip); null on the copy-engine transport.
  std::unique_ptr<PeerStoreTransport> peer_stores_;
  // Calls of Protocol::kCopyEngine, and every call on the copy-engine transport.
  std::unique_ptr<CopyEngineTransport> copy_engines_;
  // Every rank's latest call number and path.
  const std::unique_ptr<CallLedger> ledger_;
  // The streams of the ranks that share a GPU: one per rank for each op, and how many each used.
  const std::unique_ptr<RankStreams> rank_streams_;
  // The output addresses of copy-engine calls captured into CUDA graphs (peer-store transport).
  const std::unique_ptr<CaptureExchange> capture_exchange_;
  // Successful Resets so far.
  std::atomic<uint64_t> generation_{0};

  std::atomic<bool> failed_{false};
  // Held by Stop while it stops and abandons, and by Reset while it clears (before mu_).
  absl::Mutex stop_mu_;
  mutable absl::Mutex mu_;
  absl::Status failure_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ltx

#endif  // LTX_RUNTIME_H_
