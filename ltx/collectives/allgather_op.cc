// The AllGather's op for the Runtime's funnel, and the loading of its kernels.
#include "ltx/collectives/allgather_op.h"

#include <algorithm>
#include <cstdint>

#include "kernels/allgather/allgather_fp8_kernel.h"
#include "kernels/allgather/allgather_kernel.h"
#include "ltx/collectives/allgather_launch.h"
#include "ltx/cuda/cuda_status.h"
#include "ltx/runtime/buffer_checks.h"
#include "ltx/status_macros.h"

namespace ltx {

CollectiveOp AllGatherOpOf(const AllGatherLayout& layout) {
  CollectiveOp op;
  op.collective = Collective::kAllGather;
  op.rank_call = "AllGatherRank";
  op.tensors = layout.tensors;
  op.wire = layout.wire;
  if (layout.wire == WireFormat::kFp8E4M3) {
    // The FP8 wire's kernels read and write whole 16-bit elements, and give each row a few
    // warps (AllGatherFp8WarpsPerRow): blocks for the most rows a rank receives or quantises
    // (the same count on every rank), not for the bytes it sends.
    op.element_alignment = ElementSize(layout.dtype);
    int64_t received = 0;  // Or quantised: a rank alone has only its own rows.
    for (int rank = 0; rank < layout.world_size; ++rank) {
      const int64_t others = layout.total_tokens - layout.token_counts[rank];
      received = std::max(received, layout.batch * std::max(others, layout.token_counts[rank]));
    }
    constexpr int64_t kWarpsPerBlock = kAllGatherFp8Threads / 32;
    const int64_t warps =
        received * AllGatherFp8WarpsPerRow(layout.row_bytes / ElementSize(layout.dtype));
    op.work_blocks = std::max<int64_t>(1, (warps + kWarpsPerBlock - 1) / kWarpsPerBlock);
  }
  for (int rank = 0; rank < layout.world_size; ++rank) {
    op.input_bytes[rank] = layout.InputBytes(rank);
    op.output_bytes[rank] = layout.output_bytes;
    op.shard_bytes[rank] = layout.tensors * layout.InputBytes(rank);
    op.in_place_offset[rank] = layout.InPlaceOffset(rank);
  }
  op.launch_kernel = [&layout](const PeerStoreView& view, const RankBuffers& buffers,
                               const ResolvedCall& call) {
    return LaunchAllGather(view, layout, buffers, call);
  };
  op.announce_copies = [&layout](const RankBuffers& buffers, const ResolvedCall& call) {
    return AllGatherCopyEngineAnnouncement(layout, buffers, call);
  };
  op.plan_copy = [&layout](int source, int, const void* input, void* output) {
    return PlanShardCopy(layout.GeometryOf(source), input, output);
  };
  return op;
}

absl::Status LoadAllGatherKernels(int* resident_blocks_per_sm) {
  LTX_RETURN_IF_ERROR(CudaStatus(LoadAllGatherKernel(resident_blocks_per_sm),
                                 "loading the direct AllGather kernel"));
  LTX_RETURN_IF_ERROR(CudaStatus(LoadOneTripKernel(resident_blocks_per_sm),
                                 "loading the one-trip AllGather kernel"));
  return CudaStatus(LoadAllGatherFp8Kernels(resident_blocks_per_sm),
                    "loading the FP8 AllGather's kernels");
}

}  // namespace ltx
