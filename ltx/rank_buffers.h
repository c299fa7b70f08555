// RankBuffers: where one rank's part of a collective reads, writes and runs.
#ifndef LTX_RANK_BUFFERS_H_
#define LTX_RANK_BUFFERS_H_

#include <cuda_runtime_api.h>

namespace ltx {

// Most tensors of one shape that one call moves (an all-to-all or AllGather of Q, K and V moves
// three).
inline constexpr int kMaxTensors = 4;

// One rank's buffers and stream. `input` and `output` are device memory of that rank's GPU
// (any alignment; 16-byte alignment takes the fast path). `input` may be null when the rank has
// no bytes to send, `output` when the whole output is empty.
//
// A call of several tensors (AllGatherShape::tensors or AllToAllShape::tensors = n > 1) passes
// tensor 0 as `input` and `output`, and tensor j (1 <= j < n) as more_inputs[j - 1] and
// more_outputs[j - 1], under the same rules. Every other entry of more_inputs and more_outputs
// must be null.
struct RankBuffers {
  const void* input = nullptr;
  void* output = nullptr;
  cudaStream_t stream = nullptr;
  const void* more_inputs[kMaxTensors - 1] = {};
  void* more_outputs[kMaxTensors - 1] = {};
};

}  // namespace ltx

#endif  // LTX_RANK_BUFFERS_H_
