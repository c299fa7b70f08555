// Host interface of the AllGather kernel: the arguments one rank's launch carries and the
// launcher. The runtime validates arguments before it gets here; this layer only launches.
// Protocol of both kernels: kernels/PROTOCOL.md.
#ifndef KERNELS_ALLGATHER_ALLGATHER_KERNEL_H_
#define KERNELS_ALLGATHER_ALLGATHER_KERNEL_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/protocols/copy_plan.h"
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
// and the kernel advances it (kernels/PROTOCOL.md).
struct AllGatherKernelParams {
  static constexpr Collective kCollective = Collective::kAllGather;
  const void* input = nullptr;
  void* output = nullptr;
  // Every rank's signal region, indexed by rank; peers' entries are peer pointers.
  SignalRegion* signals[kMaxWorldSize] = {};
  // This rank's error record: device pointer of host-mapped pinned memory.
  DeviceErrorRecord* error_record = nullptr;
  // One-trip path: every rank's staging area, indexed by rank (peer pointers).
  OneTripLine* staging[kMaxWorldSize] = {};
  // This rank's shard in its input and in every output.
  ShardGeometry geometry;
  // Tensors the op moves (AllGatherShape::tensors): `input` and `output` are tensor 0's; tensor
  // j's (1 <= j < tensors) are more_inputs[j - 1] and more_outputs.address[j - 1], which the
  // direct kernel announces beside `output`. The one-trip kernel moves one tensor.
  int32_t tensors = 1;
  const void* more_inputs[kMaxOpTensors - 1] = {};
  MoreOutputs more_outputs = {};
  // Every rank's token count and token prefix (the one-trip receiver unpacks every shard).
  int64_t token_counts[kMaxWorldSize] = {};
  int64_t prefix_tokens[kMaxWorldSize] = {};
  // What ranks compare at entry; counts_digest is AllGatherLayout::digest (count vector and
  // tensor count).
  uint64_t counts_digest = 0;
  int64_t total_tokens = 0;
  int64_t row_bytes = 0;
  int32_t dtype = 0;
  int32_t rank = 0;
  int32_t world_size = 0;
  uint64_t timeout_ns = 0;
  // The Runtime's reset generation at the launch (a captured graph keeps it).
  uint64_t generation = 0;
};

// What the rank of `params` announces to its peers at the entry of an op it runs on `protocol`
// (kDirect or kOneTrip).
LTX_HOST_DEVICE inline EntryAnnouncement AnnouncementOf(const AllGatherKernelParams& params,
                                                        AnnouncedProtocol protocol) {
  return MakeEntryAnnouncement(reinterpret_cast<uint64_t>(params.output), params.dtype,
                               params.row_bytes, params.geometry.batch, params.total_tokens,
                               params.counts_digest, protocol, params.generation);
}

// Threads per block of the AllGather kernel.
inline constexpr int kAllGatherThreads = 512;

// Enqueues the AllGather kernel of one rank on `stream` with `blocks` thread blocks (any
// number >= 1): every tensor's shard into every rank's output of that tensor. With `timestamps`
// set, the instantiation that records the %globaltimer time of each DirectPhase of each block there
// (device memory of the stream's GPU; a diagnostic; timed and untimed ops interoperate). Returns
// the launch error, if any. Thread-safe; the caller's current device must be the stream's device.
cudaError_t LaunchAllGatherKernel(const AllGatherKernelParams& params, int blocks,
                                  const PhaseTimestamps* timestamps, cudaStream_t stream);

// Enqueues the one-trip kernel of one rank on `stream` as `launch` says (same contract as
// LaunchAllGatherKernel). Every rank of the op must take the one-trip path, and every shard must
// be at most kOneTripMaxShardBytes. Returns the launch error, e.g. for early_start on a GPU
// before sm_90.
cudaError_t LaunchOneTripKernel(const AllGatherKernelParams& params, const OneTripLaunch& launch,
                                cudaStream_t stream);

// Load the direct and the one-trip kernel (each in both instantiations) onto the current device.
// Under CUDA's lazy loading (the default) a kernel is otherwise loaded at its first launch, and
// loading waits until the device is idle: a first call would block the host behind unrelated work.
// Each lowers *resident_blocks_per_sm to the fewest blocks of its instantiations that one SM of
// the device keeps resident (the occupancy API). Return the CUDA error.
cudaError_t LoadAllGatherKernel(int* resident_blocks_per_sm);
cudaError_t LoadOneTripKernel(int* resident_blocks_per_sm);

}  // namespace ltx

#endif  // KERNELS_ALLGATHER_ALLGATHER_KERNEL_H_
