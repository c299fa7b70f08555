// The hand-over kernels of tests/stream_handoff_kernels.h.
#include "tests/stream_handoff_kernels.h"

#include "kernels/device/memory_order.cuh"

namespace ltx {
namespace {

__global__ void AwaitFlagKernel(const uint64_t* flag, uint64_t value, uint64_t deadline_ns,
                                uint32_t* seen) {
  const uint64_t start = GlobalTimerNs();
  bool read = false;
  while (!(read = LoadAcquireSystem(flag) == value) && GlobalTimerNs() - start < deadline_ns) {
  }
  *seen = read ? 1u : 0u;
}

__global__ void SetFlagKernel(uint64_t* flag, uint64_t value) { StoreReleaseSystem(flag, value); }

}  // namespace

cudaError_t LaunchAwaitFlag(const uint64_t* flag, uint64_t value, uint64_t deadline_ns,
                            uint32_t* seen, cudaStream_t stream) {
  AwaitFlagKernel<<<1, 1, 0, stream>>>(flag, value, deadline_ns, seen);
  return cudaGetLastError();
}

cudaError_t LaunchSetFlag(uint64_t* flag, uint64_t value, cudaStream_t stream) {
  SetFlagKernel<<<1, 1, 0, stream>>>(flag, value);
  return cudaGetLastError();
}

}  // namespace ltx
