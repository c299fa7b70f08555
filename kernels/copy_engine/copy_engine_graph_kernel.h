// Host interface of the two kernels around a copy-engine call captured into a CUDA graph on the
// peer-store transport (kernels/PROTOCOL.md, "Copy engines in CUDA graphs"): the direct
// protocol with its stores done by memcpy nodes. The entry kernel runs the direct protocol's
// entry and opens the graph's conditional body of copies only when every target agreed; the
// exit kernel runs the direct protocol's exit barrier after the body.
#ifndef KERNELS_COPY_ENGINE_COPY_ENGINE_GRAPH_KERNEL_H_
#define KERNELS_COPY_ENGINE_COPY_ENGINE_GRAPH_KERNEL_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/wire/collective.h"
#include "kernels/wire/entry_announcement.h"
#include "kernels/wire/error_record.h"
#include "kernels/wire/host_device.h"
#include "kernels/wire/signal_layout.h"

namespace ltx {

// What both kernels of one rank's captured call carry (replayed unchanged: the op number lives
// in the signal region, as for the direct kernel).
struct CopyEngineGraphParams {
  // Every rank's signal region, indexed by rank; peers' entries are peer pointers.
  SignalRegion* signals[kMaxWorldSize] = {};
  // This rank's error record: device pointer of host-mapped pinned memory.
  DeviceErrorRecord* error_record = nullptr;
  int32_t rank = 0;
  int32_t world_size = 0;
  uint64_t timeout_ns = 0;  // How long one wait may last.
  // What this rank announces (protocol kCopyEngine, the capture's reset generation).
  EntryAnnouncement announcement = {};
  // Every rank's output address as exchanged at capture: where the body's copies store.
  uint64_t outputs[kMaxWorldSize] = {};
  // The condition of the graph's body of copies (reset to 0 at every launch of the graph);
  // `has_body` is 0 when the call stores nothing (an empty shard: no body was added).
  cudaGraphConditionalHandle body = 0;
  int32_t has_body = 0;
  // What the op is, for its error record (CollectiveOf).
  Collective collective = Collective::kAllGather;
};

// The collective of a captured copy-engine call: it serves both.
LTX_HOST_DEVICE inline Collective CollectiveOf(const CopyEngineGraphParams& params) {
  return params.collective;
}

// Threads per block of both kernels (one block each): thread t serves rank t.
inline constexpr int kCopyEngineGraphThreads = 32;

// Enqueues the entry kernel on `stream`: the direct protocol's entry for op last_op + 1
// (announce to every rank, claim the stores into every peer's output, wait for every rank's
// announcement with the deadline and compare it, FindMismatch), and a check that each rank's
// announced output is `outputs[rank]` (else OutputMismatchRecord). Sets the body's condition to
// 1 only when every rank agreed and every claim is still held after every wait; otherwise
// abandons the op (its error recorded), so that the exit kernel stores no exit flags and the
// peers give the op up too. Inert on an abandoned GPU. Returns the launch error. Thread-safe;
// the caller's current device must be the stream's.
cudaError_t LaunchCopyEngineGraphEntry(const CopyEngineGraphParams& params, cudaStream_t stream);

// Enqueues the exit kernel on `stream` (after the body): the direct protocol's ExitBarrier (exit
// flags to every peer unless the op was abandoned, each peer's exit flag awaited with the
// deadline, claims revoked if abandoned, last_op advanced). Returns the launch error.
cudaError_t LaunchCopyEngineGraphExit(const CopyEngineGraphParams& params, cudaStream_t stream);

// Loads both kernels onto the current device and lowers *resident_blocks_per_sm (see
// LoadAllGatherKernel). Returns the CUDA error.
cudaError_t LoadCopyEngineGraphKernels(int* resident_blocks_per_sm);

}  // namespace ltx

#endif  // KERNELS_COPY_ENGINE_COPY_ENGINE_GRAPH_KERNEL_H_
