// The one-trip AllGather kernel for small shards: the one-trip protocol
// (kernels/protocols/one_trip_protocol.cuh) with the AllGather's plan, in which each rank sends its
// whole shard, 8 payload bytes and two copies of the op's flag per 16-byte line, to every peer, and
// each receiver unpacks every peer's shard at that peer's token offset of its output.
#include <cstdint>

#include "kernels/allgather/allgather_kernel.h"
#include "kernels/device/phase_clock.cuh"
#include "kernels/protocols/copy_plan.h"
#include "kernels/protocols/one_trip_launch.cuh"
#include "kernels/protocols/one_trip_protocol.cuh"
#include "kernels/wire/one_trip_layout.h"

namespace ltx {
namespace {

// Payload `index` of a shard of `bytes` bytes at `input`: 8 bytes, fewer at the end.
__device__ uint64_t LoadPayload(const uint8_t* input, int64_t index, int64_t bytes) {
  const int64_t offset = index * kOneTripPayloadBytes;
  const int64_t count =
      bytes - offset < kOneTripPayloadBytes ? bytes - offset : kOneTripPayloadBytes;
  const uint8_t* from = input + offset;
  if (count == kOneTripPayloadBytes && (reinterpret_cast<uint64_t>(from) & 7) == 0) {
    return __ldg(reinterpret_cast<const unsigned long long*>(from));
  }
  uint64_t payload = 0;
  for (int64_t k = 0; k < count; ++k) payload |= static_cast<uint64_t>(from[k]) << (8 * k);
  return payload;
}

// Writes payload `index` of the shard with geometry `g` into `output`.
__device__ void StorePayload(uint64_t payload, int64_t index, const ShardGeometry& g,
                             uint8_t* output) {
  const int64_t bytes = FlatShardBytes(g);
  const int64_t offset = index * kOneTripPayloadBytes;
  const int64_t count =
      bytes - offset < kOneTripPayloadBytes ? bytes - offset : kOneTripPayloadBytes;
  const int64_t slice = offset / g.shard_bytes;
  const int64_t within = offset - slice * g.shard_bytes;
  uint8_t* to = output + slice * g.output_batch_stride + g.output_offset + within;
  if (count == kOneTripPayloadBytes && within + count <= g.shard_bytes &&
      (reinterpret_cast<uint64_t>(to) & 7) == 0) {
    *reinterpret_cast<uint64_t*>(to) = payload;
    return;
  }
  for (int64_t k = 0; k < count; ++k) {
    const int64_t flat = offset + k;
    const int64_t s = flat / g.shard_bytes;
    output[s * g.output_batch_stride + g.output_offset + (flat - s * g.shard_bytes)] =
        static_cast<uint8_t>(payload >> (8 * k));
  }
}

// The AllGather's one-trip plan: this rank sends its whole shard to every peer, and unpacks
// every peer's shard at that peer's token offset of its output.
struct AllGatherOneTripPlan {
  // This rank's own shard is what it sends every peer: SendLines stores each payload it loads
  // for the peer one place on into its own output as well.
  static constexpr bool kOwnPartIsSent = true;
  const AllGatherKernelParams& p;

  __device__ int64_t SentBytes(int /*target*/) const { return FlatShardBytes(p.geometry); }
  __device__ uint64_t Payload(int /*target*/, int64_t index) const {
    return LoadPayload(static_cast<const uint8_t*>(p.input), index, FlatShardBytes(p.geometry));
  }
  __device__ ShardGeometry GeometryOf(int source) const {
    return ShardGeometryOf(p.geometry.batch, p.row_bytes, p.total_tokens, p.token_counts[source],
                           p.prefix_tokens[source]);
  }
  __device__ int64_t ReceivedBytes(int source) const { return FlatShardBytes(GeometryOf(source)); }
  __device__ void Store(int source, int64_t index, uint64_t payload) const {
    StorePayload(payload, index, GeometryOf(source), static_cast<uint8_t*>(p.output));
  }
};

// `Clock` is NoPhaseClock in production, PhaseClock<OneTripPhase> for the phase timestamps.
template <typename Clock>
__global__ void __launch_bounds__(kOneTripThreads)
    OneTripKernel(const AllGatherKernelParams p, const Clock clock) {
  RunOneTripOp(p, AllGatherOneTripPlan{p}, clock);
}

}  // namespace

cudaError_t LaunchOneTripKernel(const AllGatherKernelParams& params, const OneTripLaunch& launch,
                                cudaStream_t stream) {
  return LaunchOneTripKernelAs(OneTripKernel<NoPhaseClock>, OneTripKernel<PhaseClock<OneTripPhase>>,
                               params, launch, stream);
}

cudaError_t LoadOneTripKernel(int* resident_blocks_per_sm) {
  return LoadOneTripKernelAs(OneTripKernel<NoPhaseClock>, OneTripKernel<PhaseClock<OneTripPhase>>,
                             resident_blocks_per_sm);
}

}  // namespace ltx
