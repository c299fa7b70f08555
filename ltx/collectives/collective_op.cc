// The host checks of a rank's buffers for one op (ltx/collectives/collective_op.h).
#include "ltx/collectives/collective_op.h"

#include "ltx/status_macros.h"

namespace ltx {

absl::Status CheckOpBuffers(const CollectiveOp& op, int world_size, int rank,
                            const RankBuffers& buffers) {
  const bool in_range = rank >= 0 && rank < world_size && rank < kMaxWorldSize;
  LTX_RETURN_IF_ERROR(CheckRankBuffers(world_size, rank, op.tensors,
                                       in_range ? op.input_bytes[rank] : 0,
                                       in_range ? op.output_bytes[rank] : 0,
                                       in_range ? op.in_place_offset[rank] : kNotInPlace, buffers,
                                       op.tensor_names));
  return CheckBufferAlignment(rank, op.tensors, buffers, op.element_alignment, op.tensor_names);
}

}  // namespace ltx
