// Which path one AllGather call takes: the direct kernel, the one-trip kernel or the copy
// engines. A pure function of the call's shape and options, so every rank of an op decides
// alike, and the CPU tests check the rule.
#ifndef LTX_CALL_PATH_H_
#define LTX_CALL_PATH_H_

#include <cstdint>

#include "ltx/runtime_options.h"

namespace ltx {

enum class CallPath {
  kDirect,
  kOneTrip,
  kCopyEngine,
};

// What the one-trip path is worth: the incoming bytes per receiver up to which it beats the
// direct kernel (measured on H200s: 256 KiB shards from 3 peers win, 512 KiB ones lose; 512 KiB
// shards from 1 peer win).
inline constexpr int64_t kOneTripIncomingBytes = 768 * 1024;

// The largest shard that Protocol::kAuto sends one-trip on `world_size` ranks:
// `one_trip_max_bytes` itself, or for kOneTripLimitByWorldSize
// min(kOneTripMaxShardBytes, kOneTripIncomingBytes / (world_size - 1)).
int64_t OneTripLimit(int64_t one_trip_max_bytes, int world_size);

// The path of a call with protocol `protocol` whose largest shard (over all ranks) is
// `max_shard_bytes`, on a Runtime of `world_size` ranks whose transport is `transport`
// (kPeerStores or kCopyEngine, as resolved by Runtime::Create) and whose options are
// `options`; `capturing` says whether the call's stream is capturing a CUDA graph.
//   - On the copy-engine transport every call takes the copy engines.
//   - An explicit protocol is obeyed (the copy engines then reject a capturing stream).
//   - kAuto takes the copy engines for eager calls of at least copy_engine_min_bytes (when that
//     is > 0), the one-trip kernel up to OneTripLimit, the direct kernel otherwise.
CallPath ChooseCallPath(Transport transport, const RuntimeOptions& options, int world_size,
                        Protocol protocol, int64_t max_shard_bytes, bool capturing);

}  // namespace ltx

#endif  // LTX_CALL_PATH_H_
