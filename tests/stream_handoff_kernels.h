// Two one-thread kernels that hand a value from one stream to another inside a GPU, as ranks
// that share a GPU do: one waits (with a deadline) for a flag that the other sets.
#ifndef LTX_TESTS_STREAM_HANDOFF_KERNELS_H_
#define LTX_TESTS_STREAM_HANDOFF_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace ltx {

// Enqueues on `stream` one thread that polls `*flag` (acquire, system scope) until it reads
// `value` or `deadline_ns` of %globaltimer have passed, then stores 1 into `*seen` if it read
// `value`, else 0.
cudaError_t LaunchAwaitFlag(const uint64_t* flag, uint64_t value, uint64_t deadline_ns,
                            uint32_t* seen, cudaStream_t stream);

// Enqueues on `stream` one thread that stores `value` into `*flag` (release, system scope).
cudaError_t LaunchSetFlag(uint64_t* flag, uint64_t value, cudaStream_t stream);

}  // namespace ltx

#endif  // LTX_TESTS_STREAM_HANDOFF_KERNELS_H_
