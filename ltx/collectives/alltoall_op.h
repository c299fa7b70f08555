// The Ulysses all-to-all as the Runtime's funnel runs it (ltx/collectives/collective_op.h), and
// the loading of its kernels.
#ifndef LTX_COLLECTIVES_ALLTOALL_OP_H_
#define LTX_COLLECTIVES_ALLTOALL_OP_H_

#include "absl/status/status.h"
#include "ltx/collectives/alltoall_layout.h"
#include "ltx/collectives/collective_op.h"

namespace ltx {

// The op of an all-to-all of `layout`, which must outlive it (its functions refer to it).
// Thread-safe (pure).
CollectiveOp AllToAllOpOf(const AllToAllLayout& layout);

// Loads every all-to-all kernel onto the current device and lowers *resident_blocks_per_sm, as
// LoadAllGatherKernels does. Errors: as CUDA reports them. Thread-safe.
absl::Status LoadAllToAllKernels(int* resident_blocks_per_sm);

}  // namespace ltx

#endif  // LTX_COLLECTIVES_ALLTOALL_OP_H_
