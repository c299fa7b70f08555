// A kernel that keeps a GPU busy for a given time, for tests of calls made while the GPU runs
// other work.
#ifndef LTX_TESTS_BUSY_KERNEL_H_
#define LTX_TESTS_BUSY_KERNEL_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace ltx {

// Enqueues one block of one thread on `stream` that spins for `nanoseconds` of %globaltimer.
cudaError_t LaunchBusyKernel(uint64_t nanoseconds, cudaStream_t stream);

// Enqueues `blocks` blocks of 1024 threads on `stream` that spin for `nanoseconds`, each with so
// much shared memory that no other block of this kernel fits on its SM: it holds `blocks` SMs
// (as compute on another stream would) while it runs.
cudaError_t LaunchBusySms(uint64_t nanoseconds, int blocks, cudaStream_t stream);

}  // namespace ltx

#endif  // LTX_TESTS_BUSY_KERNEL_H_
