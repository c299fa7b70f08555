// The copy-engine transport's exit kernel: one thread waits, with the protocol's deadline and
// error record, for the flags that the copy streams set.
#include "kernels/copy_engine/copy_engine_exit_kernel.h"

#include "kernels/device/barrier.cuh"
#include "kernels/device/kernel_residency.cuh"
#include "kernels/wire/error_record.h"

namespace ltx {
namespace {

// Waits for every flag of the op, with the protocol's deadline and error record; false once the
// op is given up.
__device__ bool AwaitEveryFlag(const OpContext& op, const CopyEngineExitParams& params) {
  if (LoadRelaxedSystem(&op.local->abort) != 0u) return false;
  for (int peer = 0; peer < params.world_size; ++peer) {
    if (peer == params.rank) continue;
    if (!AwaitFlag(op, BarrierPhase::kExit, peer, &params.flags->received[peer])) return false;
    if (!AwaitFlag(op, BarrierPhase::kExit, peer, &params.flags->sent[peer])) return false;
  }
  return true;
}

// After the op was given up: waits, until `timeout_ns` from now, for each flag whose copy is
// queued (the host stores `queued` before it sets any abort flag, and a pair is queued after
// the failure only by a call that was already queueing it then:
// ltx/transport/copy_engine/copy_engine_transport.h). A peer whose copies are still missing then is
// marked stuck, and later kernels skip it: its later copies queue behind those on the same copy
// streams, so a stuck peer costs one timeout, not one per op. Reads host-mapped memory, which only
// this path does.
__device__ void AwaitQueuedCopies(const CopyEngineExitParams& params) {
  // Orders the abort flag's load (relaxed) before the marks' loads.
  __threadfence_system();
  uint32_t* stuck_peers = &params.signals->stuck_peers;
  const uint64_t start_ns = GlobalTimerNs();
  for (int peer = 0; peer < params.world_size; ++peer) {
    if (peer == params.rank || (*stuck_peers & (1u << peer)) != 0u) continue;
    const uint64_t* flags[2] = {&params.flags->received[peer], &params.flags->sent[peer]};
    const uint64_t* queued[2] = {&params.queued->received[peer], &params.queued->sent[peer]};
    bool stuck = false;
    for (int k = 0; k < 2 && !stuck; ++k) {
      if (LoadAcquireSystem(queued[k]) < params.op) continue;
      while (!stuck && LoadAcquireSystem(flags[k]) < params.op) {
        stuck = GlobalTimerNs() - start_ns > params.timeout_ns;
      }
    }
    if (stuck) *stuck_peers |= 1u << peer;
  }
}

__global__ void CopyEngineExitKernel(CopyEngineExitParams params) {
  const OpContext op = {&params.signals->control, params.record, params.rank, params.op,
                        params.timeout_ns, params.collective};
  if (!AwaitEveryFlag(op, params)) AwaitQueuedCopies(params);
}

}  // namespace

cudaError_t LaunchCopyEngineExit(const CopyEngineExitParams& params, cudaStream_t stream) {
  CopyEngineExitKernel<<<1, 1, 0, stream>>>(params);
  return cudaGetLastError();
}

cudaError_t LoadCopyEngineExitKernel(int* resident_blocks_per_sm) {
  return LoadKernel(CopyEngineExitKernel, 1, resident_blocks_per_sm);
}

}  // namespace ltx
