// A shard's copy into an output as one strided copy-engine call, or one call per row.
#include "ltx/shard_copy.h"

namespace ltx {

ShardCopy PlanShardCopy(const ShardGeometry& geometry, const void* input, void* output) {
  ShardCopy copy;
  copy.src = static_cast<const uint8_t*>(input);
  copy.src_pitch = geometry.shard_bytes;
  copy.dst = static_cast<uint8_t*>(output) + geometry.output_offset;
  copy.dst_pitch = geometry.output_batch_stride;
  copy.width = geometry.shard_bytes;
  copy.height = geometry.batch;
  return copy;
}

bool IsOneStridedCall(const ShardCopy& copy, int64_t max_pitch) {
  return copy.height > 1 && copy.src_pitch <= max_pitch && copy.dst_pitch <= max_pitch;
}

namespace {

// The source, destination and extent of the strided call of `copy`, in `params` (a
// cudaMemcpy3DPeerParms or cudaMemcpy3DParms).
template <typename Params>
void FillStrided(const ShardCopy& copy, Params* params) {
  const auto width = static_cast<size_t>(copy.width);
  const auto height = static_cast<size_t>(copy.height);
  params->srcPtr = {const_cast<uint8_t*>(copy.src), static_cast<size_t>(copy.src_pitch), width,
                    height};
  params->dstPtr = {copy.dst, static_cast<size_t>(copy.dst_pitch), width, height};
  params->extent = {width, height, 1};
}

}  // namespace

cudaMemcpy3DPeerParms StridedCallParams(const ShardCopy& copy, int src_device, int dst_device) {
  cudaMemcpy3DPeerParms params = {};
  FillStrided(copy, &params);
  params.srcDevice = src_device;
  params.dstDevice = dst_device;
  return params;
}

cudaError_t QueueShardCopy(const ShardCopy& copy, int src_device, int dst_device, int64_t max_pitch,
                           cudaStream_t stream) {
  if (copy.width == 0 || copy.height == 0) return cudaSuccess;
  if (IsOneStridedCall(copy, max_pitch)) {
    const cudaMemcpy3DPeerParms params = StridedCallParams(copy, src_device, dst_device);
    return cudaMemcpy3DPeerAsync(&params, stream);
  }
  for (int64_t row = 0; row < copy.height; ++row) {
    const cudaError_t error =
        cudaMemcpyPeerAsync(copy.dst + row * copy.dst_pitch, dst_device,
                            copy.src + row * copy.src_pitch, src_device, copy.width, stream);
    if (error != cudaSuccess) return error;
  }
  return cudaSuccess;
}

cudaError_t AddShardCopyNodes(const ShardCopy& copy, int64_t max_pitch, cudaGraph_t graph) {
  if (copy.width == 0 || copy.height == 0) return cudaSuccess;
  cudaGraphNode_t node = nullptr;
  if (IsOneStridedCall(copy, max_pitch)) {
    cudaMemcpy3DParms params = {};
    FillStrided(copy, &params);
    params.kind = cudaMemcpyDefault;
    return cudaGraphAddMemcpyNode(&node, graph, nullptr, 0, &params);
  }
  for (int64_t row = 0; row < copy.height; ++row) {
    const cudaError_t error = cudaGraphAddMemcpyNode1D(
        &node, graph, nullptr, 0, copy.dst + row * copy.dst_pitch, copy.src + row * copy.src_pitch,
        static_cast<size_t>(copy.width), cudaMemcpyDefault);
    if (error != cudaSuccess) return error;
  }
  return cudaSuccess;
}

}  // namespace ltx
