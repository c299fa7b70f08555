// Loading a kernel onto the current device and asking how many of its blocks one SM keeps
// resident: what the Runtime budgets blocks with when ranks share a GPU (kernels/PROTOCOL.md,
// "Ranks that share a GPU").
#ifndef KERNELS_DEVICE_KERNEL_RESIDENCY_CUH_
#define KERNELS_DEVICE_KERNEL_RESIDENCY_CUH_

#include <cuda_runtime_api.h>

namespace ltx {

// Loads `kernel` onto the current device (so that no first call waits for the device to be
// idle under CUDA's lazy loading) and lowers *resident_blocks_per_sm to how many of its blocks
// of `threads` threads (no dynamic shared memory) one SM keeps resident. Returns the CUDA error;
// *resident_blocks_per_sm is unchanged then.
template <typename... Args>
cudaError_t LoadKernel(void (*kernel)(Args...), int threads, int* resident_blocks_per_sm) {
  int blocks = 0;
  const cudaError_t error = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &blocks, reinterpret_cast<const void*>(kernel), threads, 0);
  if (error != cudaSuccess) return error;
  if (blocks < *resident_blocks_per_sm) *resident_blocks_per_sm = blocks;
  return cudaSuccess;
}

}  // namespace ltx

#endif  // KERNELS_DEVICE_KERNEL_RESIDENCY_CUH_
