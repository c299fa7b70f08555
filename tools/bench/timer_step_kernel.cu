// The %globaltimer step probe.
#include "kernels/device/memory_order.cuh"
#include "tools/bench/timer_step_kernel.h"

namespace ltx {
namespace {

__global__ void TimerStepKernel(uint64_t* step_ns) {
  uint64_t smallest = 0;
  uint64_t last = GlobalTimerNs();
  for (int i = 0; i < kTimerStepReads; ++i) {
    const uint64_t now = GlobalTimerNs();
    if (now != last && (smallest == 0 || now - last < smallest)) smallest = now - last;
    last = now;
  }
  *step_ns = smallest;
}

}  // namespace

cudaError_t LaunchTimerStep(uint64_t* step_ns, cudaStream_t stream) {
  TimerStepKernel<<<1, 1, 0, stream>>>(step_ns);
  return cudaGetLastError();
}

}  // namespace ltx
