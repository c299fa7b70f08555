// AllReduceRmsNormShape and RmsNormBuffers: the AllReduce with the fused residual-add + RMSNorm
// epilogue of a decoder layer, as one op.
#ifndef LTX_ALLREDUCE_RMSNORM_H_
#define LTX_ALLREDUCE_RMSNORM_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "ltx/data_type.h"

namespace ltx {

// The same on every rank. Every rank's input is `rows` rows of `hidden` elements of `dtype`
// (bf16, fp16 or fp32), summed over the ranks as AllReduce with Reduction::kSum sums them
// (ltx/reduction.h), then, per row:
//   residual_out = sum + residual
//   output = residual_out / sqrt(mean(residual_out^2) + eps) * weight
// in fp32 in one fixed order, rounded to the dtype, so every rank and every run gets the same
// bits (kernels/reduce/rmsnorm_math.h has the order, and the host reference of the tests the
// same functions).
struct AllReduceRmsNormShape {
  DataType dtype = DataType::kBFloat16;
  int64_t rows = 0;    // Tokens, >= 0.
  int64_t hidden = 0;  // Elements per row, 1 .. 2^24.
  float eps = 1e-6f;   // Positive and finite.
};

// One rank's buffers and stream, each aligned to the element size: `input` (rows x hidden, which
// the peers read: device memory of the rank's GPU that they can read, as the AllReduce's), and,
// read and written by the rank alone (device memory of its GPU, or managed memory), `residual`
// (rows x hidden), `weight` (hidden) and the outputs `residual_out` and `output` (rows x hidden
// each). `residual_out` may
// be `residual` itself (the residual updated in place); no other buffer may overlap an output.
// All may be null when rows is 0.
struct RmsNormBuffers {
  const void* input = nullptr;
  void* output = nullptr;
  const void* residual = nullptr;
  void* residual_out = nullptr;
  const void* weight = nullptr;
  cudaStream_t stream = nullptr;
};

}  // namespace ltx

#endif  // LTX_ALLREDUCE_RMSNORM_H_
