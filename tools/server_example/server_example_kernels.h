// The stand-in compute of the server example: a kernel that produces this step's activations and
// one that reduces the gathered sequence to a checksum that depends on where each element lies,
// plus the host-side functions both sides agree on.
#ifndef LTX_TOOLS_SERVER_EXAMPLE_SERVER_EXAMPLE_KERNELS_H_
#define LTX_TOOLS_SERVER_EXAMPLE_SERVER_EXAMPLE_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/wire/host_device.h"

namespace ltx {

// The activation element `index` of `rank` at `step`.
LTX_HOST_DEVICE inline uint16_t ExampleActivation(int rank, uint64_t step, int64_t index) {
  uint64_t x = (static_cast<uint64_t>(rank) << 56) ^ (step << 32) ^ static_cast<uint64_t>(index);
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return static_cast<uint16_t>(x);
}

// Writes `count` activations of `rank` for the step stored at `step` (device memory, so a
// captured graph picks up each new step).
cudaError_t LaunchFillActivations(uint16_t* out, int64_t count, int rank, const uint64_t* step,
                                  cudaStream_t stream);

// What element `index` with value `value` adds to the checksum: the value weighted by its place,
// so that elements gathered out of order change the sum.
LTX_HOST_DEVICE inline unsigned long long ChecksumTerm(int64_t index, uint16_t value) {
  return value * (2 * static_cast<unsigned long long>(index) + 1);
}

// Adds ChecksumTerm of each of the `count` elements of `values` into `*sum` (which the caller
// zeroes); the sum wraps modulo 2^64.
cudaError_t LaunchChecksum(const uint16_t* values, int64_t count, unsigned long long* sum,
                           cudaStream_t stream);

}  // namespace ltx

#endif  // LTX_TOOLS_SERVER_EXAMPLE_SERVER_EXAMPLE_KERNELS_H_
