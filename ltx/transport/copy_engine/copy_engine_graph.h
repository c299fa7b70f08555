// Copy-engine calls of any collective (AllGather, all-to-all) captured into CUDA graphs on the
// peer-store transport (kernels/PROTOCOL.md, "Copy engines in CUDA graphs"): the direct
// protocol with its stores done by the copy engines. A captured call records, on the rank's
// stream, the entry kernel, a conditional node whose body holds the memcpy nodes of what this
// rank sends into every output (ltx/transport/copy_engine/strided_copy.h, planned by the call's
// collective, ltx/transport/copy_engine/copy_engine_call.h), and the exit kernel
// (kernels/copy_engine/copy_engine_graph_kernel.h). The output addresses the memcpy nodes store
// into are exchanged once, on the host, when the ranks capture
// (ltx/transport/copy_engine/capture_exchange.h); replays synchronise on the devices only.
#ifndef LTX_TRANSPORT_COPY_ENGINE_COPY_ENGINE_GRAPH_H_
#define LTX_TRANSPORT_COPY_ENGINE_COPY_ENGINE_GRAPH_H_

#include <cstdint>

#include "absl/status/status.h"
#include "ltx/rank_buffers.h"
#include "ltx/runtime/resolved_call.h"
#include "ltx/transport/copy_engine/capture_exchange.h"
#include "ltx/transport/copy_engine/copy_engine_call.h"
#include "ltx/transport/peer_store/peer_store_transport.h"

namespace ltx {

// Captures rank `view.rank`'s part `copies` (announcement and planner) of an op on `buffers`
// into the CUDA graph that `buffers.stream` is capturing; `max_pitch` is the smallest
// cudaDevAttrMaxPitch of the ranks' GPUs (SmallestMaxPitch), and the calling thread's current
// device is the rank's. First exchanges the announcements (output
// addresses) with the peers' captures through `exchange` (waiting at most call.timeout), then
// records the entry kernel, the conditional body (the planned copy into every output, this
// rank's own included: one strided memcpy node each where the pitches allow, none depending on
// another, so that the copy engines run them side by side; no body when every copy is empty)
// and the exit kernel, each wait of which has call.timeout.
// Errors: those of CaptureExchange::Exchange (DeadlineExceeded naming the ranks that did not
// capture, InvalidArgument for disagreeing shapes); CUDA errors. After an error the capture
// may hold part of the call and must be discarded. Thread-safe across ranks.
absl::Status CaptureCopyEngineCall(const PeerStoreView& view, int64_t max_pitch,
                                   const CopyEngineCall& copies, const RankBuffers& buffers,
                                   const ResolvedCall& call, CaptureExchange* exchange);

}  // namespace ltx

#endif  // LTX_TRANSPORT_COPY_ENGINE_COPY_ENGINE_GRAPH_H_
