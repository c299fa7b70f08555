// The FP8 wire's pair conversions over arrays on the GPU (tests/fp8_rows_kernels.h).
#include "tests/fp8_rows_kernels.h"

#include "kernels/reduce/reduce_math.h"
#include "kernels/wire/fp8_rows.h"

namespace ltx {
namespace {

constexpr int kThreads = 256;
constexpr int kPairs = 1 << 16;

__global__ void E4M3PairFromFloatsKernel(const float* values, uint16_t* codes, int64_t pairs) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < pairs;
       i += int64_t{gridDim.x} * blockDim.x) {
    codes[i] = static_cast<uint16_t>(E4M3PairFromFloats(values[2 * i], values[2 * i + 1]));
  }
}

__global__ void E4M3PairDecodeKernel(float scale, uint32_t* values, uint16_t* bf16,
                                     uint16_t* fp16) {
  const int pair = blockIdx.x * blockDim.x + threadIdx.x;
  if (pair >= kPairs) return;
  float low, high;
  E4M3PairToFloats(static_cast<uint32_t>(pair), &low, &high);
  values[2 * pair] = BitsOfFloat(low);
  values[2 * pair + 1] = BitsOfFloat(high);
  bf16[2 * pair] = Fp8DecodeValue<BFloat16Element>(low, scale);
  bf16[2 * pair + 1] = Fp8DecodeValue<BFloat16Element>(high, scale);
  fp16[2 * pair] = Fp8DecodeValue<Float16Element>(low, scale);
  fp16[2 * pair + 1] = Fp8DecodeValue<Float16Element>(high, scale);
}

}  // namespace

cudaError_t LaunchE4M3PairFromFloats(const float* values, uint16_t* codes, int64_t pairs,
                                     cudaStream_t stream) {
  if (pairs <= 0) return cudaSuccess;
  const int64_t blocks = (pairs + kThreads - 1) / kThreads;
  E4M3PairFromFloatsKernel<<<static_cast<int>(blocks < 4096 ? blocks : 4096), kThreads, 0,
                             stream>>>(values, codes, pairs);
  return cudaGetLastError();
}

cudaError_t LaunchE4M3PairDecode(float scale, uint32_t* values, uint16_t* bf16, uint16_t* fp16,
                                 cudaStream_t stream) {
  E4M3PairDecodeKernel<<<kPairs / kThreads, kThreads, 0, stream>>>(scale, values, bf16, fp16);
  return cudaGetLastError();
}

}  // namespace ltx
