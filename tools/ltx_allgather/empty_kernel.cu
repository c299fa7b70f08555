// The empty kernel of the launch floor.
#include "tools/ltx_allgather/empty_kernel.h"

namespace ltx {
namespace {

__global__ void EmptyKernel() {}

}  // namespace

cudaError_t LaunchEmptyKernel(int blocks, cudaStream_t stream) {
  EmptyKernel<<<blocks, kEmptyKernelThreads, 0, stream>>>();
  return cudaGetLastError();
}

}  // namespace ltx
