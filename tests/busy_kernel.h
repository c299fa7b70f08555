// A kernel that keeps a GPU busy for a given time, for tests of calls made while the GPU runs
// other work.
#ifndef LTX_TESTS_BUSY_KERNEL_H_
#define LTX_TESTS_BUSY_KERNEL_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace ltx {

// Enqueues one block of one thread on `stream` that spins for `nanoseconds` of %globaltimer.
cudaError_t LaunchBusyKernel(uint64_t nanoseconds, cudaStream_t stream);

}  // namespace ltx

#endif  // LTX_TESTS_BUSY_KERNEL_H_
