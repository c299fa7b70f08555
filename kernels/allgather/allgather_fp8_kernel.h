// Host interface of the AllGather with FP8 on the wire (AllGatherShape::wire =
// WireFormat::kFp8E4M3): where a rank's FP8 rows lie while they travel, and the launcher of its
// three kernels. Every rank, on its stream:
//   1. quantises its own rows (kernels/wire/fp8_rows.h) into its own slot of its own output
//      (kernels/wire/fp8_slot.h);
//   2. runs the pull protocol (kernels/protocols/pull_protocol.cuh), announcing its output: it
//      reads every peer's codes and scales from the peer's slot and writes their decoded values
//      into its output at the peer's rows; the exit barrier says that every peer has read this
//      rank's slot;
//   3. copies its own rows, exactly, over its slot.
// Stream order keeps a rank's next op after every peer's reads of this one. Protocol:
// kernels/PROTOCOL.md, "FP8 rows on the wire".
#ifndef KERNELS_ALLGATHER_ALLGATHER_FP8_KERNEL_H_
#define KERNELS_ALLGATHER_ALLGATHER_FP8_KERNEL_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/allgather/allgather_kernel.h"
#include "kernels/wire/host_device.h"

namespace ltx {

// Threads per block of the three kernels.
inline constexpr int kAllGatherFp8Threads = 1024;

// Elements one warp quantises or decodes at once: 8 per lane and unit, 4 units in flight.
inline constexpr int64_t kAllGatherFp8WarpElements = 32 * 8 * 4;

// Warps that quantise one row of `hidden` elements together (its team: they share the row's
// largest magnitude through shared memory), and the most pieces of kAllGatherFp8WarpElements a
// row is decoded in, each by one warp: ceil(hidden / kAllGatherFp8WarpElements) rounded up to a
// power of two, at most a block's 32 warps. The launcher sizes its grid by it.
LTX_HOST_DEVICE constexpr int AllGatherFp8WarpsPerRow(int64_t hidden) {
  int warps = 1;
  while (warps < kAllGatherFp8Threads / 32 &&
         warps * kAllGatherFp8WarpElements < hidden) {
    warps *= 2;
  }
  return warps;
}

// Enqueues the three kernels of one rank's FP8 AllGather on `stream` with `blocks` thread
// blocks each (>= 1). params.dtype must be bf16 or fp16 (kReduceBFloat16, kReduceFloat16) and
// the row at least kFp8MinHidden elements: cudaErrorInvalidValue otherwise. Returns the first
// launch error. Thread-safe; the caller's current device must be the stream's device.
cudaError_t LaunchAllGatherFp8(const AllGatherKernelParams& params, int blocks,
                               cudaStream_t stream);

// Loads the three kernels (each dtype's) onto the current device and lowers
// *resident_blocks_per_sm to the fewest blocks of them that one SM keeps resident, as
// LoadAllGatherKernel does. Returns the CUDA error.
cudaError_t LoadAllGatherFp8Kernels(int* resident_blocks_per_sm);

}  // namespace ltx

#endif  // KERNELS_ALLGATHER_ALLGATHER_FP8_KERNEL_H_
