// The reductions' op for the Runtime's funnel, and the loading of their kernel.
#include "ltx/collectives/reduce_op.h"

#include <algorithm>

#include "kernels/reduce/reduce_kernel.h"
#include "ltx/collectives/reduce_launch.h"
#include "ltx/cuda/cuda_status.h"

namespace ltx {

CollectiveOp ReduceOpOf(const ReduceLayout& layout) {
  CollectiveOp op;
  op.collective = layout.collective;
  op.rank_call =
      layout.collective == Collective::kAllReduce ? "AllReduceRank" : "ReduceScatterRank";
  op.peers_read_input = true;
  op.element_alignment = layout.element_size;
  for (int rank = 0; rank < layout.world_size; ++rank) {
    op.input_bytes[rank] = layout.InputBytes();
    op.output_bytes[rank] = layout.OutputBytes(rank);
    op.shard_bytes[rank] = layout.OutputBytes(rank);
    op.in_place_offset[rank] = layout.InPlaceOffset(rank);
  }
  op.launch_kernel = [&layout](const PeerStoreView& view, const RankBuffers& buffers,
                               const ResolvedCall& call) {
    return LaunchReduce(view, layout, buffers, call);
  };
  return op;
}

CollectiveOp AllReduceRmsNormOpOf(const ReduceLayout& layout,
                                  const std::array<const void*, kMaxWorldSize>& weights) {
  CollectiveOp op = ReduceOpOf(layout);
  op.rank_call = "AllReduceRmsNormRank";
  op.tensors = 2;
  op.tensor_names = RmsNormTensorNames();
  op.peer_read_inputs = 1;
  op.local_input_name = "weight";
  op.local_inputs = weights;
  op.local_input_bytes = layout.total_rows > 0 ? layout.hidden * layout.element_size : 0;
  op.work_blocks = std::max<int64_t>(layout.total_rows, 1);
  op.launch_kernel = [&layout, weights](const PeerStoreView& view, const RankBuffers& buffers,
                                        const ResolvedCall& call) {
    return LaunchAllReduceRmsNorm(view, layout, buffers, weights[view.rank], call);
  };
  return op;
}

absl::Status LoadReduceKernels(int* resident_blocks_per_sm) {
  return CudaStatus(LoadReduceKernel(resident_blocks_per_sm), "loading the reduction kernel");
}

}  // namespace ltx
