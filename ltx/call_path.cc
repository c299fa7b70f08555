// The choice of an AllGather call's path.
#include "ltx/call_path.h"

namespace ltx {

CallPath ChooseCallPath(Transport transport, const RuntimeOptions& options, Protocol protocol,
                        int64_t max_shard_bytes, bool capturing) {
  if (transport == Transport::kCopyEngine) return CallPath::kCopyEngine;
  switch (protocol) {
    case Protocol::kDirect:
      return CallPath::kDirect;
    case Protocol::kOneTrip:
      return CallPath::kOneTrip;
    case Protocol::kCopyEngine:
      return CallPath::kCopyEngine;
    case Protocol::kAuto:
      break;
  }
  if (!capturing && options.copy_engine_min_bytes > 0 &&
      max_shard_bytes >= options.copy_engine_min_bytes) {
    return CallPath::kCopyEngine;
  }
  return max_shard_bytes <= options.one_trip_max_bytes ? CallPath::kOneTrip : CallPath::kDirect;
}

}  // namespace ltx
