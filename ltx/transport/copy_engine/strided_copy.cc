// A strided copy as one copy-engine call (or graph node), or one per row.
#include "ltx/transport/copy_engine/strided_copy.h"

#include <algorithm>
#include <limits>

#include "ltx/cuda/cuda_status.h"
#include "ltx/status_macros.h"

namespace ltx {

StridedCopy PlanShardCopy(const ShardGeometry& geometry, const void* input, void* output) {
  StridedCopy copy;
  copy.src = static_cast<const uint8_t*>(input);
  copy.src_pitch = geometry.shard_bytes;
  copy.src_slice_rows = geometry.batch;
  copy.dst = static_cast<uint8_t*>(output) + geometry.output_offset;
  copy.dst_pitch = geometry.output_batch_stride;
  copy.dst_slice_rows = geometry.batch;
  copy.width = geometry.shard_bytes;
  copy.height = geometry.batch;
  copy.depth = 1;
  return copy;
}

StridedCopy PlanPieceCopy(const AllToAllGeometry& geometry, int source, int target,
                          const void* input, void* output) {
  const Piece piece = PieceOf(geometry, source, target);
  StridedCopy copy;
  // An empty piece may have a zero row stride (a rank without heads): plan nothing from it.
  if (piece.rows == 0 || piece.run_bytes == 0) return copy;
  copy.src = static_cast<const uint8_t*>(input) + piece.src.base;
  copy.src_pitch = piece.src.row_stride;
  // Whole rows on both sides (see the file comment).
  copy.src_slice_rows = piece.src.slice_stride / piece.src.row_stride;
  copy.dst = static_cast<uint8_t*>(output) + piece.dst.base;
  copy.dst_pitch = piece.dst.row_stride;
  copy.dst_slice_rows = piece.dst.slice_stride / piece.dst.row_stride;
  copy.width = piece.run_bytes;
  copy.height = piece.rows_per_slice;
  copy.depth = geometry.batch;
  return copy;
}

bool IsEmpty(const StridedCopy& copy) {
  return copy.width == 0 || copy.height == 0 || copy.depth == 0;
}

bool IsOntoItself(const StridedCopy& copy) {
  // Pitches matter only between rows, slice rows only between slices.
  return copy.src == copy.dst && (copy.height == 1 || copy.src_pitch == copy.dst_pitch) &&
         (copy.depth == 1 || (copy.src_pitch == copy.dst_pitch &&
                              copy.src_slice_rows == copy.dst_slice_rows));
}

bool MovesNothing(const StridedCopy& copy) { return IsEmpty(copy) || IsOntoItself(copy); }

absl::StatusOr<int64_t> SmallestMaxPitch(const std::vector<int>& devices) {
  int64_t smallest = std::numeric_limits<int64_t>::max();
  for (int device : devices) {
    int pitch = 0;
    LTX_RETURN_IF_ERROR(CudaStatus(cudaDeviceGetAttribute(&pitch, cudaDevAttrMaxPitch, device),
                                   "cudaDeviceGetAttribute(MaxPitch)"));
    smallest = std::min<int64_t>(smallest, pitch);
  }
  return smallest;
}

bool IsOneStridedCall(const StridedCopy& copy, int64_t max_pitch) {
  return copy.height * copy.depth > 1 && copy.src_pitch <= max_pitch &&
         copy.dst_pitch <= max_pitch;
}

namespace {

// The source, destination and extent of the strided call of `copy`, in `params` (a
// cudaMemcpy3DPeerParms or cudaMemcpy3DParms).
template <typename Params>
void FillStrided(const StridedCopy& copy, Params* params) {
  const auto width = static_cast<size_t>(copy.width);
  params->srcPtr = {const_cast<uint8_t*>(copy.src), static_cast<size_t>(copy.src_pitch), width,
                    static_cast<size_t>(copy.src_slice_rows)};
  params->dstPtr = {copy.dst, static_cast<size_t>(copy.dst_pitch), width,
                    static_cast<size_t>(copy.dst_slice_rows)};
  params->extent = {width, static_cast<size_t>(copy.height), static_cast<size_t>(copy.depth)};
}

}  // namespace

cudaMemcpy3DPeerParms StridedCallParams(const StridedCopy& copy, int src_device, int dst_device) {
  cudaMemcpy3DPeerParms params = {};
  FillStrided(copy, &params);
  params.srcDevice = src_device;
  params.dstDevice = dst_device;
  return params;
}

CopyRow RowOf(const StridedCopy& copy, int64_t row) {
  const int64_t slice = row / copy.height;
  const int64_t in_slice = row - slice * copy.height;
  CopyRow result;
  result.src = copy.src + (slice * copy.src_slice_rows + in_slice) * copy.src_pitch;
  result.dst = copy.dst + (slice * copy.dst_slice_rows + in_slice) * copy.dst_pitch;
  return result;
}

cudaError_t QueueStridedCopy(const StridedCopy& copy, int src_device, int dst_device,
                             int64_t max_pitch, cudaStream_t stream) {
  if (MovesNothing(copy)) return cudaSuccess;
  if (IsOneStridedCall(copy, max_pitch)) {
    const cudaMemcpy3DPeerParms params = StridedCallParams(copy, src_device, dst_device);
    return cudaMemcpy3DPeerAsync(&params, stream);
  }
  for (int64_t row = 0; row < copy.height * copy.depth; ++row) {
    const CopyRow at = RowOf(copy, row);
    const cudaError_t error = cudaMemcpyPeerAsync(at.dst, dst_device, at.src, src_device,
                                                  static_cast<size_t>(copy.width), stream);
    if (error != cudaSuccess) return error;
  }
  return cudaSuccess;
}

cudaError_t AddStridedCopyNodes(const StridedCopy& copy, int64_t max_pitch, cudaGraph_t graph) {
  if (MovesNothing(copy)) return cudaSuccess;
  cudaGraphNode_t node = nullptr;
  if (IsOneStridedCall(copy, max_pitch)) {
    cudaMemcpy3DParms params = {};
    FillStrided(copy, &params);
    params.kind = cudaMemcpyDefault;
    return cudaGraphAddMemcpyNode(&node, graph, nullptr, 0, &params);
  }
  for (int64_t row = 0; row < copy.height * copy.depth; ++row) {
    const CopyRow at = RowOf(copy, row);
    const cudaError_t error = cudaGraphAddMemcpyNode1D(
        &node, graph, nullptr, 0, at.dst, at.src, static_cast<size_t>(copy.width),
        cudaMemcpyDefault);
    if (error != cudaSuccess) return error;
  }
  return cudaSuccess;
}

}  // namespace ltx
