// The host checks of one rank's buffers that every collective shares: the rank is in range, no
// pointer that the op reads or writes is null, and the input does not overlap the output unless
// the call is in place.
#ifndef LTX_RUNTIME_BUFFER_CHECKS_H_
#define LTX_RUNTIME_BUFFER_CHECKS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "ltx/rank_buffers.h"

namespace ltx {

// No in-place call: the input must not overlap the output at all.
inline constexpr int64_t kNotInPlace = -1;

// InvalidArgument for a rank outside [0, world_size), a null input when the rank reads
// `input_bytes` > 0 bytes, a null output when it writes `output_bytes` > 0 bytes, or an input
// whose bytes overlap the output's, unless the input starts exactly `in_place_offset` bytes into
// the output (an in-place call; kNotInPlace: none is allowed). Does not touch the GPU (pointer
// arithmetic only). Thread-safe.
absl::Status CheckRankBuffers(int world_size, int rank, int64_t input_bytes, int64_t output_bytes,
                              int64_t in_place_offset, const RankBuffers& buffers);

// InvalidArgument, naming the rank and the pointer, for a non-null input or output whose
// address is not a multiple of `alignment` bytes (the element size of the reductions, whose
// kernels load and store whole elements). Thread-safe.
absl::Status CheckBufferAlignment(int rank, const RankBuffers& buffers, int alignment);

// Whether `buffers`' input starts `in_place_offset` bytes into its output (never for
// kNotInPlace). Thread-safe.
bool IsInPlace(const RankBuffers& buffers, int64_t in_place_offset);

}  // namespace ltx

#endif  // LTX_RUNTIME_BUFFER_CHECKS_H_
