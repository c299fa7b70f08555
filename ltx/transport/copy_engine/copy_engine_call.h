// One rank's part of a collective op as the copy engines carry it, whatever the collective:
// what the rank announces to its peers, and how to copy what one rank sends another. The
// copy-engine transport (ltx/transport/copy_engine/copy_engine_transport.h) and captured
// copy-engine calls (ltx/transport/copy_engine/copy_engine_graph.h) take it; each collective fills
// it from its layout (ltx/runtime/runtime.cc).
#ifndef LTX_TRANSPORT_COPY_ENGINE_COPY_ENGINE_CALL_H_
#define LTX_TRANSPORT_COPY_ENGINE_COPY_ENGINE_CALL_H_

#include "kernels/wire/collective.h"
#include "kernels/wire/entry_announcement.h"
#include "ltx/transport/copy_engine/strided_copy.h"

namespace ltx {

struct CopyEngineCall {
  // What the op is: the devices' error records name it.
  Collective collective = Collective::kAllGather;
  // This rank's announcement: its output address and its view of the op's shape, with
  // AnnouncedProtocol::kCopyEngine and the call's reset generation; what the collective's
  // kernels announce (AnnouncementOf) but for the protocol, so that ranks that disagree on the
  // collective, the shape or the path are told apart (FindMismatch).
  EntryAnnouncement announcement;
  // The copy of what rank `source` sends rank `target`, from the source's input into the
  // target's output. Must stay valid for the call it is passed to.
  CopyPlanner plan;
};

}  // namespace ltx

#endif  // LTX_TRANSPORT_COPY_ENGINE_COPY_ENGINE_CALL_H_
