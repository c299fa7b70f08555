// RankBuffers: where one rank's part of a collective reads, writes and runs.
#ifndef LTX_RANK_BUFFERS_H_
#define LTX_RANK_BUFFERS_H_

#include <cuda_runtime_api.h>

namespace ltx {

// One rank's buffers and stream. `input` and `output` are device memory of that rank's GPU
// (any alignment; 16-byte alignment takes the fast path). `input` may be null when the rank has
// no bytes to send, `output` when the whole output is empty.
struct RankBuffers {
  const void* input = nullptr;
  void* output = nullptr;
  cudaStream_t stream = nullptr;
};

}  // namespace ltx

#endif  // LTX_RANK_BUFFERS_H_
