// The Ulysses all-to-all kernel: the direct protocol (kernels/direct_protocol.cuh) storing each
// piece of this rank's input straight into its target's output at the final position. The copy
// plan (kernels/alltoall_plan.h) says which rows each lane copies and from where to where; each
// warp of the block copies one row (a contiguous run of heads_per_rank * head_dim elements) at
// a time, in the widest store the piece's alignment allows.
#include "kernels/alltoall_kernel.h"

#include <cstdint>

#include "kernels/alltoall_plan.h"
#include "kernels/block_copy.cuh"
#include "kernels/copy_plan.h"
#include "kernels/direct_protocol.cuh"
#include "kernels/signal_layout.h"

namespace ltx {
namespace {

constexpr int kWarpSize = 32;

// The block copies rows [rows.begin, rows.end) of `piece`, one row per warp at a time, in
// stores of `Vector` (whose size divides every run start and the run length).
template <typename Vector>
__device__ void CopyRows(const Piece& piece, const ByteRange& rows, const uint8_t* input,
                         uint8_t* output) {
  const int warps = blockDim.x / kWarpSize;
  const int64_t units = piece.run_bytes / static_cast<int64_t>(sizeof(Vector));
  for (int64_t row = rows.begin + threadIdx.x / kWarpSize; row < rows.end; row += warps) {
    const int64_t src = RowOffset(piece.src, piece.rows_per_slice, row);
    const int64_t dst = RowOffset(piece.dst, piece.rows_per_slice, row);
    CopyStrided(reinterpret_cast<Vector*>(output + dst),
                reinterpret_cast<const Vector*>(input + src), units, threadIdx.x % kWarpSize,
                kWarpSize);
  }
}

// The block copies lane `lane`'s rows of the piece for `target` into `output`.
__device__ void StorePiece(const AllToAllKernelParams& p, int lane, int lanes, int target,
                           uint8_t* output) {
  const Piece piece = PieceOf(p.geometry, p.rank, target);
  const ByteRange rows = LaneRows(piece, lane, lanes, p.world_size);
  const auto* input = static_cast<const uint8_t*>(p.input);
  switch (PieceWidth(piece, reinterpret_cast<uint64_t>(input), reinterpret_cast<uint64_t>(output))) {
    case 16:
      CopyRows<int4>(piece, rows, input, output);
      break;
    case 8:
      CopyRows<uint64_t>(piece, rows, input, output);
      break;
    case 4:
      CopyRows<uint32_t>(piece, rows, input, output);
      break;
    case 2:
      CopyRows<uint16_t>(piece, rows, input, output);
      break;
    default:
      CopyRows<uint8_t>(piece, rows, input, output);
      break;
  }
}

__global__ void __launch_bounds__(kAllToAllThreads) AllToAllKernel(
    const AllToAllKernelParams p) {
  const EntryAnnouncement mine = {reinterpret_cast<uint64_t>(p.output),
                                  p.digest,
                                  p.geometry.total_tokens,
                                  p.geometry.token_bytes,
                                  p.geometry.batch,
                                  p.dtype};
  RunDirectOp(p, mine, [&p](int lane, int lanes, int target, uint64_t output) {
    StorePiece(p, lane, lanes, target, reinterpret_cast<uint8_t*>(output));
  });
}

}  // namespace

cudaError_t LaunchAllToAllKernel(const AllToAllKernelParams& params, int blocks,
                                 cudaStream_t stream) {
  AllToAllKernel<<<blocks, kAllToAllThreads, 0, stream>>>(params);
  return cudaGetLastError();
}

cudaError_t LoadAllToAllKernel() {
  cudaFuncAttributes attributes;
  return cudaFuncGetAttributes(&attributes, AllToAllKernel);
}

}  // namespace ltx
