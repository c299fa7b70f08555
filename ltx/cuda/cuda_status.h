// Turns CUDA runtime errors into absl::Status with canonical codes and a message that says what
// was being done, on which device.
#ifndef LTX_CUDA_CUDA_STATUS_H_
#define LTX_CUDA_CUDA_STATUS_H_

#include <cuda_runtime_api.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ltx {

// OK for cudaSuccess; otherwise a Status whose code fits the error (cudaErrorNoDevice, a driver
// too old, peer access missing, no kernel image for the GPU -> FailedPrecondition;
// cudaErrorNotSupported -> Unimplemented; out of memory or of launch resources ->
// ResourceExhausted; cudaErrorInvalidValue and bad handles -> InvalidArgument; others, the
// faults that end a context among them -> Internal) and whose message is
// "<what>: <cudaGetErrorName>: <cudaGetErrorString>". Thread-safe.
absl::Status CudaStatus(cudaError_t error, absl::string_view what);

// CudaStatus with "rank <rank>: <what>" as what was being done. Formats nothing on success, so
// it costs nothing on a hot path. Thread-safe.
absl::Status RankCudaStatus(cudaError_t error, int rank, absl::string_view what);

}  // namespace ltx

#endif  // LTX_CUDA_CUDA_STATUS_H_
