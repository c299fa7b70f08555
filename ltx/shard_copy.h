// How a copy engine moves one rank's shard of an AllGather into one output: the shard's batch
// slices are the rows of one strided copy (back to back in the input, one output slice,
// total_tokens * row_bytes, apart in the output), so a whole shard takes one API call (or one
// graph node) where the GPUs allow its pitch. The geometry comes from
// AllGatherLayout::GeometryOf, the same one the kernels' copy plan uses.
#ifndef LTX_SHARD_COPY_H_
#define LTX_SHARD_COPY_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/copy_plan.h"

namespace ltx {

// One shard's copy into one output, as `height` rows of `width` bytes.
struct ShardCopy {
  const uint8_t* src = nullptr;  // The shard's first byte in the input.
  int64_t src_pitch = 0;         // Input bytes from one row to the next.
  uint8_t* dst = nullptr;        // The shard's first byte in the output.
  int64_t dst_pitch = 0;         // Output bytes from one row to the next.
  int64_t width = 0;             // Bytes per row: tokens_r * row_bytes.
  int64_t height = 0;            // Rows: the batch.
};

// The copy of the shard described by `geometry` from `input` (the rank's input) into `output`
// (any rank's output). Pure arithmetic; thread-safe.
ShardCopy PlanShardCopy(const ShardGeometry& geometry, const void* input, void* output);

// Whether `copy` is issued as one strided call: it has more than one row and both pitches are
// at most `max_pitch` (the smallest cudaDevAttrMaxPitch of the GPUs involved). Otherwise each
// row is one call.
bool IsOneStridedCall(const ShardCopy& copy, int64_t max_pitch);

// The parameters of the strided call of `copy` from `src_device` to `dst_device`.
cudaMemcpy3DPeerParms StridedCallParams(const ShardCopy& copy, int src_device, int dst_device);

// Queues `copy` from `src_device` to `dst_device` on `stream`: one cudaMemcpy3DPeerAsync where
// IsOneStridedCall, else one cudaMemcpyPeerAsync per row; nothing for an empty copy. Both work
// with and without peer access (without it, the driver stages through host memory). Returns
// the first CUDA error. Thread-safe as CUDA is.
cudaError_t QueueShardCopy(const ShardCopy& copy, int src_device, int dst_device, int64_t max_pitch,
                           cudaStream_t stream);

// Adds `copy` to `graph` as memcpy nodes without dependencies (so that copies of several
// shards run on the copy engines side by side): one strided node where IsOneStridedCall, else
// one node per row; nothing for an empty copy. Both addresses must be reachable from the graph's
// GPU (unified addressing; peer access for a peer's memory). Returns the first CUDA error.
// Thread-safe as CUDA is.
cudaError_t AddShardCopyNodes(const ShardCopy& copy, int64_t max_pitch, cudaGraph_t graph);

}  // namespace ltx

#endif  // LTX_SHARD_COPY_H_
