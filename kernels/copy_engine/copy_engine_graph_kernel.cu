// The entry and exit kernels of a copy-engine call captured into a CUDA graph: the direct
// protocol's entry and exit (kernels/protocols/direct_protocol.cuh), with the stores left to the
// graph's conditional body of memcpy nodes between them.
#include "kernels/copy_engine/copy_engine_graph_kernel.h"
#include "kernels/device/barrier.cuh"
#include "kernels/device/kernel_residency.cuh"
#include "kernels/protocols/direct_protocol.cuh"

namespace ltx {
namespace {

// Thread `target`'s part of the entry: announce, claim, await the target's announcement and
// check it and its output. True when this rank may store into `target`'s output.
__device__ bool EnterTarget(const CopyEngineGraphParams& p, const OpContext& op, int target) {
  if (!PublishAndClaim(p, op, target, p.announcement)) return false;
  const uint64_t output = AwaitTargetEntry(op, target, p.announcement);
  if (output == 0) return false;
  if (output == p.outputs[target]) return true;
  RecordDeviceError(op, OutputMismatchRecord(p.rank, target, op.number, p.outputs[target], output));
  return false;
}

__global__ void __launch_bounds__(kCopyEngineGraphThreads)
    CopyEngineGraphEntryKernel(const CopyEngineGraphParams p) {
  const OpContext op = NextOp(p);
  // An abandoned GPU publishes nothing until Reset (as the direct kernel).
  if (LoadRelaxedSystem(&op.local->abort) != 0u) return;
  const bool ready = threadIdx.x >= p.world_size || EnterTarget(p, op, threadIdx.x);
  if (threadIdx.x == 0) op.local->entry_published = 1u;
  // Every target checked: the body runs only if all agreed and no wait failed on the way.
  if (__syncthreads_and(ready) && threadIdx.x == 0 && p.has_body != 0 &&
      LoadRelaxedSystem(&op.local->abort) == 0u) {
    cudaGraphSetConditional(p.body, 1u);
  }
}

__global__ void __launch_bounds__(kCopyEngineGraphThreads)
    CopyEngineGraphExitKernel(const CopyEngineGraphParams p) {
  NoPhaseClock clock;
  ExitBarrier(p, NextOp(p), clock);
}

}  // namespace

cudaError_t LaunchCopyEngineGraphEntry(const CopyEngineGraphParams& params, cudaStream_t stream) {
  CopyEngineGraphEntryKernel<<<1, kCopyEngineGraphThreads, 0, stream>>>(params);
  return cudaGetLastError();
}

cudaError_t LaunchCopyEngineGraphExit(const CopyEngineGraphParams& params, cudaStream_t stream) {
  CopyEngineGraphExitKernel<<<1, kCopyEngineGraphThreads, 0, stream>>>(params);
  return cudaGetLastError();
}

cudaError_t LoadCopyEngineGraphKernels(int* resident_blocks_per_sm) {
  const cudaError_t error =
      LoadKernel(CopyEngineGraphEntryKernel, kCopyEngineGraphThreads, resident_blocks_per_sm);
  if (error != cudaSuccess) return error;
  return LoadKernel(CopyEngineGraphExitKernel, kCopyEngineGraphThreads, resident_blocks_per_sm);
}

}  // namespace ltx
