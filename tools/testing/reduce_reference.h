// The host reference of the reductions (AllReduce, ReduceScatter, and the AllReduce with the
// fused RMSNorm epilogue) that the GPU tests compare
// every rank's output with, bit for bit: computed from the shape's definition (rows of every
// rank's input), with the kernels' own arithmetic and order (kernels/reduce/reduce_math.h:
// ranks combined 0, 1, ..., in fp32, one rounding at the end).
#ifndef LTX_TOOLS_TESTING_REDUCE_REFERENCE_H_
#define LTX_TOOLS_TESTING_REDUCE_REFERENCE_H_

#include <cstdint>
#include <random>
#include <vector>

#include "ltx/collectives/reduce_layout.h"
#include "ltx/data_type.h"

namespace ltx {

// `count` random values of `dtype` (bf16, fp16 or fp32) as bytes, never zero: magnitudes in
// [0.5, 4) with a random sign and a full mantissa, so that the order of a reduction shows in
// its bits. Thread-compatible (draws from `random`).
std::vector<uint8_t> RandomReduceValues(DataType dtype, int64_t count, std::mt19937_64& random);

// The bytes of rank `rank`'s output for a reduction of `layout` whose rank s's input is
// `inputs[s]` (InputBytes() bytes each): for each batch slice b and each of the rank's rows
// [first_rows[rank], first_rows[rank] + rows[rank]), the reduction over the ranks of that row of
// slice b, in the output's order. Thread-safe (pure).
std::vector<uint8_t> ReduceReference(const ReduceLayout& layout, int rank,
                                     const std::vector<std::vector<uint8_t>>& inputs);

// The outputs of the AllReduce with the fused RMSNorm epilogue (ComputeAllReduceRmsNormLayout),
// every rank's the same.
struct RmsNormOutputs {
  std::vector<uint8_t> residual_out;
  std::vector<uint8_t> output;
};

// The outputs of the epilogue of `layout` for rank s's input `inputs[s]`, the `residual` (rows
// x hidden) and the `weight` (hidden elements): the sum of ReduceReference, then row by row the
// order of kernels/reduce/rmsnorm_math.h (each lane's squares in turn, the lanes' butterfly).
// Thread-safe (pure).
RmsNormOutputs RmsNormReference(const ReduceLayout& layout,
                                const std::vector<std::vector<uint8_t>>& inputs,
                                const std::vector<uint8_t>& residual,
                                const std::vector<uint8_t>& weight);

}  // namespace ltx

#endif  // LTX_TOOLS_TESTING_REDUCE_REFERENCE_H_
