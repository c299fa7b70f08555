// The Ulysses all-to-all over the peer-store transport: one rank's kernel launch, with its
// parameters taken from the op's layout, the resolved call and the transport's view of the
// rank; and what the rank announces when it runs on the copy engines instead.
#ifndef LTX_COLLECTIVES_ALLTOALL_LAUNCH_H_
#define LTX_COLLECTIVES_ALLTOALL_LAUNCH_H_

#include <cuda_runtime_api.h>

#include "absl/status/status.h"
#include "kernels/alltoall/alltoall_kernel.h"
#include "ltx/collectives/alltoall_layout.h"
#include "ltx/rank_buffers.h"
#include "ltx/runtime/resolved_call.h"
#include "ltx/transport/peer_store/peer_store_transport.h"

namespace ltx {

// The kernel parameters of rank `view.rank` for an op of `layout` on `buffers` (every tensor's
// buffers), with call.timeout per wait. Thread-safe (pure).
AllToAllKernelParams AllToAllParamsOf(const PeerStoreView& view, const AllToAllLayout& layout,
                                      const RankBuffers& buffers, const ResolvedCall& call);

// What a rank's copy-engine call of an all-to-all of `layout` on `buffers` announces (see
// ltx/transport/copy_engine/copy_engine_call.h): what its kernels would announce (AnnouncementOf:
// digest, token row size, batch, total tokens, dtype, call.generation), with
// AnnouncedProtocol::kCopyEngine. Thread-safe (pure).
EntryAnnouncement AllToAllCopyEngineAnnouncement(const AllToAllLayout& layout,
                                           const RankBuffers& buffers, const ResolvedCall& call);

// Enqueues rank `view.rank`'s all-to-all kernel on `buffers.stream`: the direct kernel for
// Protocol::kDirect, the one-trip kernel for Protocol::kOneTrip (call.protocol must be one of
// them, kDirect for a layout of several tensors; timed as call.phase_timestamps says, the one-trip kernel launched early as
// call.early_start says), with call.blocks blocks and call.timeout per wait. The arguments are
// validated already; returns the launch error, if any. The caller's current device must be the
// rank's. Thread-safe across ranks.
cudaError_t LaunchAllToAll(const PeerStoreView& view, const AllToAllLayout& layout,
                           const RankBuffers& buffers, const ResolvedCall& call);

}  // namespace ltx

#endif  // LTX_COLLECTIVES_ALLTOALL_LAUNCH_H_
