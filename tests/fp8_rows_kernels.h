// Kernels that run the FP8 wire's pair conversions (kernels/wire/fp8_rows.h) on the GPU over
// arrays, so that a test can compare each result with the host's: a GPU may convert with its own
// instructions, the host reference never does.
#ifndef LTX_TESTS_FP8_ROWS_KERNELS_H_
#define LTX_TESTS_FP8_ROWS_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace ltx {

// codes[i] = E4M3PairFromFloats(values[2 i], values[2 i + 1]) for i < pairs, on `stream`.
// Device pointers.
cudaError_t LaunchE4M3PairFromFloats(const float* values, uint16_t* codes, int64_t pairs,
                                     cudaStream_t stream);

// Every pair of codes c in 0..65535 (bits 0-7 the low code): values[2 c] and values[2 c + 1] the
// bits of E4M3PairToFloats(c), bf16[2 c], bf16[2 c + 1] their Fp8DecodeValue with `scale` as
// bf16, fp16 the same as fp16, on `stream`. Device pointers of 2 * 65536 elements.
cudaError_t LaunchE4M3PairDecode(float scale, uint32_t* values, uint16_t* bf16, uint16_t* fp16,
                                 cudaStream_t stream);

}  // namespace ltx

#endif  // LTX_TESTS_FP8_ROWS_KERNELS_H_
