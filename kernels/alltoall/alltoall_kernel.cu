// The Ulysses all-to-all kernel: the direct protocol (kernels/protocols/direct_protocol.cuh)
// storing each piece of this rank's input straight into its target's output at the final position
// (for an op of several tensors, each tensor's pieces into that tensor's outputs).
// The copy plan (kernels/alltoall/alltoall_plan.h) says which rows each lane copies and from where
// to where; each warp of the block copies one row (a contiguous run of heads_per_rank * head_dim
// elements) at a time, in the widest store the piece's alignment allows
// (kernels/alltoall/alltoall_copy.cuh).
#include "kernels/alltoall/alltoall_kernel.h"

#include <cstdint>

#include "kernels/alltoall/alltoall_copy.cuh"
#include "kernels/alltoall/alltoall_plan.h"
#include "kernels/device/kernel_residency.cuh"
#include "kernels/device/phase_clock.cuh"
#include "kernels/protocols/copy_plan.h"
#include "kernels/protocols/direct_protocol.cuh"
#include "kernels/wire/phase_timestamps.h"
#include "kernels/wire/signal_layout.h"

namespace ltx {
namespace {

// The block copies lane `lane`'s rows of the pieces for `target` (one per tensor) into
// `outputs`, the target's outputs.
__device__ void StorePieces(const AllToAllKernelParams& p, int lane, int lanes, int target,
                            const uint64_t* outputs) {
  const Piece piece = PieceOf(p.geometry, p.rank, target);
  CopyPieceRows(piece, LaneRows(piece, lane, lanes, p.world_size, p.tensors),
                TensorAddressesOf(p, outputs));
}

// `Clock` is NoPhaseClock in production, PhaseClock<DirectPhase> for the phase timestamps.
template <typename Clock>
__global__ void __launch_bounds__(kAllToAllThreads)
    AllToAllKernel(const AllToAllKernelParams p, const Clock clock) {
  RunDirectOp(
      p, DirectEntryOf(p),
      [&p](int lane, int lanes, int target, const uint64_t* outputs) {
        StorePieces(p, lane, lanes, target, outputs);
      },
      clock);
}

}  // namespace

cudaError_t LaunchAllToAllKernel(const AllToAllKernelParams& params, int blocks,
                                 const PhaseTimestamps* timestamps, cudaStream_t stream) {
  if (timestamps == nullptr) {
    AllToAllKernel<<<blocks, kAllToAllThreads, 0, stream>>>(params, NoPhaseClock());
  } else {
    AllToAllKernel<<<blocks, kAllToAllThreads, 0, stream>>>(params,
                                                            PhaseClock<DirectPhase>(*timestamps));
  }
  return cudaGetLastError();
}

cudaError_t LoadAllToAllKernel(int* resident_blocks_per_sm) {
  const cudaError_t error =
      LoadKernel(AllToAllKernel<NoPhaseClock>, kAllToAllThreads, resident_blocks_per_sm);
  if (error != cudaSuccess) return error;
  return LoadKernel(AllToAllKernel<PhaseClock<DirectPhase>>, kAllToAllThreads,
                    resident_blocks_per_sm);
}

}  // namespace ltx
