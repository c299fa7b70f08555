// Filling the all-to-all kernel's parameters for one rank, launching it, and its copy-engine
// announcement.
#include "ltx/collectives/alltoall_launch.h"

#include <cstdint>

#include "kernels/alltoall_kernel.h"
#include "ltx/collectives/kernel_params.h"
#include "ltx/cuda/cuda_status.h"
#include "ltx/status_macros.h"

namespace ltx {

AllToAllKernelParams AllToAllParamsOf(const PeerStoreView& view, const AllToAllLayout& layout,
                                      const RankBuffers& buffers, const ResolvedCall& call) {
  AllToAllKernelParams params;
  SetSharedKernelParams(view, buffers, call, &params);
  params.geometry = layout.geometry;
  params.digest = layout.digest;
  params.dtype = static_cast<int32_t>(layout.dtype);
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
  if (call.protocol != Protocol::kOneTrip) {
    return LaunchAllToAllKernel(params, call.blocks, call.phase_timestamps, buffers.stream);
  }
  return LaunchAllToAllOneTripKernel(params, OneTripLaunchOf(call), buffers.stream);
}

absl::Status LoadAllToAllKernels(int* resident_blocks_per_sm) {
  LTX_RETURN_IF_ERROR(CudaStatus(LoadAllToAllKernel(resident_blocks_per_sm),
                                 "loading the direct all-to-all kernel"));
  return CudaStatus(LoadAllToAllOneTripKernel(resident_blocks_per_sm),
                    "loading the one-trip all-to-all kernel");
}

}  // namespace ltx
