// The host reference of FP8 on the wire (kernels/wire/fp8_rows.h): what a row of bf16 or fp16
// becomes when it travels as e4m3 codes with one fp32 scale, computed as the kernels compute it
// (the same bits), for the tests' and the benchmarks' expected outputs.
#ifndef LTX_TOOLS_TESTING_FP8_REFERENCE_H_
#define LTX_TOOLS_TESTING_FP8_REFERENCE_H_

#include <cstdint>

#include "ltx/data_type.h"

namespace ltx {

// Writes into `out` the `hidden` elements of `dtype` (kBFloat16 or kFloat16; any other dtype
// copies the row unchanged) that the receiver of row `row` decodes. `row` and `out` may be the
// same row; neither needs any alignment. Thread-safe.
void Fp8WireRow(DataType dtype, const void* row, int64_t hidden, void* out);

}  // namespace ltx

#endif  // LTX_TOOLS_TESTING_FP8_REFERENCE_H_
