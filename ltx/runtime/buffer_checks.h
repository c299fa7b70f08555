// The host checks of one rank's buffers that every collective shares: the rank is in range, no
// pointer that the op reads or writes is null, and no input overlaps an output unless the call
// is in place; for a call of several tensors, each tensor's buffers alike and across tensors.
#ifndef LTX_RUNTIME_BUFFER_CHECKS_H_
#define LTX_RUNTIME_BUFFER_CHECKS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "ltx/rank_buffers.h"

namespace ltx {

// No in-place call: the input must not overlap the output at all.
inline constexpr int64_t kNotInPlace = -1;

// Whether the `a_bytes` bytes at `a` and the `b_bytes` bytes at `b` share a byte (never when
// either is empty). Thread-safe (pure).
bool Overlap(const void* a, int64_t a_bytes, const void* b, int64_t b_bytes);

// Tensor `tensor` (0 <= tensor < kMaxTensors) of a call on `buffers`: its input and output as
// `input` and `output` (tensor 0: buffers' own; tensor j: more_inputs[j - 1] and
// more_outputs[j - 1]), with buffers' stream. Thread-safe (pure).
RankBuffers TensorBuffers(const RankBuffers& buffers, int tensor);

// What messages call each tensor's input and output: by default the fields of RankBuffers
// ("input", "more_inputs[0]", ...; "output", "more_outputs[0]", ...); a collective whose tensors
// have names of their own gives those (the RMSNorm epilogue's "residual", "residual_out").
// Static strings.
struct TensorNames {
  const char* inputs[kMaxTensors] = {"input", "more_inputs[0]", "more_inputs[1]",
                                     "more_inputs[2]"};
  const char* outputs[kMaxTensors] = {"output", "more_outputs[0]", "more_outputs[1]",
                                      "more_outputs[2]"};
};

// InvalidArgument for a rank outside [0, world_size), a tensor count outside 1..kMaxTensors, a
// non-null pointer of a tensor past `tensors` (more_inputs or more_outputs), and for each of the
// `tensors` tensors (TensorBuffers): a null input when the rank reads `input_bytes` > 0 bytes, a
// null output when it writes `output_bytes` > 0 bytes, or an input whose bytes overlap its
// output's, unless the input starts exactly `in_place_offset` bytes into the output (an in-place
// call; kNotInPlace: none is allowed); across tensors, an input that overlaps another tensor's
// output, or two outputs that overlap (inputs may overlap each other: they are only read). The
// message names the rank and the fields (`names`). Does not touch the GPU (pointer arithmetic
// only). Thread-safe.
absl::Status CheckRankBuffers(int world_size, int rank, int tensors, int64_t input_bytes,
                              int64_t output_bytes, int64_t in_place_offset,
                              const RankBuffers& buffers, const TensorNames& names = {});

// InvalidArgument, naming the rank and the pointer, for a non-null input or output of one of
// the call's `tensors` tensors whose address is not a multiple of `alignment` bytes (the element
// size of the reductions, whose kernels load and store whole elements). Thread-safe.
absl::Status CheckBufferAlignment(int rank, int tensors, const RankBuffers& buffers,
                                  int alignment, const TensorNames& names = {});

// Whether `buffers`' input starts `in_place_offset` bytes into its output (never for
// kNotInPlace). Thread-safe.
bool IsInPlace(const RankBuffers& buffers, int64_t in_place_offset);

}  // namespace ltx

#endif  // LTX_RUNTIME_BUFFER_CHECKS_H_
