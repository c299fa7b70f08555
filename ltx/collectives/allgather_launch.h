// The AllGather over the peer-store transport: one rank's kernel launch, with its parameters
// taken from the op's layout, the resolved call and the transport's view of the rank; and what
// the rank announces when it runs on the copy engines instead.
#ifndef LTX_COLLECTIVES_ALLGATHER_LAUNCH_H_
#define LTX_COLLECTIVES_ALLGATHER_LAUNCH_H_

#include <cuda_runtime_api.h>

#include "absl/status/status.h"
#include "kernels/allgather/allgather_kernel.h"
#include "ltx/collectives/allgather_layout.h"
#include "ltx/runtime/resolved_call.h"
#include "ltx/transport/peer_store/peer_store_transport.h"

namespace ltx {

// The kernel parameters of rank `view.rank` for an op of `layout` on `buffers`, with
// call.timeout per wait. Thread-safe (pure).
AllGatherKernelParams AllGatherParamsOf(const PeerStoreView& view, const AllGatherLayout& layout,
                                        const RankBuffers& buffers, const ResolvedCall& call);

// What a rank's copy-engine call of an AllGather of `layout` on `buffers` announces (see
// ltx/transport/copy_engine/copy_engine_call.h): what its kernel would announce (AnnouncementOf,
// with call.generation), with AnnouncedProtocol::kCopyEngine. Thread-safe (pure).
EntryAnnouncement AllGatherCopyEngineAnnouncement(const AllGatherLayout& layout,
                                           const RankBuffers& buffers, const ResolvedCall& call);

// Enqueues rank `view.rank`'s AllGather kernel on `buffers.stream`: with FP8 on the wire
// (layout.wire) its three kernels (kernels/allgather/allgather_fp8_kernel.h, untimed), else the
// direct kernel for Protocol::kDirect, the one-trip kernel for Protocol::kOneTrip (call.protocol
// must be one of them; timed as call.phase_timestamps says, the one-trip kernel launched early as
// call.early_start says), with call.blocks blocks and call.timeout per wait. The arguments are
// validated already; returns the launch error, if any. The caller's current device must be the
// rank's. Thread-safe across ranks.
cudaError_t LaunchAllGather(const PeerStoreView& view, const AllGatherLayout& layout,
                            const RankBuffers& buffers, const ResolvedCall& call);

}  // namespace ltx

#endif  // LTX_COLLECTIVES_ALLGATHER_LAUNCH_H_
