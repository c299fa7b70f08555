// The all-to-all's op for the Runtime's funnel, and the loading of its kernels.
#include "ltx/collectives/alltoall_op.h"

#include <algorithm>
#include <cstdint>

#include "kernels/alltoall/alltoall_fp8_kernel.h"
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
  op.wire = layout.wire;
  if (layout.wire == WireFormat::kFp8E4M3) {
    // The FP8 wire's kernels read and write whole 16-bit elements, and take a run (a row of a
    // piece) per warp: blocks for the most runs a rank sends or receives (the same count on
    // every rank), not for its bytes.
    op.element_alignment = ElementSize(layout.dtype);
    int64_t runs = 0;
    for (int rank = 0; rank < layout.world_size; ++rank) {
      int64_t sent = 0;
      int64_t received = 0;
      for (int peer = 0; peer < layout.world_size; ++peer) {
        if (peer == rank) continue;
        sent += PieceOf(layout.geometry, rank, peer).rows;
        received += PieceOf(layout.geometry, peer, rank).rows;
      }
      runs = std::max({runs, sent, received});
    }
    constexpr int64_t kRunsPerBlock = kAllToAllFp8Threads / 32;
    op.work_blocks =
        std::max<int64_t>(1, (layout.tensors * runs + kRunsPerBlock - 1) / kRunsPerBlock);
  }
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
  LTX_RETURN_IF_ERROR(CudaStatus(LoadAllToAllOneTripKernel(resident_blocks_per_sm),
                                 "loading the one-trip all-to-all kernel"));
  return CudaStatus(LoadAllToAllFp8Kernels(resident_blocks_per_sm),
                    "loading the FP8 all-to-all's kernels");
}

}  // namespace ltx
