// How finely %globaltimer ticks on a GPU: one thread reads it many times and keeps the smallest
// step between two different values. The phase breakdown is no finer than that.
#ifndef TOOLS_BENCH_TIMER_STEP_KERNEL_H_
#define TOOLS_BENCH_TIMER_STEP_KERNEL_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace ltx {

// Enqueues one thread on `stream` (of the current device) that reads %globaltimer
// kTimerStepReads times and stores the smallest nonzero step, in ns, into `*step_ns` (device
// memory of that GPU; 0 if the timer never moved). Returns the launch error. Thread-safe.
cudaError_t LaunchTimerStep(uint64_t* step_ns, cudaStream_t stream);

inline constexpr int kTimerStepReads = 100000;

}  // namespace ltx

#endif  // TOOLS_BENCH_TIMER_STEP_KERNEL_H_
