// Driver entry points through the CUDA runtime, and driver errors as absl::Status.
#include "ltx/cuda/driver_api.h"

#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <cuda_runtime_api.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ltx/cuda/cuda_status.h"

namespace ltx {
namespace {

// The name of a driver error, or "" when the driver cannot say.
std::string DriverErrorName(CUresult result) {
  static const PFN_cuGetErrorName_v6000 get_error_name = [] {
    absl::StatusOr<PFN_cuGetErrorName_v6000> function =
        DriverFunction<PFN_cuGetErrorName_v6000>("cuGetErrorName");
    return function.ok() ? *function : nullptr;
  }();
  const char* name = nullptr;
  if (get_error_name == nullptr || get_error_name(result, &name) != CUDA_SUCCESS ||
      name == nullptr) {
    return "";
  }
  return name;
}

}  // namespace

absl::StatusOr<void*> DriverEntryPoint(const char* name) {
  void* address = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t error = cudaGetDriverEntryPointByVersion(name, &address, kDriverAbiVersion,
                                                             cudaEnableDefault, &found);
  if (error != cudaSuccess) {
    cudaGetLastError();
    return absl::FailedPreconditionError(absl::StrFormat(
        "the CUDA driver function %s is not available (cudaGetDriverEntryPointByVersion: %s: %s)",
        name, cudaGetErrorName(error), cudaGetErrorString(error)));
  }
  if (found != cudaDriverEntryPointSuccess || address == nullptr) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "the CUDA driver has no function %s for CUDA %d.%d (query result %d)", name,
        kDriverAbiVersion / 1000, kDriverAbiVersion % 1000 / 10, static_cast<int>(found)));
  }
  return address;
}

bool CudaDriverInstalled() {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver == nullptr) return false;
  dlclose(driver);
  return true;
}

absl::Status DriverStatus(CUresult result, absl::string_view what) {
  if (result == CUDA_SUCCESS) return absl::OkStatus();
  const std::string name = DriverErrorName(result);
  const std::string message =
      absl::StrCat(what, ": ", name.empty() ? "CUDA driver error" : name, " (", result, ")");
  switch (result) {
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_INVALID_DEVICE:
      return absl::InvalidArgumentError(message);
    case CUDA_ERROR_OUT_OF_MEMORY:
      return absl::ResourceExhaustedError(message);
    case CUDA_ERROR_NOT_SUPPORTED:
      return absl::UnimplementedError(message);
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_PEER_ACCESS_UNSUPPORTED:
      return absl::FailedPreconditionError(message);
    // A fault on the GPU, as CudaStatus's.
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
      return absl::DataLossError(absl::StrCat(message, kContextLost));
    default:
      return absl::InternalError(message);
  }
}

}  // namespace ltx
