// Turns CUDA runtime errors into absl::Status with canonical codes and a message that says what
// was being done, on which device.
#ifndef LTX_CUDA_CUDA_STATUS_H_
#define LTX_CUDA_CUDA_STATUS_H_

#include <cuda_runtime_api.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ltx {

// OK for cudaSuccess; otherwise a Status whose code fits the error (for example
// cudaErrorNoDevice -> FailedPrecondition, cudaErrorMemoryAllocation -> ResourceExhausted,
// cudaErrorInvalidValue -> InvalidArgument, others -> Internal) and whose message is
// "<what>: <cudaGetErrorName>: <cudaGetErrorString>". Thread-safe.
absl::Status CudaStatus(cudaError_t error, absl::string_view what);

// CudaStatus with "rank <rank>: <what>" as what was being done. Formats nothing on success, so
// it costs nothing on a hot path. Thread-safe.
absl::Status RankCudaStatus(cudaError_t error, int rank, absl::string_view what);

}  // namespace ltx

#endif  // LTX_CUDA_CUDA_STATUS_H_
