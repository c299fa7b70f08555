// The reductions (AllReduce, ReduceScatter, the AllReduce with the fused RMSNorm epilogue) as
// the Runtime's funnel runs them
// (ltx/collectives/collective_op.h), and the loading of their kernel.
#ifndef LTX_COLLECTIVES_REDUCE_OP_H_
#define LTX_COLLECTIVES_REDUCE_OP_H_

#include <array>

#include "absl/status/status.h"
#include "ltx/collectives/collective_op.h"
#include "ltx/collectives/reduce_layout.h"

namespace ltx {

// The op of a reduction of `layout`, which must outlive it (its functions refer to it): kernel
// calls only (the pull protocol), whose peers read the input. Thread-safe (pure).
CollectiveOp ReduceOpOf(const ReduceLayout& layout);

// The op of the AllReduce with the fused RMSNorm epilogue of `layout`
// (ComputeAllReduceRmsNormLayout), which must outlive it: two tensors (the input and output,
// the residual and residual_out: RmsNormRankBuffers), of which the peers read the first input
// only, and each rank's weight beside them (`weights`, indexed by rank). Thread-safe (pure).
CollectiveOp AllReduceRmsNormOpOf(const ReduceLayout& layout,
                                  const std::array<const void*, kMaxWorldSize>& weights);

// Loads the reduction kernel onto the current device and lowers *resident_blocks_per_sm, as
// LoadAllGatherKernels does. Errors: as CUDA reports them. Thread-safe.
absl::Status LoadReduceKernels(int* resident_blocks_per_sm);

}  // namespace ltx

#endif  // LTX_COLLECTIVES_REDUCE_OP_H_
