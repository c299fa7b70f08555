// The busy kernel: one thread that spins on %globaltimer.
#include "tests/busy_kernel.h"

namespace ltx {
namespace {

__device__ uint64_t GlobalTimer() {
  uint64_t now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  return now;
}

__global__ void BusyKernel(uint64_t nanoseconds) {
  const uint64_t start = GlobalTimer();
  while (GlobalTimer() - start < nanoseconds) {
  }
}

}  // namespace

cudaError_t LaunchBusyKernel(uint64_t nanoseconds, cudaStream_t stream) {
  BusyKernel<<<1, 1, 0, stream>>>(nanoseconds);
  return cudaGetLastError();
}

}  // namespace ltx
