// Device-side test data for runs without host synchronisation: each rank fills its input from a
// hash of (source rank, op, byte index), and a checking kernel compares a gathered output with
// what the hash says every byte must be, counting mismatches in device memory. The host never
// needs to see the data, so nothing synchronises the ranks but the collective itself.
#ifndef LTX_TESTS_PATTERN_KERNELS_H_
#define LTX_TESTS_PATTERN_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace ltx {

// The most ranks a pattern describes.
inline constexpr int kPatternMaxRanks = 8;

// The shape of one gathered op, as the pattern kernels see it.
struct PatternShape {
  uint64_t op = 0;  // Any value that differs between the ops whose outputs are compared.
  int world_size = 1;
  int64_t batch = 1;
  int64_t row_bytes = 1;
  int64_t token_counts[kPatternMaxRanks] = {};
};

// What a check found, in device memory: the number of wrong bytes, and the first one.
struct PatternMismatches {
  unsigned long long count;
  unsigned long long first_offset;
  unsigned long long first_op;
};

// Fills rank `rank`'s input (batch * token_counts[rank] * row_bytes bytes) for `shape.op`.
cudaError_t LaunchFillPattern(const PatternShape& shape, int rank, void* input,
                              cudaStream_t stream);

// Adds to `*mismatches` every byte of `output` (batch * total tokens * row_bytes) that differs
// from the gathered pattern of `shape.op`.
cudaError_t LaunchCheckPattern(const PatternShape& shape, const void* output,
                               PatternMismatches* mismatches, cudaStream_t stream);

}  // namespace ltx

#endif  // LTX_TESTS_PATTERN_KERNELS_H_
