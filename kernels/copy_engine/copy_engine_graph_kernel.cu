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
  uint64_t output = 0;
  if (!AwaitTargetEntry(op, target, p.announcement, &output)) return false;
  if (output == p.outputs[target]) return true;
  RecordDeviceError(op, OutputMismatchRecord(p.rank, target, op.number, p.outputs[target], output));
  return false;
}

// Thread `target`'s last look before the body opens, after every wait of the block: whether this
// rank still holds its claim on `target`'s output (HoldsClaim, of an acquire load).
__device__ bool StillClaims(const OpContext& op, int target) {
  return HoldsClaim(op, target, LoadAcquireSystem(&op.local->store_claim[target]));
}

__global__ void __launch_bounds__(kCopyEngineGraphThreads)
    CopyEngineGraphEntryKernel(const CopyEngineGraphParams p) {
  const OpContext op = NextOp(p);
  // An abandoned GPU publishes nothing until Reset (as the direct kernel). Thread 0 decides for
  // the whole block, so that every thread reaches the barriers below or none does.
  __shared__ bool abandoned;
  if (threadIdx.x == 0) abandoned = LoadRelaxedSystem(&op.local->abort) != 0u;
  __syncthreads();
  if (abandoned) return;
  const bool entered = threadIdx.x >= p.world_size || EnterTarget(p, op, threadIdx.x);
  if (threadIdx.x == 0) op.local->entry_published = 1u;
  // Every target checked; then every claim is read again, since a target may have given the op
  // up while this block still waited for another one.
  const bool ready = __syncthreads_and(entered) &&
                     __syncthreads_and(threadIdx.x >= p.world_size || StillClaims(op, threadIdx.x));
  if (threadIdx.x != 0) return;
  if (ready && LoadRelaxedSystem(&op.local->abort) == 0u) {
    if (p.has_body != 0) cudaGraphSetConditional(p.body, 1u);
    return;
  }
  // The body stores to every target or to none: without it, no peer may finish the op as if
  // this rank's part had arrived. Abandoned, the exit kernel stores no exit flags and revokes
  // the peers' claims, so they give the op up too. (Every way here recorded its error.)
  AbandonRecordedOp(op);
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
