// CUDA error to absl::Status conversion.
#include "ltx/cuda/cuda_status.h"

#include "absl/strings/str_cat.h"

namespace ltx {

absl::Status CudaStatus(cudaError_t error, absl::string_view what) {
  if (error == cudaSuccess) return absl::OkStatus();
  const std::string message =
      absl::StrCat(what, ": ", cudaGetErrorName(error), ": ", cudaGetErrorString(error));
  switch (error) {
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorPeerAccessUnsupported:
    case cudaErrorPeerAccessNotEnabled:
    case cudaErrorDevicesUnavailable:
    case cudaErrorNoKernelImageForDevice:  // A build without this GPU's architecture.
    case cudaErrorUnsupportedPtxVersion:
      return absl::FailedPreconditionError(message);
    case cudaErrorNotSupported:  // As the driver API's CUDA_ERROR_NOT_SUPPORTED (DriverStatus).
      return absl::UnimplementedError(message);
    case cudaErrorMemoryAllocation:
    case cudaErrorLaunchOutOfResources:
      return absl::ResourceExhaustedError(message);
    case cudaErrorInvalidValue:
    case cudaErrorInvalidDevice:
    case cudaErrorInvalidDevicePointer:
    case cudaErrorInvalidResourceHandle:
      return absl::InvalidArgumentError(message);
    // A fault on the GPU: the error is sticky, the CUDA context of the whole process is lost.
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
      return absl::DataLossError(absl::StrCat(message, kContextLost));
    default:
      return absl::InternalError(message);
  }
}

absl::Status RankCudaStatus(cudaError_t error, int rank, absl::string_view what) {
  if (error == cudaSuccess) return absl::OkStatus();
  return CudaStatus(error, absl::StrCat("rank ", rank, ": ", what));
}

}  // namespace ltx
