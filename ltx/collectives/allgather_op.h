// The AllGather as the Runtime's funnel runs it (ltx/collectives/collective_op.h), and the
// loading of its kernels.
#ifndef LTX_COLLECTIVES_ALLGATHER_OP_H_
#define LTX_COLLECTIVES_ALLGATHER_OP_H_

#include "absl/status/status.h"
#include "ltx/collectives/allgather_layout.h"
#include "ltx/collectives/collective_op.h"

namespace ltx {

// The op of an AllGather of `layout`, which must outlive it (its functions refer to it).
// Thread-safe (pure).
CollectiveOp AllGatherOpOf(const AllGatherLayout& layout);

// Loads every AllGather kernel onto the current device, so that no later call waits for it on
// the host, and lowers *resident_blocks_per_sm to the fewest blocks of any of them that one SM
// keeps resident. Errors: as CUDA reports them. Thread-safe.
absl::Status LoadAllGatherKernels(int* resident_blocks_per_sm);

}  // namespace ltx

#endif  // LTX_COLLECTIVES_ALLGATHER_OP_H_
