// The pattern kernels: a byte hash for inputs, and a check of gathered outputs.
#include "tests/pattern_kernels.h"

namespace ltx {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 264;

__device__ uint8_t PatternByte(int source, uint64_t op, int64_t index) {
  uint64_t x = (static_cast<uint64_t>(source) << 56) ^ (op * 0x9e3779b97f4a7c15ull) ^
               static_cast<uint64_t>(index);
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return static_cast<uint8_t>(x);
}

__global__ void FillPatternKernel(PatternShape shape, int rank, uint8_t* input) {
  const int64_t bytes = shape.batch * shape.token_counts[rank] * shape.row_bytes;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < bytes;
       i += int64_t{gridDim.x} * blockDim.x) {
    input[i] = PatternByte(rank, shape.op, i);
  }
}

__global__ void CheckPatternKernel(PatternShape shape, const uint8_t* output,
                                   PatternMismatches* mismatches) {
  int64_t total = 0;
  for (int r = 0; r < shape.world_size; ++r) total += shape.token_counts[r];
  const int64_t slice = total * shape.row_bytes;
  const int64_t bytes = shape.batch * slice;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < bytes;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t batch = i / slice;
    const int64_t token = (i % slice) / shape.row_bytes;
    const int64_t byte = i % shape.row_bytes;
    int source = 0;
    int64_t first = 0;
    while (token >= first + shape.token_counts[source]) first += shape.token_counts[source++];
    const int64_t index =
        (batch * shape.token_counts[source] + (token - first)) * shape.row_bytes + byte;
    if (output[i] != PatternByte(source, shape.op, index)) {
      if (atomicAdd(&mismatches->count, 1ull) == 0ull) {
        mismatches->first_offset = static_cast<unsigned long long>(i);
        mismatches->first_op = shape.op;
      }
    }
  }
}

int Blocks(int64_t bytes) {
  const int64_t blocks = (bytes + kThreads - 1) / kThreads;
  return blocks < 1 ? 1 : (blocks > kMaxBlocks ? kMaxBlocks : static_cast<int>(blocks));
}

}  // namespace

cudaError_t LaunchFillPattern(const PatternShape& shape, int rank, void* input,
                              cudaStream_t stream) {
  const int64_t bytes = shape.batch * shape.token_counts[rank] * shape.row_bytes;
  if (bytes == 0) return cudaSuccess;
  FillPatternKernel<<<Blocks(bytes), kThreads, 0, stream>>>(shape, rank,
                                                            static_cast<uint8_t*>(input));
  return cudaGetLastError();
}

cudaError_t LaunchCheckPattern(const PatternShape& shape, const void* output,
                               PatternMismatches* mismatches, cudaStream_t stream) {
  int64_t total = 0;
  for (int r = 0; r < shape.world_size; ++r) total += shape.token_counts[r];
  const int64_t bytes = shape.batch * total * shape.row_bytes;
  if (bytes == 0) return cudaSuccess;
  CheckPatternKernel<<<Blocks(bytes), kThreads, 0, stream>>>(
      shape, static_cast<const uint8_t*>(output), mismatches);
  return cudaGetLastError();
}

}  // namespace ltx
