// The own-shard copy kernel and the host function that adds it to a graph as a kernel node.
#include "kernels/shard_copy_kernel.h"

#include "kernels/block_copy.cuh"

namespace ltx {
namespace {

// Every block copies its lane of the flat shard (one target: the rank's own output).
__global__ void __launch_bounds__(kShardCopyThreads)
    ShardCopyKernel(ShardGeometry geometry, const uint8_t* input, uint8_t* output) {
  CopyLane(geometry, blockIdx.x, gridDim.x, /*world=*/1, input, output);
}

}  // namespace

cudaError_t AddShardCopyKernelNode(const ShardGeometry& geometry, const void* input,
                                   void* output, cudaGraph_t graph) {
  ShardGeometry geometry_arg = geometry;
  const uint8_t* input_arg = static_cast<const uint8_t*>(input);
  uint8_t* output_arg = static_cast<uint8_t*>(output);
  void* args[] = {&geometry_arg, &input_arg, &output_arg};
  cudaKernelNodeParams params = {};
  params.func = reinterpret_cast<void*>(ShardCopyKernel);
  params.gridDim = dim3(ShardCopyBlocks(FlatShardBytes(geometry)));
  params.blockDim = dim3(kShardCopyThreads);
  params.kernelParams = args;
  cudaGraphNode_t node = nullptr;
  return cudaGraphAddKernelNode(&node, graph, nullptr, 0, &params);
}

cudaError_t LoadShardCopyKernel() {
  cudaFuncAttributes attributes;
  return cudaFuncGetAttributes(&attributes, ShardCopyKernel);
}

}  // namespace ltx
