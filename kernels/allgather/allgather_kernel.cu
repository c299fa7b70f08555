// The AllGather kernel of the direct path: the direct protocol
// (kernels/protocols/direct_protocol.cuh: entry barrier, stores, last-block-done exit barrier;
// kernels/PROTOCOL.md) storing this rank's shard into every rank's output over NVLink (for an
// op of several tensors, each tensor's shard into that tensor's outputs). The copy plan
// (kernels/protocols/copy_plan.h) decides which block stores which bytes.
#include "kernels/allgather/allgather_kernel.h"

#include <cstdint>

#include "kernels/device/block_copy.cuh"
#include "kernels/device/kernel_residency.cuh"
#include "kernels/device/phase_clock.cuh"
#include "kernels/protocols/copy_plan.h"
#include "kernels/protocols/direct_protocol.cuh"
#include "kernels/wire/phase_timestamps.h"

namespace ltx {
namespace {

// `Clock` is NoPhaseClock in production, PhaseClock<DirectPhase> for the phase timestamps.
template <typename Clock>
__global__ void __launch_bounds__(kAllGatherThreads)
    AllGatherKernel(const AllGatherKernelParams p, const Clock clock) {
  RunDirectOp(
      p, DirectEntryOf(p),
      [&p](int lane, int lanes, int /*target*/, const uint64_t* outputs) {
        CopyLane(p.geometry, lane, lanes, p.world_size, TensorAddressesOf(p, outputs));
      },
      clock);
}

}  // namespace

cudaError_t LaunchAllGatherKernel(const AllGatherKernelParams& params, int blocks,
                                  const PhaseTimestamps* timestamps, cudaStream_t stream) {
  if (timestamps == nullptr) {
    AllGatherKernel<<<blocks, kAllGatherThreads, 0, stream>>>(params, NoPhaseClock());
  } else {
    AllGatherKernel<<<blocks, kAllGatherThreads, 0, stream>>>(params,
                                                              PhaseClock<DirectPhase>(*timestamps));
  }
  return cudaGetLastError();
}

cudaError_t LoadAllGatherKernel(int* resident_blocks_per_sm) {
  const cudaError_t error =
      LoadKernel(AllGatherKernel<NoPhaseClock>, kAllGatherThreads, resident_blocks_per_sm);
  if (error != cudaSuccess) return error;
  return LoadKernel(AllGatherKernel<PhaseClock<DirectPhase>>, kAllGatherThreads,
                    resident_blocks_per_sm);
}

}  // namespace ltx
