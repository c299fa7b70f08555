// The identity of a GPU's primary CUDA context: the context the CUDA runtime does all its work on
// that GPU in. A cudaDeviceReset destroys it, and with it everything that lived in it (device
// and pinned memory, peer access); the next use of the GPU creates a new primary context with a
// new identity. State that ltx keeps for the whole process (enabled peer pairs, kept error
// records) is keyed by this identity, so that a reset cannot make it lie.
#ifndef LTX_CUDA_PRIMARY_CONTEXT_H_
#define LTX_CUDA_PRIMARY_CONTEXT_H_

#include <cstdint>

#include "absl/status/statusor.h"

namespace ltx {

// The id of GPU `device`'s primary context (cuCtxGetId: unique for the life of the process),
// creating the context if there is none yet (cudaSetDevice). The calling thread's current
// device is restored. Errors: FailedPrecondition when the driver lacks cuCtxGetId; others as
// CUDA reports them (the CUDA error is cleared). Thread-safe.
absl::StatusOr<uint64_t> PrimaryContextId(int device);

}  // namespace ltx

#endif  // LTX_CUDA_PRIMARY_CONTEXT_H_
