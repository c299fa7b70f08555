// CUDA driver API calls without linking libcuda: ltx links only the static CUDA runtime, so
// driver functions are looked up at run time through the runtime
// (cudaGetDriverEntryPointByVersion), in the driver the runtime itself loaded.
#ifndef LTX_CUDA_DRIVER_API_H_
#define LTX_CUDA_DRIVER_API_H_

#include <cuda.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ltx {

// The CUDA version whose driver ABI ltx asks for (1000 * major + 10 * minor).
inline constexpr int kDriverAbiVersion = 12000;

// The address of driver function `name` (its base name, e.g. "cuMemSetAccess") in the ABI of
// CUDA 12.0: cast it to the newest PFN_<name>_v<version> typedef of <cudaTypedefs.h> whose
// version is at most kDriverAbiVersion. FailedPrecondition when no CUDA driver is loaded or it
// lacks the function. Leaves no CUDA error behind (cudaGetLastError is clean afterwards).
// Thread-safe; each call asks the runtime again, so callers cache what they resolve.
absl::StatusOr<void*> DriverEntryPoint(const char* name);

// DriverEntryPoint cast to the function pointer type `Function` (a PFN_<name>_v<version>
// typedef, as above).
template <typename Function>
absl::StatusOr<Function> DriverFunction(const char* name) {
  absl::StatusOr<void*> address = DriverEntryPoint(name);
  if (!address.ok()) return address.status();
  return reinterpret_cast<Function>(*address);
}

// Whether this process can load the CUDA driver library (libcuda.so.1): false on a machine with
// no driver installed, where the CUDA runtime reports an "insufficient" driver. Thread-safe.
bool CudaDriverInstalled();

// OK for CUDA_SUCCESS; otherwise a Status whose code fits the driver error
// (CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_INVALID_DEVICE -> InvalidArgument;
// CUDA_ERROR_OUT_OF_MEMORY -> ResourceExhausted; CUDA_ERROR_NOT_SUPPORTED -> Unimplemented;
// CUDA_ERROR_NO_DEVICE, CUDA_ERROR_NOT_INITIALIZED, CUDA_ERROR_DEINITIALIZED,
// CUDA_ERROR_PEER_ACCESS_UNSUPPORTED -> FailedPrecondition; a fault on the GPU -> DataLoss,
// as CudaStatus; others -> Internal) and whose message is "<what>: <error name> (<number>)".
// Thread-safe.
absl::Status DriverStatus(CUresult result, absl::string_view what);

}  // namespace ltx

#endif  // LTX_CUDA_DRIVER_API_H_
