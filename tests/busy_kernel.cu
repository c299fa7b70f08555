// The busy kernels: threads that spin on %globaltimer.
#include "tests/busy_kernel.h"

namespace ltx {
namespace {

__device__ void Spin(uint64_t nanoseconds) {
  uint64_t start;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  for (uint64_t now = start; now - start < nanoseconds;) {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  }
}

__global__ void BusyKernel(uint64_t nanoseconds) { Spin(nanoseconds); }

__global__ void BusySmKernel(uint64_t nanoseconds) {
  extern __shared__ uint8_t held[];
  if (threadIdx.x == 0) held[0] = 1;
  Spin(nanoseconds);
}

}  // namespace

cudaError_t LaunchBusyKernel(uint64_t nanoseconds, cudaStream_t stream) {
  BusyKernel<<<1, 1, 0, stream>>>(nanoseconds);
  return cudaGetLastError();
}

cudaError_t LaunchBusySms(uint64_t nanoseconds, int blocks, cudaStream_t stream) {
  int device = 0;
  cudaError_t error = cudaGetDevice(&device);
  int shared_per_sm = 0;
  if (error == cudaSuccess) {
    error = cudaDeviceGetAttribute(&shared_per_sm, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  }
  if (error == cudaSuccess) {
    error = cudaFuncSetAttribute(BusySmKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 shared_per_sm);
  }
  if (error != cudaSuccess) return error;
  BusySmKernel<<<blocks, 1024, shared_per_sm, stream>>>(nanoseconds);
  return cudaGetLastError();
}

}  // namespace ltx
