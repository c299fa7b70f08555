// The own-shard copy of a captured copy-engine AllGather: a few SM blocks copy this rank's
// shard from its input into its own output, as the kernel node of a conditional body that runs
// beside the body of peer memcpy nodes (ltx/copy_engine_graph.h; kernels/PROTOCOL.md, "Copy
// engines in CUDA graphs"). The copy is the AllGather kernels' (kernels/block_copy.cuh).
#ifndef LTX_KERNELS_SHARD_COPY_KERNEL_H_
#define LTX_KERNELS_SHARD_COPY_KERNEL_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/copy_plan.h"

namespace ltx {

// Threads per block of the own-shard copy (the tile size kLaneTileBytes is one unrolled pass
// of a block this wide).
inline constexpr int kShardCopyThreads = 512;

// The most blocks the own-shard copy uses. 32 blocks of 512 threads copy within one H200 well
// above the 390 GB/s a copy engine pushes over NVLink, so the own shard finishes under the peer
// copies, and they leave the other SMs (132 on an H200) to the work that overlaps the call.
inline constexpr int kShardCopyMaxBlocks = 32;

// The blocks the own-shard copy of a flat shard of `flat_bytes` bytes uses: one per
// kLaneTileBytes tile, at least 1 and at most kShardCopyMaxBlocks. Pure; thread-safe.
inline int ShardCopyBlocks(int64_t flat_bytes) {
  const int64_t tiles = (flat_bytes + kLaneTileBytes - 1) / kLaneTileBytes;
  if (tiles < 1) return 1;
  return tiles < kShardCopyMaxBlocks ? static_cast<int>(tiles) : kShardCopyMaxBlocks;
}

// Adds to `graph` a kernel node that copies the shard described by `geometry` from `input`
// (the rank's input) into `output` (the rank's own output, as passed to the AllGather: the
// geometry's offsets and strides place each batch slice), with ShardCopyBlocks blocks of
// kShardCopyThreads threads, without dependencies. The addresses must be device memory of the
// graph's GPU (or reachable from it). Returns the CUDA error. Thread-safe as CUDA is; the
// caller's current device must be the graph's.
cudaError_t AddShardCopyKernelNode(const ShardGeometry& geometry, const void* input,
                                   void* output, cudaGraph_t graph);

// Loads the own-shard copy kernel onto the current device (see LoadAllGatherKernel), so that
// adding its node to a capture does not load a module. Returns the CUDA error.
cudaError_t LoadShardCopyKernel();

}  // namespace ltx

#endif  // LTX_KERNELS_SHARD_COPY_KERNEL_H_
