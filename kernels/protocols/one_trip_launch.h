// How a one-trip kernel (the AllGather's or the all-to-all's) is launched, beyond its
// parameters: block count, early start, phase timestamps. Host-visible.
#ifndef KERNELS_PROTOCOLS_ONE_TRIP_LAUNCH_H_
#define KERNELS_PROTOCOLS_ONE_TRIP_LAUNCH_H_

#include "kernels/wire/phase_timestamps.h"

namespace ltx {

// How the one-trip kernel of one rank is launched, beyond its parameters.
struct OneTripLaunch {
  int blocks = 1;
  // Programmatic dependent launch (needs sm_90): the kernel's blocks may be scheduled while the
  // previous kernel of the stream finishes, and wait for it on the GPU before they touch memory
  // (kernels/device/grid_dependency.cuh); the protocol is unchanged.
  bool early_start = false;
  // When set, the instantiation that records the %globaltimer time of each OneTripPhase of each
  // block there (device memory of the stream's GPU; a diagnostic). Timed and untimed ops
  // interoperate.
  const PhaseTimestamps* timestamps = nullptr;
};

}  // namespace ltx

#endif  // KERNELS_PROTOCOLS_ONE_TRIP_LAUNCH_H_
