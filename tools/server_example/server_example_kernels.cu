// Stand-in compute kernels of the server example.
#include "tools/server_example/server_example_kernels.h"

namespace ltx {
namespace {

constexpr int kThreads = 256;

__global__ void FillActivations(uint16_t* out, int64_t count, int rank, const uint64_t* step) {
  const uint64_t s = *step;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x) {
    out[i] = ExampleActivation(rank, s, i);
  }
}

__global__ void Checksum(const uint16_t* values, int64_t count, unsigned long long* sum) {
  unsigned long long local = 0;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x) {
    local += ChecksumTerm(i, values[i]);
  }
  atomicAdd(sum, local);
}

int GridFor(int64_t count) {
  const int64_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 1 ? 1 : (blocks > 1024 ? 1024 : blocks));
}

}  // namespace

cudaError_t LaunchFillActivations(uint16_t* out, int64_t count, int rank, const uint64_t* step,
                                  cudaStream_t stream) {
  FillActivations<<<GridFor(count), kThreads, 0, stream>>>(out, count, rank, step);
  return cudaGetLastError();
}

cudaError_t LaunchChecksum(const uint16_t* values, int64_t count, unsigned long long* sum,
                           cudaStream_t stream) {
  Checksum<<<GridFor(count), kThreads, 0, stream>>>(values, count, sum);
  return cudaGetLastError();
}

}  // namespace ltx
