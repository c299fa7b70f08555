// Primary context ids through the driver's cuCtxGetId, resolved once per process.
#include "ltx/cuda/primary_context.h"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include "absl/strings/str_cat.h"
#include "ltx/cuda/cuda_status.h"
#include "ltx/cuda/driver_api.h"
#include "ltx/status_macros.h"

namespace ltx {
namespace {

absl::StatusOr<PFN_cuCtxGetId_v12000> GetContextIdFunction() {
  static const absl::StatusOr<PFN_cuCtxGetId_v12000>* const function =
      new absl::StatusOr<PFN_cuCtxGetId_v12000>(
          DriverFunction<PFN_cuCtxGetId_v12000>("cuCtxGetId"));  // Never destroyed.
  return *function;
}

}  // namespace

absl::StatusOr<uint64_t> PrimaryContextId(int device) {
  LTX_ASSIGN_OR_RETURN(const PFN_cuCtxGetId_v12000 get_id, GetContextIdFunction());
  int previous = -1;
  cudaError_t error = cudaGetDevice(&previous);
  // cudaSetDevice makes the device's primary context current, creating it if need be.
  if (error == cudaSuccess) error = cudaSetDevice(device);
  if (error != cudaSuccess) {
    cudaGetLastError();
    return CudaStatus(error, absl::StrCat("making GPU ", device, " current"));
  }
  unsigned long long id = 0;  // NOLINT(runtime/int): the driver's type.
  const CUresult result = get_id(nullptr, &id);
  if (previous != device) cudaSetDevice(previous);
  LTX_RETURN_IF_ERROR(DriverStatus(result, absl::StrCat("cuCtxGetId(GPU ", device, ")")));
  return static_cast<uint64_t>(id);
}

}  // namespace ltx
