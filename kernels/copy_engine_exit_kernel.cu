// The copy-engine transport's exit kernel: one thread waits, with the protocol's deadline and
// error record, for the flags that the copy streams set.
#include "kernels/copy_engine_exit_kernel.h"

#include "kernels/barrier.cuh"
#include "kernels/error_record.h"

namespace ltx {
namespace {

__global__ void CopyEngineExitKernel(CopyEngineExitParams params) {
  const OpContext op = {&params.signals->control, params.record, params.rank, params.op,
                        params.timeout_ns, params.collective};
  if (LoadRelaxedSystem(&op.local->abort) != 0u) return;
  for (int peer = 0; peer < params.world_size; ++peer) {
    if (peer == params.rank) continue;
    if (!AwaitFlag(op, BarrierPhase::kExit, peer, &params.flags->received[peer])) return;
    if (!AwaitFlag(op, BarrierPhase::kExit, peer, &params.flags->sent[peer])) return;
  }
}

}  // namespace

cudaError_t LaunchCopyEngineExit(const CopyEngineExitParams& params, cudaStream_t stream) {
  CopyEngineExitKernel<<<1, 1, 0, stream>>>(params);
  return cudaGetLastError();
}

}  // namespace ltx
