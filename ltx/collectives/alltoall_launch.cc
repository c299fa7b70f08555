// Filling the all-to-all kernel's parameters for one rank, launching it, and its copy-engine
// announcement.
#include "ltx/collectives/alltoall_launch.h"

#include <cstdint>

#include "kernels/alltoall/alltoall_fp8_kernel.h"
#include "kernels/alltoall/alltoall_kernel.h"
#include "ltx/collectives/kernel_params.h"

namespace ltx {

AllToAllKernelParams AllToAllParamsOf(const PeerStoreView& view, const AllToAllLayout& layout,
                                      const RankBuffers& buffers, const ResolvedCall& call) {
  AllToAllKernelParams params;
  SetSharedKernelParams(view, buffers, call, layout.tensors, &params);
  params.geometry = layout.geometry;
  params.digest = layout.digest;
  params.dtype = static_cast<int32_t>(layout.dtype);
  if (layout.wire == WireFormat::kFp8E4M3) params.vector_elements = layout.head_dim;
  return params;
}

EntryAnnouncement AllToAllCopyEngineAnnouncement(const AllToAllLayout& layout,
                                           const RankBuffers& buffers, const ResolvedCall& call) {
  // The announcement reads no part of the view.
  return AnnouncementOf(AllToAllParamsOf(PeerStoreView(), layout, buffers, call),
                        AnnouncedProtocol::kCopyEngine);
}

cudaError_t LaunchAllToAll(const PeerStoreView& view, const AllToAllLayout& layout,
                           const RankBuffers& buffers, const ResolvedCall& call) {
  const AllToAllKernelParams params = AllToAllParamsOf(view, layout, buffers, call);
  if (layout.wire == WireFormat::kFp8E4M3) {
    return LaunchAllToAllFp8(params, call.blocks, buffers.stream);
  }
  if (call.protocol != Protocol::kOneTrip) {
    return LaunchAllToAllKernel(params, call.blocks, call.phase_timestamps, buffers.stream);
  }
  return LaunchAllToAllOneTripKernel(params, OneTripLaunchOf(call), buffers.stream);
}

}  // namespace ltx
