// The all-to-all's op for the Runtime's funnel, and the loading of its kernels.
#include "ltx/collectives/alltoall_op.h"

#include "kernels/alltoall/alltoall_kernel.h"
#include "kernels/alltoall/alltoall_plan.h"
#include "ltx/collectives/alltoall_launch.h"
#include "ltx/cuda/cuda_status.h"
#include "ltx/runtime/buffer_checks.h"
#include "ltx/status_macros.h"

namespace ltx {

CollectiveOp AllToAllOpOf(const AllToAllLayout& layout) {
  CollectiveOp op;
  op.collective = Collective::kAllToAll;
  op.rank_call = "AllToAllRank";
  op.tensors = layout.tensors;
  for (int rank = 0; rank < layout.world_size; ++rank) {
    op.input_bytes[rank] = layout.InputBytes(rank);
    op.output_bytes[rank] = layout.OutputBytes(rank);
    op.shard_bytes[rank] = layout.tensors * LargestPieceBytes(layout.geometry, rank);
    op.in_place_offset[rank] = kNotInPlace;
  }
  op.launch_kernel = [&layout](const PeerStoreView& view, const RankBuffers& buffers,
                               const ResolvedCall& call) {
    return LaunchAllToAll(view, layout, buffers, call);
  };
  op.announce_copies = [&layout](const RankBuffers& buffers, const ResolvedCall& call) {
    return AllToAllCopyEngineAnnouncement(layout, buffers, call);
  };
  op.plan_copy = [&layout](int source, int target, const void* input, void* output) {
    return PlanPieceCopy(layout.geometry, source, target, input, output);
  };
  return op;
}

absl::Status LoadAllToAllKernels(int* resident_blocks_per_sm) {
  LTX_RETURN_IF_ERROR(CudaStatus(LoadAllToAllKernel(resident_blocks_per_sm),
                                 "loading the direct all-to-all kernel"));
  return CudaStatus(LoadAllToAllOneTripKernel(resident_blocks_per_sm),
                    "loading the one-trip all-to-all kernel");
}

}  // namespace ltx
