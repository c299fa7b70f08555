// Filling the AllGather kernel's parameters for one rank and launching it.
#include "ltx/collectives/allgather_launch.h"

#include <cstdint>

#include "kernels/allgather/allgather_fp8_kernel.h"
#include "kernels/allgather/allgather_kernel.h"
#include "ltx/collectives/kernel_params.h"

namespace ltx {

AllGatherKernelParams AllGatherParamsOf(const PeerStoreView& view, const AllGatherLayout& layout,
                                        const RankBuffers& buffers, const ResolvedCall& call) {
  AllGatherKernelParams params;
  SetSharedKernelParams(view, buffers, call, layout.tensors, &params);
  for (int peer = 0; peer < view.world_size; ++peer) {
    params.token_counts[peer] = layout.token_counts[peer];
    params.prefix_tokens[peer] = layout.prefix_tokens[peer];
  }
  params.geometry = layout.GeometryOf(view.rank);
  params.counts_digest = layout.digest;
  params.total_tokens = layout.total_tokens;
  params.row_bytes = layout.row_bytes;
  params.dtype = static_cast<int32_t>(layout.dtype);
  return params;
}

EntryAnnouncement AllGatherCopyEngineAnnouncement(const AllGatherLayout& layout,
                                           const RankBuffers& buffers, const ResolvedCall& call) {
  // The announcement reads no part of the view.
  return AnnouncementOf(AllGatherParamsOf(PeerStoreView(), layout, buffers, call),
                        AnnouncedProtocol::kCopyEngine);
}

cudaError_t LaunchAllGather(const PeerStoreView& view, const AllGatherLayout& layout,
                            const RankBuffers& buffers, const ResolvedCall& call) {
  const AllGatherKernelParams params = AllGatherParamsOf(view, layout, buffers, call);
  if (layout.wire == WireFormat::kFp8E4M3) {
    return LaunchAllGatherFp8(params, call.blocks, buffers.stream);
  }
  if (call.protocol != Protocol::kOneTrip) {
    return LaunchAllGatherKernel(params, call.blocks, call.phase_timestamps, buffers.stream);
  }
  return LaunchOneTripKernel(params, OneTripLaunchOf(call), buffers.stream);
}

}  // namespace ltx
