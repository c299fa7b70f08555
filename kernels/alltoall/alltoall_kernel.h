// Host interface of the Ulysses all-to-all kernels (sequence <-> heads): the arguments one
// rank's launch carries and the launchers of the direct and the one-trip kernel. The runtime
// validates arguments before it gets here; this layer only launches.
#ifndef KERNELS_ALLTOALL_ALLTOALL_KERNEL_H_
#define KERNELS_ALLTOALL_ALLTOALL_KERNEL_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/alltoall/alltoall_plan.h"
#include "kernels/protocols/one_trip_launch.h"
#include "kernels/wire/collective.h"
#include "kernels/wire/entry_announcement.h"
#include "kernels/wire/error_record.h"
#include "kernels/wire/host_device.h"
#include "kernels/wire/one_trip_layout.h"
#include "kernels/wire/phase_timestamps.h"
#include "kernels/wire/signal_layout.h"

namespace ltx {

// Everything one rank's kernel needs. Passed by value, so a CUDA graph that captures the launch
// replays exactly these values; the op number is not among them: it lives in the signal region
// and the kernel advances it (the same counter as the AllGather's).
struct AllToAllKernelParams {
  static constexpr Collective kCollective = Collective::kAllToAll;
  const void* input = nullptr;
  void* output = nullptr;
  // Every rank's signal region, indexed by rank; peers' entries are peer pointers.
  SignalRegion* signals[kMaxWorldSize] = {};
  // This rank's error record: device pointer of host-mapped pinned memory.
  DeviceErrorRecord* error_record = nullptr;
  // One-trip path: every rank's staging area, indexed by rank (peer pointers).
  OneTripLine* staging[kMaxWorldSize] = {};
  AllToAllGeometry geometry;
  // Tensors the op moves (AllToAllShape::tensors): `input` and `output` are tensor 0's; tensor
  // j's (1 <= j < tensors) are more_inputs[j - 1] and more_outputs.address[j - 1], which the
  // direct kernel announces beside `output`. The one-trip kernel moves one tensor.
  int32_t tensors = 1;
  const void* more_inputs[kMaxOpTensors - 1] = {};
  MoreOutputs more_outputs = {};
  // Digest of the op kind and shape (AllToAllLayout::digest): what ranks compare at entry,
  // beside the dtype, batch, total tokens and token row size of `geometry`.
  uint64_t digest = 0;
  int32_t dtype = 0;
  // FP8 wire (kernels/alltoall/alltoall_fp8_kernel.h): elements per scaled vector, the head
  // size; 0 on the native wire.
  int64_t vector_elements = 0;
  int32_t rank = 0;
  int32_t world_size = 0;
  uint64_t timeout_ns = 0;
  // The Runtime's reset generation at the launch (a captured graph keeps it).
  uint64_t generation = 0;
};

// What the rank of `params` announces to its peers at the entry of an op it runs on `protocol`
// (kDirect or kOneTrip): its output, the op's digest (kind and shape), dtype, token row size,
// batch and total tokens, the protocol and its reset generation.
LTX_HOST_DEVICE inline EntryAnnouncement AnnouncementOf(const AllToAllKernelParams& params,
                                                        AnnouncedProtocol protocol) {
  return MakeEntryAnnouncement(reinterpret_cast<uint64_t>(params.output), params.dtype,
                               params.geometry.token_bytes, params.geometry.batch,
                               params.geometry.total_tokens, params.digest, protocol,
                               params.generation);
}

// Threads per block of the direct all-to-all kernel.
inline constexpr int kAllToAllThreads = 512;

// Enqueues the all-to-all kernel of one rank on `stream` with `blocks` thread blocks (any
// number >= 1): the direct protocol (entry barrier, stores of every piece of every tensor
// straight into its target's output of that tensor at the final position, exit barrier). With `timestamps` set, the
// instantiation that records the %globaltimer time of each DirectPhase of each block there
// (device memory of the stream's GPU; a diagnostic; timed and untimed ops interoperate).
// Returns the launch error, if any. Thread-safe; the caller's current device must be the
// stream's device.
cudaError_t LaunchAllToAllKernel(const AllToAllKernelParams& params, int blocks,
                                 const PhaseTimestamps* timestamps, cudaStream_t stream);

// Enqueues the one-trip all-to-all kernel of one rank on `stream` as `launch` says (blocks,
// early start, phase timestamps; kernels/protocols/one_trip_launch.h): each rank stores, per peer,
// the piece that peer needs as one-trip lines into the peer's staging, stores its own piece into
// its output beside them, and unpacks the lines it receives into its output. Every rank of the
// op must take the one-trip path, and every piece must be at most kOneTripMaxShardBytes.
// Returns the launch error, e.g. for early start on a GPU before sm_90. Thread-safe; the
// caller's current device must be the stream's device.
cudaError_t LaunchAllToAllOneTripKernel(const AllToAllKernelParams& params,
                                        const OneTripLaunch& launch, cudaStream_t stream);

// Load the direct and the one-trip kernel (each in both instantiations) onto the current
// device, so that no first call waits for the device to be idle under CUDA's lazy loading.
// Each lowers *resident_blocks_per_sm as LoadAllGatherKernel does. Return the CUDA error.
cudaError_t LoadAllToAllKernel(int* resident_blocks_per_sm);
cudaError_t LoadAllToAllOneTripKernel(int* resident_blocks_per_sm);

}  // namespace ltx

#endif  // KERNELS_ALLTOALL_ALLTOALL_KERNEL_H_
