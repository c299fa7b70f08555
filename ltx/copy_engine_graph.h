// Copy-engine AllGather calls captured into CUDA graphs on the peer-store transport
// (kernels/PROTOCOL.md, "Copy engines in CUDA graphs"): the direct protocol with its stores done
// by the copy engines. A captured call records, on the rank's stream, the entry kernel, a
// conditional node whose body holds the memcpy nodes of this rank's shard into every output,
// and the exit kernel (kernels/copy_engine_graph_kernel.h). The output addresses the memcpy
// nodes store into are exchanged once, on the host, when the ranks capture
// (ltx/capture_exchange.h); replays synchronise on the devices only.
#ifndef LTX_COPY_ENGINE_GRAPH_H_
#define LTX_COPY_ENGINE_GRAPH_H_

#include <vector>

#include "absl/status/status.h"
#include "ltx/allgather_spec.h"
#include "ltx/capture_exchange.h"
#include "ltx/peer_store_transport.h"
#include "ltx/rank_buffers.h"
#include "ltx/resolved_call.h"

namespace ltx {

// Captures rank `view.rank`'s part of an AllGather of `layout` on `buffers` into the CUDA graph
// that `buffers.stream` is capturing; `devices` are the ranks' GPUs, and the calling thread's
// current device is the rank's. First exchanges the output addresses with the peers' captures
// through `exchange` (waiting at most call.timeout), then records the entry kernel, the
// conditional body (one memcpy node per output, this rank's own included, strided for batch >
// 1, none depending on another, so that the copy engines run them side by side; no body when
// the rank's shard is empty) and the exit kernel, each wait of which has call.timeout.
// Errors: those of CaptureExchange::Exchange (DeadlineExceeded naming the ranks that did not
// capture, InvalidArgument for disagreeing shapes); CUDA errors. After an error the capture
// may hold part of the call and must be discarded. Thread-safe across ranks.
absl::Status CaptureCopyEngineAllGather(const PeerStoreView& view, const std::vector<int>& devices,
                                        const AllGatherLayout& layout, const RankBuffers& buffers,
                                        const ResolvedCall& call, CaptureExchange* exchange);

}  // namespace ltx

#endif  // LTX_COPY_ENGINE_GRAPH_H_
