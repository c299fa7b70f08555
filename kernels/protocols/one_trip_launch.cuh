// Launching one instantiation of a one-trip kernel as a OneTripLaunch says (ordinary launch, or
// programmatic dependent launch for early start), and choosing the instantiation: the
// production one (NoPhaseClock) or the timed one (PhaseClock<OneTripPhase>). Shared by the
// AllGather's and the all-to-all's one-trip kernels.
#ifndef KERNELS_PROTOCOLS_ONE_TRIP_LAUNCH_CUH_
#define KERNELS_PROTOCOLS_ONE_TRIP_LAUNCH_CUH_

#include <cuda_runtime_api.h>

#include "kernels/device/kernel_residency.cuh"
#include "kernels/device/phase_clock.cuh"
#include "kernels/protocols/one_trip_launch.h"
#include "kernels/protocols/one_trip_protocol.cuh"
#include "kernels/wire/phase_timestamps.h"

namespace ltx {

// Enqueues `kernel` (one instantiation of a one-trip kernel, whose arguments are its parameters
// and its clock) on `stream` with `launch.blocks` blocks of kOneTripThreads, early as
// `launch.early_start` says. Returns the launch error, e.g. for early start before sm_90.
template <typename Params, typename Clock>
cudaError_t LaunchOneTripInstance(void (*kernel)(Params, Clock), const Params& params,
                                  const OneTripLaunch& launch, const Clock& clock,
                                  cudaStream_t stream) {
  if (!launch.early_start) {
    kernel<<<launch.blocks, kOneTripThreads, 0, stream>>>(params, clock);
    return cudaGetLastError();
  }
  cudaLaunchAttribute attribute;
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(launch.blocks);
  config.blockDim = dim3(kOneTripThreads);
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  return cudaLaunchKernelEx(&config, kernel, params, clock);
}

// Enqueues the instantiation of a one-trip kernel that `launch` asks for: `timed` recording
// into *launch.timestamps when they are set, else `untimed` (the production one).
template <typename Params>
cudaError_t LaunchOneTripKernelAs(void (*untimed)(Params, NoPhaseClock),
                                  void (*timed)(Params, PhaseClock<OneTripPhase>),
                                  const Params& params, const OneTripLaunch& launch,
                                  cudaStream_t stream) {
  return launch.timestamps == nullptr
             ? LaunchOneTripInstance(untimed, params, launch, NoPhaseClock(), stream)
             : LaunchOneTripInstance(timed, params, launch,
                                     PhaseClock<OneTripPhase>(*launch.timestamps), stream);
}

// Loads both instantiations of a one-trip kernel onto the current device and lowers
// *resident_blocks_per_sm to what one SM keeps resident of either (LoadKernel). Returns the CUDA
// error.
template <typename Params>
cudaError_t LoadOneTripKernelAs(void (*untimed)(Params, NoPhaseClock),
                                void (*timed)(Params, PhaseClock<OneTripPhase>),
                                int* resident_blocks_per_sm) {
  const cudaError_t error = LoadKernel(untimed, kOneTripThreads, resident_blocks_per_sm);
  if (error != cudaSuccess) return error;
  return LoadKernel(timed, kOneTripThreads, resident_blocks_per_sm);
}

}  // namespace ltx

#endif  // KERNELS_PROTOCOLS_ONE_TRIP_LAUNCH_CUH_
