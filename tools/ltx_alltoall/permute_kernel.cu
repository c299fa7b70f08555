// The local permute of the NCCL side: the all-to-all's own row copy
// (kernels/alltoall/alltoall_copy.cuh) between two buffers of one GPU.
#include "tools/ltx_alltoall/permute_kernel.h"

#include "kernels/alltoall/alltoall_copy.cuh"

namespace ltx {
namespace {

constexpr int kPermuteThreads = 512;

__global__ void __launch_bounds__(kPermuteThreads) PermuteKernel(const PermuteParams p) {
  const Piece& piece = p.pieces[blockIdx.y];
  const RowSweep sweep = {piece.rows, static_cast<int>(blockIdx.x), static_cast<int>(gridDim.x)};
  CopyPieceRows(piece, sweep, static_cast<const uint8_t*>(p.src), static_cast<uint8_t*>(p.dst));
}

}  // namespace

cudaError_t LaunchPermute(const PermuteParams& params, int blocks_per_piece,
                          cudaStream_t stream) {
  if (params.piece_count == 0) return cudaSuccess;
  const dim3 grid(blocks_per_piece, params.piece_count);
  PermuteKernel<<<grid, kPermuteThreads, 0, stream>>>(params);
  return cudaGetLastError();
}

}  // namespace ltx
