// Turns CUDA runtime errors into absl::Status with canonical codes and a message that says what
// was being done, on which device.
#ifndef LTX_CUDA_CUDA_STATUS_H_
#define LTX_CUDA_CUDA_STATUS_H_

#include <cuda_runtime_api.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ltx {

// What the message of a fault on the GPU adds to the CUDA error (CudaStatus, DriverStatus).
inline constexpr char kContextLost[] =
    "; a fault on the GPU, which ends its CUDA context for the whole process: only a new process "
    "can use the GPU again";

// OK for cudaSuccess; otherwise a Status whose code fits the error (cudaErrorNoDevice, a driver
// too old, peer access missing, no kernel image for the GPU -> FailedPrecondition;
// cudaErrorNotSupported -> Unimplemented; out of memory or of launch resources ->
// ResourceExhausted; cudaErrorInvalidValue and bad handles -> InvalidArgument; a fault on the
// GPU (an illegal address or instruction, a failed launch, a device assert, an uncorrectable
// ECC error: CUDA's sticky errors) -> DataLoss, its message ending with kContextLost; others ->
// Internal) and whose message is "<what>: <cudaGetErrorName>: <cudaGetErrorString>".
// Thread-safe.
absl::Status CudaStatus(cudaError_t error, absl::string_view what);

// CudaStatus with "rank <rank>: <what>" as what was being done. Formats nothing on success, so
// it costs nothing on a hot path. Thread-safe.
absl::Status RankCudaStatus(cudaError_t error, int rank, absl::string_view what);

}  // namespace ltx

#endif  // LTX_CUDA_CUDA_STATUS_H_
