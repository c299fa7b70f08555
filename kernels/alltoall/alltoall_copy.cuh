// Block-wide copy of the rows of an all-to-all piece (kernels/alltoall/alltoall_plan.h), or of the
// pieces of an op's tensors swept as one: each warp copies one row (a contiguous run) at a time,
// in the widest store the pieces' alignment allows.
// Used by the all-to-all kernel, and by tools that permute between the same layouts locally.
#ifndef KERNELS_ALLTOALL_ALLTOALL_COPY_CUH_
#define KERNELS_ALLTOALL_ALLTOALL_COPY_CUH_

#include <cstdint>

#include "kernels/alltoall/alltoall_plan.h"
#include "kernels/device/block_copy.cuh"
#include "kernels/protocols/copy_plan.h"

namespace ltx {

inline constexpr int kWarpSize = 32;

// The block copies its rows of the pieces at `at` (`sweep`: row R of tensor R / piece.rows's
// piece, TensorRowOf) in stores of `Vector` (whose size divides every run start and the run
// length). Warp w takes its rows kRowsInFlight at a time (kernels/alltoall/alltoall_plan.h:
// RowSweep); lane l takes units l, l + 32, ... of each.
template <typename Vector>
__device__ void CopyPieceRowsAs(const Piece& piece, const RowSweep& sweep,
                                const TensorAddresses& at) {
  const int warps = blockDim.x / kWarpSize;
  const int lane = threadIdx.x % kWarpSize;
  const int64_t units = piece.run_bytes / static_cast<int64_t>(sizeof(Vector));
  const int64_t stride = SweepStride(sweep, warps);
  for (int64_t first = SweepFirstRow(sweep, warps, threadIdx.x / kWarpSize); first < sweep.rows;
       first += stride * kRowsInFlight) {
    const Vector* from[kRowsInFlight] = {};
    Vector* to[kRowsInFlight] = {};
    bool valid[kRowsInFlight];
#pragma unroll
    for (int k = 0; k < kRowsInFlight; ++k) {
      const int64_t row = first + static_cast<int64_t>(k) * stride;
      valid[k] = row < sweep.rows;
      if (!valid[k]) continue;
      const TensorRow tensor_row = TensorRowOf(piece, row);
      from[k] = reinterpret_cast<const Vector*>(
          at.Input(tensor_row.tensor) +
          RowOffset(piece.src, piece.rows_per_slice, tensor_row.row));
      to[k] = reinterpret_cast<Vector*>(at.Output(tensor_row.tensor) +
                                        RowOffset(piece.dst, piece.rows_per_slice, tensor_row.row));
    }
    for (int64_t unit = lane; unit < units; unit += kWarpSize) {
      Vector values[kRowsInFlight];
#pragma unroll
      for (int k = 0; k < kRowsInFlight; ++k) {
        if (valid[k]) values[k] = LoadUnit(from[k] + unit);
      }
#pragma unroll
      for (int k = 0; k < kRowsInFlight; ++k) {
        if (valid[k]) StoreUnit(to[k] + unit, values[k]);
      }
    }
  }
}

// The block copies its rows (`sweep`) of the pieces of every tensor at `at`.
__device__ inline void CopyPieceRows(const Piece& piece, const RowSweep& sweep,
                                     const TensorAddresses& at) {
  switch (PiecesWidth(piece, at)) {
    case 16:
      CopyPieceRowsAs<int4>(piece, sweep, at);
      break;
    case 8:
      CopyPieceRowsAs<uint64_t>(piece, sweep, at);
      break;
    case 4:
      CopyPieceRowsAs<uint32_t>(piece, sweep, at);
      break;
    case 2:
      CopyPieceRowsAs<uint16_t>(piece, sweep, at);
      break;
    default:
      CopyPieceRowsAs<uint8_t>(piece, sweep, at);
      break;
  }
}

// The block copies its rows of `piece` (`sweep`) from the buffer at `src` into the one at `dst`.
__device__ inline void CopyPieceRows(const Piece& piece, const RowSweep& sweep,
                                     const uint8_t* src, uint8_t* dst) {
  TensorAddresses at;
  at.inputs[0] = reinterpret_cast<uint64_t>(src);
  at.outputs[0] = reinterpret_cast<uint64_t>(dst);
  CopyPieceRows(piece, sweep, at);
}

}  // namespace ltx

#endif  // KERNELS_ALLTOALL_ALLTOALL_COPY_CUH_
