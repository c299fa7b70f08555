// The reductions (AllReduce, ReduceScatter, the AllReduce with the fused RMSNorm epilogue) over
// the peer-store transport: one rank's kernel
// launch, with its parameters taken from the op's layout, the resolved call and the transport's
// view of the rank. A two-shot AllReduce launches two ops: the ReduceScatter of its chunks
// into their places in the output, then the in-place AllGather of the reduced chunks.
#ifndef LTX_COLLECTIVES_REDUCE_LAUNCH_H_
#define LTX_COLLECTIVES_REDUCE_LAUNCH_H_

#include <cuda_runtime_api.h>

#include "kernels/reduce/reduce_kernel.h"
#include "ltx/collectives/reduce_layout.h"
#include "ltx/rank_buffers.h"
#include "ltx/runtime/resolved_call.h"
#include "ltx/transport/peer_store/peer_store_transport.h"

namespace ltx {

// The kernel parameters of rank `view.rank` for an op of `layout` on `buffers`, with
// call.timeout per wait. Thread-safe (pure).
ReduceKernelParams ReduceParamsOf(const PeerStoreView& view, const ReduceLayout& layout,
                                  const RankBuffers& buffers, const ResolvedCall& call);

// Enqueues rank `view.rank`'s part of a reduction of `layout` on `buffers.stream`, with
// call.blocks blocks and call.timeout per wait: the reduction kernel, or for a two-shot
// AllReduce (call.two_shot) the kernel of TwoShotAllReduceStep followed by the direct
// AllGather kernel of its chunks (two op numbers; every rank must then run two-shot). The
// arguments are validated already; returns the launch error, if any. The caller's current
// device must be the rank's. Thread-safe across ranks.
cudaError_t LaunchReduce(const PeerStoreView& view, const ReduceLayout& layout,
                         const RankBuffers& buffers, const ResolvedCall& call);

// Enqueues rank `view.rank`'s AllReduce with the fused RMSNorm epilogue of `layout`
// (ComputeAllReduceRmsNormLayout) on `buffers` (RmsNormRankBuffers) and `weight`, as
// LaunchReduce launches a one-shot AllReduce. Thread-safe across ranks.
cudaError_t LaunchAllReduceRmsNorm(const PeerStoreView& view, const ReduceLayout& layout,
                                   const RankBuffers& buffers, const void* weight,
                                   const ResolvedCall& call);

}  // namespace ltx

#endif  // LTX_COLLECTIVES_REDUCE_LAUNCH_H_
