// The Ulysses all-to-all with FP8 on the wire (AllToAllShape::wire): two kernels per rank.
// The first is the direct protocol (kernels/protocols/direct_protocol.cuh) whose stores encode:
// every row of a piece for a peer travels as an FP8 run (kernels/wire/fp8_run.h: a head vector's
// e4m3 codes with one fp32 scale, kernels/wire/fp8_rows.h) written into the row's own bytes of
// the peer's output, while the rank's own piece is copied exactly. The second, after the first
// has ended on the rank's stream (so every peer has stored its runs into this rank's outputs),
// decodes each received run in place, one warp per run; it waits for no peer.
#ifndef KERNELS_ALLTOALL_ALLTOALL_FP8_KERNEL_H_
#define KERNELS_ALLTOALL_ALLTOALL_FP8_KERNEL_H_

#include <cuda_runtime_api.h>

#include "kernels/alltoall/alltoall_kernel.h"

namespace ltx {

// Threads per block of both kernels.
inline constexpr int kAllToAllFp8Threads = 256;

// Enqueues both kernels of one FP8 all-to-all of `params` (dtype bf16 or fp16,
// `vector_elements` the head size, every run fitting: Fp8RunFits) on `stream`, `blocks` blocks
// each. cudaErrorInvalidValue for another dtype, blocks < 1 or a vector size that does not fit,
// before anything is enqueued; else the launch's error. Thread-safe.
cudaError_t LaunchAllToAllFp8(const AllToAllKernelParams& params, int blocks,
                              cudaStream_t stream);

// Loads both kernels of every dtype and lowers *resident_blocks_per_sm to the fewest blocks of
// any of them one SM keeps resident (kernels/device/kernel_residency.cuh). Thread-safe.
cudaError_t LoadAllToAllFp8Kernels(int* resident_blocks_per_sm);

}  // namespace ltx

#endif  // KERNELS_ALLTOALL_ALLTOALL_FP8_KERNEL_H_
