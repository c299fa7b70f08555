// The choice of an AllGather call's path.
#include "ltx/call_path.h"

#include <algorithm>

#include "kernels/one_trip_layout.h"

namespace ltx {

int64_t OneTripLimit(int64_t one_trip_max_bytes, int world_size) {
  if (one_trip_max_bytes != kOneTripLimitByWorldSize) return one_trip_max_bytes;
  const int peers = std::max(world_size - 1, 1);
  return std::min(kOneTripMaxShardBytes, kOneTripIncomingBytes / peers);
}

CallPath ChooseCallPath(Transport transport, const RuntimeOptions& options, int world_size,
                        Protocol protocol, int64_t max_shard_bytes, bool capturing) {
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
  return max_shard_bytes <= OneTripLimit(options.one_trip_max_bytes, world_size)
             ? CallPath::kOneTrip
             : CallPath::kDirect;
}

}  // namespace ltx
