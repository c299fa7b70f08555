// Host interface of the copy-engine transport's exit kernel: one thread that holds a rank's
// stream until every copy of the op into and out of the rank's buffers has landed, with a
// deadline. Protocol: kernels/PROTOCOL.md (the copy-engine protocol).
#ifndef KERNELS_COPY_ENGINE_COPY_ENGINE_EXIT_KERNEL_H_
#define KERNELS_COPY_ENGINE_COPY_ENGINE_EXIT_KERNEL_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/wire/collective.h"
#include "kernels/wire/copy_engine_signals.h"

namespace ltx {

// What one rank's exit kernel waits for.
struct CopyEngineExitParams {
  // This rank's signals in its GPU's memory: the abort flag and the error claim.
  CopyEngineDeviceSignals* signals = nullptr;
  // This rank's completion flags: `&signals->flags` with peer access, else in host-mapped
  // memory.
  const CopyEngineFlags* flags = nullptr;
  // Which of this op's copies into and out of this rank are queued (host-mapped,
  // CopyEngineHostSignals::queued).
  const CopyEngineFlags* queued = nullptr;
  // This rank's error record (device pointer of host-mapped memory).
  DeviceErrorRecord* record = nullptr;
  int32_t rank = 0;
  int32_t world_size = 0;
  uint64_t op = 0;          // The op number the flags must reach.
  uint64_t timeout_ns = 0;  // How long one wait may last.
  Collective collective = Collective::kAllGather;  // What the op is, for its error record.
};

// Enqueues the exit kernel of `params.rank` on `stream`: it returns once, for every peer s,
// `flags->received[s]` (s's part is in this rank's output) and `flags->sent[s]`
// (this rank's part is in s's output, so nothing reads its input any more) show `op`, read
// with acquire loads at system scope. A wait that lasts longer than `timeout_ns` sets this
// rank's abort flag and records a timeout (phase exit) in its error record. Once the op is
// given up (that timeout, or the abort flag set before or during the waits) the kernel stops
// waiting for copies that were never queued, but still waits, up to `timeout_ns` more, for
// each flag whose copy `queued` shows queued for `op`, so that no copy of the op lands in this
// rank's output or reads its input after its stream went on; a peer whose copies are still
// missing then is not waited for again by this rank's later exit kernels, until Reset
// (CopyEngineDeviceSignals::stuck_peers). Returns the launch error.
// Thread-safe; the caller's current device must be the stream's.
cudaError_t LaunchCopyEngineExit(const CopyEngineExitParams& params, cudaStream_t stream);

// Loads the exit kernel onto the current device (see LoadAllGatherKernel: on either transport,
// a first launch must not wait for the device to be idle, which a GPU whose ranks wait for
// each other is not) and lowers *resident_blocks_per_sm. Returns the CUDA error.
cudaError_t LoadCopyEngineExitKernel(int* resident_blocks_per_sm);

}  // namespace ltx

#endif  // KERNELS_COPY_ENGINE_COPY_ENGINE_EXIT_KERNEL_H_
