// A local permute between all-to-all layouts, for the NCCL side of the ltx_alltoall benchmark:
// NCCL moves contiguous buffers, so a Ulysses all-to-all over NCCL packs each peer's piece
// before sending (sequence -> heads) or unpacks what it received into the final layout
// (heads -> sequence).
#ifndef LTX_TOOLS_LTX_ALLTOALL_PERMUTE_KERNEL_H_
#define LTX_TOOLS_LTX_ALLTOALL_PERMUTE_KERNEL_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/alltoall/alltoall_plan.h"
#include "kernels/wire/signal_layout.h"

namespace ltx {

// Up to kMaxWorldSize pieces copied from `src` to `dst` on one GPU.
struct PermuteParams {
  const void* src = nullptr;
  void* dst = nullptr;
  Piece pieces[kMaxWorldSize] = {};
  int piece_count = 0;
};

// Enqueues the copy of every piece on `stream`, `blocks_per_piece` blocks each. Returns the
// launch error. The caller's current device must be the stream's.
cudaError_t LaunchPermute(const PermuteParams& params, int blocks_per_piece, cudaStream_t stream);

}  // namespace ltx

#endif  // LTX_TOOLS_LTX_ALLTOALL_PERMUTE_KERNEL_H_
